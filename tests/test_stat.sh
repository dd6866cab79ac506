#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# blkwise stat against independent oracles: fio's own counts, /proc/diskstats
# deltas over the same window, and /sys/block/DEV/inflight sampling.
. "$(dirname "$0")/lib.sh"

# run_counts RW BS: blkwise's request and byte counts for a direct-I/O fio
# job equal fio's and the /proc/diskstats deltas, exactly.
run_counts() {
	local rw=$1 bs=$2 dev out fio_ios fio_bytes bw_ios bw_bytes s0 s1 ds_ios ds_sect op field missed
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	out=$BW_TMP/counts.json
	bw_stat_start "$out" -d "$dev" -i 0.5 --exact || { fail "blkwise start"; return; }
	s0=$(bw_diskstats "$dev")
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw="$rw" \
		--bs="$bs" --iodepth=4 --ioengine=io_uring --size=48M --io_size=32M
	s1=$(bw_diskstats "$dev")
	bw_stat_stop INT
	assertEquals "blkwise exit status" 0 $?
	if [ "$rw" = randread ]; then op=read; field=1; else op=write; field=5; fi
	fio_ios=$(jq ".jobs[0].$op.total_ios" "$BW_TMP/fio.json")
	fio_bytes=$(jq ".jobs[0].$op.io_bytes" "$BW_TMP/fio.json")
	ds_ios=$(bw_diskstat_delta "$s0" "$s1" $field)
	ds_sect=$(bw_diskstat_delta "$s0" "$s1" $((field + 2)))
	bw_ios=$(bw_jsum "$out" "$dev" ".ops.$op.ios")
	bw_bytes=$(bw_jsum "$out" "$dev" ".ops.$op.bytes")
	missed=$(bw_missed "$out" "$dev")
	echo "  $rw $bs: fio $fio_ios ios $fio_bytes B; diskstats $ds_ios ios $((ds_sect * 512)) B;" \
		"blkwise $bw_ios ios $bw_bytes B, $missed completions never seen"
	assertTrue "fio did I/O" "[ $fio_ios -gt 100 ]"
	assertEquals "fio and diskstats agree" "$fio_ios" "$ds_ios"
	bw_expect_count "requests vs fio" "$fio_ios" "$bw_ios" "$missed"
	bw_expect_count "requests vs diskstats" "$ds_ios" "$bw_ios" "$missed"
	# The light tier's losses are not counted (bw_expect_count bounded them):
	# the bytes are short by as many requests.
	[ "${missed#\~}" = "$missed" ] || missed=$((fio_ios - bw_ios))
	assertEquals "bytes = fio's, less the unseen requests" "$fio_bytes" \
		"$((bw_bytes + missed * $(numfmt --from=iec "${bs^^}")))"
	assertEquals "bytes = diskstats delta, less the unseen" "$((ds_sect * 512))" \
		"$((bw_bytes + missed * $(numfmt --from=iec "${bs^^}")))"
	assertEquals "service histogram total = requests" "$bw_ios" \
		"$(bw_jsum "$out" "$dev" .svc_hist_samples)"
	assertEquals "queue histogram total = requests with a Q stamp" \
		"$(bw_jsum "$out" "$dev" .q_ios)" "$(bw_jsum "$out" "$dev" .queue_hist_samples)"
	assertEquals "every request had a Q stamp" "$bw_ios" "$(bw_jsum "$out" "$dev" .q_ios)"
}

test_counts_read_4k() { run_counts randread 4k; }
test_counts_read_64k() { run_counts randread 64k; }
test_counts_write_4k() { run_counts randwrite 4k; }
test_counts_write_64k() { run_counts randwrite 64k; }

# The raw_tp fallback programs count the same.
test_counts_raw_tp_fallback() {
	local dev out fio_ios
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	out=$BW_TMP/raw.json
	bw_stat_start "$out" -d "$dev" -i 0.5 --force-raw-tp || { fail "blkwise start"; return; }
	assertTrue "raw_tp chosen" "grep -q raw_tp $out.err"
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=4 --ioengine=io_uring --size=48M --io_size=16M
	bw_stat_stop TERM
	assertEquals "blkwise exit status on SIGTERM" 0 $?
	fio_ios=$(jq ".jobs[0].read.total_ios" "$BW_TMP/fio.json")
	bw_expect_count "raw_tp requests vs fio" "$fio_ios" "$(bw_jsum "$out" "$dev" .ops.read.ios)" \
		"$(bw_missed "$out" "$dev")"
}

# Mean Q2C equals diskstats' (ticks / ios; the kernel sums them in ns) over
# the same window, on a loop device whose requests reach the real disk.
test_q2c_matches_diskstats() {
	local dev out s0 s1 ds_ios ds_ms ds_mean bw_mean n
	bw_require fio jq || return 0
	bw_loop dev 128 disk --direct-io=on || { fail "loop device"; return; }
	out=$BW_TMP/q2c.json
	# Every request timed (--exact): the default's sample of them, taken while
	# its slices' programs add to a CPU-bound path, is held to ftrace's own
	# events in tests/test_light.sh instead.
	bw_stat_start "$out" -d "$dev" -i 1 --exact || { fail "blkwise start"; return; }
	s0=$(bw_diskstats "$dev")
	bw_fio "$BW_TMP/fio.json" --name=q --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=4 --ioengine=io_uring --time_based --runtime=4
	s1=$(bw_diskstats "$dev")
	bw_stat_stop INT
	ds_ios=$(bw_diskstat_delta "$s0" "$s1" 1)
	ds_ms=$(bw_diskstat_delta "$s0" "$s1" 4)
	n=$(bw_jsum "$out" "$dev" .q_ios)
	bw_mean=$(bw_calc "$(bw_jsum "$out" "$dev" '(.total_mean_ms // 0) * .q_ios')" / "$n")
	ds_mean=$(bw_calc "$ds_ms / $ds_ios")
	echo "  Q2C: blkwise $bw_mean ms over $n ios; diskstats $ds_mean ms over $ds_ios ios"
	assertTrue "requests took >= 50 us (reached the disk): $ds_mean ms" \
		"awk 'BEGIN { exit !($ds_mean >= 0.05) }'"
	bw_expect_count "requests vs diskstats" "$ds_ios" "$(bw_jsum "$out" "$dev" .ops.read.ios)" \
		"$(bw_missed "$out" "$dev")"
	assertTrue "Q2C $bw_mean within 5% of diskstats $ds_mean" "bw_within $bw_mean $ds_mean 5"
}

# iodepth=1: max depth 1, mean depth while busy 1.  An interval in which a
# lost completion was detected (or the one before it: the stale entry can
# straddle the boundary) may show depth 2 until the tag is reused; those are
# excluded (the loss rate itself is bounded by the count tests).  A memory-backed loop completes in
# its worker's task context, where no loss has been seen (docs/design.md, "Lost completions").
test_depth_qd1() {
	local dev out max mean clean total
	bw_require fio jq || return 0
	bw_require_fetch "depth while busy, maximum depth and P_eff" || return 0
	bw_loop dev 128 shm --direct-io=on || { fail "loop device"; return; }
	out=$BW_TMP/qd1.json
	# Short intervals: a loss spoils the interval it falls in and the next.
	bw_stat_start "$out" -d "$dev" -i 0.25 --exact || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=d --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=1 --ioengine=psync --time_based --runtime=4
	bw_stat_stop INT
	bw_clean_intervals "$out" "$dev" | jq '[.[] | select(.ops.read.ios > 100)]' >"$BW_TMP/clean.json"
	clean=$(jq length "$BW_TMP/clean.json")
	total=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .ops.read.ios > 100)] | length' "$out")
	max=$(jq '[.[].depth_max] | max' "$BW_TMP/clean.json")
	mean=$(jq '[.[].depth_mean_busy] | add / length' "$BW_TMP/clean.json")
	echo "  iodepth 1: $clean of $total busy intervals clean; max depth $max, mean depth while busy $mean"
	assertTrue "an interval without lost completions ($clean of $total)" "[ $clean -ge 1 ]"
	assertEquals "max depth" 1 "$max"
	assertTrue "mean depth $mean ~ 1" "bw_within $mean 1 2"
	assertEquals "P_eff undetermined at depth 1" 0 \
		"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .p_eff != null)] | length' "$out")"
}

# iodepth=8: mean depth while busy within 3% of ftrace's (requests issued
# and not completed, weighted by time), and the maximum 8.  On the emulated
# disk (1 ms per request, one at a time) the block layer really holds up to
# 8 requests; a loop device over a file completes them nearly as fast as
# they come and never gets deep.  (Sampling /sys/block/DEV/inflight is no
# oracle: its reader lands on refills more often than its share.)
test_depth_qd8_vs_ftrace() {
	local dev out mean oracle tr
	bw_require fio jq fusermount3 || return 0
	bw_require_fetch "depth while busy, maximum depth and P_eff" || return 0
	bw_fakedisk dev service_us=1000,parallel=1 || { fail "fakedisk"; return; }
	out=$BW_TMP/qd8.json
	# Half-second intervals: a lost completion spoils three of them (bw_clean_intervals).
	bw_stat_start "$out" -d "$dev" -i 0.5 --exact || { fail "blkwise start"; return; }
	bw_ftrace tr "$dev" block_rq_issue block_rq_complete || { fail "ftrace"; return; }
	bw_fio "$BW_TMP/fio.json" --name=d --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=8 --ioengine=io_uring --time_based --runtime=4
	bw_ftrace_stop "$tr"
	bw_stat_stop INT
	oracle=$(python3 "$BW_ROOT"/tests/ftrace_d2c.py "$tr"/trace | jq .depth_mean_busy)
	mean=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .busy_pct > 90)
		| .depth_mean_busy] | if length > 0 then add / length else 0 end' "$out")
	echo "  iodepth 8: blkwise mean depth while busy $mean, ftrace $oracle"
	assertTrue "the device was driven deep (ftrace $oracle)" "awk 'BEGIN { exit !($oracle >= 6) }'"
	assertTrue "mean depth $mean within 3% of ftrace's $oracle" "bw_within $mean $oracle 3"
	# As for iodepth 1, intervals with a lost completion are left out.
	assertEquals "max depth" 8 "$(bw_clean_intervals "$out" "$dev" | jq '[.[].depth_max] | max')"
}

# Merges equal diskstats' merge counts: 4 KiB sequential writes from a
# plugged batch merge into larger requests.
test_merges_match_diskstats() {
	local dev out s0 s1 ds_merges bw_merges
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	out=$BW_TMP/merge.json
	bw_stat_start "$out" -d "$dev" -i 1 || { fail "blkwise start"; return; }
	s0=$(bw_diskstats "$dev")
	bw_fio "$BW_TMP/fio.json" --name=m --filename=/dev/"$dev" --direct=1 --rw=write \
		--bs=4k --iodepth=32 --iodepth_batch_submit=32 --ioengine=libaio --size=32M
	s1=$(bw_diskstats "$dev")
	bw_stat_stop INT
	ds_merges=$(bw_diskstat_delta "$s0" "$s1" 6)
	bw_merges=$(bw_jsum "$out" "$dev" .merges)
	echo "  merges: diskstats $ds_merges, blkwise $bw_merges; writes: diskstats $(bw_diskstat_delta "$s0" "$s1" 5), blkwise $(bw_jsum "$out" "$dev" .ops.write.ios), missed $(bw_missed "$out" "$dev")"
	assertTrue "the workload merged" "[ $ds_merges -gt 0 ]"
	assertEquals "merges = diskstats delta" "$ds_merges" "$bw_merges"
	bw_expect_count "write requests against the diskstats delta" \
		"$(bw_diskstat_delta "$s0" "$s1" 5)" "$(bw_jsum "$out" "$dev" .ops.write.ios)" \
		"$(bw_missed "$out" "$dev")"
}

# I/O to a partition is counted on its disk.
test_partition_folds_into_disk() {
	local dev out
	bw_require fio jq sfdisk || return 0
	bw_loop dev 64 shm --direct-io=on --partscan || { fail "loop device"; return; }
	echo 'start=2048, size=65536' | sfdisk -q /dev/"$dev" >/dev/null 2>&1
	partx -u /dev/"$dev" >/dev/null 2>&1
	for _ in $(seq 20); do [ -b /dev/"${dev}p1" ] && break; sleep 0.1; done
	[ -b /dev/"${dev}p1" ] || { bw_skip "no partition device appeared"; return 0; }
	out=$BW_TMP/part.json
	bw_stat_start "$out" -d "${dev}p1" -i 1 || { fail "blkwise start"; return; }
	assertTrue "says it watches the disk" "grep -q 'partition: watching its disk $dev' $out.err"
	bw_fio "$BW_TMP/fio.json" --name=p --filename=/dev/"${dev}p1" --direct=1 --rw=randread \
		--bs=4k --iodepth=2 --ioengine=psync --size=16M --io_size=4M
	bw_stat_stop INT
	assertEquals "partition requests on the disk row" \
		"$(jq '.jobs[0].read.total_ios' "$BW_TMP/fio.json")" "$(bw_jsum "$out" "$dev" .ops.read.ios)"
}

# A watched device that disappears is reported gone; the rest keep being watched.
test_device_gone() {
	local a b out n
	bw_require fio jq python3 || return 0
	bw_loop a 32 shm --direct-io=on || { fail "loop a"; return; }
	bw_loop b 32 shm --direct-io=on || { fail "loop b"; return; }
	out=$BW_TMP/gone.json
	bw_stat_start "$out" -d "$a" -d "$b" -i 0.3 || { fail "blkwise start"; return; }
	losetup -d /dev/"$b"
	python3 -c "import fcntl,os; fd=os.open('/dev/loop-control', os.O_RDWR); fcntl.ioctl(fd, 0x4C81, ${b#loop})"
	sleep 1
	assertTrue "still running" "kill -0 $BW_STAT_PID"
	assertTrue "reported gone" "grep -q '$b: device gone' $out.err"
	fio --name=g --filename=/dev/"$a" --direct=1 --rw=randread --bs=4k --size=8M \
		--io_size=4M --ioengine=psync >/dev/null
	sleep 0.5
	bw_stat_stop INT
	assertEquals "exit status" 0 $?
	n=$(bw_jsum "$out" "$a" .ops.read.ios)
	bw_expect_count "the other device still counted" 1024 "$n" "$(bw_missed "$out" "$a")"
	assertEquals "gone flagged in JSON, once" 1 \
		"$(jq -s --arg d "$b" '[.[].devices[] | select(.device == $d and .gone)] | length' "$out")"
}

# After Ctrl-C or SIGTERM nothing of blkwise stays in the kernel.
test_exit_detaches() {
	local out sig ids id left
	bw_require bpftool jq || return 0
	for sig in INT TERM; do
		out=$BW_TMP/exit.json
		bw_stat_start "$out" -i 0.2 || { fail "blkwise start"; return; }
		ids=$(bw_prog_ids "$BW_STAT_PID")
		assertTrue "programs loaded while running" "[ $(echo "$ids" | wc -w) -ge 2 ]"
		bw_stat_stop $sig
		assertEquals "exit status on SIG$sig" 0 $?
		# The kernel frees a program from a work item after its last
		# reference goes: give it two seconds.
		for _ in $(seq 20); do
			left=0
			for id in $ids; do
				bpftool prog show id "$id" >/dev/null 2>&1 && left=$((left + 1))
			done
			[ $left -eq 0 ] && break
			sleep 0.1
		done
		assertEquals "programs left after SIG$sig" 0 "$left"
	done
}

# Bad input: one clear line and exit 2 (usage) or 1 (runtime).
expect_error() {
	local code=$1 pattern=$2 rc
	shift 2
	"$@" >"$BW_TMP/err.out" 2>"$BW_TMP/err.txt"
	rc=$?
	assertEquals "exit code of: $*" "$code" "$rc"
	grep -qE -- "$pattern" "$BW_TMP/err.txt"
	assertTrue "message /$pattern/ for: $* (got: $(head -c 300 "$BW_TMP/err.txt"))" $?
}

test_bad_input() {
	[ -x "$BW_BIN" ] || { bw_skip "blkwise not built"; return 0; }
	expect_error 2 "unknown device 'nosuchdev'" "$BW_BIN" stat -d nosuchdev -c 1
	expect_error 2 "bad interval '0'" "$BW_BIN" stat -i 0 -c 1
	expect_error 2 "bad interval 'abc'" "$BW_BIN" stat -i abc -c 1
	expect_error 2 "bad interval '-1'" "$BW_BIN" stat -i -1 -c 1
	expect_error 2 "bad count '0'" "$BW_BIN" stat -c 0
	expect_error 2 "bad count 'x'" "$BW_BIN" stat -c x
	expect_error 2 "unknown command 'frobnicate'" "$BW_BIN" frobnicate
	expect_error 2 "unexpected argument 'extra'" "$BW_BIN" stat extra
	expect_error 2 "usage:" "$BW_BIN"
	expect_error 2 "unknown device" "$BW_BIN" stat --json -d nosuchdev
	assertTrue "JSON error object on stdout with --json" \
		"jq -e '.error | test(\"unknown device\")' $BW_TMP/err.out >/dev/null"
}

test_runtime_errors() {
	bw_require setpriv capsh || return 0
	expect_error 1 "no kernel BTF \(/nonexistent/vmlinux\)" \
		"$BW_BIN" stat --btf /nonexistent/vmlinux -c 1
	expect_error 1 "not privileged: missing CAP_BPF and CAP_PERFMON" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$BW_BIN" stat -c 1
	expect_error 1 "not privileged: missing CAP_PERFMON" \
		capsh --drop=cap_perfmon,cap_sys_admin -- -c "$BW_BIN stat -c 1"
}

. shunit2
