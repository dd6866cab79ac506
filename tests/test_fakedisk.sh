#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: tools/fakedisk behaves like the disk it claims to model.
#
# Each test mounts its own fakedisk under /tmp/$BW_TAG-fakedisk.*,
# puts a loop device (direct I/O) on it, drives it with fio and compares
# three views of the same run: the model's arithmetic, fio's JSON and the
# daemon's own "stats" file.  Run as root: tests/test_fakedisk.sh
#
# Why the counts must match exactly: with nomerges=2 the block layer
# neither merges nor (for I/O <= 512 KiB) splits fio's requests, loop turns
# each request into one read_iter/write_iter on DIR/disk, and FUSE async
# DIO sends each as one FUSE_READ/WRITE (<= max_pages).  fio's time_based
# stop reaps the I/O still in flight and counts it in total_ios.  Counters
# are reset just before fio starts and read after it exits, so
# daemon requests == fio total_ios, and bytes == io_bytes.

. "$(dirname "$0")/lib.sh"

FAKEDISK=$BW_ROOT/tools/fakedisk.sh
PREFIX=/tmp/$BW_TAG-fakedisk.$$
T=
MNT=
LOOP=

# Why a whole suite could not run, or empty.  Checked by every test.
skip_reason() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (losetup)"; return; }
	[ -c /dev/fuse ] || { echo "/dev/fuse missing: no FUSE here"; return; }
	command -v fusermount3 >/dev/null ||
		{ echo "fusermount3 missing: apt-get install fuse3"; return; }
	pkg-config --exists fuse3 2>/dev/null ||
		{ echo "libfuse3 missing: apt-get install libfuse3-dev"; return; }
	command -v fio >/dev/null || { echo "fio missing: apt-get install fio"; return; }
	command -v jq >/dev/null || { echo "jq missing: apt-get install jq"; return; }
	command -v losetup >/dev/null || { echo "losetup missing"; return; }
	[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] ||
		{ echo "io_uring disabled (kernel.io_uring_disabled)"; return; }
}
SKIP_REASON=$(skip_reason)
BUILT=

# Per test (lib.sh's setUp): a fresh directory; the daemon goes on $MNT.
bw_suite_setup() {
	T=$(mktemp -d "$PREFIX.XXXXXX")
	MNT=$T/mnt
	LOOP=
	bw_on_cleanup "$FAKEDISK down $MNT; rm -rf $T"
}

# Catch-all for an interrupted run: anything left under our prefix.
bw_suite_cleanup() {
	local d
	for d in "$PREFIX".*; do
		[ -d "$d" ] || continue
		"$FAKEDISK" down "$d/mnt" 2>/dev/null
		rm -rf "$d"
	done
	return 0
}

# Skips the test (named, never counted as passed) when the fixture can't
# run here; builds it once otherwise (a build failure is a failure).
fd_require() {
	if [ -n "$SKIP_REASON" ]; then
		bw_skip "$SKIP_REASON"
		return 1
	fi
	if [ -z "$BUILT" ]; then
		make -s -C "$BW_ROOT/tools/fakedisk" || { fail "make -C tools/fakedisk"; return 1; }
		BUILT=1
	fi
}

# Tear down now and check nothing is left behind (the cleanup lib.sh runs
# after the test would do it too, but silently).
fd_down() {
	local left
	"$FAKEDISK" down "$MNT"
	left=$(losetup -l -n -O NAME,BACK-FILE | grep -F "$T/" || true)
	assertNull "loop devices left behind: $left" "$left"
	left=$(grep -F " $T/" /proc/self/mountinfo || true)
	assertNull "mounts left behind: $left" "$left"
}

fd_up() {
	LOOP=$("$FAKEDISK" up "$MNT" "$1")
	assertTrue "fakedisk.sh up $1" $? || return 1
	# Two random 4k reads can be adjacent; one merge would break 1:1 counts.
	echo 2 >"/sys/block/$LOOP/queue/nomerges"
}

# run_fio FIO_ARGS...: reset the daemon, run fio, snapshot both views.
run_fio() {
	echo 1 >"$MNT/reset"
	fio --name=fakedisk --filename="/dev/$LOOP" --ioengine=io_uring \
		--direct=1 --output-format=json "$@" >"$T/fio.json" 2>"$T/fio.err"
	rc=$?
	assertTrue "fio $*: $(cat "$T/fio.err")" $rc || return 1
	jq -c . "$MNT/stats" >"$T/stats.json"
	assertTrue "stats is not valid JSON" $?
}

st() { jq -r "$1" "$T/stats.json"; }
fio_r() { jq -r ".jobs[0].read.$1" "$T/fio.json"; }
fio_w() { jq -r ".jobs[0].write.$1" "$T/fio.json"; }

# assert_range MSG VALUE LO HI  (floats)
assert_range() {
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'
	assertTrue "$1: got $2, want [$3, $4]" $?
}

# assert_near MSG VALUE EXPECTED PCT
assert_near() {
	lo=$(awk -v e="$3" -v p="$4" 'BEGIN { print e * (1 - p / 100) }')
	hi=$(awk -v e="$3" -v p="$4" 'BEGIN { print e * (1 + p / 100) }')
	assert_range "$1 (expected $3 +-$4%)" "$2" "$lo" "$hi"
}

# Utilisation of spindle i over the time the daemon had work.
util() { st "(.spindle_busy_ns[$1] / .busy_ns)"; }

report() {
	printf '  %s: fio %.0f IOPS, daemon %s req, inflight avg(busy) %.2f max %s, util %s, seeks %s\n' \
		"$1" "$2" "$(st .requests)" "$(st .inflight_avg_busy)" \
		"$(st .inflight_max)" \
		"$(st '[.spindle_busy_ns[] / .busy_ns * 100 | round] | map(tostring) | join("/")')%" \
		"$(st .seeks)"
}

# One spindle, 2 ms: 16 queued requests are served strictly one at a time.
test_p1_qd16_serializes() {
	fd_require || return 0
	fd_up service_us=2000,parallel=1 || return
	run_fio --rw=randread --bs=4k --iodepth=16 --time_based --runtime=4 ||
		return
	iops=$(fio_r iops)
	report P=1 "$iops"
	assert_near "P=1 IOPS = 1/service" "$iops" 500 10
	assertEquals "daemon requests == fio total_ios" "$(fio_r total_ios)" "$(st .requests)"
	assertEquals "daemon reads == fio total_ios" "$(fio_r total_ios)" "$(st .reads)"
	assertEquals "daemon bytes == fio io_bytes" "$(fio_r io_bytes)" "$(st .bytes)"
	assertEquals "no writes" 0 "$(st .writes)"
	# The whole queue depth reaches the daemon: FUSE/loop do not throttle.
	assertEquals "inflight_max == iodepth" 16 "$(st .inflight_max)"
	assert_range "inflight_avg_busy ~ iodepth" "$(st .inflight_avg_busy)" 14 16
	assert_range "spindle busy while the daemon had work" "$(util 0)" 0.97 1.0001
	# No seek/xfer cost configured: every request costs exactly 2 ms.
	assertEquals "spindle_busy_ns == requests * service" \
		"$(st '.requests * 2000000')" "$(st '.spindle_busy_ns[0]')"
	# Little's law: latency = queue depth / throughput = 16 * 2 ms.
	assert_near "fio mean latency (ms)" "$(fio_r 'clat_ns.mean / 1e6')" 32 10
	fd_down
}

# Sequential chunk-sized reads rotate over the spindles: perfect striping.
test_p4_striped_sequential_is_4x() {
	fd_require || return 0
	fd_up service_us=2000,parallel=4,chunk_kb=64 || return
	run_fio --rw=read --bs=64k --iodepth=16 --time_based --runtime=3 || return
	iops=$(fio_r iops)
	report "P=4 seq 64k" "$iops"
	assert_near "P=4 striped IOPS" "$iops" 2000 10
	assertEquals "daemon requests == fio total_ios" "$(fio_r total_ios)" "$(st .requests)"
	for i in 0 1 2 3; do
		assert_range "spindle $i util" "$(util $i)" 0.9 1.0001
	done
	# A sequential stream never moves a head.  The daemon receives on one
	# thread, in loop's order; libfuse's pool (fuse_mt=1) swaps ~1%.
	assert_range "seeks on a sequential stream (<1%)" "$(st .seeks)" 0 \
		"$(st '.requests / 100')"
	fd_down
}

# Random 4k at QD16 over 4 spindles: parallel, minus routing imbalance.
test_p4_random_qd16() {
	fd_require || return 0
	fd_up service_us=2000,parallel=4 || return
	run_fio --rw=randread --bs=4k --iodepth=16 --time_based --runtime=3 ||
		return
	iops=$(fio_r iops)
	report "P=4 random" "$iops"
	# Not 2000: 16 requests land on random spindles, so now and then one
	# idles while another queues.  A simulation of exactly this closed
	# system (16 jobs, 4 FIFO servers, 2 ms, random routing) gives 1815.
	# The daemon still sees all 16 in flight, so the path is not the cap.
	assert_near "P=4 random IOPS" "$iops" 1815 5
	assertEquals "daemon requests == fio total_ios" "$(fio_r total_ios)" "$(st .requests)"
	assert_range "inflight_avg_busy ~ iodepth" "$(st .inflight_avg_busy)" 14 16
	assertEquals "total spindle busy == requests * service" \
		"$(st '.requests * 2000000')" "$(st '.spindle_busy_ns | add')"
	fd_down
}

# dispatch=any: 4 servers, each request to the first free one.  At QD16
# all 4 are always busy (no striping collisions), so exactly P / service.
# The daemon shares 2 CPUs with fio and the loop worker, and a server whose
# request is done idles until the daemon runs: each server is allowed 3%
# of idle time, so the mean of four is allowed 4 x 3%.
test_any_dispatch_keeps_all_servers_busy() {
	fd_require || return 0
	fd_up service_us=2000,parallel=4,dispatch=any || return
	run_fio --rw=randread --bs=4k --iodepth=16 --time_based --runtime=3 ||
		return
	iops=$(fio_r iops)
	report "P=4 any" "$iops"
	assertEquals "dispatch echoed" any "$(st .dispatch)"
	assert_near "P=4 any IOPS = P / service" "$iops" 2000 5
	assertEquals "daemon requests == fio total_ios" "$(fio_r total_ios)" "$(st .requests)"
	for i in 0 1 2 3; do
		assert_range "server $i util" "$(util $i)" 0.97 1.0001
	done
	assert_range "busy_servers_avg = sum(spindle_busy_ns) / busy_ns" \
		"$(st .busy_servers_avg)" "$(st '(.spindle_busy_ns | add) / .busy_ns - 0.0001')" \
		"$(st '(.spindle_busy_ns | add) / .busy_ns + 0.0001')"
	assert_range "mean busy servers" "$(st .busy_servers_avg)" 3.88 4.0001
	assertEquals "total server busy == requests * service" \
		"$(st '.requests * 2000000')" "$(st '.spindle_busy_ns | add')"
	fd_down
}

# A snapshot counts the part already served of requests still in
# service.  Two 1 s reads on two servers: once both are in, reset, and
# 0.1 s later both servers have been busy the whole window: exactly 2.
# Counting replied requests only would say 0.  (Not measured under a QD16
# load: on a loaded host the daemon itself stalls and the servers really
# idle, so "exactly P" would not be the truth there.)
test_stats_exact_mid_request() {
	fd_require || return 0
	fd_up service_us=1000000,parallel=2,dispatch=any || return
	for i in 1 2; do
		dd if="/dev/$LOOP" of=/dev/null bs=4k count=1 skip=$((i * 1000)) \
			iflag=direct status=none &
		bw_on_cleanup "kill $!; wait $!"
	done
	for i in $(seq 100); do
		[ "$(jq .inflight_now "$MNT/stats")" = 2 ] && break
		sleep 0.01
	done
	echo 1 >"$MNT/reset"
	sleep 0.1
	jq -c . "$MNT/stats" >"$T/stats.json"
	wait
	echo "  mid-request: inflight $(st .inflight_now), busy $(st .busy_ns) ns," \
		"server busy $(st '.spindle_busy_ns | map(tostring) | join("/")') ns," \
		"busy_servers_avg $(st .busy_servers_avg)"
	assertEquals "both requests in service" 2 "$(st .inflight_now)"
	assert_range "mean busy servers mid-request" "$(st .busy_servers_avg)" 1.999 2.0001
	assert_range "each server busy since the reset (s)" \
		"$(st '.spindle_busy_ns | min / 1e9')" 0.1 0.9
	fd_down
}

# Wake-up compensation learns the reply thread's lateness (> 0 in any VM)
# and only then replies early; wake_comp=0 never replies early.
test_wake_comp() {
	fd_require || return 0
	fd_up service_us=1000 || return
	run_fio --rw=randread --bs=4k --iodepth=1 --time_based --runtime=1 || return
	echo "  wake_comp=1: wake_comp_ns $(st .wake_comp_ns), reply lag avg $(st .reply_lag_avg_ns) ns," \
		"early max $(st .reply_early_max_ns) ns"
	assert_range "learned lateness (ns)" "$(st .wake_comp_ns)" 1 1000000
	# Early by at most the compensation, which is clamped at 1 ms.
	assert_range "earliest reply (ns)" "$(st .reply_early_max_ns)" 0 1000000
	fd_down
	fd_up service_us=1000,wake_comp=0 || return
	run_fio --rw=randread --bs=4k --iodepth=1 --time_based --runtime=1 || return
	echo "  wake_comp=0: reply lag avg $(st .reply_lag_avg_ns) ns"
	assertEquals "wake_comp=0: no compensation" "0 0" "$(st '"\(.wake_comp_ns) \(.reply_early_max_ns)"')"
	fd_down
}

test_writes_are_modelled() {
	fd_require || return 0
	fd_up service_us=2000,parallel=2 || return
	run_fio --rw=randwrite --bs=16k --iodepth=8 --time_based --runtime=2 ||
		return
	iops=$(fio_w iops)
	report "P=2 randwrite" "$iops"
	# Same random-routing loss as above: simulated 937 for QD8 over 2.
	assert_near "P=2 random write IOPS" "$iops" 937 7
	assertEquals "daemon writes == fio total_ios" "$(fio_w total_ios)" "$(st .writes)"
	assertEquals "daemon bytes == fio io_bytes" "$(fio_w io_bytes)" "$(st .bytes)"
	fd_down
}

# Seek and transfer costs, each isolated by the access pattern.
test_seek_and_xfer_costs() {
	fd_require || return 0
	fd_up service_us=1000,seek_us_per_gib=3000,xfer_us_per_mib=2000,size_mb=1024 ||
		return

	# Sequential 4k: no seeks, xfer 8 us: ~1 ms per request.
	run_fio --rw=read --bs=4k --iodepth=4 --time_based --runtime=2 || return
	report "seq 4k" "$(fio_r iops)"
	assert_near "sequential IOPS" "$(fio_r iops)" 992 10
	assert_range "sequential seeks" "$(st .seeks)" 0 "$(st '.requests / 100')"

	# Random 4k: mean |x - y| of two uniform points is size/3 = 1/3 GiB,
	# so 1 ms more per request: 2 ms.
	run_fio --rw=randread --bs=4k --iodepth=4 --time_based --runtime=2 ||
		return
	report "random 4k" "$(fio_r iops)"
	assert_near "random IOPS with seek cost" "$(fio_r iops)" 500 10
	assert_range "every random request seeks" "$(st .seeks)" \
		"$(st '.requests * 0.99')" "$(st .requests)"

	# Sequential 512k (the largest the loop queue passes unsplit): 1 ms xfer.
	run_fio --rw=read --bs=512k --iodepth=4 --time_based --runtime=2 ||
		return
	report "seq 512k" "$(fio_r iops)"
	assert_near "sequential 512k IOPS with xfer cost" "$(fio_r iops)" 500 10
	assertEquals "daemon requests == fio total_ios" "$(fio_r total_ios)" "$(st .requests)"
	fd_down
}

test_stats_reset_and_config_echo() {
	fd_require || return 0
	fd_up service_us=1500,parallel=3,chunk_kb=128,size_mb=256 || return
	assertEquals "size" 268435456 "$(blockdev --getsize64 "/dev/$LOOP")"
	jq -c . "$MNT/stats" >"$T/stats.json"
	for f in requests reads writes bytes inflight_max inflight_area_ns \
		busy_ns elapsed_ns seeks spindle_busy_ns inflight_avg \
		inflight_avg_busy busy_servers_avg reply_lag_avg_ns \
		reply_early_max_ns wake_comp_ns; do
		assertNotEquals "stats has $f" null "$(st ".$f")"
	done
	assertEquals "echo" "1500 3 128 256 0 0 stripe 1" \
		"$(st '"\(.service_us) \(.parallel) \(.chunk_kb) \(.size_mb) \(.xfer_us_per_mib) \(.seek_us_per_gib) \(.dispatch) \(.wake_comp)"')"
	assertEquals "idle: no busy servers" 0 "$(st .busy_servers_avg)"
	assertEquals "one busy counter per spindle" 3 "$(st '.spindle_busy_ns | length')"

	echo 1 >"$MNT/reset"
	dd if="/dev/$LOOP" of=/dev/null bs=4k count=10 iflag=direct status=none
	jq -c . "$MNT/stats" >"$T/stats.json"
	assertEquals "dd's 10 reads" "10 10 40960 1" \
		"$(st '"\(.requests) \(.reads) \(.bytes) \(.inflight_max)"')"
	# 10 synchronous 1.5 ms reads: the disk was busy ~15 ms of it.
	assert_range "busy_ns" "$(st .busy_ns)" 15000000 30000000

	echo 1 >"$MNT/reset"
	jq -c . "$MNT/stats" >"$T/stats.json"
	assertEquals "reset zeroes counters" "0 0 0 0 0" \
		"$(st '"\(.requests) \(.bytes) \(.inflight_max) \(.busy_ns) \(.spindle_busy_ns | add)"')"
	assert_range "elapsed restarts at reset" "$(st .elapsed_ns)" 0 2000000000
	( echo x >"$MNT/stats" ) 2>/dev/null
	assertFalse "stats is read-only" $?
	fd_down
}

test_down_is_idempotent_and_survives_failed_up() {
	fd_require || return 0
	out=$("$FAKEDISK" up "$MNT" no_such_option=1 2>/dev/null)
	assertFalse "up with a bad option fails" $?
	assertNull "failed up prints nothing on stdout" "$out"
	"$FAKEDISK" down "$MNT"
	assertTrue "down after failed up" $?
	out=$("$FAKEDISK" up "$MNT" dispatch=sideways 2>"$T/up.err")
	assertFalse "up with dispatch=sideways fails" $?
	assertTrue "says why: $(cat "$T/up.err")" "grep -q 'dispatch=sideways: want stripe or any' '$T/up.err'"
	assertNull "failed up prints nothing on stdout" "$out"

	fd_up parallel=2 || return
	"$FAKEDISK" down "$MNT"
	assertTrue "first down" $?
	"$FAKEDISK" down "$MNT"
	assertTrue "second down" $?
	assertFalse "DIR removed" "[ -e '$MNT' ]"
	assertNull "loop device gone" "$(losetup -l -n -O BACK-FILE | grep -F "$MNT/")"
	fd_down
}

# shellcheck disable=SC1091
. shunit2
