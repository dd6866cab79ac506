#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The seed runs in a vmtest guest, as markdown tables (docs/seeds.md):
#
#   make vmtest-seeds [KERNEL=6.1]     boots the guest with the seed disks
#
# Seed001: fio randread and read at 4k..128k with nomerges 0, 1 and 2 on
# the virtio-blk seed disk (indirect descriptors offered), and a few on the
# one without them: blkwise's reads, merges and segments per request beside
# /proc/diskstats and queue/max_segments, and the indirect share where
# blkwise has --virtio.  Seed002: fio randread 4k on the 4 LUNs of one
# scsi_debug host, max_queue 4 (starved) and 64, under none and mq-deadline:
# per LUN blkwise's IOPS, depth and dispatch stalls beside fio's IOPS.
#
# Writes seed001.md, seed002.md and the raw lines (*.tsv) to DIR (default:
# the result share's seeds/), and each run's JSON to DIR/raw; SEED_SECS is
# each seed001 fio run's length (3), SEED2_SECS each seed002 run's (6).
set -u
cd "$(dirname "$0")/../.." || exit 1
out=${1:-$(sed -n 's/.*vmtest\.out=\([^ ]*\).*/\1/p' /proc/cmdline)/seeds}
SEED_SECS=${SEED_SECS:-3}
SEED2_SECS=${SEED2_SECS:-6}
SEED_BIN=$(pwd)/blkwise
SEED_TMP=$out/raw	# blkwise's JSON Lines and fio's JSON of each run, kept
. tools/vm/seeds-lib.sh
rm -rf "$SEED_TMP"
mkdir -p "$out" "$SEED_TMP"
rc=0

kernel="Linux $(uname -r), QEMU TCG guest, $(nproc) vCPUs, $(fio --version), $("$SEED_BIN" --version | head -n 1 | sed 's/, libbpf.*//')"

# table FILE FIELDS HEADER: FILE's tab-separated lines as a markdown table.
table() {
	echo "| $3 |"
	echo "$3" | sed 's/[^|]*/---/g; s/^/|/; s/$/|/'
	sed 's/\t/ | /g; s/^/| /; s/$/ |/' "$1"
}

seed001() {
	local disk direct nm rw bs tsv=$out/seed001.tsv
	disk=$(seed_disk blkwise-seed) || { echo "seeds: no virtio-blk disk with serial blkwise-seed (VM_SEED_DISK)" >&2; return 1; }
	direct=$(seed_disk blkwise-seed-direct) || direct=""
	: >"$tsv"
	for nm in 0 1 2; do
		for rw in randread read; do
			for bs in 4k 16k 64k 128k; do
				echo "seeds: $(date +%T) seed001 $disk nomerges=$nm $rw $bs" >&2
				seed001_run "$disk" "$nm" "$rw" "$bs" "$SEED_SECS" >>"$tsv" ||
					echo "seeds: seed001 $disk nomerges=$nm $rw $bs failed" >&2
			done
		done
	done
	for rw in randread read; do
		for bs in 4k 128k; do
			[ -n "$direct" ] && { seed001_run "$direct" 0 "$rw" "$bs" "$SEED_SECS" >>"$tsv" ||
				echo "seeds: seed001 $direct $rw $bs failed" >&2; }
		done
	done
	{
		echo "Seed001: $kernel; $disk: indirect descriptors offered${direct:+, $direct: not (indirect_desc=off)};" \
			"$(ls /sys/block/"$disk"/mq | wc -l) hw queues, scheduler $(sed 's/.*\[\(.*\)\].*/\1/' /sys/block/"$disk"/queue/scheduler);" \
			"fio libaio O_DIRECT iodepth 16, submitted and reaped 16 at a time, ${SEED_SECS} s a run"
		echo
		table "$tsv" "$SEED001_FIELDS" "disk | nomerges | fio rw | bs | fio IOPS | reads (diskstats) | reads (blkwise) | merges (diskstats) | merges (blkwise) | seg/rq | seg hist total | max seg (bucket) | max_segments | indirect share | ring adds | ring seg/rq | missed"
	} >"$out/seed001.md"
}

seed002() {
	local q s tsv=$out/seed002.tsv
	modprobe -n -q scsi_debug || { echo "seeds: no scsi_debug module" >&2; return 1; }
	: >"$tsv"
	for q in 4 64; do
		for s in none mq-deadline; do
			seed002_run "$q" "$s" "$SEED2_SECS" >>"$tsv" || echo "seeds: seed002 max_queue=$q $s failed" >&2
		done
	done
	{
		echo "Seed002: $kernel; scsi_debug add_host=1 num_tgts=1 max_luns=4 ndelay=1000000 (1 ms a command);" \
			"fio randread 4k libaio O_DIRECT iodepth 16 on each LUN at once, ${SEED2_SECS} s a run;" \
			"blkwise figures are the means of its 1 s intervals inside the run"
		echo
		table "$tsv" "$SEED002_FIELDS" "max_queue | scheduler | LUN | fio IOPS | blkwise r/s | depth (busy) | max depth | stall s | stall share | stalls"
	} >"$out/seed002.md"
}

start=$(date +%s)
seed002 || rc=1
echo "seeds: seed002 took $(($(date +%s) - start)) s" >&2
start=$(date +%s)
seed001 || rc=1
echo "seeds: seed001 took $(($(date +%s) - start)) s" >&2
cat "$out/seed001.md" "$out/seed002.md" 2>/dev/null
exit $rc
