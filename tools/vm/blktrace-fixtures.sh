#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Captures the blktrace fixtures of tests/data/blktrace/ in a vmtest guest
# (null_blk and scsi_debug are modules, which the host has none of):
#
#   make vmtest KERNEL=6.12 VMCMD='tools/vm/blktrace-fixtures.sh'
#
# Writes, into the guest's result share (build/vm/out/KVER/blktrace/), per
# workload NAME: NAME.blktrace.N (blktrace's per-CPU binary files), NAME.btt.txt
# (btt's report on them), NAME.fio.json (fio's own counts) and NAME.dev (the
# device's setup); kernel.txt names the kernel.  Copy them to tests/data/blktrace/.
set -eu

out=${1:-$(sed -n 's/.*vmtest\.out=\([^ ]*\).*/\1/p' /proc/cmdline)/blktrace}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
uname -r >"$out/kernel.txt"
blktrace -v 2>&1 | head -n 1 >>"$out/kernel.txt"
fio --version >>"$out/kernel.txt"

# trace NAME DEV FIO-ARGS...: blktrace on DEV while fio runs, then btt.
trace() {
	name=$1 dev=$2
	shift 2
	(cd "$work" && exec blktrace -d "$dev" -o "$name") >"$work/$name.bt.log" 2>&1 &
	bt=$!
	sleep 1
	fio --name="$name" --filename="$dev" --direct=1 --output-format=json \
		--output="$out/$name.fio.json" "$@"
	sleep 0.5
	kill -INT "$bt"
	wait "$bt" || true
	cat "$work/$name.bt.log"
	cp "$work/$name".blktrace.* "$out/"
	(cd "$work" && blkparse -q -i "$name" -d "$name.bin" -O) >/dev/null
	(cd "$work" && btt -i "$name.bin") >"$out/$name.btt.txt"
	ls -l "$out/$name".*
}

# 1 and 2: null_blk, one hw queue of 32 tags, completions by hrtimer.
modprobe null_blk nr_devices=1 irqmode=2 completion_nsec=2000000 hw_queue_depth=32 \
	submit_queues=1 gb=1
echo "null_blk nr_devices=1 irqmode=2 completion_nsec=2000000 hw_queue_depth=32 submit_queues=1 gb=1; scheduler $(cat /sys/block/nullb0/queue/scheduler)" \
	>"$out/nullb.dev"
trace seqread /dev/nullb0 --rw=read --bs=64k --ioengine=psync --iodepth=1 --number_ios=400 --size=512m
trace randread-qd8 /dev/nullb0 --rw=randread --bs=4k --ioengine=libaio --iodepth=8 \
	--number_ios=600 --size=512m --randrepeat=1 --randseed=10
modprobe -r null_blk

# 3: scsi_debug with 4 tags and mq-deadline: reads and writes, sequential
# in batches of 8, so that requests wait in the scheduler and merge.
modprobe scsi_debug dev_size_mb=256 delay=0 ndelay=1000000 max_queue=4
sleep 1
sd=""
for h in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
	sd=/dev/$(basename "$h")
done
[ -b "$sd" ] || { echo "blktrace-fixtures: no scsi_debug disk" >&2; exit 1; }
echo mq-deadline >"/sys/block/${sd#/dev/}/queue/scheduler"
echo "scsi_debug dev_size_mb=256 delay=0 ndelay=1000000 max_queue=4 ($sd); scheduler $(cat "/sys/block/${sd#/dev/}/queue/scheduler")" \
	>"$out/scsi.dev"
trace mixed-merge "$sd" --rw=rw --rwmixread=50 --bs=4k --ioengine=libaio --iodepth=16 \
	--iodepth_batch_submit=8 --number_ios=800 --size=128m
modprobe -r scsi_debug
echo "blktrace-fixtures: done in $out"
