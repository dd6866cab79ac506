#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/progcost.sh BLKWISE_ARGS...: ns per run of every BPF program blkwise
# loads, while fio does 4 KiB io_uring random reads at iodepth 32 (5 s) on a
# fresh loop device over /dev/shm.  Run-time statistics come from
# BPF_ENABLE_STATS, held by this script while it runs, so the
# kernel.bpf_stats_enabled sysctl (and anyone else's bench) is left alone.
# Other I/O on the machine runs the same programs: per-run figures, not per
# fio I/O, are what this measures.  Root; a quick look, not `make bench`.
#   tools/progcost.sh stat --no-state -i 1 --streams
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/blkwise-progcost.XXXXXX)
img=$(mktemp /dev/shm/blkwise-progcost.XXXXXX)
cleanup() {
	set +e
	[ -n "${bpid:-}" ] && kill "$bpid" 2>/dev/null
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	[ -n "${dev:-}" ] && losetup -d "$dev"
	rm -rf "$tmp" "$img"
}
trap cleanup EXIT
truncate -s 256M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
echo none >/sys/block/"${dev#/dev/}"/queue/scheduler
# Stats on while the bench floor's holder runs (BPF_ENABLE_STATS, reference counted).
make -s -f tools/bench/Makefile
build/bench/floor --stats >"$tmp/stats" &
spid=$!
until grep -q ready "$tmp/stats"; do kill -0 $spid || exit 1; sleep 0.1; done
./blkwise "$@" >/dev/null 2>&1 &
bpid=$!
sleep 2
fio --name=c --filename="$dev" --ioengine=io_uring --direct=1 --rw=randread --bs=4k \
	--iodepth=32 --time_based --runtime=5 --output-format=json --output="$tmp/fio.json"
ids=$(grep -h '^prog_id:' /proc/$bpid/fdinfo/* | awk '{print $2}' | sort -un | paste -sd, -)
bpftool prog list -j | jq -r --arg ids "$ids" '($ids | split(",") | map(tonumber)) as $w
	| .[] | select((.id | IN($w[])) and (.run_cnt // 0) > 0)
	| "\(.name) \(.run_time_ns / .run_cnt | floor) ns/run (\(.run_cnt) runs)"'
echo "fio: $(jq '.jobs[0].read.total_ios' "$tmp/fio.json") I/Os"
