#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/lostdiag/run.sh [SECS] [DIR]: lost block_rq_complete events, found.
# A loop device over a file in DIR (default /var/tmp; direct I/O), 4k random
# reads at iodepth 32 x 2 jobs for SECS (4) seconds, with ftrace (its own
# instance, mono clock, filtered to the device) and lostdiag attached side
# by side.  Prints fio's count, ftrace's, lostdiag's, and for every lost
# completion the context ftrace saw it complete in (task, CPU, flags), next
# to how all completions were spread over contexts.
set -eu
secs=${1:-4}
dir=${2:-/var/tmp}
here=$(cd "$(dirname "$0")" && pwd)
make -s -C "$here"
work=$(mktemp -d /tmp/lostdiag.XXXXXX)
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
I=$T/instances/lostdiag.$$
img=$(mktemp "$dir/lostdiag.XXXXXX")
cleanup() {
	set +e
	[ -n "${dp:-}" ] && kill -INT "$dp" 2>/dev/null
	[ -d "$I" ] && { echo 0 >"$I/tracing_on"; for e in block_rq_issue block_rq_complete; do
		echo 0 >"$I/events/block/$e/enable"; done; echo 0 >"$I/events/sched/sched_switch/enable"
		rmdir "$I"; }
	[ -n "${dev:-}" ] && losetup -d "$dev"
	rm -rf "$work" "$img"
}
trap cleanup EXIT
truncate -s 512M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
d=${dev#/dev/}
echo none >/sys/block/"$d"/queue/scheduler
mm=$(cat /sys/block/"$d"/dev)
kdev=$(((${mm%:*} << 20) | ${mm#*:}))
mkdir "$I"
echo 0 >"$I/tracing_on"
echo 65536 >"$I/buffer_size_kb"
echo mono >"$I/trace_clock"
for e in block_rq_issue block_rq_complete; do
	echo "dev == $kdev" >"$I/events/block/$e/filter"
	echo 1 >"$I/events/block/$e/enable"
done
# Switches to and from PID 1's threads, as ftrace sees them.
tids=$(ls /proc/1/task)
f=$(for t in $tids; do printf 'prev_pid == %s || next_pid == %s || ' "$t" "$t"; done)
echo "${f% || }" >"$I/events/sched/sched_switch/filter"
echo 1 >"$I/events/sched/sched_switch/enable"
"$here/lostdiag" "${mm%:*}" "${mm#*:}" >"$work/diag" 2>"$work/diag.err" &
dp=$!
for _ in $(seq 50); do grep -q attached "$work/diag.err" && break; sleep 0.1; done
echo 1 >"$I/tracing_on"
fio --name=l --filename="$dev" --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=32 \
	--numjobs=2 --time_based --runtime="$secs" --group_reporting --output-format=json >"$work/fio"
sleep 1
echo 0 >"$I/tracing_on"
kill -INT "$dp"
wait "$dp"
dp=""
cat "$I/trace" >"$work/trace"
echo "kernel $(uname -r); ftrace overruns: $(grep -h '^overrun' "$I"/per_cpu/cpu*/stats | awk '{ s += $2 } END { print s }')"
echo "fio $(jq '.jobs[0].read.total_ios' "$work/fio") reads; ftrace: issues $(grep -c 'block_rq_issue:' "$work/trace")," \
	"completes $(grep -c 'block_rq_complete:' "$work/trace")"
grep -v '^lost ' "$work/diag" | sed 's/^/lostdiag: /'
pid1() {	# FIELD: switches whose FIELD (prev_pid or next_pid) is a thread of PID 1
	grep 'sched_switch:' "$work/trace" | awk -v f="$1" -v l=" $(echo $tids) " '{
		for (i = 1; i <= NF; i++) if (index($i, f "=") == 1 && index(l, " " substr($i, length(f) + 2) " ")) c++ }
		END { print c + 0 }'
}
echo "ftrace sched_switch: a thread of pid 1 switched out $(pid1 prev_pid), switched in $(pid1 next_pid)"
echo "contexts of the lost completions (task, flags), from ftrace:"
grep '^lost ' "$work/diag" | while read -r _ sector t _; do
	awk -v s="$sector" -v t="$t" '/block_rq_complete:/ && $0 ~ (" " s " \\+ ") {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1) + 0;
			if (ts >= t + 0 && ts <= t + 0.05) { print $1, $3; exit } } }' "$work/trace"
done | sort | uniq -c | sed 's/^/  /' | tee "$work/lostctx"
for task in $(awk '{ print $2 }' "$work/lostctx" | sort -u); do
	pid=${task##*-}
	echo "  $task (thread of pid $(awk '/^Tgid:/ { print $2 }' /proc/"$pid"/status 2>/dev/null || echo '?')):" \
		"$(grep 'block_rq_complete:' "$work/trace" | grep -c "^ *$task ") completions ran on it in all"
done
echo "contexts of all completions (top 8):"
grep 'block_rq_complete:' "$work/trace" | awk '{ t = $1; sub(/-[0-9]+$/, "", t); print t, $3 }' |
	sort | uniq -c | sort -rn | head -n 8 | sed 's/^/  /'
