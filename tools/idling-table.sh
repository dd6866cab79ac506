#!/usr/bin/env bash
# BFQ idling on the emulated disk: does it help or hurt, and does
# `blkwise tune` find the better setting without being told?
#
#   tools/idling-table.sh            (root; about 20 minutes)
#   RUNS=1 RUN_S=8 PHASE_S=10 tools/idling-table.sh   (a quick look)
#
# Two devices (tools/fakedisk under a loop device, rotational=1, bfq,
# low_latency=0): one spindle with a seek model, and a RAID-0 of four such
# spindles (chunk 256 KiB, so one 256 KiB request is one spindle's).
# Each spindle: 0.5 ms per request + 4 ms per MiB + 8 ms per GiB of head
# movement.  Workloads:
#   a  4 sequential 256 KiB direct readers (psync), 256 MiB apart
#   b  the same, aio-stress-like: libaio, one request in flight, 1 ms think
#   c  (stripe) a for PHASE_S s, one random 4 KiB reader at iodepth 16 for
#      PHASE_S s, a again: the tuner must re-decide
# Configurations: static slice_idle_us 8000 (BFQ's default), static 0, and
# `blkwise tune` started on BFQ's default.  Each is run RUNS times, each
# run on a new BFQ instance (see fresh_bfq); the table shows the median and
# the spread of aggregate MB/s (fio's own bytes over fio's own runtime).
# The tuner keeps one S1 store for the whole table, as a tuner restarted on
# the same machine would: its first run on a device probes, later ones
# start from the device class the probe stored.
# Writes build/idling-table.json and build/idling-table.md.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=${RUNS:-3}
RUN_S=${RUN_S:-12}
PHASE_S=${PHASE_S:-15}
OUT=build/idling-table
TMP=$(mktemp -d /tmp/blkwise-idling.XXXXXX)
FD=$ROOT/tools/fakedisk.sh
DISK_OPTS="service_us=500,xfer_us_per_mib=4000,seek_us_per_gib=8000,size_mb=1024"

die() { echo "idling-table: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, FUSE, sysfs)"
for c in fio jq losetup; do command -v $c >/dev/null || die "$c missing: tools/deps.sh"; done
[ -x ./blkwise ] || die "./blkwise missing: run make"
make -s -C tools/fakedisk || die "cannot build tools/fakedisk"

cleanup() {
	pkill -INT -f "blkwise tune .*--run-dir $TMP/run" 2>/dev/null
	sleep 0.5
	pkill -f "fio --name=idt" 2>/dev/null
	for d in "$TMP"/spindle "$TMP"/stripe; do [ -d "$d" ] && "$FD" down "$d" >/dev/null 2>&1; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

up() {	# up NAME OPTS -> device name
	local dev
	dev=$("$FD" up "$TMP/$1" "$DISK_OPTS,$2") || die "fakedisk $1 ($2)"
	echo bfq >/sys/block/"$dev"/queue/scheduler || die "$dev: no bfq"
	echo 1 >/sys/block/"$dev"/queue/rotational
	echo 0 >/sys/block/"$dev"/queue/iosched/low_latency
	echo "$dev"
}
SPINDLE=$(up spindle parallel=1)
STRIPE=$(up stripe parallel=4,dispatch=stripe,chunk_kb=256)

# fio_a DEV SECS NAME [fio args]: workload a; prints bytes and ms.
fio_seq() {
	local dev=$1 secs=$2 name=$3
	shift 3
	fio --name=idt-"$name" --filename=/dev/"$dev" --direct=1 --rw=read --bs=256k --ioengine=psync \
		--numjobs=4 --size=256m --offset_increment=256m --time_based --runtime="$secs" \
		--group_reporting --output-format=json "$@" 2>/dev/null |
		jq -r '.jobs[0] | "\(.read.io_bytes) \(.read.runtime)"'
}
fio_rand() {
	fio --name=idt-rand --filename=/dev/"$1" --direct=1 --rw=randread --bs=4k --ioengine=libaio \
		--iodepth=16 --time_based --runtime="$2" --output-format=json 2>/dev/null |
		jq -r '.jobs[0] | "\(.read.io_bytes) \(.read.runtime)"'
}

# workload W DEV: prints "bytes ms" of the whole run.
workload() {
	case $1 in
	a) fio_seq "$2" "$RUN_S" a ;;
	b) fio_seq "$2" "$RUN_S" b --ioengine=libaio --iodepth=1 --thinktime=1000 ;;
	c) { fio_seq "$2" "$PHASE_S" c1; fio_rand "$2" "$PHASE_S"; fio_seq "$2" "$PHASE_S" c3; } |
		awk '{ b += $1; t += $2 } END { print b, t }' ;;
	esac
}

# BFQ keeps state across runs (its budget and peak-rate estimates, each
# queue's idling eligibility), so every run starts from a new BFQ: the
# scheduler switched away and back, 2 s of (a) at idle 0 for its queueing
# detection (hw_tag, decided once per BFQ instance; it idles for nobody
# before), then 1 s of (a) at BFQ's default so the budgets are those of
# idling.
fresh_bfq() {
	local q=/sys/block/$1/queue
	echo none >$q/scheduler && echo bfq >$q/scheduler || die "$1: cannot switch to bfq"
	echo 1 >$q/rotational
	echo 0 >$q/iosched/low_latency
	echo 0 >$q/iosched/slice_idle_us
	fio_seq "$1" 2 warm >/dev/null
	echo 8000 >$q/iosched/slice_idle_us
	fio_seq "$1" 1 warm >/dev/null
}

# run W DEV CONFIG: one run; prints MB/s; tune's decisions go to $TMP/tune.*.json.
run_one() {
	local w=$1 dev=$2 cfg=$3 log pid res
	fresh_bfq "$dev"
	case $cfg in
	idle8) echo 8000 >/sys/block/"$dev"/queue/iosched/slice_idle_us ;;
	idle0) echo 0 >/sys/block/"$dev"/queue/iosched/slice_idle_us ;;
	tune)
		echo 8000 >/sys/block/"$dev"/queue/iosched/slice_idle_us
		log=$TMP/tune.$w.$dev.$RANDOM
		./blkwise tune -d "$dev" --json --state-dir "$TMP/state" --run-dir "$TMP/run" \
			>"$log.json" 2>"$log.err" &
		pid=$!
		for _ in $(seq 100); do grep -q "tuning" "$log.err" 2>/dev/null && break; sleep 0.05; done
		grep -q "tuning" "$log.err" || { cat "$log.err" >&2; die "blkwise tune did not start"; }
		;;
	esac
	res=$(workload "$w" "$dev")
	if [ "$cfg" = tune ]; then
		kill -INT "$pid"
		wait "$pid" || die "blkwise tune exited $? (see $log.err)"
		TUNE_PROBES=$(jq -s '[.[] | select(.action == "probe")] | length' "$log.json")
		TUNE_FINAL=$(jq -s -r 'last | .slice_idle_us_after // "-"' "$log.json")
		cp "$log.json" "$OUT.$w.$dev.json" 2>/dev/null
	fi
	echo "$res" | awk '{ printf "%.1f", $1 / 1048576 / ($2 / 1000) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

mkdir -p build

rows=("a $SPINDLE spindle" "a $STRIPE stripe" "b $SPINDLE spindle" "b $STRIPE stripe" "c $STRIPE stripe")
declare -A SEED=(
	[a.spindle]="-" [a.stripe]="-"
	[b.spindle]="CFQ idling 3.77, slice_idle=0 2.81" [b.stripe]="CFQ idling 63.67, slice_idle=0 105.63"
	[c.stripe]="-")
json="[]"
TUNE_PROBES=""
TUNE_FINAL=""
for row in "${rows[@]}"; do
	read -r w dev kind <<<"$row"
	declare -A med=() spr=()
	probes=()
	for cfg in idle8 idle0 tune; do
		vals=()
		for r in $(seq "$RUNS"); do
			v=$(run_one "$w" "$dev" "$cfg")
			vals+=("$v")
			[ "$cfg" = tune ] && probes+=("$TUNE_PROBES probes, ended at $TUNE_FINAL us")
			echo "  $w $kind $cfg run $r: $v MB/s${TUNE_PROBES:+ }" >&2
			TUNE_PROBES=""
		done
		med[$cfg]=$(printf '%s\n' "${vals[@]}" | median)
		spr[$cfg]=$(printf '%s\n' "${vals[@]}" | spread)
	done
	best=$(printf '%s\n' "${med[idle8]}" "${med[idle0]}" | sort -g | tail -1)
	json=$(jq -c --arg w "$w" --arg kind "$kind" --argjson i8 "${med[idle8]}" --argjson i0 "${med[idle0]}" \
		--argjson t "${med[tune]}" --arg s8 "${spr[idle8]}" --arg s0 "${spr[idle0]}" --arg st "${spr[tune]}" \
		--argjson best "$best" --arg seed "${SEED[$w.$kind]}" --arg probes "${probes[*]}" \
		'. + [{workload: $w, device: $kind, idle8_mb_s: $i8, idle0_mb_s: $i0, tune_mb_s: $t,
		       idle8_spread: $s8, idle0_spread: $s0, tune_spread: $st, best_static: $best,
		       tune_vs_best: ($t / $best), idle8_loss: (1 - $i8 / $best), idle0_loss: (1 - $i0 / $best),
		       seed000: $seed, tune_runs: $probes}]' <<<"$json")
done
echo "$json" | jq . >"$OUT.json"
{
	echo "| workload | device | static idle 8 ms MB/s | static idle 0 MB/s | blkwise tune MB/s | tune / best static | 8 ms loses | 0 loses | LKML 2011, CFQ (MB/s) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	echo "$json" | jq -r '.[] | "| \(.workload) | \(.device) | \(.idle8_mb_s) (\(.idle8_spread)) | \(.idle0_mb_s) (\(.idle0_spread)) | \(.tune_mb_s) (\(.tune_spread)) | \(.tune_vs_best * 100 | round)% | \(.idle8_loss * 100 | round)% | \(.idle0_loss * 100 | round)% | \(.seed000) |"'
} | tee "$OUT.md"
