#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Dispatch stall time from an ftrace record of one device's block events.

The rule of docs/design.md ("Dispatch stalls"), written again from its
text for the tests, over ftrace's per-request events rather than
blkwise's: a request waits from block_rq_insert or block_rq_requeue until
it is issued, merged away or completed; in flight from block_rq_issue to
block_rq_complete (or a requeue); the device's depth is the running
maximum of in-flight after an issue; it is stalled while something waits
and fewer than that maximum are in flight.

usage: stall_oracle.py TRACE  ->  "SECONDS EPISODES REQUESTS"
"""
import re
import sys

EVENT = re.compile(r"\s(\d+\.\d+): (block_rq_\w+): \d+,\d+ \S+ (?:\d+ )?\(.*?\) (\d+) \+ (\d+)")


def main(path):
	waiting = set()
	inflight = set()
	max_depth = 0
	start = None
	total = 0.0
	episodes = 0
	issued = 0
	with open(path, errors="replace") as f:
		for line in f:
			if line.startswith("#"):
				continue
			m = EVENT.search(line)
			if not m:
				continue
			t, ev, key = float(m.group(1)), m.group(2), m.group(3)
			if ev in ("block_rq_insert", "block_rq_requeue"):
				inflight.discard(key)
				waiting.add(key)
			elif ev == "block_rq_issue":
				waiting.discard(key)
				inflight.add(key)
				issued += 1
				max_depth = max(max_depth, len(inflight))
			elif ev in ("block_rq_complete", "block_rq_merge"):
				waiting.discard(key)
				inflight.discard(key)
			stalled = bool(waiting) and len(inflight) < max_depth
			if stalled and start is None:
				start = t
				episodes += 1
			elif not stalled and start is not None:
				total += t - start
				start = None
	print(f"{total:.6f} {episodes} {issued}")


if __name__ == "__main__":
	if len(sys.argv) != 2:
		sys.exit(__doc__.strip().splitlines()[-1])
	main(sys.argv[1])
