#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Does BFQ keep idling?  Four sequential 256 KiB direct readers on the
# emulated spindle of tools/idling-table.sh, one static setting of the
# levers, and every STEP seconds the MB/s and mean depth while busy that the
# disk itself served (its own counters, tools/fakedisk's stats).  Depth ~1:
# BFQ serves one reader at a time (idling); ~4: all of them (not idling).
#
#   tools/idling-series.sh [SLICE_IDLE_US [STRICT [SECS [STEP]]]]   (root)
#   tools/idling-series.sh 8000 0 30 3
#   WATCH=1 tools/idling-series.sh 8000 1 70 2
#   TUNE_STATE=/tmp/store tools/idling-series.sh 8000 0 70 2
#   BFQ_LOG=bfq.log WATCH=1 tools/idling-series.sh 8000 1 70 2
#
# WATCH=1 runs `blkwise tune --dry-run` on the device for the whole run (the
# tuner's BPF and sampling, no setting written), to compare with watching.
# TUNE_STATE=DIR runs `blkwise tune` itself, with DIR as its store, started
# together with the readers (as tools/idling-table.sh's tune column), and
# prints its decisions after the series, each with the second of the run
# it was taken in.
# BFQ_LOG=FILE captures BFQ's own log for the run (tools/bfq-log.py, which
# takes ftrace's blk tracer for the while), keeps it in FILE and prints its
# summary per STEP after the series.
# A new BFQ instance (rotational=1 first, low_latency=0), levers set before
# the readers start.  Prints one line: MB/s@depth per step, and fio's total.
set -u
cd "$(dirname "$0")/.." || exit 1
IDLE=${1:-8000}
STRICT=${2:-0}
SECS=${3:-30}
STEP=${4:-3}
die() { echo "idling-series: $*" >&2; exit 1; }
TMP=$(mktemp -d /tmp/blkwise-series.XXXXXX)
. tools/emulated-disks.sh
disks_check fio jq losetup
tune=""
trap '[ -z "$tune" ] || { kill -INT "$tune"; wait "$tune"; } 2>/dev/null; disks_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
dev=$(disk_up spindle) || exit 1
new_bfq "$dev"
q=/sys/block/$dev/queue
echo "$STRICT" >$q/iosched/strict_guarantees
echo "$IDLE" >$q/iosched/slice_idle_us
if [ "${WATCH:-0}" = 1 ]; then
	"${BLKWISE:-./blkwise}" tune -d "$dev" --dry-run --no-state --run-dir "$TMP/run" >"$TMP/tune.log" 2>&1 &
	tune=$!
	sleep 1
elif [ -n "${TUNE_STATE:-}" ]; then
	mkdir -p "$TUNE_STATE" || die "cannot create $TUNE_STATE"
	"${BLKWISE:-./blkwise}" tune -d "$dev" --json --state-dir "$TUNE_STATE" --run-dir "$TMP/run" \
		>"$TMP/tune.json" 2>"$TMP/tune.err" &
	tune=$!
fi
blog=""
if [ -n "${BFQ_LOG:-}" ]; then
	tools/bfq-log.py "$dev" "$SECS" "$STEP" --save "$BFQ_LOG" >"$TMP/bfq-log.txt" &
	blog=$!
fi
t0=$(date +%s.%N)
fio --name=series --filename=/dev/"$dev" --direct=1 --rw=read --bs=256k --ioengine=psync \
	--numjobs=4 --size=256m --offset_increment=256m --time_based --runtime="$SECS" \
	--group_reporting --output-format=json --output="$TMP/fio.json" >/dev/null 2>&1 &
fio=$!
line=""
for _ in $(seq $((SECS / STEP))); do
	echo 1 >"$TMP/spindle/reset"
	sleep "$STEP"
	line="$line $(jq -r --argjson s "$STEP" '"\(.bytes / 1048576 / $s | floor)@\(.inflight_avg_busy * 100 | round / 100)"' "$TMP/spindle/stats")"
done
wait "$fio"
[ -z "$tune" ] || { kill -INT "$tune"; wait "$tune"; }
watched=$tune
tune=""
echo "slice_idle_us $IDLE strict_guarantees $STRICT${watched:+ (${TUNE_STATE:+tuned, }watched)}:$line; total $(jq '.jobs[0].read.bw_bytes / 1048576 | floor' "$TMP/fio.json") MB/s"
[ -z "$blog" ] || { wait "$blog" && cat "$TMP/bfq-log.txt"; }
[ -z "${TUNE_STATE:-}" ] || jq -r '"\(.timestamp)\t\(.action) \(.slice_idle_us_before)/\(.strict_guarantees_before) -> \(.slice_idle_us_after)/\(.strict_guarantees_after): \(.why)"' "$TMP/tune.json" |
	while IFS=$'\t' read -r ts what; do
		echo "  $(($(date -d "$ts" +%s) - ${t0%.*})) s: $what"
	done
