#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How exact each design's service and queue time is, against ftrace's own
# per-request records, as tools/bench.sh reports it beside their cost: one
# run per design and load, an ftrace instance of block_rq_issue,
# block_rq_complete and block_io_start (x86-tsc clock where there is one,
# calibrated to CLOCK_MONOTONIC) started before blkwise, as a user tracing
# beside it would, and tests/ftrace_d2c.py pairing the events.
#
# usage: tools/bench/timing.sh DEV OUT.jsonl BLKWISE [SECS] [CPU]
# One JSON line per design and load: ftrace's and blkwise's D2C mean, p50
# and p99 and Q2D mean (ms; ftrace's percentiles read through blkwise's
# histogram geometry), blkwise's timing_source and timing_share, fio's IOPS.
#   TIMING_DESIGNS="light default exact"  TIMING_LOADS="qd1 qd32b8"
set -eu
set -o pipefail

dev=$1 out=$2 bin=$3 secs=${4:-5} cpu=${5:-0}
root=$(cd "$(dirname "$0")/../.." && pwd)
designs=${TIMING_DESIGNS:-"light default exact"}
loads=${TIMING_LOADS:-"qd1 qd32b8"}
tdir=/sys/kernel/tracing/instances/blkwise-timing-$$
work=$(mktemp -d)

cleanup() {
	local e
	for e in "$tdir"/events/block/*/enable; do
		[ -e "$e" ] && echo 0 >"$e"
	done
	[ -d "$tdir" ] && rmdir "$tdir"
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"

design_args() {
	case $1 in
	light) echo "--exact-period 0" ;;	# the completion program and the kernel's stamps alone
	default) echo "" ;;			# stat as it ships
	exact) echo "--exact" ;;
	*) echo "timing: unknown design $1" >&2; exit 2 ;;
	esac
}

load_args() {
	case $1 in
	qd1) echo "--ioengine=psync" ;;
	qd32b8) echo "--ioengine=io_uring --iodepth=32 --iodepth_batch_submit=8 --iodepth_batch_complete_min=8" ;;
	*) echo "timing: unknown load $1" >&2; exit 2 ;;
	esac
}

mark() {
	printf 'blkwise-cal %s\n' "$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')" \
		>"$tdir"/trace_marker
}

[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing
mkdir "$tdir"
mm=$(cat /sys/block/"$dev"/dev)
devt=$(((${mm%:*} << 20) | ${mm#*:}))
# A CPU takes most events (fio is pinned): 512 MiB each, so that no
# event of a run, and neither calibration mark, is overwritten.
echo 524288 >"$tdir"/buffer_size_kb
grep -qw x86-tsc "$tdir"/trace_clock && echo x86-tsc >"$tdir"/trace_clock
for e in block_rq_issue block_rq_complete block_io_start; do
	[ -d "$tdir"/events/block/$e ] || continue
	echo "dev == $devt" >"$tdir"/events/block/$e/filter
done

for load in $loads; do
	for d in $designs; do
		echo 0 >"$tdir"/tracing_on
		: >"$tdir"/trace
		for e in "$tdir"/events/block/{block_rq_issue,block_rq_complete,block_io_start}/enable; do
			[ -e "$e" ] && echo 1 >"$e"
		done
		# shellcheck disable=SC2046 # the design's options, split
		stat_start "$bin" "$work/stat.json" "$work/stat.err" -d "$dev" -i 600 $(design_args "$d")
		pid=$STAT_PID
		echo 1 >"$tdir"/tracing_on
		mark
		# shellcheck disable=SC2046
		taskset -c "$cpu" fio --output-format=json --output="$work/fio.json" --name=t \
			--filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --time_based \
			--runtime="$secs" $(load_args "$load") >/dev/null
		sleep 0.2
		mark
		echo 0 >"$tdir"/tracing_on
		kill -INT "$pid"
		wait "$pid"
		for e in "$tdir"/events/block/*/enable; do echo 0 >"$e"; done
		overrun=$(awk '/^overrun/ { s += $2 } END { print s + 0 }' "$tdir"/per_cpu/cpu*/stats)
		python3 "$root"/tests/ftrace_d2c.py "$tdir"/trace >"$work/oracle.json"
		jq -s --arg design "$d" --arg load "$load" --argjson overrun "$overrun" \
			--argjson iops "$(jq '.jobs[0].read.iops' "$work/fio.json")" --arg dev "$dev" '
			(.[0]) as $o | ([.[1:][] | .devices[]? | select(.device == $dev)] | last) as $b |
			{design: $design, load: $load, ftrace_overrun: $overrun, iops: $iops,
			 ftrace: {requests: $o.requests, svc_mean_ms: $o.mean_ms, svc_p50_ms: $o.hist_p50_ms,
				  svc_p99_ms: $o.hist_p99_ms, queue_mean_ms: $o.q2d_mean_ms},
			 blkwise: {requests: $b.ops.read.ios, svc_mean_ms: $b.svc_mean_ms,
				   svc_p50_ms: $b.svc_p50_ms, svc_p99_ms: $b.svc_p99_ms,
				   queue_mean_ms: $b.queue_mean_ms, timing_source: $b.timing_source,
				   timing_share: $b.timing_share,
				   stamp_plugged_share: $b.stamp_plugged_share}}' \
			"$work/oracle.json" "$work/stat.json" >>"$out"
	done
done
