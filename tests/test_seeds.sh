#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the seed runs' key figures against the guest's own truth
# (tools/vm/seeds-lib.sh measures; docs/seeds.md has the tables):
# - seed001, on a virtio-blk disk of its own: blkwise's reads and merges
#   equal /proc/diskstats', the segments histogram's total equals the
#   requests, no request has more segments than queue/max_segments; with
#   nomerges=2 nothing merges, with 0 sequential 4k reads do; where
#   --virtio loads, every request goes indirect on the disk that offers
#   indirect descriptors and none on the one that does not, and the ring's
#   descriptors are the requests' segments plus a header and a status each;
# - seed002, four LUNs on one scsi_debug host: the dispatch stall share is
#   larger with max_queue 4 (the host's budget shared by the LUNs) than
#   with 64.
# Needs the seed disks (tools/vmtest.sh VM_SEED_DISK, set when SUITES names
# test_seeds: `make vmtest SUITES=test_seeds`) and scsi_debug; elsewhere
# every test is SKIPPED, with the reason.
. "$(dirname "$0")/lib.sh"
. "$BW_ROOT/tools/vm/seeds-lib.sh"

SEED_BIN=$BW_BIN
SEED_TMP=$BW_TMP
SD_SECS=${SD_SECS:-2}

# sd_disk VAR SERIAL: the seed disk with SERIAL, or SKIP.
sd_disk() {
	local _d
	bw_require fio jq || return 1
	_d=$(seed_disk "$2") || {
		bw_skip "no virtio-blk disk with serial $2 (the VM tier's seed disk: make vmtest SUITES=test_seeds)"
		return 1
	}
	bw_on_cleanup "echo 0 >/sys/block/$_d/queue/nomerges"
	printf -v "$1" %s "$_d"
}

# sd_f LINE NAME: a field of seed001_run's line.
sd_f() { seed_field "$1" "$2" "$SEED001_FIELDS"; }

# sd_counts_match LINE WHAT: blkwise's reads, merges and segments against
# diskstats and max_segments.
sd_counts_match() {
	local l=$1 what=$2 missed
	echo "  $what: $l"
	missed=$(sd_f "$l" missed)
	bw_expect_count "$what: reads, blkwise + missed = diskstats" "$(sd_f "$l" ds_reads)" \
		"$(sd_f "$l" bw_reads)" "$missed"
	assertEquals "$what: merges, blkwise = diskstats" "$(sd_f "$l" ds_merges)" "$(sd_f "$l" bw_merges)"
	assertEquals "$what: segment histogram total = reads" "$(sd_f "$l" bw_reads)" "$(sd_f "$l" hist_total)"
	assertTrue "$what: reads > 0" "[ $(sd_f "$l" bw_reads) -gt 0 ]"
	assertTrue "$what: largest segment bucket $(sd_f "$l" seg_max_lo) <= max_segments $(sd_f "$l" max_segments)" \
		"[ $(sd_f "$l" seg_max_lo) -le $(sd_f "$l" max_segments) ] && [ $(sd_f "$l" seg_max_lo) -ge 1 ]"
}

test_seed001_merges() {
	local dev l
	sd_disk dev blkwise-seed || return 0
	l=$(seed001_run "$dev" 0 read 4k "$SD_SECS") || { fail "seed001_run nomerges=0"; return; }
	sd_counts_match "$l" "nomerges=0 read 4k"
	assertTrue "nomerges=0 read 4k: merges > 0 (diskstats $(sd_f "$l" ds_merges))" "[ $(sd_f "$l" ds_merges) -gt 0 ]"
	l=$(seed001_run "$dev" 2 read 4k "$SD_SECS") || { fail "seed001_run nomerges=2"; return; }
	sd_counts_match "$l" "nomerges=2 read 4k"
	assertEquals "nomerges=2 read 4k: no merge (blkwise)" 0 "$(sd_f "$l" bw_merges)"
	assertEquals "nomerges=2 read 4k: no merge (diskstats)" 0 "$(sd_f "$l" ds_merges)"
	assertEquals "nomerges=2 read 4k: one segment a request" 1 "$(sd_f "$l" seg_per_rq)"
}

test_seed001_segments() {
	local dev l
	sd_disk dev blkwise-seed || return 0
	l=$(seed001_run "$dev" 2 randread 128k "$SD_SECS") || { fail "seed001_run"; return; }
	sd_counts_match "$l" "nomerges=2 randread 128k"
	# A 128k O_DIRECT read of 4k pages: 32 segments at most, more than 1.
	assertTrue "randread 128k: 1 < seg/rq $(sd_f "$l" seg_per_rq) <= 32" \
		"awk 'BEGIN { exit !($(sd_f "$l" seg_per_rq) > 1 && $(sd_f "$l" seg_per_rq) <= 32) }'"
	# The sum of segments within the histogram's bounds (exact below 16).
	# shellcheck disable=SC2046
	set -- $(seed_jq "$SEED_TMP/s1-$dev-2-randread-128k.json" "$dev" \
		'[(map(.seg_hist[] | .[0] * .[2]) | add), (map(.seg_hist[] | ((.[1] // 513) - 1) * .[2]) | add),
		  (map(.segments) | add)] | map(tostring) | join(" ")')
	assertTrue "randread 128k: histogram's least $1 <= segments $3 <= its most $2" \
		"[ $1 -le $3 ] && [ $3 -le $2 ] && [ $3 -gt 0 ]"
}

# sd_virtio LINE WHAT SHARE: with --virtio loaded, the indirect share is
# SHARE, every read a ring buffer, and the ring's segments the requests'.
sd_virtio() {
	local l=$1 what=$2
	assertEquals "$what: indirect share" "$3" "$(sd_f "$l" indirect_share)"
	assertEquals "$what: ring buffers = reads" "$(sd_f "$l" bw_reads)" "$(sd_f "$l" virtio_adds)"
	assertEquals "$what: ring segments a buffer = blkwise seg/rq" "$(sd_f "$l" seg_per_rq)" \
		"$(sd_f "$l" ring_seg_per_rq)"
}

test_seed001_indirect() {
	local dev direct l why
	sd_disk dev blkwise-seed || return 0
	sd_disk direct blkwise-seed-direct || return 0
	why=$("$BW_BIN" stat --virtio --no-state -d "$dev" -c 1 -i 0.1 2>&1 >/dev/null |
		sed -n 's/.*virtio descriptor counts off: //p')
	[ -z "$why" ] || { bw_skip "--virtio does not load here: $why"; return 0; }
	l=$(seed001_run "$dev" 2 randread 16k "$SD_SECS") || { fail "seed001_run $dev"; return; }
	echo "  indirect offered: $l"
	sd_virtio "$l" "$dev (indirect offered), randread 16k" 1
	l=$(seed001_run "$direct" 2 randread 16k "$SD_SECS") || { fail "seed001_run $direct"; return; }
	echo "  indirect_desc=off: $l"
	sd_virtio "$l" "$direct (indirect_desc=off), randread 16k" 0
}

test_seed002_stalls() {
	local starved unstarved s u
	bw_require fio jq || return 0
	grep -qs '^scsi_debug ' /proc/modules && { bw_skip "scsi_debug already loaded (not ours to change)"; return 0; }
	modprobe -n -q scsi_debug 2>/dev/null || { bw_skip "no scsi_debug module for $(uname -r) (run in the VM tier)"; return 0; }
	# mq-deadline: a request refused the host's budget waits in the scheduler,
	# where the insert event sees it; under none it goes straight to the
	# dispatch list, a wait the tracepoints do not show (docs/design.md).
	starved=$(seed002_run 4 mq-deadline $((SD_SECS + 3))) || { fail "seed002_run max_queue=4"; return; }
	unstarved=$(seed002_run 64 mq-deadline $((SD_SECS + 3))) || { fail "seed002_run max_queue=64"; return; }
	echo "  max_queue 4:"; echo "$starved" | sed 's/^/    /'
	echo "  max_queue 64:"; echo "$unstarved" | sed 's/^/    /'
	s=$(echo "$starved" | cut -f 9 | sort -g | head -n 1)
	u=$(echo "$unstarved" | cut -f 9 | sort -g | tail -n 1)
	if [ "$s" = - ] || [ "$u" = - ]; then
		bw_skip "stat --json has no dispatch_stall_share (dispatch stalls not in this blkwise)"
		return 0
	fi
	assertTrue "every LUN's stall share under max_queue 4 (least $s) > any under 64 (most $u)" \
		"awk 'BEGIN { exit !($s > $u) }'"
}

. shunit2
