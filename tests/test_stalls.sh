#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: dispatch stalls (docs/design.md, "Dispatch stalls") on the
# emulated disk, against the disk's own account.
#
# How requests come to wait while the device has room: mq-deadline does
# not dispatch lower-priority requests while a real-time one is queued or
# in flight (dd_dispatch_request, "Ignore lower priority requests if any
# higher priority requests are pending").  So one fio job reads one
# request at a time at prioclass=1 from the first 16 MiB, which the disk
# serves in ST_HOLD_US (fakedisk's hold_mb, hold_us), then thinks; another
# keeps ST_BE requests outstanding at best effort elsewhere, served in
# ST_SVC_US.  While a real-time read is out, every best-effort request
# that completes is resubmitted and held in the scheduler, with fewer in
# flight than the ST_BE + 1 seen before.
#
# Two oracles.  ftrace's block events (insert, requeue, merge, issue,
# complete) of the device, with the rule applied to them by
# tests/stall_oracle.py, written from docs/design.md rather than from
# bpf/stall.h: the same rule over another account of the same requests,
# so blkwise must match it closely.  And fakedisk's starved_ns
# (tools/fakedisk/README.md), the time from the moment the disk has room
# while a hold request is out to the reply of the last hold request,
# computed by the disk from its own arrivals and replies: what the stall
# costs the disk.  Its start is off by the path's transit (a reply's way
# up to fio's resubmission), 0.3-1.5 ms per period on a shared 2-core VM
# and more when fio is starved of CPU, so the holds are 200 ms and the
# disk's figure is held to a looser tolerance; blkwise also counts the
# microseconds each best-effort request waits between insert and issue
# (~2 us each).
. "$(dirname "$0")/lib.sh"

ST_HOLD_US=200000	# a real-time read's service time
ST_THINK_MS=40		# the real-time job's pause between reads
ST_SVC_US=4000		# a best-effort read's
ST_BE=4			# best-effort reads outstanding
ST_RUN=8		# s of I/O
ST_TOL=10		# % against the disk's own account
ST_TRACE_TOL=2		# % against the rule over ftrace's events

st_require() {
	bw_require fio jq losetup fusermount3 curl || return 1
	bw_require_fetch "dispatch stalls" || return 1
	[ -c /dev/fuse ] || { bw_skip "/dev/fuse missing: no FUSE here"; return 1; }
	grep -qw mq-deadline /sys/block/loop*/queue/scheduler 2>/dev/null ||
		{ bw_skip "no mq-deadline scheduler in this kernel"; return 1; }
	make -s -C "$BW_ROOT/tools/fakedisk" >&2 || { fail "cannot build tools/fakedisk"; return 1; }
}

# st_fio DEV RT: the best-effort job, and with RT=1 the real-time one; waits.
st_fio() {
	local rt=()
	[ "$2" = 1 ] && rt=(--name=rt --prioclass=1 --prio=0 --iodepth=1 --offset=0 --size=16m
		--thinktime=$((ST_THINK_MS * 1000)))
	fio --output-format=json --output="$BW_TMP/fio.json" --filename=/dev/"$1" --direct=1 \
		--ioengine=libaio --rw=randread --bs=4k --time_based --runtime="$ST_RUN" \
		"${rt[@]}" --name=be --prioclass=2 --prio=4 --iodepth="$ST_BE" --offset=512m \
		--size=256m >/dev/null
}

# st_sum FILE DEV FIELD: a device's FIELD summed over stat's intervals.
st_sum() { bw_jsum "$1" "$2" ".$3 // 0"; }

# st_metric DEV NAME: a counter of the exporter's page.
st_metric() {
	curl -fsS "$EX_URL/metrics" | awk -v n="$2{device=\"$1\"}" '$1 == n { print $2 }'
}

# The exporter, on a loopback port of the suite's range.
st_export() {
	EX_PORT=$(bw_free_port)
	bw_bg_start "$BW_TMP/export.out" "serving" "$BW_BIN" export --exact -d /dev/"$1" \
		--listen 127.0.0.1:"$EX_PORT" --state-dir "$BW_TMP/state" || return 1
	EX_URL=http://127.0.0.1:$EX_PORT
}

# Wait for the device to be idle, then one more of stat's intervals.
st_settle() {
	local i
	for i in $(seq 50); do
		[ "$(awk '{ print $1 + $2 }' /sys/block/"$1"/inflight)" = 0 ] && break
		sleep 0.1
	done
	sleep 2.2
}

test_stall_time_against_the_disk() {
	local dev out truth periods got eps share sx ex an t tr tre miss skipped
	st_require || return 0
	bw_fakedisk dev "service_us=$ST_SVC_US,parallel=8,dispatch=any,hold_mb=16,hold_us=$ST_HOLD_US" ||
		{ fail "fakedisk up"; return 0; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	bw_ftrace t "$dev" block_rq_insert block_rq_requeue block_rq_merge block_rq_issue \
		block_rq_complete || { fail "ftrace instance"; return 0; }
	out=$BW_TMP/stat.json
	bw_stat_start "$out" -d /dev/"$dev" -i 1 --exact || { fail "stat did not start"; return 0; }
	st_export "$dev" || { fail "export did not start"; return 0; }
	bw_bg_start "$BW_TMP/rec.out" "Ctrl-C to stop" "$BW_BIN" record -d /dev/"$dev" \
		-o "$BW_TMP/rec.bw" || { fail "record did not start"; return 0; }
	local rec=$BW_BG_PID
	echo 1 >"$BW_FAKEDISK_DIR"/reset
	st_fio "$dev" 1
	st_settle "$dev"
	truth=$(jq '.starved_ns / 1e9' "$BW_FAKEDISK_DIR"/stats)
	periods=$(jq '.starved_periods' "$BW_FAKEDISK_DIR"/stats)
	ex=$(st_metric "$dev" blkwise_dispatch_stall_seconds_total)
	# Events the kernel did not hand blkwise's programs (a program's run
	# on a CPU interrupted by an event of its own: the kernel skips it).
	skipped=$(bpftool prog show -j 2>/dev/null | jq '[.[] | select(.name // "" | startswith("bw_")) |
		.recursion_misses // 0] | add // 0')
	kill -INT "$rec"
	wait "$rec"
	bw_stat_stop INT
	bw_ftrace_stop "$t"
	read -r tr tre _ < <(python3 "$BW_ROOT/tests/stall_oracle.py" "$t/trace")
	got=$(st_sum "$out" "$dev" dispatch_stall_s)
	eps=$(st_sum "$out" "$dev" dispatch_stalls)
	share=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d) |
		.dispatch_stall_share] | max' "$out")
	# What a stall time short of the oracle's would come from: completions
	# blkwise never saw (a request left counted in flight), waits its table
	# could not hold (a request never counted waiting), events skipped.
	miss=$(jq -s -r --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last |
		"\(.lost_completions_total) lost, \(.untracked_total) untracked"' "$out")
	miss="$miss, $skipped events the kernel skipped"
	echo "  the disk ${truth}s in $periods periods; ftrace's events ${tr}s in $tre episodes;" \
		"stat ${got}s in $eps episodes ($miss); export ${ex}s; largest share $share"
	assertTrue "stat's stall time $got within $ST_TRACE_TOL% of the rule over ftrace's events ${tr:-none} ($miss)" \
		"bw_within '$got' '${tr:-0}' $ST_TRACE_TOL"
	assertTrue "stat's $eps episodes within $ST_TRACE_TOL% of ftrace's ${tre:-none}" \
		"bw_within '$eps' '${tre:-0}' $ST_TRACE_TOL"
	assertTrue "the disk saw starved periods ($periods)" "[ ${periods:-0} -ge $((ST_RUN * 1000 / (ST_HOLD_US / 1000 + ST_THINK_MS) / 2)) ]"
	assertTrue "stat's stall time $got within $ST_TOL% of the disk's $truth" \
		"bw_within '$got' '$truth' $ST_TOL"
	assertTrue "every period is an episode: $eps >= $periods" "[ ${eps%.*} -ge $periods ]"
	assertTrue "share $share is in (0, 1]" "awk 'BEGIN { exit !($share > 0 && $share <= 1) }'"
	# Two instances over the same events: the same time, to a hair (clock reads apart).
	assertTrue "export's counter ${ex:-none} equals stat's $got (1%)" "bw_within '${ex:-0}' '$got' 1"
	sx=$(st_metric "$dev" blkwise_dispatch_stalls_total)
	assertTrue "export's episodes ${sx:-none} equal stat's $eps (1%)" "bw_within '${sx:-0}' '$eps' 1"
	"$BW_BIN" analyze "$BW_TMP/rec.bw" --json >"$BW_TMP/an.json" 2>"$BW_TMP/an.err" ||
		{ fail "analyze: $(cat "$BW_TMP/an.err")"; return 0; }
	an=$(jq --arg d "$dev" '.devices[] | select(.device == $d) | .total[0].dispatch_stall_s' \
		"$BW_TMP/an.json")
	echo "  analyze ${an}s"
	assertTrue "analyze's replay ${an}s equals stat's $got (2%)" "bw_within '$an' '$got' 2"
	return 0
}

# Scheduler none, direct issue: nothing is ever inserted, so nothing waits.
test_no_stall_without_waiting() {
	local dev out got eps busy reads
	st_require || return 0
	bw_fakedisk dev "service_us=$ST_SVC_US,parallel=8,dispatch=any" || { fail "fakedisk up"; return 0; }
	out=$BW_TMP/none.json
	bw_stat_start "$out" -d /dev/"$dev" -i 1 --exact || { fail "stat did not start"; return 0; }
	st_fio "$dev" 0
	st_settle "$dev"
	bw_stat_stop INT
	got=$(st_sum "$out" "$dev" dispatch_stall_s)
	eps=$(st_sum "$out" "$dev" dispatch_stalls)
	busy=$(st_sum "$out" "$dev" busy_pct)
	reads=$(st_sum "$out" "$dev" reads_per_s)
	echo "  none: ${got}s in $eps episodes over busy% summed $busy, reads/s summed $reads"
	assertTrue "the device was busy (busy% summed $busy)" "awk 'BEGIN { exit !($busy > 300) }'"
	assertTrue "no stall time under none: $got s" "awk 'BEGIN { exit !($got < 0.001) }'"
	assertEquals "no stall episodes under none" 0 "${eps%.*}"
	return 0
}

# shellcheck disable=SC1091
. shunit2
