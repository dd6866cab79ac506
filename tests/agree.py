#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every figure `blkwise stat --json` and `blkwise analyze --json` both give
for a device, compared: stat watching live, analyze replaying a recording of
the same events.

usage: agree.py STAT_JSON STAT_SPAN ANALYZE_JSON DEVICE [--counts-only]
       agree.py --classes

STAT_JSON is stat's device object of one interval covering the run,
STAT_SPAN that interval's seconds; ANALYZE_JSON is analyze's whole JSON
(--no-exact: percentiles from the same histogram buckets as stat's).
Prints one line per figure and exits 1 when one disagrees, or when stat
gives a figure this script does not know (a new figure must be classed
below, so it cannot go uncompared).  --counts-only compares the counts
alone (the light tier's times come from the kernel's stamps, not from the
tracepoints the recording reads).  --classes prints every key classed
below, one a line: tests/test_docs.sh holds them to the figure table's
keys (build/figdoc keys), so a figure cannot be missing here even where no
run prints it.
"""
import json
import sys

# Counted events, and names: equal.
EXACT = {
    "segments", "seg_hist", "fsync_writes", "merges", "requeues", "errors",
    "q_ios", "unmatched_total", "untracked_total", "lost_completions_total",
    "lost_completions", "inflight",
    "svc_hist_samples", "queue_hist_samples", "ops", "bio_based", "gone",
    "slaves", "holders", "device", "tier", "timing_source", "s1_coverage",
    "busy_source", "exact_sampled", "exact_sample_age_s", "exact_sample_s",
    "exact_share", "timing_share", "stamp_plugged_share", "depth_source",
    "p_eff_source",
}
# What the light tier counts (--counts-only): the rest it does not
# measure, or times from the kernel's stamps.
LIGHT = {
    "ops", "segments", "seg_hist", "fsync_writes", "merges", "requeues",
    "errors", "q_ios", "unmatched_total", "svc_hist_samples",
    "queue_hist_samples",
}
# Rates: the same count over each side's span (stat's interval, the
# trace's span); compared as rate x span, give or take the rounding of
# the rate (2 or 3 decimals).
RATES = {
    "reads_per_s", "writes_per_s", "discards_per_s", "flushes_per_s",
    "read_mb_per_s", "write_mb_per_s", "merges_per_s", "requeues_per_s",
}
# busy_pct: busy time over the span, compared as busy seconds.
BUSY = {"busy_pct"}
# A request both sides still count in flight at their ends (a completion
# no BPF program was handed: docs/design.md, "Lost completions"; healed
# only after a whole idle interval, and -i 600 has one) keeps each side
# busy to its own end.  Stat starts before the recording and stops after
# it, so busy time may differ by that many requests times the spans'
# difference, and what is over busy time (GHOSTED) by that share of it.
GHOSTED = {"depth_mean_busy", "p_eff", "dispatch_stall_share"}
# Times: each side reads its own clock at the same tracepoints (two
# programs on one event run one after the other), so they differ by the
# programs' own run time, up to 0.7 us a program on the slower machines of
# this kind (record's Q program: 636 ns): within 3%, or 1 us.
TIMES = {"svc_mean_ms", "queue_mean_ms", "total_mean_ms", "solo_svc_ms"}
# Ratios of sums: within 3%, or 0.0005.  P_eff is N x S1 / busy, and S1
# is a time each side takes with its own clock reads (TIMES: 1 us apart
# at most): P_eff's tolerance adds S1's, 1 us over S1, which on a device
# of a few microseconds is the larger (seen: S1 0.0115 and 0.0124 ms).
NEAR = {"depth_mean_busy", "p_eff", "seg_per_rq", "kb_per_rq"}
# Dispatch stalls: a sum over episodes, each timed by each side's programs
# at its two ends, so the sides differ by up to a program's run time per
# episode (seen: 0.3 us an episode over 25,000 episodes, 3.1% of the
# total): within 3%, or 1 us per episode.
STALL = {"dispatch_stall_s", "dispatch_stall_share"}
STALL_EPISODE_S = 1e-6
# Percentiles from histogram buckets: within one bucket (6.25% above
# 16 us, 1.024 us below: bpf/hist.h).
PCTL = {"svc_p50_ms", "svc_p99_ms"}
# Solo samples and dispatch stall episodes: which request was alone, and
# where a stretch of waiting starts or ends, can differ where events of two
# CPUs fall within the programs' run times of each other (each side orders
# them by its own programs): within 0.5%, or 1.  (Seen: 25,082 and 25,080
# episodes.)
SOLO = {"solo_samples", "dispatch_stalls"}
# The deepest depth: stat's in-flight word and the recording's clock can
# order an issue on one CPU and a completion on another oppositely where
# they fall within the programs' run times of each other: within 1.
DEPTH = {"depth_max"}
# Not the events' figures: stat's view of the live system or of its own
# run (identity, the kernel's diskstats, the store, the class, which needs
# several intervals and stat had one), which a recording does not hold.
OTHER = {
    "identity", "identity_note", "merges_diskstats", "s1_source", "s1_age_s",
    "class", "class_source", "class_reason", "p_eff_undetermined_why",
}
# stat --virtio's ring buffers (fentry on the virtio driver): not block
# events, so not in a recording.
VIRTIO = {"virtio_indirect", "virtio_direct", "virtio_descs", "indirect_share"}
CLASSES = (EXACT, RATES, BUSY, TIMES, NEAR, STALL, PCTL, SOLO, DEPTH, OTHER, VIRTIO)


def near(a, b, pct, absolute):
    return abs(a - b) <= max(pct / 100.0 * abs(b), absolute)


def main():
    if sys.argv[1:] == ["--classes"]:
        print("\n".join(sorted(set().union(*CLASSES))))
        return 0
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    counts_only = "--counts-only" in sys.argv
    st = json.loads(open(args[0]).read())
    st_span = float(args[1])
    an_all = json.load(open(args[2]))
    dev = args[3]
    an_dev = [d for d in an_all["devices"] if d["device"] == dev][0]
    an = an_dev["total"][0]
    an_span = an_all["span_s"]
    ghosts = min(st.get("inflight") or 0, an.get("inflight") or 0)
    ghost_s = ghosts * max(0.0, st_span - an_span)
    busy_st = (st.get("busy_pct") or 0) / 100 * st_span
    ghost_pct = 100 * ghost_s / busy_st if busy_st > 0 else 0
    bad = 0
    for key in sorted(st):
        a, s = an.get(key), st[key]
        if key not in an:
            print(f"  {key}: stat {s}, not in analyze")
            bad += 1
            continue
        if key in OTHER or key in VIRTIO:
            continue
        if counts_only and key not in LIGHT:
            continue
        if key in EXACT:
            ok = a == s
        elif s is None or a is None:
            ok = a == s
        elif key in RATES:
            ok = near(a * an_span, s * st_span, 0.5, 0.005 * (an_span + st_span))
        elif key in BUSY:
            ok = near(a * an_span, s * st_span, 3, 0.01 + 100 * ghost_s)
        elif key in TIMES:
            ok = near(a, s, 3, 0.001)
        elif key in NEAR:
            pct = 3
            s1 = st.get("solo_svc_ms")
            if key == "p_eff" and s1:
                pct += 100 * 0.001 / s1
            if key in GHOSTED:
                pct += ghost_pct
            ok = near(a, s, pct, 0.0005)
        elif key in STALL:
            slack = STALL_EPISODE_S * (st.get("dispatch_stalls") or 0)
            if key == "dispatch_stall_share":
                busy_s = (st.get("busy_pct") or 0) / 100 * st_span
                slack = slack / busy_s if busy_s > 0 else 0
            ok = near(a, s, 3 + (ghost_pct if key in GHOSTED else 0), max(slack, 0.0005))
        elif key in PCTL:
            ok = near(a, s, 7, 0.001024)
        elif key in SOLO:
            ok = near(a, s, 0.5, 1)
        elif key in DEPTH:
            ok = abs(a - s) <= 1 and a >= 1
        else:
            print(f"  {key}: a figure not classed in tests/agree.py")
            bad += 1
            continue
        if isinstance(s, (dict, list)):
            shown = "equal" if ok else f"stat {json.dumps(s)} analyze {json.dumps(a)}"
        else:
            shown = f"stat {s} analyze {a}"
        print(f"  {key}: {shown}{'' if ok else '  DISAGREE'}")
        bad += not ok
    if ghost_s:
        print(f"  in flight at both ends: {ghosts}, busy to each side's end: up to {ghost_s:.3f} s apart")
    print(f"  spans: stat {st_span} s, trace {an_span} s; {bad} disagreeing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
