#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The manual's figures of one `make bench` run: docs/results/bench.json.

usage: tools/bench-results.py BENCH_JSON [RECORD_JSON]

tools/bench.sh runs it at the end of a full run (not with BENCH_CONFIGS or
BENCH_QUICK, nor BW_DOCS=0).  From build/bench/bench.json (and record.json)
it makes the tables the manual shows (docs/cost.md, the README's overhead
table) and the values its prose quotes (each target's ratio, by a key made
from the target's words: a target renamed leaves its quotes without a
value, which tests/test_docs.sh names), and hands them to tools/docgen.py,
which writes them into the pages.

Tables:
  tiers    the main comparison: ns/IO, events/IO, ns/event per program,
           IOPS against each run's untraced pair
  streams  the streams and record configurations
  targets  every target the run judged or printed, with its ratio
  analyze  record and analyze (record.json)
  frontier each design's cost beside how far its service and queue time
           are from ftrace's (tools/bench/timing.sh)
  ceiling  --max-cpu under the main load (tools/bench/ceiling.sh)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STREAMS = ("floor_streams", "floor_streams_clock", "blkwise_streams", "floor_record", "record")
LEFT_OUT = ("none", "blkwise_shipped")


def spread(s, fmt="%.0f"):
    return (fmt + " (" + fmt + ".." + fmt + ")") % (s["median"], s["min"], s["max"])


def pct(s):
    return "%.1f%% (%.1f..%.1f%%)" % (s["median"] * 100, s["min"] * 100, s["max"] * 100)


def progs(c):
    out = []
    for p in c.get("progs", []):
        ev = p["ev_per_io"]["median"]
        if ev < 0.01:
            continue
        out.append("%s %.0f%s" % (p["name"], p["ns_per_event"]["median"],
                                  "" if abs(ev - 1) < 0.01 else " x%.2f" % ev))
    return ", ".join(out) or "-"


def key_of(what):
    """A target's key: its words without the parentheses, as an identifier."""
    w = re.sub(r"\([^)]*\)", "", what).lower()
    return re.sub(r"[^a-z0-9]+", "_", w).strip("_")


def ratio_text(t):
    if t["what"].startswith("IOPS kept"):
        return "%.1f%%" % (t["ratio"] * 100)
    return "%.2fx" % t["ratio"]


def bound_text(t):
    verdict = "" if t.get("pass") is None else ": PASS" if t["pass"] else ": MISS"
    if t.get("max"):
        return "≤ %gx%s" % (t["max"], verdict)
    if t.get("min"):
        if t["what"].startswith("IOPS kept"):
            return "≥ %g%%%s" % (t["min"] * 100, verdict)
        return "≥ %g%s" % (t["min"], verdict)
    return "printed"


def analyze_rows(rec):
    if not rec or rec.get("status") != "ok":
        return []
    a, b = rec["analyze"], rec.get("blktrace", {})
    rows = [["analyze, %s events, exact percentiles" % a["events"],
             "%.1f M events/s (%s s CPU; one pass %s s)" %
             (a["events_per_s_exact"] / 1e6, a["exact_cpu_s"], a["one_pass_cpu_s"]),
             "≥ %s M events/s: %s" % (a["target_meps"], "PASS" if a["pass"] else "MISS")]]
    if b.get("status") == "ok":
        rows.append(["analyze against btt alone, a blktrace capture of %s requests" % b["requests"],
                     "%.1fx (%s s against %s s; %.1fx with blkparse -d)" %
                     (b["speedup_vs_btt"], b["analyze_cpu_s"], b["btt_cpu_s"],
                      b["speedup_vs_blkparse_btt"]),
                     "≥ %sx: %s" % (b["target"], "PASS" if b["pass"] else "MISS")])
    return rows


def signed(v):
    return "-" if v is None else "%+.1f%%" % v


def frontier_rows(d):
    rows = []
    for f in d.get("frontier", []):
        e = {x["load"]: x for x in f.get("errors", [])}
        row = [f["design"], "-" if f.get("cost_over_floor_rqfields") is None
               else "%.2fx" % f["cost_over_floor_rqfields"]]
        for load in ("qd1", "qd32b8"):
            x = e.get(load)
            row.append("-" if not x else "%s, %s, %s" % (signed(x["mean"]), signed(x["p50"]),
                                                         signed(x["p99"])))
            row.append("-" if not x else signed(x.get("queue")))
        rows.append(row)
    return rows


def ceiling_rows(d):
    rows = []
    for c in d.get("ceiling", []):
        rows.append(["none" if c["max_cpu_pct"] is None else "%g%%" % c["max_cpu_pct"],
                     "%.2f%%" % (c["cpu_share"] * 100), "%.0f%%" % (c["light_share"] * 100),
                     "%.1f%%" % (c["iops_kept"] * 100),
                     "yes" if c["counts_exact"] else "no",
                     signed(c.get("p50_vs_unbounded_pct")), signed(c.get("p99_vs_unbounded_pct")),
                     "" if c.get("pass") is None else "PASS" if c["pass"] else "MISS"])
    return rows


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        d = json.load(f)
    rec = None
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        with open(sys.argv[2]) as f:
            rec = json.load(f)
    ok = {c["config"]: c for c in d["main"] if c.get("status") == "ok"}
    tiers, streams = [], []
    for c in d["main"]:
        name = c["config"]
        if name not in ok or name in LEFT_OUT or name.startswith(("baseline", "prof_")):
            continue
        if name in STREAMS or name == "blkwise_exact":
            streams.append([name, spread(c["ns_per_io"]), progs(c)])
        if name not in STREAMS:
            tiers.append([name, spread(c["ns_per_io"]), "%.2g" % c["ev_per_io"]["median"],
                          progs(c), pct(c["rel_iops"]) if c.get("rel_iops") else "-"])
    targets = [t for t in d["targets"] if t.get("ratio") is not None]
    values = {key_of(t["what"]): ratio_text(t) for t in targets}
    values.update({"ns_" + c: "%.0f" % ok[c]["ns_per_io"]["median"] for c in ok if ok[c].get("ns_per_io")})
    if d.get("crossing", {}).get("status") == "ok":
        values["crossing_ns"] = "%.0f" % d["crossing"]["ns"]
    mem = d.get("memory", {})
    if mem.get("status") == "ok":
        values["memory"] = "BPF maps %.1f MiB, RSS %.1f MiB (peak %.1f)" % (
            mem["map_mib"], mem["rss_mib"], mem["rss_peak_kb"] / 1024)
    tables = {
        "tiers": {"columns": ["config", "ns/IO, median (min..max)", "events/IO",
                              "ns/event per program", "IOPS vs its untraced pair"], "rows": tiers},
        "streams": {"columns": ["config", "ns/IO, median (min..max)", "ns/event per program"],
                    "rows": streams},
        "targets": {"columns": ["target", "ratio", "bound"],
                    "rows": [[t["what"], ratio_text(t), bound_text(t)] for t in targets]},
    }
    if frontier_rows(d):
        tables["frontier"] = {"columns": ["design", "cost / floor_rqfields",
                                          "psync qd1: D2C mean, p50, p99 against ftrace", "queue",
                                          "io_uring qd32 batched by 8: D2C mean, p50, p99", "queue"],
                              "rows": frontier_rows(d)}
    if ceiling_rows(d):
        tables["ceiling"] = {"columns": ["--max-cpu", "CPU used (programs and process)",
                                         "light tier ran", "IOPS kept", "reads = diskstats'",
                                         "p50 vs unbounded", "p99 vs unbounded", "bound"],
                             "rows": ceiling_rows(d)}
    if analyze_rows(rec):
        tables["analyze"] = {"columns": ["measure", "figure", "bound"], "rows": analyze_rows(rec)}
    out = {"command": "make bench",
           "on": "%s vCPUs (%s), Linux %s" % (d["ncpu"], d["cpu"], d["kernel"]),
           "rounds": d.get("rounds"),
           "tables": tables, "values": values}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(out, f)
    try:
        return subprocess.call([sys.executable, os.path.join(ROOT, "tools", "docgen.py"),
                                "put", "bench", f.name])
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    sys.exit(main())
