#!/usr/bin/env bash
# The light tier (bpf/light.bpf.c, the default of stat) against the kernel's
# own records: its counts against /proc/diskstats and fio (short by no
# more than the completions the kernel never hands to BPF), its D2C mean,
# p50 and p99 against ftrace's block_rq_issue -> block_rq_complete per
# request (tests/ftrace_d2c.py pairs them; its percentiles are read through
# blkwise's histogram geometry so only the stamps are compared), and its
# timing source.  The stamp (rq->io_start_time_ns) is set just after the
# issue event, from blk_time_get_ns: since 6.9 every request is submitted
# under a plug (__submit_bio opens one "to cache nsecs time" where the
# submitter has none), whose clock is read once, at the request's
# allocation (rq->start_time_ns, the same value), so the stamp is the
# allocation's time, not the issue's: D2C from it is ftrace's
# issue-to-completion plus allocation-to-issue (about a microsecond on a
# loop device; a batch under one plug adds the batch's time so far).  Where
# the kernel is older than 6.9 the two agree within LT_TOL %; from 6.9 on,
# each figure is within LT_TOL % or LT_PLUG_US microseconds of ftrace's
# (measured here: 1.0 to 1.3 us at the mean and p50, 0.9 to 3.0 us at p99,
# where the allocation-to-issue tail and a histogram bucket of 2 us add up;
# the tail is the machine's, and a busy CI machine once put 5.1 us at p99,
# so p99 has twice the allowance), and the test prints both.  A D2C 5 us
# off fails at the mean and p50 (checked once by adding 5 us in
# bpf/light.bpf.c).
. "$(dirname "$0")/lib.sh"

LT_TOL=${LT_TOL:-1}
LT_SECS=${LT_SECS:-3}
# The cached clock's share, 6.9 and later: allocation to issue, per request.
LT_PLUG_US=${LT_PLUG_US:-$(uname -r | awk -F. '{ print ($1 * 1000 + $2 >= 6009) ? 4 : 0 }')}

# lt_mark DIR: a calibration mark, CLOCK_MONOTONIC ns, in one write.
lt_mark() {
	printf 'blkwise-cal %s\n' "$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')" \
		>"$1"/trace_marker
}

# lt_run DEV NAME FIO_ARGS...: stat (light) and an ftrace instance (x86-tsc
# clock where there is one, with calibration marks) around one fio run;
# sets LT_OUT (stat's JSON), LT_ORACLE (ftrace_d2c.py's JSON), LT_DS
# (diskstats' reads), LT_FIO (fio's reads), LT_BPF (the completions that
# reached BPF, counted by bpftrace; empty where it cannot run).
lt_run() {
	local dev=$1 name=$2 t s0 s1
	shift 2
	LT_OUT=$BW_TMP/$name.json
	bw_ftrace t "$dev" block_rq_issue block_rq_complete || { fail "ftrace instance"; return 1; }
	bw_ftrace_stop "$t"
	echo 0 >"$t"/tracing_on
	echo 65536 >"$t"/buffer_size_kb
	grep -qw x86-tsc "$t"/trace_clock && echo x86-tsc >"$t"/trace_clock
	: >"$t"/trace
	for e in block_rq_issue block_rq_complete; do echo 1 >"$t"/events/block/$e/enable; done
	# Started once nothing reaches the new device (its udev probe can come
	# late): a read between diskstats' first look and the attach would be
	# diskstats' and not blkwise's.
	bw_stat_start_quiet "$LT_OUT" "$dev" -i 600 --no-state || { fail "blkwise start"; return 1; }
	s0=$BW_S0
	LT_BPF=
	if bw_bpf_count_start "$dev"; then
		assertEquals "nothing reached $dev while the independent counter attached" "$s0" "$(bw_diskstats "$dev")"
		LT_BPF=on
	fi
	echo 1 >"$t"/tracing_on
	lt_mark "$t"
	bw_fio "$BW_TMP/$name.fio.json" --name="$name" --filename="/dev/$dev" --direct=1 \
		--rw=randread --bs=4k --time_based --runtime="$LT_SECS" "$@" || { fail "fio"; return 1; }
	sleep 0.2
	lt_mark "$t"
	echo 0 >"$t"/tracing_on
	bw_stat_stop INT
	assertEquals "$name: blkwise exit status" 0 $?
	[ -z "$LT_BPF" ] || bw_bpf_count_stop LT_BPF
	s1=$(bw_diskstats "$dev")
	LT_DS=$(bw_diskstat_delta "$s0" "$s1" 1)
	LT_FIO=$(jq '.jobs[0].read.total_ios' "$BW_TMP/$name.fio.json")
	assertEquals "$name: no ftrace overrun" 0 "$(awk '/^overrun/ { s += $2 } END { print s + 0 }' "$t"/per_cpu/cpu*/stats)"
	LT_ORACLE=$(python3 "$BW_ROOT"/tests/ftrace_d2c.py "$t"/trace) || { fail "ftrace_d2c.py"; return 1; }
	bw_ftrace_stop "$t"
}

# lt_field F: F of the device's one interval (-i 600: the whole run).
lt_field() { jq -s --arg d "$LT_DEV" "[.[].devices[] | select(.device == \$d)] | last | $1" "$LT_OUT"; }

# lt_close A B [US]: A within LT_TOL % of B, or within US (LT_PLUG_US)
# microseconds (A, B in ms).
lt_close() {
	bw_within "$1" "$2" "$LT_TOL" ||
		awk -v a="$1" -v b="$2" -v u="${3:-$LT_PLUG_US}" 'BEGIN { d = (a - b) * 1000; exit !(d >= -u && d <= u) }'
}

# lt_check NAME: counts exact, tier and source, D2C as lt_close says.
lt_check() {
	local name=$1 seen f bw or us
	seen=$(bw_jsum "$LT_OUT" "$LT_DEV" .ops.read.ios)
	echo "  $name: diskstats $LT_DS reads, fio $LT_FIO, handed to BPF ${LT_BPF:-(no bpftrace)}, blkwise (light) $seen" \
		"($(lt_field .unmatched_total) unmatched, timing $(lt_field .timing_source))," \
		"ftrace $(jq .completes <<<"$LT_ORACLE") completions, $(jq .requests <<<"$LT_ORACLE") paired"
	# Some kernels never hand a completion to any BPF program (docs/design.md,
	# "Lost completions"): seen + in flight <= diskstats, short by <= 0.5%.
	bw_expect_count "$name: reads vs diskstats" "$LT_DS" "$seen" "$(bw_missed "$LT_OUT" "$LT_DEV")"
	# ... and exactly what reached BPF, by a counter of its own.
	if [ -n "$LT_BPF" ]; then
		assertEquals "$name: reads = the completions handed to BPF (bpftrace)" "$LT_BPF" "$seen"
	elif [ "$(id -u)" = 0 ] && ! command -v bpftrace >/dev/null; then
		fail "$name: bpftrace missing (tools/deps.sh --test installs it)"
	fi
	assertEquals "$name: fio's reads = diskstats" "$LT_DS" "$LT_FIO"
	assertEquals "$name: tier" '"light"' "$(lt_field .tier)"
	assertEquals "$name: timing source" '"stamp"' "$(lt_field .timing_source)"
	assertEquals "$name: every completion stamped" 0 "$(lt_field .unmatched_total)"
	for f in mean:svc_mean_ms:mean_ms p50:svc_p50_ms:hist_p50_ms p99:svc_p99_ms:hist_p99_ms; do
		bw=$(lt_field ".$(cut -d: -f2 <<<"$f")")
		or=$(jq ".$(cut -d: -f3 <<<"$f")" <<<"$LT_ORACLE")
		echo "  $name: D2C ${f%%:*}: blkwise $bw ms, ftrace $or ms" \
			"($(bw_calc "($bw - $or) * 100 / $or") %, $(bw_calc "($bw - $or) * 1000") us;" \
			"exact nearest rank: $(jq -c '[.p50_ms, .p99_ms]' <<<"$LT_ORACLE"))"
		us=$LT_PLUG_US
		[ "${f%%:*}" = p99 ] && us=$((2 * LT_PLUG_US))
		assertTrue "$name: D2C ${f%%:*} $bw within $LT_TOL% or $us us of ftrace's $or" \
			"lt_close $bw $or $us"
	done
}

test_light_alone_vs_ftrace_depth1() {
	bw_require fio jq python3 || return 0
	bw_loop LT_DEV 128 shm --direct-io=on || { fail "loop"; return; }
	lt_run "$LT_DEV" qd1 --ioengine=psync || return
	lt_check "psync qd1"
}

test_light_alone_vs_ftrace_batched() {
	bw_require fio jq python3 || return 0
	bw_loop LT_DEV 128 shm --direct-io=on || { fail "loop"; return; }
	lt_run "$LT_DEV" qd32 --ioengine=io_uring --iodepth=32 --iodepth_batch_submit=8 || return
	lt_check "io_uring qd32 (plugged batches)"
}

# A queue that keeps no stamp (simulated: BLKWISE_BENCH_SKIP's
# BW_SKIP_L_STAMP has the light program ignore rq->io_start_time_ns): the
# first completions are counted apart, the issue program is attached for the
# device, said once under --verbose, and times it from then on.
test_fallback_without_stamps() {
	local out=$BW_TMP/fb.json dev seen un
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	BLKWISE_BENCH_SKIP=0x1000 bw_stat_start "$out" -d "$dev" -i 0.5 --no-state --verbose ||
		{ fail "blkwise start"; return; }
	bw_fio "$BW_TMP/fb1.fio.json" --name=fb1 --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=psync --time_based --runtime=1
	sleep 1.2
	bw_fio "$BW_TMP/fb2.fio.json" --name=fb2 --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=psync --time_based --runtime=1
	sleep 0.7
	bw_stat_stop INT
	assertEquals "said once" 1 "$(grep -c 'keeps no issue stamp' "$out.err")"
	assertEquals "timing source" '"issue_fallback"' \
		"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .timing_source' "$out")"
	seen=$(bw_jsum "$out" "$dev" .ops.read.ios)
	un=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .unmatched_total' "$out")
	echo "  fallback: fio $(jq -s '[.[].jobs[0].read.total_ios] | add' "$BW_TMP"/fb1.fio.json "$BW_TMP"/fb2.fio.json)" \
		"reads, $seen timed by the issue program, $un counted apart before it was attached"
	bw_expect_count "every read timed or counted apart" \
		"$(jq -s '[.[].jobs[0].read.total_ios] | add' "$BW_TMP"/fb1.fio.json "$BW_TMP"/fb2.fio.json)" \
		"$((seen + un))" "$(bw_missed "$out" "$dev")"
	assertTrue "the second run timed: $seen >= fio's $(jq .jobs[0].read.total_ios "$BW_TMP"/fb2.fio.json)" \
		"[ $seen -ge $(jq .jobs[0].read.total_ios "$BW_TMP"/fb2.fio.json) ]"
}

# The exact tier on the same run shape names its own source.
test_exact_names_its_source() {
	local out=$BW_TMP/exact.json dev
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	bw_stat_start "$out" -d "$dev" -i 600 --no-state --exact || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/ex.fio.json" --name=ex --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=psync --time_based --runtime=1
	bw_stat_stop INT
	assertEquals "tier" '"exact"' "$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .tier' "$out")"
	assertEquals "timing source" '"issue"' "$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .timing_source' "$out")"
	assertNotNull "busy measured" "$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .busy_pct // empty' "$out")"
}

# lt_busy DEV OUT_EXACT OUT_LIGHT FIO_ARGS...: both tiers watching one fio
# run of 6 s in 1 s intervals; prints "exact light" busy_pct, the means
# over the intervals fio filled (the first and last dropped).
lt_busy() {
	local dev=$1 ex=$2 li=$3 ex_pid
	shift 3
	bw_stat_start "$ex" -d "$dev" -i 1 --exact --no-state || return 1
	ex_pid=$BW_STAT_PID
	bw_stat_start "$li" -d "$dev" -i 1 --no-state || return 1
	fio --name=b --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --time_based \
		--runtime=6 --ioengine=io_uring "$@" >/dev/null || return 1
	kill -INT "$BW_STAT_PID" "$ex_pid"
	wait "$BW_STAT_PID" "$ex_pid"
	for f in "$ex" "$li"; do
		jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .ops.read.ios > 0)]
			| .[1:-1] | [.[].busy_pct] | add / length' "$f"
	done | paste -sd' '
}

# The light tier's busy time is the kernel's io_ticks (busy_source), kept in
# whole jiffies: against the exact tier's busy time (the in-flight word) on
# the emulated disk (4 servers of 2 ms) at depth 1, 4 and 32, and at depth
# 1 with the reader idle 3 ms after each request (shorter than a jiffy at
# HZ=250), each within LT_TICKS_PCT percentage points of the exact busy
# time; printed for docs/metrics.md.
LT_TICKS_PCT=3
test_busy_from_io_ticks() {
	local dev depth ex li got
	bw_require fio jq fusermount3 || return 0
	bw_fakedisk dev dispatch=any,parallel=4,service_us=2000 || { fail "fakedisk"; return; }
	for depth in 1 4 32 idle; do
		ex=$BW_TMP/busy.$depth.exact.json
		li=$BW_TMP/busy.$depth.light.json
		if [ $depth = idle ]; then
			got=$(lt_busy "$dev" "$ex" "$li" --iodepth=1 --thinktime=3000)
		else
			got=$(lt_busy "$dev" "$ex" "$li" --iodepth=$depth)
		fi || { fail "depth $depth: a run"; return; }
		read -r e l <<<"$got"
		echo "  depth $depth: busy_pct exact $e, light (io_ticks) $l"
		assertEquals "depth $depth: the light tier says where its busy time comes from" io_ticks \
			"$(jq -rs '[.[].devices[] | select(.busy_pct != null)][0].busy_source' "$li")"
		assertEquals "depth $depth: the exact tier's" exact \
			"$(jq -rs '[.[].devices[] | select(.busy_pct != null)][0].busy_source' "$ex")"
		assertTrue "depth $depth: io_ticks $l within $LT_TICKS_PCT points of the exact $e" \
			"awk 'BEGIN { d = $l - $e; exit !(d <= $LT_TICKS_PCT && -d <= $LT_TICKS_PCT) }'"
	done
}

. shunit2
