#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# blkwise's request counts against /proc/diskstats' deltas over the same
# window, op by op, where the block layer completes requests it never
# issued (an fsync's empty flush write) and files ops by op_stat_group()
# (write zeroes is a write); and the watcher's own I/O: none.
. "$(dirname "$0")/lib.sh"

# counts_match OUT DEV S0 S1 WHAT: every op's requests equal diskstats'
# (reads 1, writes 5, discards 12, flushes 16), less the completions
# blkwise never saw (bw_missed, shared by all ops, and undetectable for
# empty flush writes); nothing filed as passthrough.
counts_match() {
	local out=$1 dev=$2 s0=$3 s1=$4 what=$5 missed ds bw op f all_ds=0 all_bw=0 fsyncs gap light
	missed=$(bw_missed_n "$out" "$dev")
	light=0
	[ "$(bw_missed "$out" "$dev")" = "$missed" ] || light=1
	for op in read:1 write:5 discard:12 flush:16; do
		f=${op#*:}
		op=${op%:*}
		ds=$(bw_diskstat_delta "$s0" "$s1" "$f")
		bw=$(bw_jsum "$out" "$dev" ".ops.$op.ios")
		echo "  $what: $op diskstats $ds, blkwise $bw"
		all_ds=$((all_ds + ds))
		all_bw=$((all_bw + bw))
		# Each op within the completions never seen, which may be of any
		# op, and the empty flush writes unseen (below).
		assertTrue "$what: $op: blkwise $bw, diskstats $ds, $missed never seen" \
			"[ $bw -le $ds ] && [ $((bw + missed + (light ? ds / 200 + 1 : ds / 1000))) -ge $ds ]"
	done
	echo "  $what: $missed never seen; unmatched completions (no issue seen):" \
		"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d)] | last.unmatched_total' "$out")"
	# An empty flush write whose completion BPF never ran for (see "Lost
	# completions") leaves no trace, as it was never issued: those are
	# allowed beyond the detected losses, at their rate (<= 0.5%, as bw_expect_count).
	fsyncs=$(bw_jsum "$out" "$dev" .fsync_writes)
	gap=$((all_ds - all_bw - missed))
	assertTrue "$what: missed $missed of $all_ds is <= 0.5%" "[ $((missed * 200)) -le $((all_ds + 200)) ]"
	if [ $light = 1 ]; then	# the light tier: a lost completion is not counted
		assertTrue "$what: all requests: diskstats $all_ds = blkwise $all_bw + $missed in flight + $gap never seen (<= 0.5%)" \
			"[ $gap -ge 0 ] && [ $((gap * 200)) -le $((all_ds + 200)) ]"
	else
		assertTrue "$what: all requests: diskstats $all_ds = blkwise $all_bw + $missed never seen + $gap empty flush writes unseen (of $fsyncs)" \
			"[ $gap -ge 0 ] && [ $((gap * 1000)) -le $fsyncs ]"
	fi
	assertEquals "$what: no passthrough requests" 0 "$(bw_jsum "$out" "$dev" .ops.passthrough.ios)"
}

# fsync-heavy writes through ext4: each fsync's empty flush write completes
# as a write that was never issued; diskstats counts it, and so does blkwise
# (fsync_writes), apart from the writes that have a service time.
test_fsync_ext4() {
	local dev out s0 s1 mnt fsyncs ds_writes
	bw_require fio jq mkfs.ext4 || return 0
	bw_loop dev 256 shm || { fail "loop device"; return; }
	bw_ext4 mnt "$dev" || { fail "ext4 on $dev"; return; }
	out=$BW_TMP/ext4.json
	# The light tier alone: its service histogram takes every write issued
	# (the default's, where stamps are a plug's, the timing slices' share).
	bw_stat_start_quiet "$out" "$dev" -i 0.5 --exact-period 0 || { fail "blkwise start"; return; }
	s0=$BW_S0
	bw_fio "$BW_TMP/fio.json" --name=f --directory="$mnt" --rw=randwrite --bs=4k \
		--fsync=4 --size=32M --ioengine=psync --time_based --runtime=3
	# Unmounted, the device has nothing left to write: the windows close together.
	umount "$mnt" || fail "umount"
	s1=$(bw_diskstats "$dev")
	bw_stat_stop INT
	assertEquals "blkwise exit status" 0 $?
	counts_match "$out" "$dev" "$s0" "$s1" "ext4 fsync"
	fsyncs=$(bw_jsum "$out" "$dev" .fsync_writes)
	ds_writes=$(bw_diskstat_delta "$s0" "$s1" 5)
	echo "  ext4 fsync: $fsyncs empty flush writes of $ds_writes writes (kernel $(uname -r))"
	# How many fsyncs end in an empty flush write, and not in a journal
	# commit's flush with data, is ext4's choice, and it differs by
	# kernel (28 on 5.10, 56 on 6.12, hundreds on 6.18 for the same
	# workload): that they are counted as the writes diskstats counts is
	# what counts_match checked; here, that some were there to count.
	assertTrue "empty flush writes counted ($fsyncs)" "[ $fsyncs -gt 0 ]"
	assertEquals "service histogram: the writes that were issued" \
		"$(bw_jsum "$out" "$dev" '(.ops | [.[].ios] | add) - .ops.passthrough.ios')" \
		"$(($(bw_jsum "$out" "$dev" .svc_hist_samples) + fsyncs))"
}

# The raw device, direct I/O, fsync every 4 writes: every fsync is an empty
# flush write (no filesystem journal in between).
test_fsync_raw() {
	local dev out s0 s1 fsyncs fio_fsyncs
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	out=$BW_TMP/raw.json
	bw_stat_start "$out" -d "$dev" -i 0.5 || { fail "blkwise start"; return; }
	s0=$(bw_diskstats "$dev")
	bw_fio "$BW_TMP/fio.json" --name=f --filename=/dev/"$dev" --direct=1 --rw=randwrite \
		--bs=4k --fsync=4 --ioengine=psync --size=48M --io_size=16M
	s1=$(bw_diskstats "$dev")
	bw_stat_stop INT
	counts_match "$out" "$dev" "$s0" "$s1" "raw fsync"
	fsyncs=$(bw_jsum "$out" "$dev" .fsync_writes)
	fio_fsyncs=$(jq '.jobs[0].sync.total_ios' "$BW_TMP/fio.json")
	echo "  raw fsync: fio $fio_fsyncs fsyncs, blkwise $fsyncs empty flush writes," \
		"$(bw_diskstat_delta "$s0" "$s1" 16) flushes in diskstats"
	assertTrue "fio fsynced ($fio_fsyncs)" "[ $fio_fsyncs -gt 100 ]"
	assertTrue "an empty flush write per fsync: $fsyncs, fio $fio_fsyncs" \
		"[ $fsyncs -le $fio_fsyncs ] && [ $((fsyncs + $(bw_missed_n "$out" "$dev"))) -ge $fio_fsyncs ]"
}

# blkdiscard -z (REQ_OP_WRITE_ZEROES) and blkdiscard (REQ_OP_DISCARD):
# filed as diskstats files them, writes and discards.
test_write_zeroes_and_discard() {
	local dev out s0 s1
	bw_require jq blkdiscard || return 0
	bw_loop dev 64 shm || { fail "loop device"; return; }
	out=$BW_TMP/zero.json
	bw_stat_start "$out" -d "$dev" -i 0.5 || { fail "blkwise start"; return; }
	s0=$(bw_diskstats "$dev")
	blkdiscard -z /dev/"$dev" || fail "blkdiscard -z"
	blkdiscard /dev/"$dev" || fail "blkdiscard"
	s1=$(bw_diskstats "$dev")
	sleep 0.6
	bw_stat_stop INT
	assertTrue "write zeroes counted as writes in diskstats" \
		"[ $(bw_diskstat_delta "$s0" "$s1" 5) -gt 0 ]"
	assertTrue "discards in diskstats" "[ $(bw_diskstat_delta "$s0" "$s1" 12) -gt 0 ]"
	counts_match "$out" "$dev" "$s0" "$s1" "write zeroes and discard"
	assertEquals "bytes written = diskstats' sectors" \
		"$(($(bw_diskstat_delta "$s0" "$s1" 7) * 512))" "$(bw_jsum "$out" "$dev" .ops.write.bytes)"
}

# Merges: blkwise counts the merges the block layer traces (bio back and
# front merges, request merges); diskstats' rrqm + wrqm + drqm count the same
# merges, and discard merges that have no tracepoint.  On ext4, buffered
# random reads and writes through mq-deadline, they are equal, and blkwise
# shows diskstats' figure beside its own.
test_merges_ext4_buffered() {
	local dev out s0 s1 mnt ds bw shown
	bw_require fio jq mkfs.ext4 || return 0
	bw_loop dev 256 shm || { fail "loop device"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	bw_ext4 mnt "$dev" || { fail "ext4 on $dev"; return; }
	out=$BW_TMP/merges.json
	bw_stat_start_quiet "$out" "$dev" -i 0.5 || { fail "blkwise start"; return; }
	s0=$BW_S0
	bw_fio "$BW_TMP/fio.json" --name=m --directory="$mnt" --rw=randrw --bs=4k --size=32M \
		--io_size=16M --ioengine=psync --fsync=32
	echo 3 >/proc/sys/vm/drop_caches
	bw_fio "$BW_TMP/fio2.json" --name=m --directory="$mnt" --rw=read --bs=4k --size=32M \
		--ioengine=psync
	umount "$mnt" || fail "umount"
	s1=$(bw_diskstats "$dev")
	sleep 0.6
	bw_stat_stop INT
	ds=$(($(bw_diskstat_delta "$s0" "$s1" 2) + $(bw_diskstat_delta "$s0" "$s1" 6) +
		$(bw_diskstat_delta "$s0" "$s1" 13)))
	bw=$(bw_jsum "$out" "$dev" .merges)
	shown=$(bw_jsum "$out" "$dev" .merges_diskstats)
	echo "  merges: blkwise $bw, diskstats $ds (shown beside: $shown)"
	assertTrue "the workload merged" "[ $ds -gt 10 ]"
	# blkwise's window holds the oracle's (it starts before and stops after).
	assertEquals "merges = diskstats' rrqm + wrqm + drqm over blkwise's intervals" "$shown" "$bw"
	assertTrue "diskstats' figure beside: $shown, $ds in the inner window" \
		"[ $shown -ge $ds ] && [ $shown -le $((ds + 2)) ]"
}

# A disk whose driver answers a read of its serial with a request to the
# device (virtio-blk), or nothing.
serial_disk() {
	local f
	for f in /sys/block/vd*/serial; do
		[ -r "$f" ] && { basename "$(dirname "$f")"; return; }
	done
}

# watch_serial_disk DEV SECS ARGS...: blkwise stat on DEV for SECS (its
# output in $SHM), with an ftrace instance counting the requests issued on
# it; sets OURS (those of blkwise's process) and IDENTIFIED (true once the
# identity was read).
watch_serial_disk() {
	local dev=$1 secs=$2 t out pid
	shift 2
	"$BW_BIN" --version >/dev/null	# the program in the page cache
	bw_ftrace t "$dev" block_rq_issue || { fail "ftrace instance"; return 1; }
	# Its output in memory too: what it writes there is not the watch's I/O.
	out=$SHM/noio.json
	bw_stat_start "$out" -d "$dev" -i 0.3 "$@" || { fail "blkwise start"; return 1; }
	pid=$BW_STAT_PID
	sleep "$secs"
	bw_stat_stop INT
	bw_ftrace_stop "$t"
	# Reads are its own pages faulted in (the program, its libraries), not the watch.
	OURS=$(grep -- "-$pid *\\[" "$t"/trace | grep -vc "block_rq_issue: [0-9,]* R")
	IDENTIFIED=$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .identity != null)] | length > 0' "$out")
	echo "  $dev $*: $(grep -vc '^#' "$t"/trace) requests issued, $OURS by blkwise (pid $pid);" \
		"identity read: $IDENTIFIED"
	grep -- "-$pid *\\[" "$t"/trace | head -5
	assertTrue "intervals recorded" "[ $(jq -s length "$out") -ge 5 ]"
}

# The watcher makes no I/O: a disk whose serial costs a request (virtio-blk)
# watched for 3 s gets none from blkwise; with the S1 store, the serial is
# read once, and only when the disk has I/O of its own (its identity, once
# per appearance).  Read-only: nothing is written to the disk.
test_watcher_makes_no_io() {
	local dev
	bw_require jq || return 0
	dev=$(serial_disk)
	[ -n "$dev" ] || { bw_skip "no disk with a serial attribute (virtio-blk)"; return 0; }
	SHM=$(mktemp -d /dev/shm/blkwise-test.XXXXXX) || { fail "memory directory"; return; }
	bw_on_cleanup "rm -rf $SHM"
	watch_serial_disk "$dev" 3 --no-state || return
	assertEquals "--no-state: no request by blkwise" 0 "$OURS"
	assertEquals "--no-state: identity never read" false "$IDENTIFIED"
	# The store in memory: writing it at exit is blkwise's own file, not the watch's.
	watch_serial_disk "$dev" 3 --state-dir "$SHM/state" || return
	if [ "$IDENTIFIED" = true ]; then
		assertEquals "one request by blkwise: the serial, once" 1 "$OURS"
	else
		assertEquals "no request by blkwise" 0 "$OURS"
	fi
}

# Passthrough requests (a read of the serial: REQ_OP_DRV_IN) are an op of
# their own, counted as ftrace sees them issued ('N'), and give no queue
# time (they carry no allocation stamp): every request with a queue time is
# a data request.
test_passthrough_own_op() {
	local dev t out i pt traced data q
	bw_require jq || return 0
	dev=$(serial_disk)
	[ -n "$dev" ] || { bw_skip "no disk with a serial attribute (virtio-blk)"; return 0; }
	bw_ftrace t "$dev" block_rq_issue || { fail "ftrace instance"; return; }
	out=$BW_TMP/pt.json
	bw_stat_start "$out" -d "$dev" -i 0.3 --no-state || { fail "blkwise start"; return; }
	for i in 1 2 3 4 5; do
		cat /sys/block/"$dev"/serial >/dev/null
		sleep 0.3
	done
	sleep 0.4
	bw_stat_stop INT
	bw_ftrace_stop "$t"
	pt=$(bw_jsum "$out" "$dev" .ops.passthrough.ios)
	traced=$(grep -v '^#' "$t"/trace | grep -c "block_rq_issue: [0-9,]* N ")
	data=$(bw_jsum "$out" "$dev" '.ops.read.ios + .ops.write.ios + .ops.discard.ios + .ops.flush.ios - .fsync_writes')
	q=$(bw_jsum "$out" "$dev" .q_ios)
	echo "  $dev: passthrough blkwise $pt, ftrace $traced; data requests $data, with a queue time $q"
	assertTrue "our five serial reads counted: $pt" "[ $pt -ge 5 ]"
	assertTrue "no more than ftrace saw issued: $pt <= $traced" "[ $pt -le $traced ]"
	assertTrue "queue times only from data requests: $q <= $data" "[ $q -le $data ]"
	assertEquals "passthrough kept out of the service histogram" \
		"$(bw_jsum "$out" "$dev" '.ops.read.ios + .ops.write.ios + .ops.discard.ios + .ops.flush.ios - .fsync_writes')" \
		"$(bw_jsum "$out" "$dev" .svc_hist_samples)"
}

. shunit2
