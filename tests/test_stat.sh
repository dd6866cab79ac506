#!/usr/bin/env bash
# blkwise stat against independent oracles: fio's own counts, /proc/diskstats
# deltas over the same window, and /sys/block/DEV/inflight sampling.
. "$(dirname "$0")/lib.sh"

# run_counts RW BS: blkwise's request and byte counts for a direct-I/O fio
# job equal fio's and the /proc/diskstats deltas, exactly.
run_counts() {
	local rw=$1 bs=$2 dev out fio_ios fio_bytes bw_ios bw_bytes s0 s1 ds_ios ds_sect op field
	bw_require fio jq || return 0
	dev=$(bw_loop 64 shm --direct-io=on) || fail "loop device"
	out=$BW_TMP/counts.json
	bw_stat_start "$out" -d "$dev" -i 0.5 || { fail "blkwise start"; return; }
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
	echo "  $rw $bs: fio $fio_ios ios $fio_bytes B; diskstats $ds_ios ios $((ds_sect * 512)) B;" \
		"blkwise $bw_ios ios $bw_bytes B"
	assertTrue "fio did I/O" "[ $fio_ios -gt 1000 ]"
	assertEquals "requests = fio's" "$fio_ios" "$bw_ios"
	assertEquals "requests = diskstats delta" "$ds_ios" "$bw_ios"
	assertEquals "bytes = fio's" "$fio_bytes" "$bw_bytes"
	assertEquals "bytes = diskstats delta" "$((ds_sect * 512))" "$bw_bytes"
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
	dev=$(bw_loop 64 shm --direct-io=on) || fail "loop device"
	out=$BW_TMP/raw.json
	bw_stat_start "$out" -d "$dev" -i 0.5 --force-raw-tp || { fail "blkwise start"; return; }
	assertTrue "raw_tp chosen" "grep -q raw_tp $out.err"
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=4 --ioengine=io_uring --size=48M --io_size=16M
	bw_stat_stop TERM
	assertEquals "blkwise exit status on SIGTERM" 0 $?
	fio_ios=$(jq ".jobs[0].read.total_ios" "$BW_TMP/fio.json")
	assertEquals "raw_tp requests = fio's" "$fio_ios" "$(bw_jsum "$out" "$dev" .ops.read.ios)"
}

# Mean Q2C equals diskstats' (ticks / ios; the kernel sums them in ns) over
# the same window, on a loop device whose requests reach the real disk.
test_q2c_matches_diskstats() {
	local dev out s0 s1 ds_ios ds_ms ds_mean bw_mean n
	bw_require fio jq || return 0
	dev=$(bw_loop 128 disk --direct-io=on) || fail "loop device"
	out=$BW_TMP/q2c.json
	bw_stat_start "$out" -d "$dev" -i 1 || { fail "blkwise start"; return; }
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
	assertEquals "same requests" "$ds_ios" "$n"
	assertTrue "Q2C $bw_mean within 5% of diskstats $ds_mean" "bw_within $bw_mean $ds_mean 5"
}

# iodepth=1: max depth 1, mean depth while busy 1.
test_depth_qd1() {
	local dev out max mean
	bw_require fio jq || return 0
	dev=$(bw_loop 128 disk --direct-io=on) || fail "loop device"
	out=$BW_TMP/qd1.json
	bw_stat_start "$out" -d "$dev" -i 1 || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=d --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=1 --ioengine=psync --time_based --runtime=3
	bw_stat_stop INT
	max=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d) | .depth_max] | max' "$out")
	mean=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .depth_mean_busy != null)
		| .depth_mean_busy] | add / length' "$out")
	echo "  iodepth 1: max depth $max, mean depth while busy $mean"
	assertEquals "max depth" 1 "$max"
	assertTrue "mean depth $mean ~ 1" "bw_within $mean 1 2"
	assertEquals "P_eff undetermined at depth 1" 0 \
		"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .p_eff != null)] | length' "$out")"
}

# iodepth=8: mean depth within 20% of /sys/block/DEV/inflight sampled meanwhile.
test_depth_qd8_vs_inflight() {
	local dev out mean sampled fio_pid
	bw_require fio jq || return 0
	dev=$(bw_loop 128 disk --direct-io=on) || fail "loop device"
	out=$BW_TMP/qd8.json
	bw_stat_start "$out" -d "$dev" -i 1 || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=d --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=8 --ioengine=io_uring --time_based --runtime=4 &
	fio_pid=$!
	bw_on_cleanup "kill $fio_pid"
	sleep 0.5
	sampled=$(for _ in $(seq 300); do cat /sys/block/"$dev"/inflight; sleep 0.01; done |
		awk '{ s += $1 + $2; n++ } END { printf "%.3f", s / n }')
	wait $fio_pid
	bw_stat_stop INT
	mean=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .busy_pct > 90)
		| .depth_mean_busy] | add / length' "$out")
	echo "  iodepth 8: blkwise mean depth $mean, sampled inflight $sampled"
	assertTrue "mean depth $mean within 20% of sampled $sampled" "bw_within $mean $sampled 20"
	assertTrue "max depth <= 8" \
		"[ $(jq -s '[.[].devices[].depth_max] | max' "$out") -le 8 ]"
}

# Merges equal diskstats' merge counts: 4 KiB sequential writes from a
# plugged batch merge into larger requests.
test_merges_match_diskstats() {
	local dev out s0 s1 ds_merges bw_merges
	bw_require fio jq || return 0
	dev=$(bw_loop 64 shm --direct-io=on) || fail "loop device"
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
	echo "  merges: diskstats $ds_merges, blkwise $bw_merges"
	assertTrue "the workload merged" "[ $ds_merges -gt 0 ]"
	assertEquals "merges = diskstats delta" "$ds_merges" "$bw_merges"
	assertEquals "write requests = diskstats delta" "$(bw_diskstat_delta "$s0" "$s1" 5)" \
		"$(bw_jsum "$out" "$dev" .ops.write.ios)"
}

# I/O to a partition is counted on its disk.
test_partition_folds_into_disk() {
	local dev out
	bw_require fio jq sfdisk || return 0
	dev=$(bw_loop 64 shm --direct-io=on --partscan) || fail "loop device"
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
	a=$(bw_loop 32 shm --direct-io=on) || fail "loop a"
	b=$(bw_loop 32 shm --direct-io=on) || fail "loop b"
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
	assertEquals "the other device still counted" 1024 "$n"
	assertTrue "gone flagged in JSON" \
		"jq -e --arg d $b 'select(.devices[] | .device == \$d and .gone)' $out >/dev/null"
}

# After Ctrl-C or SIGTERM nothing of blkwise stays in the kernel.
test_exit_detaches() {
	local out sig
	bw_require bpftool || return 0
	for sig in INT TERM; do
		out=$BW_TMP/exit.json
		bw_stat_start "$out" -i 0.2 || { fail "blkwise start"; return; }
		assertTrue "programs loaded while running" \
			"bpftool prog list | grep -q 'name bw_issue'"
		bw_stat_stop $sig
		assertEquals "exit status on SIG$sig" 0 $?
		assertEquals "no blkwise program left after SIG$sig" 0 \
			"$(bpftool prog list | grep -c ' name bw_')"
	done
}

# Bad input: one clear line and exit 2 (usage) or 1 (runtime).
expect_error() {
	local code=$1 pattern=$2 rc
	shift 2
	"$@" >"$BW_TMP/err.out" 2>"$BW_TMP/err.txt"
	rc=$?
	assertEquals "exit code of: $*" "$code" "$rc"
	assertTrue "message /$pattern/ for: $* (got: $(head -c 300 "$BW_TMP/err.txt"))" \
		"grep -qE '$pattern' $BW_TMP/err.txt"
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
