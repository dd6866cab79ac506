#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: devices whose truth the kernel sets, as a second check of
# P_eff, the device class, the tuner and the per-request tag table
# (independent of the emulated disk of test_parallelism):
# - null_blk, irqmode=2 (hrtimer completions) completion_nsec=TR_SVC_NS,
#   hw_queue_depth=P, one submit queue: at iodepth 16 > P exactly P
#   requests are in the driver at a time, each for TR_SVC_NS;
# - scsi_debug, ndelay=TR_SVC_NS max_queue=P: the same through SCSI;
# - null_blk with 8+ hw queues of 1024 tags: counts against diskstats and
#   fio, map sizing and no request beyond the tag table ("untracked").
# Needs the null_blk and scsi_debug modules: run in the VM tier
# (`make vmtest KERNEL=6.1 SUITES=test_truth`); where they cannot be loaded
# (a kernel without them) every test is SKIPPED.
#
# Tolerances as in test_parallelism: P_eff within 15% of P, the class by
# docs/design.md's thresholds (deep >= 2.0, shallow <= 1.4).  Service is several
# ms so the emulated machine's own overhead (tens of us a request under
# TCG) is small against it.
. "$(dirname "$0")/lib.sh"

TR_SVC_NS=${TR_SVC_NS:-4000000}	# 4 ms a request
TR_WARM=3	# s at iodepth 1: S1 learned
TR_DEEP=5	# s at iodepth 16
TR_TOL=15

# tr_module MOD: skip unless MOD can be loaded and is not in use already.
tr_module() {
	bw_require fio jq || return 1
	grep -qs "^$1 " /proc/modules && { bw_skip "$1 already loaded (not ours to change)"; return 1; }
	modprobe -n -q "$1" 2>/dev/null || { bw_skip "no $1 module for $(uname -r) (run in the VM tier: make vmtest)"; return 1; }
	return 0
}

# tr_nullb VAR ARGS...: null_blk with ARGS, one device (nullb0) in VAR.
tr_nullb() {
	modprobe null_blk nr_devices=1 gb=4 "${@:2}" || { fail "modprobe null_blk ${*:2}"; return 1; }
	bw_on_cleanup "bw_unload_module null_blk"
	for _ in $(seq 50); do [ -b /dev/nullb0 ] && break; sleep 0.1; done
	[ -b /dev/nullb0 ] || { fail "no /dev/nullb0"; return 1; }
	echo none >/sys/block/nullb0/queue/scheduler
	echo 2 >/sys/block/nullb0/queue/nomerges
	printf -v "$1" nullb0
}

# tr_scsi VAR ARGS...: a scsi_debug disk with ARGS; its name in VAR.
tr_scsi() {
	local h _d=""
	modprobe scsi_debug dev_size_mb=256 "${@:2}" || { fail "modprobe scsi_debug ${*:2}"; return 1; }
	bw_on_cleanup "bw_unload_module scsi_debug"
	for _ in $(seq 50); do
		for h in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
			[ -e "$h" ] && _d=$(basename "$h")
		done
		[ -n "$_d" ] && [ -b "/dev/$_d" ] && break
		sleep 0.1
	done
	[ -n "$_d" ] && [ -b "/dev/$_d" ] || { fail "no scsi_debug disk"; return 1; }
	echo none >/sys/block/"$_d"/queue/scheduler
	echo 2 >/sys/block/"$_d"/queue/nomerges
	printf -v "$1" %s "$_d"
}

# tr_fio DEV QD SECS NAME [fio args]: 4k random direct reads.
tr_fio() {
	local dev=$1 qd=$2 secs=$3 name=$4
	shift 4
	bw_fio "$BW_TMP/$name.fio.json" --name="$name" --filename="/dev/$dev" --direct=1 \
		--ioengine=libaio --rw=randread --bs=4k --iodepth="$qd" --time_based \
		--runtime="$secs" "$@"
}

# tr_measure DEV: blkwise on DEV, TR_WARM s at iodepth 1 then TR_DEEP s at
# iodepth 16.  Sets TR_OUT, TR_N0 (lines before the deep run), TR_N1 (its
# last line), TR_DS (diskstats reads during the whole run).
tr_measure() {
	local dev=$1 s0 s1 n
	TR_OUT=$BW_TMP/$dev.$RANDOM.json
	s0=$(bw_diskstats "$dev")
	# Without BPF fetch-and-add (before 5.12) the default: the light tier's estimates.
	# shellcheck disable=SC2046
	bw_stat_start "$TR_OUT" -d "$dev" -i 1 --no-state $(bw_has_fetch && echo --exact) ||
		{ fail "blkwise start"; return 1; }
	tr_fio "$dev" 1 "$TR_WARM" warm || { fail "fio warm-up"; return 1; }
	n=$(wc -l <"$TR_OUT")
	for _ in $(seq 60); do [ "$(wc -l <"$TR_OUT")" -gt "$n" ] && break; sleep 0.05; done
	TR_N0=$(wc -l <"$TR_OUT")
	tr_fio "$dev" 16 "$TR_DEEP" deep || { fail "fio iodepth 16"; return 1; }
	TR_N1=$(wc -l <"$TR_OUT")
	sleep 1.2
	bw_stat_stop INT
	assertEquals "blkwise exit status" 0 $?
	s1=$(bw_diskstats "$dev")
	TR_DS=$(bw_diskstat_delta "$s0" "$s1" 1)
}

# tr_lines FROM TO DEV: that device's objects in lines FROM..TO.
tr_lines() { bw_dev_lines "$TR_OUT" "$3" "$1" "$2"; }

# tr_counts DEV WHAT: blkwise's reads against diskstats, and fio's.
tr_counts() {
	local dev=$1 what=$2 seen missed
	seen=$(bw_jsum "$TR_OUT" "$dev" .ops.read.ios)
	missed=$(bw_missed "$TR_OUT" "$dev")
	echo "  $what: diskstats $TR_DS reads, blkwise $seen seen + $missed lost completions"
	bw_expect_count "$what: reads vs diskstats" "$TR_DS" "$seen" "$missed"
	assertEquals "$what: fio's reads = diskstats" "$TR_DS" \
		"$(jq -s '[.[].jobs[0].read.total_ios] | add' "$BW_TMP/warm.fio.json" "$BW_TMP/deep.fio.json")"
}

tr_last() { tr_lines "$TR_N1" "$TR_N1" "$1" | jq -r "$2"; }

# tr_no_fetch DEV WHAT: on a kernel without BPF atomic fetch-and-add, what
# blkwise gives there instead of the exact tier's figures: busy time from
# the kernel's io_ticks (the device busy through the deep run), S1 the
# light tier estimated from the iodepth-1 warm-up, and P_eff and depth its
# estimates, said so (the P_eff checks that follow hold them to the truth).
# Nothing on other kernels.
tr_no_fetch() {
	local dev=$1 what=$2 busy
	bw_has_fetch && return 0
	busy=$(tr_lines $((TR_N0 + 2)) "$TR_N1" "$dev" | jq -r .busy_pct | bw_median)
	echo "  $what (kernel $(uname -r), no fetch-and-add): P_eff $(tr_last "$dev" .p_eff)" \
		"($(tr_last "$dev" .p_eff_source)), S1 $(tr_last "$dev" .solo_svc_ms) ms" \
		"($(tr_last "$dev" .s1_source)), depth $(tr_last "$dev" .depth_mean_busy)" \
		"($(tr_last "$dev" .depth_source)), busy $busy% from $(tr_last "$dev" .busy_source)"
	assertEquals "$what: busy time from the kernel's io_ticks" io_ticks "$(tr_last "$dev" .busy_source)"
	assertTrue "$what: busy $busy% through the deep run" "awk 'BEGIN { exit !($busy >= 90) }'"
	assertEquals "$what: depth estimated" estimated "$(tr_last "$dev" .depth_source)"
	assertEquals "$what: S1 estimated" estimated "$(tr_last "$dev" .s1_source)"
	assertEquals "$what: every determined P_eff estimated" 0 \
		"$(tr_lines 1 "$TR_N1" "$dev" | jq -s '[.[] | select(.p_eff != null and .p_eff_source != "estimated")] | length')"
}

# tr_check DEV P WHAT: P_eff against P (P >= 2), the class, the counts.
tr_check() {
	local dev=$1 p=$2 what=$3 med cls peffs
	tr_measure "$dev" || return
	tr_counts "$dev" "$what"
	tr_no_fetch "$dev" "$what"
	peffs=$(tr_lines $((TR_N0 + 1)) "$TR_N1" "$dev" | jq -r '.p_eff // empty' | paste -sd' ')
	med=$(echo "$peffs" | tr ' ' '\n' | grep . | bw_median) ||
		{ fail "$what: no determined P_eff at iodepth 16"; return; }
	cls=$(tr_last "$dev" .class)
	echo "  $what (kernel $(uname -r)): truth P=$p, P_eff median $med (intervals: $peffs)," \
		"S1 $(tr_last "$dev" .solo_svc_ms) ms, depth $(tr_last "$dev" .depth_mean_busy), class $cls"
	assertTrue "$what: P_eff $med within $TR_TOL% of P=$p" "bw_within $med $p $TR_TOL"
	assertEquals "$what: class" deep "$cls"
}

# tr_check_p1 DEV WHAT: one tag, so at most one request in the driver: depth
# 1 < 1.5 and P_eff undetermined in every interval (never a guess), the
# class unknown; S1 is the device's service time.
tr_check_p1() {
	local dev=$1 what=$2 det why s1 s1w clat
	tr_measure "$dev" || return
	tr_counts "$dev" "$what"
	tr_no_fetch "$dev" "$what"
	det=$(tr_lines 1 "$TR_N1" "$dev" | jq -s '[.[] | select(.p_eff != null)] | length')
	why=$(tr_last "$dev" .p_eff_undetermined_why)
	s1=$(tr_last "$dev" .solo_svc_ms)
	echo "  $what (kernel $(uname -r)): truth P=1, depth max" \
		"$(tr_lines 1 "$TR_N1" "$dev" | jq -s '[.[].depth_max] | max'), P_eff undetermined" \
		"($why), S1 $s1 ms, class $(tr_last "$dev" .class)"
	assertEquals "$what: no determined P_eff" 0 "$det"
	if bw_has_fetch; then
		assertEquals "$what: depth never above 1" 1 "$(tr_lines 1 "$TR_N1" "$dev" | jq -s '[.[].depth_max] | max')"
	else	# the light tier's estimate (Little's law): no maximum
		assertTrue "$what: depth estimated about 1" "awk 'BEGIN { exit !($(tr_last "$dev" .depth_mean_busy) <= 1.2) }'"
	fi
	assertEquals "$what: class" unknown "$(tr_last "$dev" .class)"
	# The timer's delay <= S1 (dispatch to completion) <= fio's own
	# latency at iodepth 1 (submission to completion: S1 and the path to it).
	# fio's figure is the warm-up's, so S1 is too: as learned by the end of
	# the warm-up (the deep run's requests, each alone in the driver, are S1
	# samples as well, slower on a guest whose CPUs the 16 queued ones keep busy).
	clat=$(jq '.jobs[0].read.clat_ns.mean / 1e6' "$BW_TMP/warm.fio.json")
	s1w=$(tr_lines 1 "$TR_N0" "$dev" | jq -r 'select(.solo_svc_ms != null) | .solo_svc_ms' |
		tail -n 1)
	s1w=${s1w:-0}
	echo "  $what: completion timer $(bw_calc "$TR_SVC_NS / 1e6") ms <= S1 $s1w ms (warm-up)" \
		"<= fio clat $clat ms"
	assertTrue "$what: S1 $s1 ms >= the $((TR_SVC_NS / 1000)) us timer" \
		"awk 'BEGIN { exit !($s1 >= $TR_SVC_NS / 1e6) }'"
	assertTrue "$what: warm-up S1 $s1w ms >= the $((TR_SVC_NS / 1000)) us timer" \
		"awk 'BEGIN { exit !($s1w >= $TR_SVC_NS / 1e6) }'"
	assertTrue "$what: warm-up S1 $s1w ms <= fio's iodepth-1 latency $clat ms" \
		"awk 'BEGIN { exit !($s1w <= $clat * 1.01) }'"
}

test_nullblk_p1() {
	local dev
	tr_module null_blk || return 0
	tr_nullb dev irqmode=2 completion_nsec="$TR_SVC_NS" hw_queue_depth=1 submit_queues=1 || return
	tr_check_p1 "$dev" "null_blk P=1"
}

test_nullblk_p4() {
	local dev
	tr_module null_blk || return 0
	tr_nullb dev irqmode=2 completion_nsec="$TR_SVC_NS" hw_queue_depth=4 submit_queues=1 || return
	tr_check "$dev" 4 "null_blk P=4"
}

test_scsi_debug_p1() {
	local dev
	tr_module scsi_debug || return 0
	tr_scsi dev delay=0 ndelay="$TR_SVC_NS" max_queue=1 || return
	tr_check_p1 "$dev" "scsi_debug P=1"
}

test_scsi_debug_p4() {
	local dev
	tr_module scsi_debug || return 0
	tr_scsi dev delay=0 ndelay="$TR_SVC_NS" max_queue=4 || return
	tr_check "$dev" 4 "scsi_debug P=4"
}

# The tuner on null_blk under bfq (rotational, low_latency 0, idling at
# BFQ's 8 ms, hw_tag detection done first, as in test_tune): 4 sequential
# 64 KiB readers.  S1 is learned first from one reader alone.
# tr_tune DEV SECS: returns the tuner's decisions in TR_TUNE (JSON Lines).
tr_tune() {
	local dev=$1 i
	bw_require_fetch "tune (it decides by streams, S1 and P_eff)" || return 1
	bw_use_bfq "$dev" || return 1
	echo 1 >/sys/block/"$dev"/queue/rotational
	echo 0 >/sys/block/"$dev"/queue/iosched/low_latency
	echo 0 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	tr_seq "$dev" 3 >/dev/null
	echo 8000 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	# A store of its own, and S1 learned live by the tuner itself from one
	# reader alone (all its requests solo) before the four start: null_blk
	# has no stable identity (no wwid, serial or backing file), so no S1 is
	# stored for it between runs, and four readers leave no request alone.
	rm -rf "$BW_TMP/tune-state" "$BW_TMP/run"
	TR_TUNE=$BW_TMP/tune.json
	bw_bg_start "$TR_TUNE" tuning "$BW_BIN" tune --json -d "$dev" --run-dir "$BW_TMP/run" \
		--state-dir "$BW_TMP/tune-state" || { fail "tune start"; return 1; }
	TR_TUNE_PID=$BW_BG_PID
	tr_seq "$dev" 3 --numjobs=1 >/dev/null
	TR_TUNE_N0=$(wc -l <"$TR_TUNE")
	# fio itself in the background (not a pipeline's subshell): the kill
	# must reach it, or the device stays open and the module cannot go.
	fio --name=tr --filename=/dev/"$dev" --direct=1 --rw=read --bs=64k --ioengine=psync \
		--numjobs=4 --size=512m --offset_increment=512m --time_based --runtime=25 \
		--group_reporting --output-format=json --output="$BW_TMP/tune.fio.json" &
	TR_FIO=$!
	bw_on_cleanup "kill $TR_FIO; wait $TR_FIO"
	for i in $(seq 400); do
		tr_tune_decisions | jq -e -s '[.[] | select(.action == "keep" or .action == "revert" or .action == "set")] | length > 0' \
			>/dev/null 2>&1 && break
		sleep 0.05
	done
	sleep 1
	TR_IDLE=$(cat /sys/block/"$dev"/queue/iosched/slice_idle_us)
	# The readers stop before the tuner detaches: the 6.1 guest under TCG
	# once locked up patching a tracepoint site that a reader was running
	# through with interrupts off (docs/testing.md, "The VM tier").
	kill "$TR_FIO"
	wait "$TR_FIO" 2>/dev/null
	kill -INT "$TR_TUNE_PID"
	wait "$TR_TUNE_PID"
	assertEquals "tune exit status" 0 $?
	echo "  tune on $dev P=$2: $(jq -r '"\(.action) \(.slice_idle_us_before)->\(.slice_idle_us_after) (\(.why); p_eff \(.evidence.p_eff // "-"), S1 \(.evidence.s1_ms // "-") ms (\(.evidence.s1_source // "-")), depth \(.evidence.depth_mean_busy // "-"), \(.evidence.mb_per_s) MB/s vs \(.compared_with.mb_per_s // "-") MB/s)"' "$TR_TUNE" | paste -sd' ');" \
		"slice_idle_us $TR_IDLE while tuning, $(cat /sys/block/"$dev"/queue/iosched/slice_idle_us) after"
	assertEquals "slice_idle_us put back on exit" 8000 "$(cat /sys/block/"$dev"/queue/iosched/slice_idle_us)"
}

# The tuner's decisions once the four readers ran.
tr_tune_decisions() { tail -n +$((TR_TUNE_N0 + 1)) "$TR_TUNE"; }

# tr_seq DEV SECS [fio args]: 4 sequential 64 KiB direct readers; MB/s.
# (null_blk splits anything over 127.5 KiB, its default max_sectors: the
# pieces of one read are issued together, never alone, and S1 is never
# learned for that size.)
tr_seq() {
	local dev=$1 secs=$2
	shift 2
	fio --name=tr --filename=/dev/"$dev" --direct=1 --rw=read --bs=64k --ioengine=psync \
		--numjobs=4 --size=512m --offset_increment=512m --time_based --runtime="$secs" \
		--group_reporting --output-format=json "$@" 2>/dev/null |
		jq '.jobs[0].read.bw_bytes / 1048576 | floor'
}

test_tune_nullblk_deep_gets_zero() {
	local dev dec
	tr_module null_blk || return 0
	tr_nullb dev irqmode=2 completion_nsec="$TR_SVC_NS" hw_queue_depth=4 submit_queues=1 || return
	tr_tune "$dev" 4 || return 0
	# Idling off, either set at once from a deep class the tuner saw with
	# idling on, or kept after a probe of 0 (BFQ at 8000 us may serve one
	# reader at a time, leaving P_eff undetermined until the probe).
	dec=$(tr_tune_decisions | jq -c 'select(.action == "keep" or .action == "revert" or
		(.action == "set" and .slice_idle_us_after == 0))' | head -n 1)
	assertTrue "idling off: kept after a probe, or set from the class ($dec)" \
		"echo '$dec' | jq -e '.action == \"keep\" or .action == \"set\"' >/dev/null"
	assertEquals "idling off while tuning" 0 "$TR_IDLE"
	if ! bw_has_fetch; then	# decided by throughput alone: no P_eff to claim
		assertEquals "no P_eff claimed" null "$(echo "$dec" | jq -c .evidence.p_eff)"
		bw_skip "P_eff behind the decision: $BW_NO_FETCH_WHY"
		return
	fi
	# Deep by bw_deep_mark: in a TCG guest the readers' own path keeps
	# fewer requests in flight (seen in the 6.12 guest: P_eff 2.34 at
	# depth 2.97, and 1.987).
	assertTrue "the decision's P_eff is deep (>= $(bw_deep_mark)): $(echo "$dec" |
		jq -c '{p_eff: .evidence.p_eff, depth: .evidence.depth_mean_busy, why}')" \
		"echo '$dec' | jq -e '.evidence.p_eff >= $(bw_deep_mark)' >/dev/null"
}

# One tag and no seek cost: BFQ's idling cannot pay for itself here (it
# does on a spindle, where switching streams costs a seek: test_tune's
# emulated disk).  The tuner has no P_eff to go on (depth 1: undetermined,
# never claimed), so its probe decides by throughput; the test holds it to
# the evidence it logged: keep exactly when the probe was faster by more
# than the policy's 5% gain and than its windows resolve (`resolution`).
test_tune_nullblk_p1_decides_by_throughput() {
	local dev dec probe base res
	tr_module null_blk || return 0
	tr_nullb dev irqmode=2 completion_nsec="$TR_SVC_NS" hw_queue_depth=1 submit_queues=1 || return
	tr_tune "$dev" 1 || return 0
	dec=$(tr_tune_decisions | jq -c 'select(.action == "keep" or .action == "revert")' | head -n 1)
	assertNotNull "a probe decided" "$dec"
	probe=$(echo "$dec" | jq .evidence.mb_per_s)
	base=$(echo "$dec" | jq .compared_with.mb_per_s)
	res=$(echo "$dec" | jq '.resolution // 0')
	assertEquals "no P_eff claimed at depth 1" null "$(echo "$dec" | jq .evidence.p_eff)"
	assertTrue "the windows' resolution said ($res)" "awk 'BEGIN { exit !($res > 0) }'"
	# Faster means by more than the policy's gain (5%) and than the windows
	# resolve; a tie with no P_eff goes back.
	if awk "BEGIN { g = $res > 0.05 ? $res : 0.05; exit !($probe > $base * (1 + g)) }"; then
		assertEquals "probe faster ($probe vs $base MB/s, resolution $res): kept" keep "$(echo "$dec" | jq -r .action)"
		assertEquals "idling off while tuning" 0 "$TR_IDLE"
	else
		assertEquals "probe not faster past 5% and the resolution $res ($probe vs $base MB/s): reverted" revert "$(echo "$dec" | jq -r .action)"
		assertTrue "idling on while tuning ($TR_IDLE)" "[ $TR_IDLE -ge 4000 ]"
	fi
}

# Many hw queues (one per CPU at most: blk-mq caps them at nr_cpu_ids, so
# 8 need a guest with 8 CPUs, VM_SMP=8) of 1024 tags.  4 fio jobs of
# iodepth 64 spread over the CPUs: every request counted (against
# diskstats and fio), none beyond the tag table, the tables sized for them.
test_many_queues() {
	local dev hwqs tags s0 s1 ds seen missed out untracked fio_ios mem slots
	tr_module null_blk || return 0
	tr_nullb dev irqmode=2 completion_nsec=200000 hw_queue_depth=1024 submit_queues=16 || return
	hwqs=$(ls /sys/block/"$dev"/mq | wc -l)
	tags=$(cat /sys/block/"$dev"/mq/0/nr_tags)
	[ "$hwqs" -ge 8 ] || { bw_skip "$hwqs hw queues with $(nproc) CPUs: blk-mq caps them at the CPU count (VM_SMP=8)"; return 0; }
	out=$BW_TMP/manyq.json
	s0=$(bw_diskstats "$dev")
	bw_bg_start "$out" "Ctrl-C to stop" "$BW_BIN" stat --json --verbose --no-state --exact -d "$dev" -i 1 ||
		{ fail "blkwise start"; return; }
	BW_STAT_PID=$BW_BG_PID
	bw_fio "$BW_TMP/manyq.fio.json" --name=mq --filename="/dev/$dev" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=64 --numjobs=4 --time_based --runtime=5 --group_reporting
	sleep 1.2
	bw_stat_stop INT
	s1=$(bw_diskstats "$dev")
	ds=$(bw_diskstat_delta "$s0" "$s1" 1)
	fio_ios=$(jq '.jobs[0].read.total_ios' "$BW_TMP/manyq.fio.json")
	seen=$(bw_jsum "$out" "$dev" .ops.read.ios)
	missed=$(bw_missed "$out" "$dev")
	untracked=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last | .untracked_total' "$out")
	mem=$(grep 'maps total' "$out.err")
	slots=$(echo "$mem" | sed -n 's/.*, \([0-9]*\) request entries for all.*/\1/p')
	echo "  $hwqs hw queues x $tags tags: fio $fio_ios, diskstats $ds, blkwise $seen (+$missed missed)," \
		"untracked $untracked, depth max $(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d) | .depth_max] | max' "$out")"
	echo "  $mem"
	assertEquals "fio = diskstats" "$ds" "$fio_ios"
	bw_expect_count "reads vs diskstats" "$ds" "$seen" "$missed"
	assertEquals "no request beyond the tag table" 0 "$untracked"
	# The table is sized by live requests, capped (docs/design.md, "The hot path"),
	# not by hw queues x tags, and still tracks every request.
	assertTrue "request entries ($slots) bounded, not $hwqs x $tags x 4" \
		"[ -n '$slots' ] && [ ${slots:-0} -le 8192 ] && [ ${slots:-0} -lt $((hwqs * tags * 4)) ]"
	assertTrue "maps under 256 MiB: $mem" \
		"[ -n '$mem' ] && awk '{ for (i = 1; i <= NF; i++) if (\$i == \"total\") exit !(\$(i + 1) < 256) }' <<<'$mem'"
}

. shunit2
