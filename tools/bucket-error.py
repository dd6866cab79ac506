#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Quantile error of the exported latency buckets: histogram_quantile() (linear
# interpolation, as PromQL does) against the exact quantile, for bucket sets of
# 2, 3 and 4 per octave over lognormal, uniform and bimodal samples.  Prints
# per set: buckets, the worst error, the 90th percentile of errors, the median.
# The exporter uses [0, 3, 5] (1, 1.375, 1.625 x 2^m); see user/model/promfmt.c.
import random, math, bisect
random.seed(7)
def bounds(ks, lo=3, hi=23):
    b=[]
    for m in range(lo,hi):
        for k in ks: b.append((8+k)*2**(m-3))
    b.append(2**hi); return b
def pq(le,cum,tot,q):
    r=q*tot; lo=0; prev=0
    for l,c in zip(le,cum):
        if c>=r:
            return l if c==prev else lo+(l-lo)*(r-prev)/(c-prev)
        lo=l; prev=c
    return le[-1]
def draw(d,m):
    z=random.gauss(0,1)
    if d==0: return m*math.exp(0.4*z)
    if d==1: return m*(0.5+random.random())
    return m*math.exp(0.1*z) if random.random()<0.8 else 6*m*math.exp(0.1*z)
for ks in ([0,4],[0,3,5],[0,2,4,6]):
    le=bounds(ks); worst=0; errs=[]
    for d in range(3):
        for med in [20e3,97e3,350e3,1.7e6,8.3e6,61e6, 33e3, 140e3,2.2e6]:
            v=sorted(int(draw(d,med))>>10 for _ in range(20000))
            cum=[bisect.bisect_left(v,l) for l in le]
            for q in (0.5,0.9,0.99):
                ex=v[int(q*len(v))-1]; g=pq(le,cum,len(v),q)
                e=abs(g/ex-1); errs.append(e); worst=max(worst,e)
    errs.sort()
    print(ks, len(le)+1, "worst %.1f%% p90-of-errors %.1f%% median %.1f%%"%(worst*100, errs[int(.9*len(errs))]*100, errs[len(errs)//2]*100))
