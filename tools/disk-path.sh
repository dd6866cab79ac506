#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What the path around the emulated disk costs per request, against the
# disk's own service time: one direct sequential reader at depth 1 on
# tools/fakedisk under a loop device (psync, so each request waits for the
# last), and the disk's counters.  The gap is the time the disk sat idle
# between two requests (the reply's way up through FUSE, the loop device
# and fio, and the next request's way down) plus the reply's lateness;
# the share is gap / (gap + service), what a request's time is not the
# disk's.  The emulated disks' time constants should keep it small (under
# 10%) where timing is judged: run it where the tests run (a TCG guest:
# tools/vmtest.sh -c 'tools/disk-path.sh' 6.1).
#
#   tools/disk-path.sh [SECS [MOUNT_OPTS [BS]]]   (5, the tuner tests' disks, 256k)
set -eu
cd "$(dirname "$0")/.."
secs=${1:-5}
bs=${3:-256k}
dir=$(mktemp -d /tmp/blkwise-path.XXXXXX)
trap 'tools/fakedisk.sh down "$dir/mnt" >/dev/null 2>&1; rm -rf "$dir"' EXIT
one() {
	dev=$(tools/fakedisk.sh up "$dir/mnt" "$1")
	fio --name=p --filename=/dev/"$dev" --direct=1 --rw=read --bs="$bs" --ioengine=psync \
		--size=256m --time_based --runtime=1 >/dev/null 2>&1
	echo 1 >"$dir/mnt/reset"
	fio --name=p --filename=/dev/"$dev" --direct=1 --rw=read --bs="$bs" --ioengine=psync \
		--size=256m --time_based --runtime="$secs" >/dev/null 2>&1
	jq -r --arg o "$1" '(.busy_ns / .requests) as $s | ((.elapsed_ns - .busy_ns) / .requests + .reply_lag_avg_ns) as $g |
		"\($o): \(.requests) requests, service \($s / 1000 | floor) us, gap \($g / 1000 | floor) us (reply late \(.reply_lag_avg_ns / 1000 | floor)), share \($g / ($g + $s) * 1000 | round / 10)%"' \
		"$dir/mnt/stats"
	tools/fakedisk.sh down "$dir/mnt"
}
if [ $# -ge 2 ]; then
	one "$2"
else
	one "service_us=500,xfer_us_per_mib=4000,seek_us_per_gib=8000,size_mb=1024"
	one "service_us=100,xfer_us_per_mib=8000,seek_us=1000,seek_us_per_gib=30720,size_mb=1024"
fi
