#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The CPU ceiling (--max-cpu) under tools/bench.sh's load, as it reports
# it: stat unbounded and under each ceiling, each run right after an
# untraced one of its own, and for each what blkwise used of one CPU (its
# programs' run time, read from the kernel's accounting, which the bench
# holds on, plus its process's user and system time), fio's IOPS against
# the untraced run's, its read count against diskstats', and its p50 and
# p99 against the unbounded run's.
#
# usage: tools/bench/ceiling.sh DEV OUT.jsonl BLKWISE [SECS] [CPU] [PCT...]
# One JSON line per run (PCT "none": unbounded).
set -eu
set -o pipefail

dev=$1 out=$2 bin=$3 secs=${4:-20} cpu=${5:-0}
shift $(($# < 5 ? $# : 5))
pcts=${*:-"none 0.5 2"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"

fio_run() {	# OUT: fio's IOPS of a QD32 io_uring randread run, as the bench's main load
	taskset -c "$cpu" fio --output-format=json --output="$1" --name=c --filename=/dev/"$dev" \
		--direct=1 --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --time_based \
		--runtime="$secs" >/dev/null
}

# The programs a process holds (its fds of programs and links name them).
prog_ids() {
	{ grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null || true; } | awk '{ print $2 }' | sort -un
}

# Run time (ns) of the programs with these ids, summed.
# (The ids are read first: in the pipeline, paste would read bpftool's output.)
run_ns() {
	local ids

	ids=$(paste -sd, -)
	bpftool prog list -j | jq --argjson ids "[$ids]" \
		'[.[] | select(.id | IN($ids[])) | .run_time_ns // 0] | add // 0'
}

# utime + stime of a process, seconds.
proc_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' /proc/"$1"/stat
}

reads() { awk -v d="$dev" '$3 == d { print $4 }' /proc/diskstats; }

for pct in $pcts; do
	fio_run "$work/none.json"
	args=""
	[ "$pct" = none ] || args="--max-cpu $pct"
	# shellcheck disable=SC2086
	stat_start "$bin" "$work/stat.json" "$work/stat.err" -d "$dev" -i 600 $args
	pid=$STAT_PID
	sleep 1	# its first calibration and slices, before the measured run
	ids=$(prog_ids "$pid")
	ns0=$(run_ns <<<"$ids")
	c0=$(proc_cpu "$pid")
	r0=$(reads)
	t0=$(date +%s.%N)
	fio_run "$work/run.json"
	t1=$(date +%s.%N)
	ids=$(prog_ids "$pid")
	ns1=$(run_ns <<<"$ids")
	c1=$(proc_cpu "$pid")
	kill -INT "$pid"
	wait "$pid"
	r1=$(reads)
	jq -s --arg pct "$pct" --argjson dur "$(awk -v a="$t0" -v b="$t1" "BEGIN { print b - a }")" --argjson bpf_ns "$((ns1 - ns0))" \
		--argjson cpu_s "$(awk -v a="$c0" -v b="$c1" "BEGIN { print b - a }")" --argjson ds "$((r1 - r0))" --arg dev "$dev" '
		(.[0].jobs[0].read.iops) as $base | (.[1].jobs[0].read.iops) as $iops |
		([.[2:][] | .devices[]? | select(.device == $dev)] | last) as $b |
		([.[2:][] | .cost] | last) as $c |
		{max_cpu_pct: (if $pct == "none" then null else ($pct | tonumber) end),
		 secs: $dur, cpu_share: (($bpf_ns / 1e9 + $cpu_s) / $dur),
		 bpf_share: ($bpf_ns / 1e9 / $dur), user_share: ($cpu_s / $dur),
		 iops: $iops, iops_untraced: $base, iops_kept: ($iops / $base),
		 reads: $b.ops.read.ios, reads_diskstats: $ds,
		 svc_p50_ms: $b.svc_p50_ms, svc_p99_ms: $b.svc_p99_ms,
		 timing_source: $b.timing_source, timing_share: $b.timing_share,
		 light_share: $c.light_share, reported_cpu_share: $c.cpu_share}' \
		"$work/none.json" "$work/run.json" "$work/stat.json" >>"$out"
done
