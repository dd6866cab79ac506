#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""D2C per request from an ftrace record of block_rq_issue and
block_rq_complete (one device), as an oracle for the light tier: pairs an
issue with the next completion of the same sector, and prints as JSON the
count, the mean, the nearest-rank p50 and p99 in ms, and p50 and p99 as
blkwise's own histogram (bpf/hist.h, user/model/hist.c) would read the
same values, so a comparison sees only the stamps, not the buckets.
Where the record holds block_io_start too (6.5+, the request's allocation),
queue time (Q2D) per request as well: an io_start paired with the next
issue of its sector (q2d_*).  And the mean number of requests in flight
(issued, not completed) while at least one is: depth_mean_busy.

With SHARE and PERIOD (the default's timing slices: SHARE of each PERIOD
seconds), sampled_spread: how far from the whole record's mean, p50 and p99
those of the requests completed in SHARE of each period come, as the root
mean square over 20 phases of the windows: the standard deviation of what
timing a share of the time reads.

usage: ftrace_d2c.py TRACE [SHARE PERIOD]
The record's clock is x86-tsc (integer cycles; two trace_marker lines
"blkwise-cal NS" written with CLOCK_MONOTONIC ns convert them) or a clock
printed in seconds (mono: microsecond resolution)."""
import json
import math
import re
import sys

LINE = re.compile(r"\s(\d+(?:\.\d+)?): (block_rq_issue|block_rq_complete|block_io_start): \d+,\d+ (\S+) "
                  r"(?:\d+ )?\(\S*\) (\d+) \+ (\d+)")
MARK = re.compile(r"\s(\d+(?:\.\d+)?): tracing_mark_write: blkwise-cal (\d+)")
SUB_BITS, LINEAR = 3, 16


def bucket(u):
    if u < LINEAR:
        return u
    m = u.bit_length() - 1
    return LINEAR + (m - SUB_BITS - 1) * 8 + ((u >> (m - SUB_BITS)) & 7)


def bounds(i):
    if i < LINEAR:
        return i, i + 1
    m = (i - LINEAR) // 8 + SUB_BITS + 1
    w = 2.0 ** (m - SUB_BITS)
    lo = (8 + (i - LINEAR) % 8) * w
    return lo, lo + w


def hist_pct(vals_ns, p):
    """user/model/hist.c's bw_hist_percentile over 1024 ns units, in ms."""
    h = {}
    for v in vals_ns:
        b = bucket(int(v) >> 10)
        h[b] = h.get(b, 0) + 1
    rank = max(1.0, p * len(vals_ns))
    cum = 0
    for b in sorted(h):
        if cum + h[b] < rank:
            cum += h[b]
            continue
        lo, hi = bounds(b)
        return (lo + (hi - lo) * (rank - cum) / h[b]) * 1024 / 1e6
    return None


def nearest(vals, p):
    k = max(1, math.ceil(p * len(vals) - 1e-9))
    return vals[k - 1]


def figures(vals):
    return {"mean_ms": sum(vals) / len(vals) / 1e6, "hist_p50_ms": hist_pct(vals, 0.5),
            "hist_p99_ms": hist_pct(vals, 0.99)}


def spread(timed, share, period, whole):
    """RMS distance of a share's figures from the whole's, over 20 phases (ns times)."""
    sq, n = dict.fromkeys(whole, 0.0), 0
    t0, per = timed[0][0], period * 1e9
    for k in range(20):
        ph = t0 + k * per / 20
        sub = [v for t, v in timed if (t - ph) % per < share * per]
        if len(sub) < 100:
            continue
        n += 1
        for f, x in figures(sub).items():
            sq[f] += (x - whole[f]) ** 2
    return {f: math.sqrt(s / n) if n else 0.0 for f, s in sq.items()}


def main():
    marks, evs = [], []
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            m = MARK.search(line)
            if m:
                marks.append((m.group(1), int(m.group(2))))
                continue
            m = LINE.search(line)
            if m and "N" not in m.group(3):
                evs.append((m.group(1), m.group(2), int(m.group(4))))
    if any("." not in t for t, _ in marks) or (evs and "." not in evs[0][0]):
        if len(marks) < 2 or marks[0][0] == marks[-1][0]:
            sys.exit("ftrace_d2c.py: fewer than two calibration marks in the trace "
                     "(overwritten: a larger buffer_size_kb)")
        (t0, n0), (t1, n1) = marks[0], marks[-1]
        ns_per = (n1 - n0) / (int(t1) - int(t0))
        conv = lambda t: (int(t) - int(t0)) * ns_per
    else:
        conv = lambda t: float(t) * 1e9
    issued, timed, started, q2d = {}, [], {}, []
    area = busy = 0.0
    last = None
    for t, ev, sector in evs:
        now = conv(t)
        if issued and last is not None:
            area += len(issued) * (now - last)
            busy += now - last
        last = now
        if ev == "block_io_start":
            started[sector] = conv(t)
        elif ev == "block_rq_issue":
            issued[sector] = conv(t)
            if sector in started:
                q2d.append(conv(t) - started.pop(sector))
        elif sector in issued:
            timed.append((now, now - issued.pop(sector)))
    completes = sum(1 for e in evs if e[1] == "block_rq_complete")
    d2c = sorted(v for _, v in timed)
    out = {"requests": len(d2c), "completes": completes,
           "mean_ms": sum(d2c) / len(d2c) / 1e6 if d2c else None,
           "p50_ms": nearest(d2c, 0.5) / 1e6 if d2c else None,
           "p99_ms": nearest(d2c, 0.99) / 1e6 if d2c else None,
           "hist_p50_ms": hist_pct(d2c, 0.5) if d2c else None,
           "hist_p99_ms": hist_pct(d2c, 0.99) if d2c else None,
           "q2d_requests": len(q2d),
           "q2d_mean_ms": sum(q2d) / len(q2d) / 1e6 if q2d else None,
           "depth_mean_busy": area / busy if busy else None}
    if len(sys.argv) > 3 and d2c:
        out["sampled_spread"] = spread(timed, float(sys.argv[2]), float(sys.argv[3]),
                                       figures(d2c))
    json.dump(out, sys.stdout)
    print()


main()
