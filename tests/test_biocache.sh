#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: `blkwise stat --bio-cache`, the per-cpu bio alloc cache.
# - Everywhere: the method is said, and a tracepoint-only kernel (one where
#   function tracing is refused) shows no hit, miss or ratio, only the
#   cache-flagged bios block_bio_queue sees, and those match the I/O done.
# - Where fentry loads (the VM tier) on null_blk: io_uring direct reads hit
#   the cache (ratio >= 90%), and the hits agree within 1% with a second,
#   independent count (the bio returned was the head of this CPU's cache
#   list, read from the cache itself); every eligible allocation is one of
#   fio's reads; libaio never asks for the cache (0 hits).  The cache's
#   effect: IOPS with the cache hitting (io_uring) and bypassed (libaio),
#   same device, same run, no probes attached while measuring.
# On 6.1 the cache serves polled I/O only (io_uring sets IOCB_ALLOC_CACHE
# for IOPOLL rings; IRQ-driven I/O came with 6.2): there the io_uring runs
# use hipri on a null_blk poll queue.
. "$(dirname "$0")/lib.sh"

BC_SECS=3

bc_stat() {	# OUT ARGS...: one --bio-cache JSON line per interval, in the background
	local out=$1
	shift
	bw_stat_start "$out" --no-state --bio-cache -i 1 "$@"
}

# bc_last OUT JQ: of the last line's bio_cache.
bc_last() { tail -n 1 "$1" | jq -r ".bio_cache | $2"; }

# bc_set OUT NAME FIELD: a bio_set's field in the last line ("absent": no
# such set or field, which no count assertion takes for 0).
bc_set() {
	tail -n 1 "$1" | jq -r --arg n "$2" "[.bio_cache.bio_sets[] | select(.bio_set == \$n) | .$3] | first // \"absent\""
}

test_method_is_labelled() {
	local dev out method flagged queued
	bw_require fio jq losetup || return 0
	bw_loop dev 64 disk || { fail "loop device"; return; }
	out=$BW_TMP/label.json
	bc_stat "$out" -d "$dev" || { fail "blkwise start"; return; }
	bw_fio "$BW_TMP/label.fio.json" --name=l --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=io_uring --iodepth=4 --number_ios=2000 --size=64m
	sleep 1.2
	bw_stat_stop INT
	method=$(bc_last "$out" .method)
	queued=$(tail -n 1 "$out" | jq '[.bio_cache.bio_sets[].queued_bios] | add')
	flagged=$(tail -n 1 "$out" | jq '[.bio_cache.bio_sets[].queued_cache_flagged] | add')
	echo "  $(uname -r): method $method ($(bc_last "$out" '.why // "-"')); bios queued $queued, cache-flagged $flagged"
	case $method in
	exact)
		assertEquals "no reason given when exact" null "$(bc_last "$out" .why)"
		assertTrue "hits + misses = eligible in every set" \
			"tail -n 1 $out | jq -e '[.bio_cache.bio_sets[] | .hits + .misses == .eligible] | all' >/dev/null"
		;;
	tracepoint)
		assertContains "says why" "$(bc_last "$out" .why)" "refused"
		assertEquals "no hit, miss or ratio figure" 0 \
			"$(tail -n 1 "$out" | jq '[.. | objects | select(has("hits") or has("misses") or has("hit_ratio"))] | length')"
		;;
	off)	# a kernel without the cache (before 5.15): nothing to count, and said
		assertContains "says why" "$(bc_last "$out" .why)" "no per-cpu bio alloc cache"
		bw_skip "bio cache method off: $(bc_last "$out" .why)"
		return
		;;
	*) fail "method '$method'" ;;
	esac
	# 2000 reads, each one bio: at least that many queued (others' I/O too: not on a -d filter).
	assertTrue "bios queued ($queued) cover fio's 2000" "[ ${queued:-0} -ge 2000 ]"
}

# The exporter's family carries the method this kernel allows, and counts
# the bios of a loop device's direct reads.
test_export_says_method() {
	local dev port out page want
	bw_require fio jq losetup curl ss || return 0
	bw_loop dev 64 disk || { fail "loop device"; return; }
	out=$BW_TMP/exp
	bc_stat "$out.stat" -d "$dev" -c 1 || { fail "blkwise stat"; return; }
	wait "$BW_STAT_PID"
	want=$(bc_last "$out.stat" .method)
	port=$(bw_free_port)
	bw_bg_start "$out" serving "$BW_BIN" export --bio-cache --no-state -d "$dev" \
		--listen 127.0.0.1:"$port" || { fail "export start"; return; }
	bw_fio "$BW_TMP/exp.fio.json" --name=e --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=io_uring --iodepth=4 --number_ios=1000 --size=64m
	sleep 1.2
	page=$(curl -fsS "http://127.0.0.1:$port/metrics" | grep '^blkwise_bio_cache_events_total')
	echo "  $(uname -r): $(echo "$page" | grep -c .) bio cache series, method $want; e.g. $(echo "$page" | grep -m 1 queued_cache_flagged)"
	if [ "$want" = off ]; then	# no cache on this kernel: no series, and stat said why
		assertNull "no bio cache series" "$page"
		bw_skip "bio cache method off: $(bc_last "$out.stat" .why)"
		return
	fi
	assertNotNull "bio cache series on the page" "$page"
	assertEquals "every series says method=$want" 0 "$(echo "$page" | grep -vc "method=\"$want\"")"
	if [ "$want" = tracepoint ]; then
		assertEquals "no hit or miss series on a tracepoint kernel" 0 \
			"$(echo "$page" | grep -cE 'event="(hits|misses|eligible|verify_hits)"')"
	else
		assertTrue "hits series where exact" "echo '$page' | grep -q 'event=\"hits\"'"
	fi
	# (Cache-flagged only where IRQ-driven I/O gets the cache, 6.2+: count bios.)
	assertTrue "bios queued >= fio's 1000 reads" \
		"[ $(echo "$page" | awk '/event="queued_bios"/ { s += $2 } END { print s + 0 }') -ge 1000 ]"
}

# bc_nullb: null_blk completing at once (irqmode 0: in the submitter), with
# a poll queue for 6.1's polled-only cache.  Skips unless exact.
bc_nullb() {
	bw_require fio jq || return 1
	grep -qs "^null_blk " /proc/modules && { bw_skip "null_blk already loaded"; return 1; }
	modprobe -n -q null_blk 2>/dev/null || { bw_skip "no null_blk module (run in the VM tier: make vmtest)"; return 1; }
	modprobe null_blk nr_devices=1 gb=2 irqmode=0 hw_queue_depth=64 submit_queues=1 poll_queues=1 ||
		{ fail "modprobe null_blk"; return 1; }
	bw_on_cleanup "bw_unload_module null_blk"
	for _ in $(seq 50); do [ -b /dev/nullb0 ] && break; sleep 0.1; done
	echo none >/sys/block/nullb0/queue/scheduler
	BC_HIPRI=()
	# IRQ-driven bios got the cache in 6.2 (free_list_irq); before, polled only.
	if ! grep -q 'bio_alloc_irq_cache_splice$' /proc/kallsyms; then
		BC_HIPRI=(--hipri=1)
		cat /sys/block/nullb0/queue/io_poll >/dev/null 2>&1 || true
	fi
}

# bc_run OUT ENGINE [fio args]: fio on nullb0 with the counting stat around it.
bc_run() {
	local out=$1 engine=$2
	shift 2
	bc_stat "$out" -d nullb0 || { fail "blkwise start"; return 1; }
	bw_fio "$out.fio" --name=b --filename=/dev/nullb0 --direct=1 --rw=randread --bs=4k \
		--ioengine="$engine" --iodepth=16 --time_based --runtime="$BC_SECS" "$@"
	sleep 1.2
	bw_stat_stop INT
}

test_io_uring_hits_exact() {
	local out ios elig hits vhits misses ratio puts cputs
	bc_nullb || return 0
	out=$BW_TMP/uring.json
	bc_run "$out" io_uring "${BC_HIPRI[@]}" || return
	[ "$(bc_last "$out" .method)" = exact ] ||
		{ bw_skip "bio cache method $(bc_last "$out" .method): $(bc_last "$out" .why)"; return 0; }
	ios=$(jq '.jobs[0].read.total_ios' "$out.fio")
	elig=$(bc_set "$out" blkdev_dio_pool eligible)
	hits=$(bc_set "$out" blkdev_dio_pool hits)
	misses=$(bc_set "$out" blkdev_dio_pool misses)
	vhits=$(bc_set "$out" blkdev_dio_pool verify_hits)
	puts=$(bc_set "$out" blkdev_dio_pool flagged_puts)
	cputs=$(bc_set "$out" blkdev_dio_pool cache_puts)
	ratio=$(bc_set "$out" blkdev_dio_pool hit_ratio)
	echo "  $(uname -r) io_uring ${BC_HIPRI[*]}: fio $ios reads; blkdev_dio_pool eligible $elig," \
		"hits $hits (ratio $ratio), misses $misses, second probe $vhits; puts to cache $cputs of $puts"
	assertTrue "eligible allocations ($elig) = fio's reads ($ios) within 1%" "bw_within $elig $ios 1"
	assertEquals "hits + misses = eligible" "$elig" "$((hits + misses))"
	assertTrue "hit ratio $ratio >= 0.9" "awk 'BEGIN { exit !($ratio >= 0.9) }'"
	assertTrue "hits ($hits) = the cache's own count ($vhits) within 1%" "bw_within $vhits $hits 1"
	assertTrue "puts to cache ($cputs) = hits + misses within 1%" "bw_within $cputs $elig 1"
}

test_libaio_no_hits() {
	local out ios req hits
	bc_nullb || return 0
	out=$BW_TMP/aio.json
	bc_run "$out" libaio || return
	[ "$(bc_last "$out" .method)" = exact ] ||
		{ bw_skip "bio cache method $(bc_last "$out" .method): $(bc_last "$out" .why)"; return 0; }
	ios=$(jq '.jobs[0].read.total_ios' "$out.fio")
	req=$(bc_set "$out" blkdev_dio_pool requested)
	hits=$(bc_set "$out" blkdev_dio_pool hits)
	echo "  $(uname -r) libaio: fio $ios reads; blkdev_dio_pool allocs $(bc_set "$out" blkdev_dio_pool allocs)," \
		"asked for the cache $req, hits $hits"
	assertTrue "allocations ($(bc_set "$out" blkdev_dio_pool allocs)) = fio's reads ($ios) within 1%" \
		"bw_within $(bc_set "$out" blkdev_dio_pool allocs) $ios 1"
	assertEquals "libaio never asks for the cache" 0 "$req"
	assertEquals "no hits" 0 "$hits"
}

# IOPS with the cache hitting and bypassed, alternated, same
# device and run, nothing attached; then one counted run of each.  The
# figures go to the log (TCG's noise is larger than the cache's gain);
# the test holds the counted runs to "hits" and "none".
test_iops_with_and_without_cache() {
	local r e iops out
	bc_nullb || return 0
	for r in 1 2 3; do
		for e in io_uring libaio; do
			if [ "$e" = io_uring ]; then set -- "${BC_HIPRI[@]}"; else set --; fi
			bw_fio "$BW_TMP/s3.$e.$r.json" --name=s --filename=/dev/nullb0 --direct=1 --rw=randread \
				--bs=4k --ioengine="$e" --iodepth=32 --iodepth_batch_submit=8 \
				--iodepth_batch_complete_min=8 --time_based --runtime=3 "$@"
			iops=$(jq '.jobs[0].read.iops | floor' "$BW_TMP/s3.$e.$r.json")
			echo "  cache IOPS $(uname -r) run $r: $e ${*:-} $iops IOPS"
		done
	done
	out=$BW_TMP/s3.counted
	bc_run "$out.u" io_uring "${BC_HIPRI[@]}" || return
	bc_run "$out.a" libaio || return
	[ "$(bc_last "$out.u" .method)" = exact ] ||
		{ bw_skip "bio cache method $(bc_last "$out.u" .method): $(bc_last "$out.u" .why)"; return 0; }
	echo "  cache IOPS counted: io_uring hit ratio $(bc_set "$out.u" blkdev_dio_pool hit_ratio)," \
		"libaio hits $(bc_set "$out.a" blkdev_dio_pool hits) of $(bc_set "$out.a" blkdev_dio_pool allocs)"
	assertTrue "io_uring: the cache hit" "awk 'BEGIN { exit !($(bc_set "$out.u" blkdev_dio_pool hit_ratio) >= 0.9) }'"
	assertEquals "libaio: bypassed" 0 "$(bc_set "$out.a" blkdev_dio_pool hits)"
}

. shunit2
