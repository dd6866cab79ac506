#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What does it cost to learn whether a device serves requests in parallel,
# while four sequential readers run on it under BFQ idling (slice_idle_us
# 8000)?  Two ways to learn it, against a control that does nothing:
#
#   probe  the tuner's: slice_idle_us 0 for PROBE_MS (default 500), then
#          8000 again (BFQ's settings touched, the readers' own requests
#          are the evidence)
#   burst  the alternative that touches no setting: O_DIRECT random 4 KiB
#          reads of its own over the whole device, BURST_MS (default 500)
#          at depth 1, then BURST_MS at depth 8; P_eff = IOPS at 8 / IOPS
#          at 1 (1 on one spindle, up to 4 on the 4-way stripe)
#   none   the control
#
#   RUNS=3 tools/probe-cost.sh          (root; about 15 minutes)
#
# Devices as tools/idling-table.sh makes them (the emulated spindle and the
# 4-way stripe of tools/fakedisk, a new BFQ instance for every run,
# rotational=1 first, low_latency=0).  Each run: the readers for RUN_S
# (default 40) seconds, the action AT_S (default 20) seconds in; the
# readers' MB/s from fio's own per-second log, in the 10 s before the
# action, the 3 s from its start, and the 12 s after those.  Prints one
# line per run and, per device and way, the medians; writes
# build/probe-cost.json, and the table and the spindle's figures into the
# manual (docs/results/probe-cost.json, tools/docgen.py; BW_DOCS=0 does
# not).  Takes BENCH_LOCK (as idling-table.sh) per run.
set -u
cd "$(dirname "$0")/.." || exit 1
RUNS=${RUNS:-3}
RUN_S=${RUN_S:-40}
AT_S=${AT_S:-20}
PROBE_MS=${PROBE_MS:-500}
BURST_MS=${BURST_MS:-500}
WAYS=${WAYS:-"none probe burst"}
BENCH_LOCK=${BENCH_LOCK:-/run/lock/blkwise-bench.lock}
OUT=${OUT:-build/probe-cost}
TMP=$(mktemp -d /tmp/blkwise-probecost.XXXXXX)

die() { echo "probe-cost: $*" >&2; exit 1; }
. tools/emulated-disks.sh
disks_check fio jq losetup flock

READERS=""
cleanup() {
	[ -n "$READERS" ] && kill "$READERS" 2>/dev/null && wait "$READERS" 2>/dev/null
	disks_down
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

disks_up

# idle8 DEV: a new BFQ idling at 8000, as the tuner finds it.
idle8() {
	new_bfq "$1"
	echo 0 >/sys/block/"$1"/queue/iosched/strict_guarantees
	echo 8000 >/sys/block/"$1"/queue/iosched/slice_idle_us
}

# burst DEV: the depth-1 and depth-8 IOPS of the burst, "IOPS1 IOPS8".
burst() {
	local d
	for d in 1 8; do
		fio --name=pc-burst --filename=/dev/"$1" --direct=1 --rw=randread --bs=4k \
			--ioengine=libaio --iodepth=$d --time_based --runtime="${BURST_MS}ms" \
			--output-format=json 2>/dev/null | jq -r '.jobs[0].read.iops'
	done | paste -sd' '
}

# readers_mbps LOGDIR FROM TO: the readers' MB/s over fio's seconds [FROM, TO).
readers_mbps() {
	cat "$1"/r_bw.*.log | awk -F, -v a="$2" -v b="$3" '
		{ s = int(($1 + 500) / 1000) } s > a && s <= b { kib += $2 }
		END { printf "%.1f", kib / 1024 / (b - a) }'
}

# run_one DEV WAY: "before during after p_eff" (p_eff "-" but for burst).
run_one() {
	local dev=$1 way=$2 log=$TMP/log.$RANDOM t0 peff=-
	mkdir -p "$log"
	idle8 "$dev"
	(cd "$log" && exec fio --name=pc-readers --filename=/dev/"$dev" --direct=1 --rw=read \
		--bs=256k --ioengine=psync --numjobs=4 --size=256m --offset_increment=256m \
		--time_based --runtime="$RUN_S" --write_bw_log=r --log_avg_msec=1000 \
		--output-format=json >/dev/null 2>&1) &
	READERS=$!
	t0=$(date +%s.%N)
	sleep "$(awk -v t0="$t0" -v at="$AT_S" -v now="$(date +%s.%N)" 'BEGIN { print at - (now - t0) }')"
	case $way in
	probe)
		echo 0 >/sys/block/"$dev"/queue/iosched/slice_idle_us
		sleep "$(awk -v m="$PROBE_MS" 'BEGIN { print m / 1000 }')"
		echo 8000 >/sys/block/"$dev"/queue/iosched/slice_idle_us ;;
	burst)
		peff=$(burst "$dev" | awk '{ printf "%.2f", ($1 > 0 ? $2 / $1 : 0) }') ;;
	esac
	wait "$READERS"
	READERS=""
	echo "$(readers_mbps "$log" $((AT_S - 10)) "$AT_S") $(readers_mbps "$log" "$AT_S" $((AT_S + 3)))" \
		"$(readers_mbps "$log" $((AT_S + 3)) $((AT_S + 15))) $peff"
	rm -rf "$log"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

mkdir -p build
exec 9>>"$BENCH_LOCK" || die "cannot open $BENCH_LOCK"
json="[]"
for kind in spindle stripe; do
	dev=$SPINDLE
	[ $kind = stripe ] && dev=$STRIPE
	for way in $WAYS; do
		: >"$TMP/runs"
		for r in $(seq "$RUNS"); do
			flock 9
			line=$(run_one "$dev" "$way")
			flock -u 9
			echo "$line" >>"$TMP/runs"
			echo "  $kind $way run $r: before/during/after MB/s, P_eff: $line" >&2
		done
		json=$(jq -c --arg k "$kind" --arg w "$way" \
			--argjson b "$(cut -d' ' -f1 "$TMP/runs" | median)" \
			--argjson d "$(cut -d' ' -f2 "$TMP/runs" | median)" \
			--argjson a "$(cut -d' ' -f3 "$TMP/runs" | median)" \
			--arg p "$(cut -d' ' -f4 "$TMP/runs" | paste -sd' ')" \
			--arg runs "$(paste -sd';' "$TMP/runs")" \
			'. + [{device: $k, way: $w, before: $b, during: $d, after: $a, p_eff: $p, runs: $runs}]' \
			<<<"$json")
	done
done
echo "$json" >"$OUT.json"
echo "$json" | jq -r '.[] | "\(.device) \(.way): MB/s before \(.before), during \(.during), after \(.after)" +
	(if .way == "burst" then ", P_eff \(.p_eff)" else "" end)'
# The manual's table, and the spindle's probe quoted in docs/tune-production.md.
{
	echo "| device | way | before | during | after | P_eff measured ($RUNS runs) |"
	echo "|---|---|---|---|---|---|"
	echo "$json" | jq -r '.[] | "| \(.device) | \(.way) | \(.before) | \(.during) | \(.after) | " +
		(if .way == "burst" then (.p_eff | split(" ") | join(", ")) else "-" end) + " |"'
} >"$OUT.md"
[ "${BW_DOCS:-1}" = 0 ] || python3 tools/docgen.py put probe-cost "$OUT.md" --command "RUNS=$RUNS tools/probe-cost.sh" \
	$(echo "$json" | jq -r '.[] | select(.device == "spindle" and .way == "probe") |
		"--value spindle_probe_before=\(.before) --value spindle_probe_during=\(.during) --value spindle_probe_after=\(.after)"') ||
	die "cannot write docs/results/probe-cost.json"
