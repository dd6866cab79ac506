#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What BFQ itself says it did: its own log, per time step.

BFQ writes a line for each of its decisions through the block tracer
(bfq_log_bfqq() in block/bfq-iosched.h, shown by ftrace's `blk` tracer as
`m N bfq<pid><S|A> ...` messages).  This script turns that log on for one
device, captures it for SECS seconds, puts the tracer back, and prints per
STEP seconds:

  MB/s      bytes completed (the tracer's C events) per second
  reqs      requests completed
  switches  queues put in service (set_in_service_queue)
  expired   expirations by reason (bfq_bfqq_expire(): too_idle,
            budget_timeout, budget_exhausted, no_more_requests, preempted)
  injected  requests BFQ dispatched from a queue not in service
  think     the longest wait, in ms, from the completion of a queue's
            request to that queue's next request (add_request)

A preemption per request is a queue switch per request: each switch is a
seek on a spindle.  A too_idle expiration is a reader that took longer than
slice_idle to send its next request.

  tools/bfq-log.py DEV [SECS [STEP]]        (root; DEV on bfq)
  tools/bfq-log.py --file TRACE [STEP]      a trace saved with --save
  tools/bfq-log.py DEV 60 2 --save out.txt

Capturing needs tracefs and ftrace's blk tracer (CONFIG_BLK_DEV_IO_TRACE);
it sets current_tracer for the whole system while it runs, so nothing else
may be using ftrace then.
"""
import collections
import os
import re
import sys
import time

TRACING = "/sys/kernel/tracing"
REASONS = ["too_idle", "budget_timeout", "budget_exhausted",
           "no_more_requests", "preempted"]
LINE = re.compile(r"\s(\d+\.\d+):\s+\d+,\d+\s+(.*)$")
EVENT = re.compile(r"^(\S+)\s+(\S+)\s+(\d+) \+ (\d+)")
MSG = re.compile(r"^\d+,\d+\s+m\s+N bfq(\d*)([SA]?)\s*(.*)$")


def die(msg, code=1):
    sys.stderr.write("bfq-log: %s\n" % msg)
    sys.exit(code)


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def read(path):
    with open(path) as f:
        return f.read().strip()


def capture(dev, secs):
    if not os.path.isdir(TRACING + "/instances"):
        die("tracefs is not mounted at %s "
            "(mount -t tracefs nodev %s)" % (TRACING, TRACING))
    if "blk" not in read(TRACING + "/available_tracers").split():
        die("ftrace has no blk tracer (CONFIG_BLK_DEV_IO_TRACE)")
    sched = read("/sys/block/%s/queue/scheduler" % dev)
    if "[bfq]" not in sched:
        die("%s is not on bfq (%s)" % (dev, sched))
    enable = "/sys/block/%s/trace/enable" % dev
    old_tracer = read(TRACING + "/current_tracer")
    old_size = read(TRACING + "/buffer_size_kb").split()[0]
    try:
        write(TRACING + "/tracing_on", "0")
        write(TRACING + "/buffer_size_kb", "65536")
        write(TRACING + "/trace", "")
        write(TRACING + "/current_tracer", "blk")
        write(enable, "1")
        write(TRACING + "/tracing_on", "1")
        time.sleep(secs)
        write(TRACING + "/tracing_on", "0")
        with open(TRACING + "/trace") as f:
            return f.readlines()
    finally:
        write(TRACING + "/tracing_on", "0")
        try:
            write(enable, "0")
        except OSError:
            pass
        write(TRACING + "/current_tracer", old_tracer)
        write(TRACING + "/buffer_size_kb", old_size)
        write(TRACING + "/tracing_on", "1")


def summarize(lines, step):
    steps = collections.defaultdict(collections.Counter)
    think = collections.defaultdict(float)
    t0 = None
    in_service = None
    served = None
    owner = {}
    done = {}
    for line in lines:
        if line.startswith("#"):
            continue
        m = LINE.search(line)
        if not m:
            continue
        t = float(m.group(1))
        if t0 is None:
            t0 = t
        w = int((t - t0) // step)
        c = steps[w]
        rest = m.group(2)
        ev = EVENT.match(rest)
        if ev and ev.group(1) == "D" and served:
            owner[ev.group(3)] = served
            served = None
        if ev and ev.group(1) == "C":
            c["reqs"] += 1
            c["sectors"] += int(ev.group(4))
            if ev.group(3) in owner:
                done[owner.pop(ev.group(3))] = t
            continue
        msg = MSG.match(rest)
        if not msg:
            continue
        pid, text = msg.group(1), msg.group(3)
        if text.startswith("set_in_service_queue"):
            in_service = pid
            c["switches"] += 1
        elif text.startswith("bfqq_served"):
            served = pid
            if in_service is not None and pid != in_service:
                c["injected"] += 1
        elif text.startswith("expire ("):
            reason = int(re.findall(r"-?\d+", text)[0])
            if 0 <= reason < len(REASONS):
                c[REASONS[reason]] += 1
        elif text.startswith("add_request") and pid in done:
            gap = (t - done.pop(pid)) * 1e3
            think[w] = max(think[w], gap)
    if t0 is None:
        die("no BFQ message in the trace: was the device busy, and on bfq?")
    print("%6s %8s %6s %8s %9s %8s  %s" % ("s", "MB/s", "reqs", "switches",
                                          "injected", "think", "expired"))
    for w in range(max(steps) + 1):
        c = steps[w]
        expired = " ".join("%s %d" % (r, c[r]) for r in REASONS if c[r])
        print("%6g %8.1f %6d %8d %9d %8.2f  %s" % (
            w * step, c["sectors"] * 512 / 1048576 / step, c["reqs"],
            c["switches"], c["injected"], think[w], expired or "-"))


def main(argv):
    save = None
    if "--save" in argv:
        i = argv.index("--save")
        if i + 1 >= len(argv):
            die("--save needs a file", 2)
        save = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        sys.exit(0 if argv else 2)
    try:
        if argv[0] == "--file":
            if len(argv) < 2:
                die("--file needs a trace", 2)
            step = float(argv[2]) if len(argv) > 2 else 1.0
            with open(argv[1]) as f:
                lines = f.readlines()
        else:
            dev = os.path.basename(argv[0])
            secs = float(argv[1]) if len(argv) > 1 else 10.0
            step = float(argv[2]) if len(argv) > 2 else 1.0
            if not os.path.isdir("/sys/block/" + dev):
                die("no block device %s" % dev, 2)
            lines = capture(dev, secs)
    except ValueError:
        die("SECS and STEP are numbers of seconds", 2)
    except OSError as e:
        die(str(e))
    if step <= 0:
        die("STEP must be more than 0", 2)
    if save:
        with open(save, "w") as f:
            f.writelines(lines)
    summarize(lines, step)


if __name__ == "__main__":
    main(sys.argv[1:])
