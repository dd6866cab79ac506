#!/usr/bin/env bash
# Does BFQ keep idling?  Four sequential 256 KiB direct readers on the
# emulated spindle of tools/idling-table.sh, one static setting of the
# levers, and every STEP seconds the MB/s and mean depth while busy that the
# disk itself served (its own counters, tools/fakedisk's stats).  Depth ~1:
# BFQ serves one reader at a time (idling); ~4: all of them (not idling).
#
#   tools/idling-series.sh [SLICE_IDLE_US [STRICT [SECS [STEP]]]]   (root)
#   tools/idling-series.sh 8000 0 30 3
#
# A new BFQ instance (rotational=1 first, low_latency=0), levers set before
# the readers start.  Prints one line: MB/s@depth per step, and fio's total.
set -u
cd "$(dirname "$0")/.."
IDLE=${1:-8000}
STRICT=${2:-0}
SECS=${3:-30}
STEP=${4:-3}
DISK_OPTS="service_us=100,xfer_us_per_mib=8000,seek_us=1000,seek_us_per_gib=30720,size_mb=1024"
die() { echo "idling-series: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, FUSE, sysfs)"
for c in fio jq losetup; do command -v $c >/dev/null || die "$c missing: tools/deps.sh"; done
TMP=$(mktemp -d /tmp/blkwise-series.XXXXXX)
trap 'tools/fakedisk.sh down "$TMP/disk" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
dev=$(tools/fakedisk.sh up "$TMP/disk" "$DISK_OPTS") || die "fakedisk"
q=/sys/block/$dev/queue
echo none >$q/scheduler
echo 1 >$q/rotational
echo bfq >$q/scheduler || die "$dev: no bfq"
echo 0 >$q/iosched/low_latency
echo "$STRICT" >$q/iosched/strict_guarantees
echo "$IDLE" >$q/iosched/slice_idle_us
fio --name=series --filename=/dev/"$dev" --direct=1 --rw=read --bs=256k --ioengine=psync \
	--numjobs=4 --size=256m --offset_increment=256m --time_based --runtime="$SECS" \
	--group_reporting --output-format=json --output="$TMP/fio.json" >/dev/null 2>&1 &
fio=$!
line=""
for _ in $(seq $((SECS / STEP))); do
	echo 1 >"$TMP/disk/reset"
	sleep "$STEP"
	line="$line $(jq -r --argjson s "$STEP" '"\(.bytes / 1048576 / $s | floor)@\(.inflight_avg_busy * 100 | round / 100)"' "$TMP/disk/stats")"
done
wait "$fio"
echo "slice_idle_us $IDLE strict_guarantees $STRICT:$line; total $(jq '.jobs[0].read.bw_bytes / 1048576 | floor' "$TMP/fio.json") MB/s"
