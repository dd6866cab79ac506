#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: bio-based devices (zram here; dm-linear and md RAID-0 over
# loop devices where their modules exist, i.e. in the VM tier), measured from
# block_bio_queue to block_bio_complete.  The oracle is /proc/diskstats: zram,
# dm and md account per bio (bio_start_io_acct), as we count.
. "$(dirname "$0")/lib.sh"

# Reads, sectors read, writes, sectors written: diskstats fields 1 3 5 7.
bio_fields="1:read 5:write"

# zram_setup: zram0 configured with 256 MiB, reset at cleanup; skips when
# there is no zram or zram0 is in use (has a size).
zram_setup() {
	[ -e /sys/block/zram0 ] || modprobe zram num_devices=1 2>/dev/null
	[ -e /sys/block/zram0 ] || { bw_skip "no zram (module zram)"; return 1; }
	[ "$(cat /sys/block/zram0/disksize)" = 0 ] || { bw_skip "zram0 is in use"; return 1; }
	echo 256M >/sys/block/zram0/disksize || { fail "configuring zram0"; return 1; }
	bw_on_cleanup "echo 1 >/sys/block/zram0/reset"
	return 0
}

# check_counts OUT DEV S0 S1 WHAT: blkwise's reads and writes, requests and
# bytes, equal DEV's diskstats deltas exactly; the service histogram holds
# every completion and its mean is positive.
check_counts() {
	local out=$1 dev=$2 s0=$3 s1=$4 what=$5 f op ds_ios ds_bytes ios bytes total svc
	total=0
	for f in $bio_fields; do
		op=${f#*:}
		ds_ios=$(bw_diskstat_delta "$s0" "$s1" "${f%:*}")
		ds_bytes=$(($(bw_diskstat_delta "$s0" "$s1" $((${f%:*} + 2))) * 512))
		ios=$(bw_jsum "$out" "$dev" ".ops.$op.ios")
		bytes=$(bw_jsum "$out" "$dev" ".ops.$op.bytes")
		echo "  $what $dev $op: diskstats $ds_ios ios $ds_bytes B; blkwise $ios ios $bytes B"
		assertEquals "$what $dev ${op}s = diskstats" "$ds_ios" "$ios"
		assertEquals "$what $dev $op bytes = diskstats" "$ds_bytes" "$bytes"
		total=$((total + ios))
	done
	# 32 MiB in bios of at most 4 MiB (fio_on): 8 at least.
	assertTrue "$what $dev did I/O ($total bios)" "[ $total -ge 8 ]"
	assertEquals "$what $dev: service histogram holds every completion" "$total" \
		"$(bw_jsum "$out" "$dev" .svc_hist_samples)"
	svc=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .svc_mean_ms != null)
		| .svc_mean_ms] | max // 0' "$out")
	assertTrue "$what $dev: positive service time ($svc ms)" "awk 'BEGIN { exit !($svc > 0) }'"
	assertEquals "$what $dev: no queue time on a bio-based device" 0 \
		"$(bw_jsum "$out" "$dev" .q_ios)"
}

# fio_on DEV BS JOBS: random reads and writes, direct, on /dev/DEV.
fio_on() {
	bw_fio "$BW_TMP/fio.json" --name=b --filename=/dev/"$1" --direct=1 --rw=randrw \
		--bs="$2" --blockalign="$2" --numjobs="$3" --iodepth=4 --ioengine=libaio \
		--size=48M --io_size=16M --group_reporting
}

# Counts equal diskstats' for several sizes, 4 KiB to 4 MiB.
test_zram_counts() {
	local bs out s0 s1
	bw_require fio jq || return 0
	zram_setup || return 0
	for bs in 4k 64k 1M 4M; do
		out=$BW_TMP/zram-$bs.json
		bw_stat_start "$out" -d zram0 -i 0.5 || { fail "blkwise start"; return; }
		s0=$(bw_diskstats zram0)
		fio_on zram0 "$bs" 2
		s1=$(bw_diskstats zram0)
		bw_stat_stop INT
		assertEquals "blkwise exit status" 0 $?
		check_counts "$out" zram0 "$s0" "$s1" "bs $bs"
		assertEquals "zram0 is bio-based in the JSON" true \
			"$(jq -s '[.[].devices[] | select(.device == "zram0")][0].bio_based' "$out")"
	done
}

# zram serves a bio in its submitter's context: depth comes from submitters
# running at once, so two jobs on two CPUs keep two in flight at times.
test_zram_depth() {
	local out max busy
	bw_require fio jq || return 0
	zram_setup || return 0
	[ "$(nproc)" -ge 2 ] || { bw_skip "one CPU: zram never has two bios in flight"; return 0; }
	out=$BW_TMP/zram-depth.json
	bw_stat_start "$out" -d zram0 -i 0.5 || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=d --filename=/dev/zram0 --direct=1 --rw=randwrite \
		--bs=1M --numjobs=2 --iodepth=4 --ioengine=libaio --size=64M --io_size=128M
	bw_stat_stop INT
	max=$(jq -s '[.[].devices[] | select(.device == "zram0") | .depth_max] | max' "$out")
	busy=$(jq -s '[.[].devices[] | select(.device == "zram0" and .depth_mean_busy != null)
		| .depth_mean_busy] | max // 0' "$out")
	echo "  zram0, 2 jobs: depth max $max, mean while busy up to $busy"
	assertTrue "two bios in flight at times (max $max)" "[ $max -ge 2 ]"
	assertTrue "mean depth while busy above 1 ($busy)" "awk 'BEGIN { exit !($busy > 1) }'"
}

# Request-based devices keep the core's path: with only a loop device
# watched the bio object is not even loaded; with zram watched too, the
# loop device's counts are still exactly diskstats'.
test_request_based_untouched() {
	local dev out s0 s1 z0 z1 pid
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	"$BW_BIN" stat --json --no-state -d "$dev" -i 0.2 -c 1 -v >/dev/null 2>"$BW_TMP/v.err"
	assertEquals "loop only: no bio object" 0 "$(grep -c "bio-based devices" "$BW_TMP/v.err")"
	zram_setup || return 0
	out=$BW_TMP/both.json
	bw_stat_start "$out" -d "$dev" -d zram0 -i 0.5 -v || { fail "blkwise start"; return; }
	assertEquals "zram watched: bio object loaded" 1 \
		"$(grep -c "bio-based devices 1" "$out.err")"
	s0=$(bw_diskstats "$dev")
	z0=$(bw_diskstats zram0)
	fio_on "$dev" 4k 1 &
	pid=$!
	fio_on zram0 64k 1
	wait $pid
	s1=$(bw_diskstats "$dev")
	z1=$(bw_diskstats zram0)
	bw_stat_stop INT
	check_loop_counts "$out" "$dev" "$s0" "$s1"
	check_counts "$out" zram0 "$z0" "$z1" "beside $dev:"
	assertEquals "$dev is not bio-based" false \
		"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)][0].bio_based' "$out")"
}

# A request-based device's reads and writes equal diskstats', less the
# completions BPF never saw (docs/design.md, "Lost completions").
check_loop_counts() {
	local out=$1 dev=$2 s0=$3 s1=$4 f op ds ios missed
	missed=$(bw_missed_n "$out" "$dev")
	# The light tier cannot count a lost completion: up to 0.5% more unseen.
	[ "$(bw_missed "$out" "$dev")" = "$missed" ] || missed="$missed + ds / 200 + 1"
	for f in $bio_fields; do
		op=${f#*:}
		ds=$(bw_diskstat_delta "$s0" "$s1" "${f%:*}")
		ios=$(bw_jsum "$out" "$dev" ".ops.$op.ios")
		echo "  $dev $op: diskstats $ds, blkwise $ios (+ $missed unseen)"
		assertTrue "$dev ${op}s: blkwise $ios + unseen $missed covers diskstats $ds" \
			"[ $ios -le $ds ] && [ $((ios + $missed)) -ge $ds ]"
	done
}

# rel_of OUT DEV KEY: DEV's slaves or holders in the first interval, sorted.
rel_of() {
	jq -r -s --arg d "$2" "[.[].devices[] | select(.device == \$d)][0].$3 | sort | join(\" \")" "$1"
}

# The name (dm-N, mdN) of what holds a loop device.
holder_of() { ls /sys/block/"$1"/holders 2>/dev/null | head -1; }

# run_stacked TOP MEMBERS...: fio on TOP at two sizes; TOP's counts and each
# member's against diskstats, and the relation in the JSON.
run_stacked() {
	local top=$1 bs out s0 s1 m want
	shift
	for bs in 4k 64k; do
		out=$BW_TMP/$top-$bs.json
		bw_stat_start "$out" -d "$top" "${@/#/-d}" -i 0.5 || { fail "blkwise start"; return; }
		s0=$(bw_diskstats "$top")
		declare -A m0 m1
		for m in "$@"; do m0[$m]=$(bw_diskstats "$m"); done
		fio_on "$top" "$bs" 2
		s1=$(bw_diskstats "$top")
		for m in "$@"; do m1[$m]=$(bw_diskstats "$m"); done
		bw_stat_stop INT
		check_counts "$out" "$top" "$s0" "$s1" "bs $bs"
		for m in "$@"; do
			check_loop_counts "$out" "$m" "${m0[$m]}" "${m1[$m]}"
			assertEquals "$m's holders" "$top" "$(rel_of "$out" "$m" holders)"
		done
		want=$(printf '%s\n' "$@" | sort | paste -sd' ')
		assertEquals "$top's slaves" "$want" "$(rel_of "$out" "$top" slaves)"
		assertEquals "$top is bio-based" true \
			"$(jq -s --arg d "$top" '[.[].devices[] | select(.device == $d)][0].bio_based' "$out")"
		unset m0 m1
	done
}

test_dm_linear() {
	local dev top sectors
	bw_require fio jq dmsetup || return 0
	modprobe dm-mod 2>/dev/null
	[ -e /sys/module/dm_mod ] || { bw_skip "no device-mapper (module dm-mod)"; return 0; }
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	sectors=$(cat /sys/block/"$dev"/size)
	# No udev in the VM tier: dmsetup makes its own nodes.
	echo "0 $sectors linear /dev/$dev 0" | DM_DISABLE_UDEV=1 dmsetup create "bwtest-$$" ||
		{ fail "dmsetup create"; return; }
	bw_on_cleanup "DM_DISABLE_UDEV=1 dmsetup remove bwtest-$$"
	top=$(holder_of "$dev")
	[ -n "$top" ] || { fail "no holder of $dev"; return; }
	echo "  $top: dm-linear over $dev"
	run_stacked "$top" "$dev"
}

test_md_raid0() {
	local a b top
	bw_require fio jq mdadm || return 0
	modprobe raid0 2>/dev/null
	grep -qw raid0 /proc/mdstat 2>/dev/null || { bw_skip "no md RAID-0 (module raid0)"; return 0; }
	bw_loop a 64 shm --direct-io=on || { fail "loop device"; return; }
	bw_loop b 64 shm --direct-io=on || { fail "loop device"; return; }
	mdadm --create /dev/md/bwtest$$ --run --level=0 --chunk=64 --raid-devices=2 \
		--metadata=1.2 /dev/"$a" /dev/"$b" >"$BW_TMP/mdadm.log" 2>&1 ||
		{ cat "$BW_TMP/mdadm.log"; fail "mdadm --create"; return; }
	top=$(holder_of "$a")
	# Without udev (the VM tier) mdadm makes /dev/md/NAME itself, and leaves it.
	bw_on_cleanup "mdadm --stop /dev/$top; mdadm --zero-superblock /dev/$a /dev/$b; rm -f /dev/md/bwtest$$"
	[ -n "$top" ] || { fail "no holder of $a"; return; }
	echo "  $top: RAID-0 over $a $b, 64 KiB chunks"
	run_stacked "$top" "$a" "$b"
}

# export --cgroups on a bio-based device: no requests, so the bio object
# counts each bio into the cgroups' series, owned by the bio's blkg.
# Direct I/O from two cgroups on zram0: each cgroup's requests and bytes
# equal its fio's exactly, the histogram counts every one of them, and
# promtool finds nothing to report on the page.
test_zram_cgroups() {
	local mnt a b port m fa fb
	bw_require fio jq curl promtool || return 0
	mnt=$(cg_io_mount)
	[ -n "$mnt" ] || { bw_skip "no hierarchy with the io controller (cgroup v2 io, or v1 blkio)"; return 0; }
	zram_setup || return 0
	[ "$mnt" != "$(cg_mount)" ] || cg_enable io || { fail "enabling io for the root's children"; return; }
	cg_make a cgza "$mnt" && cg_make b cgzb "$mnt" || { fail "mkdir cgroup"; return; }
	port=$(bw_free_port)
	bw_bg_start "$BW_TMP/z.out" "serving" "$BW_BIN" export --listen 127.0.0.1:"$port" \
		--no-state -d zram0 --cgroups || { fail "export start"; return; }
	CG_MOUNT=$mnt cg_run "$a" fio --output-format=json --output="$BW_TMP/fa.json" --name=a \
		--filename=/dev/zram0 --direct=1 --rw=randwrite --bs=4k --ioengine=psync --size=64M \
		--io_size=8M >/dev/null
	CG_MOUNT=$mnt cg_run "$b" fio --output-format=json --output="$BW_TMP/fb.json" --name=b \
		--filename=/dev/zram0 --direct=1 --rw=randread --bs=64k --ioengine=libaio --iodepth=4 \
		--size=64M --io_size=16M >/dev/null
	fa=$(jq '.jobs[0].write.total_ios' "$BW_TMP/fa.json")
	fb=$(jq '.jobs[0].read.total_ios' "$BW_TMP/fb.json")
	m=$BW_TMP/z.txt
	sleep 1.2	# one sample after the last completion (-i 1)
	curl -s "http://127.0.0.1:$port/metrics" >"$m"
	echo "  zram0: $a fio $fa writes, exported $(cg_metric "$m" blkwise_cgroup_requests_total "$a" write);" \
		"$b fio $fb reads, exported $(cg_metric "$m" blkwise_cgroup_requests_total "$b" read)"
	assertEquals "$a: requests = fio's" "$fa" "$(cg_metric "$m" blkwise_cgroup_requests_total "$a" write)"
	assertEquals "$a: bytes = fio's" $((fa * 4096)) "$(cg_metric "$m" blkwise_cgroup_bytes_total "$a" write)"
	assertEquals "$b: requests = fio's" "$fb" "$(cg_metric "$m" blkwise_cgroup_requests_total "$b" read)"
	assertEquals "$b: bytes = fio's" $((fb * 65536)) "$(cg_metric "$m" blkwise_cgroup_bytes_total "$b" read)"
	assertEquals "$b: every request in the histogram" "$fb" \
		"$(cg_metric "$m" blkwise_cgroup_service_seconds_count "$b" read)"
	assertTrue "the series are zram0's" "grep -q 'blkwise_cgroup_requests_total{device=\"zram0\",cgroup=\"$a\"' $m"
	promtool check metrics <"$m" >"$BW_TMP/lint" 2>&1
	assertEquals "promtool check metrics: nothing to report: $(head -3 "$BW_TMP/lint")" "" "$(cat "$BW_TMP/lint")"
}

. shunit2
