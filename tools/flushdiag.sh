#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/flushdiag.sh [SECS]: which completions of ext4's fsync-heavy writes
# `blkwise stat` files under unmatched_total, against ftrace.
# ext4 on a loop device over a file in BW_MEM_DIR (default /var/tmp), fio
# 4k random writes with an fsync every 4 for SECS (3) seconds, watched by
# blkwise's default tier and by ftrace's block_rq_issue/block_rq_complete
# (filtered to the device).  Prints blkwise's unmatched_total and
# fsync_writes, and ftrace's zero-byte completions by rwbs, each with how
# many came at a sector that had completed with data before: the second
# completion of a write that went through the flush machinery.
# In a guest: make vmtest KERNEL=5.10 VMCMD='bash tools/flushdiag.sh'.
set -eu
secs=${1:-3}
cd "$(dirname "$0")/.."
dir=${BW_MEM_DIR:-/var/tmp}
work=$(mktemp -d /tmp/flushdiag.XXXXXX)
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
truncate -s 256M "$work/img" 2>/dev/null || truncate -s 256M "$dir/flushdiag.img"
img=$work/img
[ -f "$img" ] || img=$dir/flushdiag.img
dev=$(losetup -f --show "$img")
name=$(basename "$dev")
cleanup() {
	for e in block_rq_issue block_rq_complete; do
		echo 0 >$T/events/block/$e/enable
		echo 0 >$T/events/block/$e/filter
	done
	umount "$work/mnt" 2>/dev/null || true
	losetup -d "$dev"
	rm -rf "$work" "$dir/flushdiag.img"
}
trap cleanup EXIT
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
mkdir "$work/mnt"
mount "$dev" "$work/mnt"
echo 0 >$T/tracing_on
echo >$T/trace
echo 8192 >$T/buffer_size_kb
mm=$(cat /sys/block/"$name"/dev)
for e in block_rq_issue block_rq_complete; do
	echo "dev == $(( (${mm%:*} << 20) | ${mm#*:} ))" >$T/events/block/$e/filter
	echo 1 >$T/events/block/$e/enable
done
./blkwise stat -d "$name" -i 600 --json --no-state >"$work/stat.json" 2>"$work/stat.err" &
pid=$!
sleep 2
echo 1 >$T/tracing_on
fio --name=f --directory="$work/mnt" --rw=randwrite --bs=4k --fsync=4 --size=32M \
	--ioengine=psync --time_based --runtime="$secs" >/dev/null
sync
echo 0 >$T/tracing_on
kill -INT $pid
wait $pid
cat $T/trace >"$work/trace"
echo "kernel $(uname -r)"
jq -rs --arg d "$name" '[.[].devices[] | select(.device == $d)] |
	"blkwise: unmatched_total \(last.unmatched_total), fsync_writes \(map(.fsync_writes) | add)"' \
	"$work/stat.json"
echo "ftrace: overruns $(awk '/^overrun/ { s += $2 } END { print s + 0 }' $T/per_cpu/cpu*/stats)"
# "block_rq_complete: 7,0 WFS () 12345 + 0 [0]" (6.10+ adds ioprio before [err])
awk '/block_rq_complete:/ {
		for (i = 1; i <= NF; i++)
			if ($i == "block_rq_complete:") { rwbs = $(i + 2); sec = $(i + 4); n = $(i + 6) }
		if (n == 0) { zero[rwbs]++; if (sec in full) again[rwbs]++ } else full[sec] = 1
		done++
	}
	/block_rq_issue:/ { issued++ }
	END {
		print "ftrace: " issued " issues, " done " completions; zero-byte completions by rwbs" \
			" (of them, at a sector that had completed with data):"
		for (r in zero) print "  " r ": " zero[r] " (" again[r] + 0 ")"
	}' "$work/trace"
