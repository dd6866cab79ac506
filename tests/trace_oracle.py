#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An independent reader of blkwise trace files (user/model/trace.h's layout), for
the tests: pairs D and C by request address and prints, per op, the exact
nearest-rank percentiles of D2C and Q2C, in ms, as JSON.  Q is the
request's own Q event (block_io_start) where the trace says it recorded one
(INFO's flag 1), else the allocation stamp.  Deliberately simple and slow: an oracle, not a tool."""
import json
import math
import struct
import sys

# Version 2's event; version 1's is the same without the cgroup at its end.
REC = {1: struct.Struct("<QQQQIIIIiHHHHBB2x"), 2: struct.Struct("<QQQQIIIIiHHHHBB2xQ")}


def op_name(op):
    """The op as the kernel's op_stat_group() files it (bpf/core.h's bw_op_of)."""
    if op >= 32:
        return "passthrough"
    if op in (2, 3):
        return {2: "flush", 3: "discard"}[op]
    return "write" if op & 1 else "read"


INFO_FLAGS = 204     # offset of struct bw_tinfo's flags in the INFO block's body


def events(path, info):
    """Yield the trace's events; info["q_clock"]: Q events from block_io_start."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"BWTRACE\0", "magic"
    rec = REC[struct.unpack_from("<I", data, 8)[0]]
    off = 16
    while off + 8 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        body = data[off + 8:off + blen - 8]
        if btype == 1:
            info["q_clock"] = bool(struct.unpack_from("<I", body, INFO_FLAGS)[0] & 1)
        elif btype == 2:
            for i in range(len(body) // rec.size):
                yield rec.unpack_from(body, i * rec.size)[:15]
        off += blen


def rank(vals, p):
    vals = sorted(vals)
    k = max(1, math.ceil(p * len(vals) - 1e-9))
    return vals[k - 1]


def main():
    issued, queued, info = {}, {}, {}
    d2c, q2c = {}, {}
    for (ts, rq, sector, alloc, dev, nbytes, flags, pid, err, nseg, tag, hwq, cpu,
         etype, xflags) in events(sys.argv[1], info):
        if etype == 1 and rq and rq not in issued:
            queued[rq] = ts
        elif etype == 4:
            issued[rq] = ts
        elif etype == 5 and not xflags & 1 and rq in issued:
            op = op_name(flags & 0xff)
            d = issued.pop(rq)
            q = queued.pop(rq, 0)
            d2c.setdefault(op, []).append(ts - d)
            if info.get("q_clock") and q:
                if q <= ts:
                    q2c.setdefault(op, []).append(ts - q)
            elif alloc and alloc <= d:
                q2c.setdefault(op, []).append(ts - alloc)
    out = {}
    for op, v in d2c.items():
        out[op] = {"n": len(v)}
        for name, vals in (("d2c", v), ("q2c", q2c.get(op, []))):
            for p, key in ((0.5, "p50_ms"), (0.9, "p90_ms"), (0.99, "p99_ms")):
                out[op][name + "_" + key] = rank(vals, p) / 1e6 if vals else None
    json.dump(out, sys.stdout)
    print()


main()
