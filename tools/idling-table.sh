#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Does BFQ's idling help or hurt, and does `blkwise tune` find the better
# setting of every idling lever, over long runs, without being told?
#
#   tools/idling-table.sh                         (root; the full table: hours)
#   ROWS="a.spindle a.stripe" RUNS=1 RUN_S=60 tools/idling-table.sh
#   ROWS=a.spindle CONFIGS="idle8 tune" RUNS=1 RUN_S=20 WARM_S=5 tools/idling-table.sh
#
# Devices (tools/emulated-disks.sh): tools/fakedisk under a loop device, rotational=1 written before
# bfq is chosen (BFQ reads it at init), a new BFQ instance for every run,
# low_latency=0.  One spindle with a seek model (100 us per request, 8 ms
# per MiB transferred, 1 ms per seek plus 30 us per MiB of distance), and a
# RAID-0 of four such spindles (chunk 256 KiB: one request, one spindle).
#
# Rows (ROWS, default all):
#   a.spindle a.stripe  4 sequential 256 KiB direct readers (psync, iodepth 1)
#   b.spindle b.stripe  the same through libaio, iodepth 1, 1 ms think time
#   c.stripe            phased: a for PHASE_S, random 4 KiB reads at iodepth 16
#                       for PHASE_S, a again (the tuner must re-decide)
#   d.spindle           random 4 KiB reads, libaio iodepth 8
#   e.spindle           one sequential reader beside one random 4 KiB writer;
#                       tune under --policy latency; the figure is the
#                       reader's p99 completion latency in ms (lower is better)
#   f.stripe            c with phases of LONG_PHASE_S (10 minutes in all)
# Columns (CONFIGS, default all): every static combination of the levers the
# tuner may use -- slice_idle_us 8000 (BFQ's default) or 0, strict_guarantees
# 0 or 1, and slice_idle_us 20000 with strict_guarantees 1 (the tuner's
# --strict-idle-us): idle8, idle0, idle8strict, idle0strict, idle20strict
# (idleMS and idleMSstrict name any other slice_idle, in ms) -- and
# `blkwise tune` started together
# with the workload, from BFQ's default (8000, 0), with a store of its own
# for the whole table.  One more
# column, not among the defaults and never counted as a static setting:
# idle8to0, 8000 for the first LATE_S seconds (default 2), then 0 -- what the
# tuner does when a stored verdict says 0, without the tuner; and watch0,
# slice_idle_us 0 with `blkwise tune --dry-run` watching (the tuner's BPF and
# sampling, no setting written) -- what watching alone does to the device.
# Each cell is RUNS runs (default 3) of RUN_S seconds (default 60) measured
# after a WARM_S warm-up (default 10; fio's ramp_time, so the whole run after
# it is measured); the cell is the median and the spread (min-max).  The
# runs are interleaved: run 1 of every column, then run 2 of every column,
# so that a slow minute of the machine falls on every column alike.
# Throughput rows: fio's own bytes over fio's own runtime, MB/s (MiB/s).
# Every run takes the lock BENCH_LOCK (default /run/lock/blkwise-bench.lock) for itself, so no other
# benchmark runs at the same time; BLKWISE names the binary (a copy keeps a
# long table on one build).
# Writes build/idling-table.json and build/idling-table.md, and its rows
# into the manual's table (docs/results/idling.json, tools/docgen.py: a
# row measured again replaces the row there; BW_DOCS=0 writes nothing).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=${RUNS:-3}
RUN_S=${RUN_S:-60}
WARM_S=${WARM_S:-10}
PHASE_S=${PHASE_S:-30}
LONG_PHASE_S=${LONG_PHASE_S:-200}
ROWS=${ROWS:-"a.spindle a.stripe b.spindle b.stripe c.stripe d.spindle e.spindle f.stripe"}
CONFIGS=${CONFIGS:-"idle8 idle0 idle8strict idle0strict idle20strict tune"}
BENCH_LOCK=${BENCH_LOCK:-/run/lock/blkwise-bench.lock}
BLKWISE=${BLKWISE:-$ROOT/blkwise}
OUT=${OUT:-build/idling-table}
TMP=$(mktemp -d /tmp/blkwise-idling.XXXXXX)

die() { echo "idling-table: $*" >&2; exit 1; }
. "$ROOT"/tools/emulated-disks.sh
disks_check fio jq losetup flock
[ -x "$BLKWISE" ] || die "$BLKWISE missing: run make"

TUNE_PID=""
FIO_PIDS=""
cleanup() {
	[ -n "$TUNE_PID" ] && kill -INT "$TUNE_PID" 2>/dev/null && wait "$TUNE_PID" 2>/dev/null
	for p in $FIO_PIDS; do kill "$p" 2>/dev/null; done
	disks_down
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

disks_up

# fio_run DEV SECS NAME [fio args]: one fio job (group), JSON to stdout.
fio_run() {
	local dev=$1 secs=$2 name=$3
	shift 3
	fio --name=idt-"$name" --filename=/dev/"$dev" --direct=1 --time_based --runtime="$secs" \
		--ramp_time="$WARM_S" --group_reporting --output-format=json "$@" 2>/dev/null
}
SEQ4=(--rw=read --bs=256k --ioengine=psync --numjobs=4 --size=256m --offset_increment=256m)
RAND16=(--rw=randread --bs=4k --ioengine=libaio --iodepth=16)
# bytes and ms of a run's read side
rd() { jq -r '.jobs[0] | "\(.read.io_bytes) \(.read.runtime)"'; }

phased() {	# phased DEV PHASE_SECS: a, random, a; prints "bytes ms"
	local w=$WARM_S
	{
		fio_run "$1" "$2" c1 "${SEQ4[@]}" | rd
		WARM_S=0 fio_run "$1" "$2" c2 "${RAND16[@]}" | rd
		WARM_S=0 fio_run "$1" "$2" c3 "${SEQ4[@]}" | rd
	} | awk '{ b += $1; t += $2 } END { print b, t }'
	WARM_S=$w
}

# The reader's p99 latency (ms) beside a random writer (row e).
mixed() {
	fio --output-format=json --direct=1 --filename=/dev/"$1" --time_based --runtime="$2" \
		--ramp_time="$WARM_S" \
		--name=idt-reader --rw=read --bs=256k --ioengine=psync --size=256m \
		--name=idt-writer --rw=randwrite --bs=4k --ioengine=libaio --iodepth=4 --offset=512m \
		--size=256m 2>/dev/null |
		jq -r '[.jobs[] | select(.jobname == "idt-reader")][0].read.clat_ns.percentile["99.000000"] / 1e6'
}

# workload ROW DEV: prints the row's figure.
workload() {
	case $1 in
	a) fio_run "$2" "$RUN_S" a "${SEQ4[@]}" | rd | mbps ;;
	b) fio_run "$2" "$RUN_S" b "${SEQ4[@]}" --ioengine=libaio --iodepth=1 --thinktime=1000 | rd | mbps ;;
	c) phased "$2" "$PHASE_S" | mbps ;;
	d) fio_run "$2" "$RUN_S" d --rw=randread --bs=4k --ioengine=libaio --iodepth=8 | rd | mbps ;;
	e) mixed "$2" "$RUN_S" | awk '{ printf "%.2f", $1 }' ;;
	f) phased "$2" "$LONG_PHASE_S" | mbps ;;
	esac
}
mbps() { awk '{ v = $2 > 0 ? $1 / 1048576 / ($2 / 1000) : 0; printf(v < 10 ? "%.2f" : "%.1f", v) }'; }

# levers DEV IDLE STRICT: strict_guarantees first (BFQ raises slice_idle to
# 8 ms when it is set), then slice_idle_us.
levers() {
	echo "$3" >/sys/block/"$1"/queue/iosched/strict_guarantees
	echo "$2" >/sys/block/"$1"/queue/iosched/slice_idle_us
}

# run_one ROW DEV CONFIG: one run; prints the figure; tune's decisions to $OUT.ROW.DEV.json.
run_one() {
	local w=$1 dev=$2 cfg=$3 log res policy=throughput
	[ "$w" = e ] && policy=latency
	new_bfq "$dev"
	case $cfg in
	idle8to0)
		levers "$dev" 8000 0
		(sleep "${LATE_S:-2}" && echo 0 >/sys/block/"$dev"/queue/iosched/slice_idle_us) &
		;;
	idle[0-9]*strict)
		cfg=${cfg#idle}
		levers "$dev" $((${cfg%strict} * 1000)) 1
		;;
	idle[0-9]*) levers "$dev" $((${cfg#idle} * 1000)) 0 ;;
	tune | watch0)
		log=$TMP/tune.$w.$dev.$RANDOM
		if [ "$cfg" = tune ]; then
			levers "$dev" 8000 0
			set -- --state-dir "$TMP/state" --run-dir "$TMP/run"
		else
			levers "$dev" 0 0
			set -- --dry-run --no-state --run-dir "$TMP/run.dry"
		fi
		"$BLKWISE" tune -d "$dev" --json --policy "$policy" "$@" >"$log.json" 2>"$log.err" &
		TUNE_PID=$!
		;;
	esac
	res=$(workload "$w" "$dev")
	if [ -n "$TUNE_PID" ]; then
		kill -INT "$TUNE_PID"
		wait "$TUNE_PID" || die "blkwise tune exited $? (see $log.err)"
		TUNE_PID=""
	fi
	if [ "$cfg" = tune ]; then
		jq -s -r '[.[] | .action] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' \
			"$log.json" >"$TMP/note"
		cat "$log.json" >>"$OUT.$w.$(kind_of "$dev").json"
	fi
	echo "$res"
}
kind_of() { [ "$1" = "$SPINDLE" ] && echo spindle || echo stripe; }

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

mkdir -p build
rm -f "$OUT".*.json
exec 9>>"$BENCH_LOCK" || die "cannot open $BENCH_LOCK"
declare -A SEED=(
	[a.spindle]="-" [a.stripe]="-"
	[b.spindle]="CFQ idling 3.77, slice_idle=0 2.81" [b.stripe]="CFQ idling 63.67, slice_idle=0 105.63"
	[c.stripe]="-" [d.spindle]="-" [e.spindle]="-" [f.stripe]="-")
json="[]"
for row in $ROWS; do
	w=${row%%.*}
	kind=${row#*.}
	dev=$SPINDLE
	[ "$kind" = stripe ] && dev=$STRIPE
	declare -A VALS=() NOTES=()
	for r in $(seq "$RUNS"); do
		for cfg in $CONFIGS; do
			: >"$TMP/note"
			flock 9
			v=$(run_one "$w" "$dev" "$cfg")
			flock -u 9
			TUNE_NOTE=$(cat "$TMP/note")
			VALS[$cfg]+="$v "
			[ "$cfg" = tune ] && NOTES[$cfg]+="$TUNE_NOTE; "
			echo "  $row $cfg run $r: $v${TUNE_NOTE:+ ($TUNE_NOTE)}" >&2
		done
	done
	cells="{}"
	for cfg in $CONFIGS; do
		vals=${VALS[$cfg]% }
		cells=$(jq -c --arg c "$cfg" --argjson m "$(tr ' ' '\n' <<<"$vals" | median)" \
			--arg s "$(tr ' ' '\n' <<<"$vals" | spread)" --arg runs "$vals" \
			--arg notes "${NOTES[$cfg]:-}" \
			'. + {($c): {median: $m, spread: $s, runs: $runs, tune: $notes}}' <<<"$cells")
	done
	unset VALS NOTES
	json=$(jq -c --arg row "$row" --arg seed "${SEED[$row]}" --argjson cells "$cells" \
		--arg unit "$([ "$w" = e ] && echo "p99 read ms" || echo "MB/s")" \
		'. + [{row: $row, unit: $unit, cells: $cells, seed000: $seed}]' <<<"$json")
done
# best static: the highest MB/s, or the lowest p99; tune against it; each static's loss.
json=$(jq '[.[] | . as $r | ($r.unit == "MB/s") as $up |
	([$r.cells | to_entries[] | select(.key | IN("tune", "idle8to0", "watch0") | not) | .value.median]) as $s |
	(if $up then ($s | max) else ($s | min) end) as $best |
	. + {best_static: $best,
	     tune_vs_best: (if $r.cells.tune and $best != null then (if $up then $r.cells.tune.median / $best else $best / $r.cells.tune.median end) else null end),
	     losses: ($r.cells | with_entries(select(.key | IN("tune", "idle8to0", "watch0") | not) |
		.value = (if $up then 1 - .value.median / $best else 1 - $best / .value.median end)))}]' <<<"$json")
echo "$json" >"$OUT.json"
{
	printf '| row | unit |'
	for c in $CONFIGS; do printf ' %s |' "$c"; done
	printf ' tune / best static | runs | LKML 2011, CFQ (MB/s) |\n|---|---|'
	for c in $CONFIGS; do printf -- '---|'; done
	printf -- '---|---|---|\n'
	echo "$json" | jq -r --arg cfgs "$CONFIGS" --arg runs "$RUNS of $RUN_S s" \
		--arg phased "$RUNS of 3 phases of $PHASE_S s" --arg long "$RUNS of 3 phases of $LONG_PHASE_S s" \
		'.[] | . as $r |
		"| \(.row) | \(.unit) | " +
		([$cfgs | split(" ")[] | $r.cells[.] // null |
		  if . then "\(.median) (\(.spread))" else "-" end] | join(" | ")) +
		" | \(if .tune_vs_best then "\(.tune_vs_best * 100 | round)%" else "-" end)" +
		" | \(if (.row | startswith("c.")) then $phased elif (.row | startswith("f.")) then $long else $runs end)" +
		" | \(.seed000) |"'
	echo
	echo "$json" | jq -r '[.[].losses | to_entries[]] | group_by(.key) |
		map("\(.[0].key) loses at most \(map(.value) | max * 100 | round)% on some row") | .[]'
} | tee "$OUT.md"
[ "${BW_DOCS:-1}" = 0 ] || python3 tools/docgen.py put idling "$OUT.md" --merge \
	--command tools/idling-table.sh || die "cannot write docs/results/idling.json"
