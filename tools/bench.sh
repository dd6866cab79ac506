#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# blkwise benchmark: the CPU cost per I/O of blkwise next to an empty-program
# floor, the completion-only design (floor_rqfields: the floor of the light
# tier, blkwise's default) and two peers (libbpf-tools biolatency, a bpftrace one-liner), its
# memory, and how its cost scales.  Run as root: `make bench`.
#
# One memory-backed loop device (image in /dev/shm, direct I/O), fio
# io_uring 4k random reads; configurations alternate A B C ... A B C ... so
# drift (thermal, other load, page cache) spreads over all of them.  Cost is
# read from the kernel's own BPF accounting (kernel.bpf_stats_enabled=1):
#   ns/IO = sum over the configuration's programs of delta run_time_ns,
#           divided by the I/Os fio completed.
# Around every run, build/bench/lineping prices one cache line crossing
# between the fio CPU and another (tools/bench/lineping.c): what the exact
# designs pay per request and the floors do not, and on a VM the host's
# placement of the vCPUs, which can change during a run.
# Every traced run of the main comparison comes right after an untraced one
# (none) of its own: a traced run's IOPS are judged against its pair's.
# Progress goes to stderr, results to stdout, build/bench/bench.json and
# build/bench/bench.md.  Runs disturbed by I/O on other devices or by other
# BPF programs on the same hooks are redone once (within a budget) and the
# remaining disturbance is reported next to the numbers.
#
# Knobs (environment):
#   BENCH_ROUNDS=5        rounds of the main comparison
#   BENCH_RUNTIME=5       seconds per fio run
#   BENCH_SCALE_ROUNDS=2  rounds of the scaling runs (0 skips them)
#   BENCH_IOPS_ROUNDS=5   pairs per configuration of the IOPS runs with the
#                         kernel's BPF accounting off (0 skips them)
#   BENCH_IOPS_RUNTIME=20 seconds per fio run there: one exact slice of the
#                         default as shipped (1 s every 20 s) in each
#   BENCH_IOPS_CONFIGS="blkwise_shipped floor_rqfields"  what those runs pair
#   BENCH_MEM_SECS=4      seconds blkwise watches 8 devices before measuring
#   BENCH_CONFIGS="floor blkwise"  run only these main configurations
#   BENCH_SCALE_CONFIGS="none floor floor_clock blkwise"  configurations of the scaling runs
#   BENCH_SHAPES="qd1 qd32same"    run only these scaling shapes
#   BENCH_BASELINE=path   also run another build of blkwise (configs baseline,
#                         baseline_streams, baseline_record), side by side with
#                         this one: a change is kept if it pays
#   BENCH_PROFILE=1       also run blkwise, blkwise --streams and record with parts
#                         of their hot paths left out (prof_*: BLKWISE_BENCH_SKIP,
#                         bpf/skip.h BW_SKIP_*), and report what each part costs:
#                         the full configuration minus the variant
#                         (none is always added: it is the IOPS reference)
#   BENCH_CPU=0           CPU the (single) fio job is pinned to
#   BENCH_IMG_MB=256      size of the loop device image
#   BENCH_RETRIES=1       redo a run this often while other devices are busy
#   BENCH_QUICK=1         smoke run (~1 min): 1 round, 2 s runs
#   BENCH_OUT=build/bench/bench.json
#   BENCH_REQUIRE_BLKWISE=1  fail when ./blkwise is missing (implied under make)
set -eu
set -o pipefail

cd "$(dirname "$0")/.."

# ---- the configurations -------------------------------------------------
# name | command.  $DEV is the loop device name (loop3), $BT_PROG the
# bpftrace program for it, $BLKWISE a copy of ./blkwise taken at start (so a
# rebuild during the bench cannot mix two versions).  "-" means no tracer.
# Adding a configuration is adding a line; its stdout is discarded, its
# stderr kept for errors.
# shellcheck disable=SC2016 # expanded when a configuration starts
CONFIGS='
none            | -
floor           | build/bench/floor
floor_streams   | build/bench/floor --streams
floor_clock     | build/bench/floor --clock
floor_streams_clock | build/bench/floor --streams --clock
floor_record    | build/bench/floor --record
floor_exact     | build/bench/floor --exact
floor_exact_tag | build/bench/floor --exact-tag
floor_rqfields  | build/bench/floor --rqfields
floor_rqissue   | build/bench/floor --rqissue
blkwise         | $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
blkwise_default | $BLKWISE stat --no-state -d $DEV -i 1
blkwise_shipped | $BLKWISE stat --no-state -d $DEV -i 1
blkwise_exact   | $BLKWISE stat --no-state --exact -d $DEV -i 1
blkwise_streams | $BLKWISE stat --no-state --streams -d $DEV -i 1
export_cgroups  | $BLKWISE export --no-state -d $DEV -i 1 --exact-period 0 --cgroups --listen 127.0.0.1:19796
biolatency      | biolatency -d $DEV 600
bpftrace        | bpftrace -e "$BT_PROG"
record          | $BLKWISE record -d $DEV -o $WORK/record.bwt
baseline        | $BASELINE stat --no-state -d $DEV -i 1
baseline_streams | $BASELINE stat --no-state --streams -d $DEV -i 1
baseline_record | $BASELINE record -d $DEV -o $WORK/baseline.bwt
prof_body       | env BLKWISE_BENCH_SKIP=8 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_clock_d    | env BLKWISE_BENCH_SKIP=1 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_atomic     | env BLKWISE_BENCH_SKIP=2 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_hist       | env BLKWISE_BENCH_SKIP=4 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_flight     | env BLKWISE_BENCH_SKIP=16 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_table      | env BLKWISE_BENCH_SKIP=32 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_sums       | env BLKWISE_BENCH_SKIP=64 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_stall      | env BLKWISE_BENCH_SKIP=128 $BLKWISE stat --no-state -d $DEV -i 1 --exact-period 0
prof_s_body     | env BLKWISE_BENCH_SKIP=0x100 $BLKWISE stat --no-state --streams -d $DEV -i 1
prof_s_clock    | env BLKWISE_BENCH_SKIP=0x200 $BLKWISE stat --no-state --streams -d $DEV -i 1
prof_s_leave    | env BLKWISE_BENCH_SKIP=0x400 $BLKWISE stat --no-state --streams -d $DEV -i 1
prof_s_stream   | env BLKWISE_BENCH_SKIP=0x800 $BLKWISE stat --no-state --streams -d $DEV -i 1
prof_r_body     | env BLKWISE_BENCH_SKIP=0x10000 $BLKWISE record -d $DEV -o $WORK/prof.bwt
prof_r_q        | env BLKWISE_BENCH_SKIP=0x20000 $BLKWISE record -d $DEV -o $WORK/prof.bwt
prof_r_comm     | env BLKWISE_BENCH_SKIP=0x40000 $BLKWISE record -d $DEV -o $WORK/prof.bwt
'
# Scaling: blkwise next to the floor (and none, for IOPS) in other shapes.
SCALE_CONFIGS=${BENCH_SCALE_CONFIGS:-"none floor floor_rqfields blkwise blkwise_exact"}
# name | iodepth | jobs (2 jobs are pinned to different CPUs) | where
# completions run: any (the kernel's choice), same (the submitting CPU:
# rq_affinity=2) or other (loop's workers, hence completions, kept off the
# submitting CPU through the unbound workqueue cpumask, rq_affinity=0)
SCALE_SHAPES='
qd1      | 1   | 1 | any
qd128    | 128 | 1 | any
qd32x2   | 32  | 2 | any
qd32same | 32  | 1 | same
qd32other| 32  | 1 | other
'
WQ_MASK=/sys/devices/virtual/workqueue/cpumask
WQ_MASK_OLD=""
# Memory: blkwise watching 8 devices ($DEVS = -d loopA -d loopB ...).
# shellcheck disable=SC2016
MEM_CMD='$BLKWISE stat --no-state $DEVS -i 1'	# the default: both tiers loaded
MEM_NDEV=8
# Targets.  Each is a ratio to a floor that does the same kind of work with
# nothing else: the completion-only design for the default (light) tier, a
# clock read per program for streams (an exact latency needs one at each
# end), a clock read and a 64-byte ring buffer record per program for record.
# floor_clock's 1.2x target is retired: the light tier has no issue program
# to read a clock in; --exact is printed against floor_exact, not judged.
TARGET_CLOCK=1.2	# only the crossing line's arithmetic, no longer judged
TARGET_LIGHT=1.3	# the light tier alone (blkwise: no exact slices) <= 1.3x floor_rqfields
# The default (blkwise_default): the light tier with the exact tier's
# slices, 1 s of every 20 by default; here 0.05 s of every 1 s, the same
# share, so that every run holds several slices.
TARGET_DEFAULT=1.3	# blkwise_default <= 1.3x floor_rqfields
TARGET_TIMING_PCT=2	# the default's D2C mean, p50, p99 within 2% of ftrace (else the frontier)
TARGET_CEIL=0.5		# under --max-cpu 0.5: blkwise's CPU share <= 0.6% of one CPU,
TARGET_CEIL_SHARE=0.006	# counts equal to diskstats', p50 and p99 within 5% of the unbounded run's
TARGET_CEIL_PCT=5
TARGET_IOPS_KEPT=0.93	# fio keeps >= 93% of its paired untraced IOPS under the default
# Judged on runs of their own, as users run: the kernel's BPF accounting off
# (with it on, every program run pays two more clock reads, blkwise's and
# the floors' alike), and the default as shipped (blkwise_shipped: 1 s of
# the exact tier every 20 s), each run 20 s, so one slice with its attach
# and detach in each.  blkwise_default, which packs the same share into
# 20 slices a second for the ns/IO above, pays those 20 times as often;
# its IOPS, accounting on, are reported too.
IOPS_CONFIGS=${BENCH_IOPS_CONFIGS:-"blkwise_shipped floor_rqfields"}
TARGET_STREAMS=2.0	# blkwise_streams <= 2x floor_streams_clock
TARGET_STREAMS_CORE=1.8	# blkwise_streams <= 1.8x blkwise_exact, the tier --streams loads
TARGET_RECORD=2.0	# record <= 2x floor_record
TARGET_PEER=0.3		# blkwise ns/IO <= 0.3x biolatency
TARGET_ANALYZE_MEPS=15	# analyze >= 15 M events/s with exact percentiles (synthetic trace)
TARGET_BTT=10		# analyze >= 10x btt alone on the same blktrace capture
TARGET_MAP_MIB=16
TARGET_RSS_MIB=16

# bpftrace biolatency: issue -> complete keyed by dev+sector (tracepoint
# args carry no request pointer), histogram in microseconds.
bt_prog() {	# $1 = kernel dev_t (major << 20 | minor)
	printf '%s' "tracepoint:block:block_rq_issue /args->dev == $1/ { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	@usecs = hist((nsecs - @start[args->dev, args->sector]) / 1000);
	delete(@start[args->dev, args->sector]); }"
}

ROUNDS=${BENCH_ROUNDS:-5}
RUNTIME=${BENCH_RUNTIME:-5}
SCALE_ROUNDS=${BENCH_SCALE_ROUNDS:-2}
IOPS_ROUNDS=${BENCH_IOPS_ROUNDS:-5}
IOPS_RUNTIME=${BENCH_IOPS_RUNTIME:-20}
MEM_SECS=${BENCH_MEM_SECS:-4}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	ROUNDS=${BENCH_ROUNDS:-1}
	RUNTIME=${BENCH_RUNTIME:-2}
	SCALE_ROUNDS=${BENCH_SCALE_ROUNDS:-1}
	IOPS_ROUNDS=${BENCH_IOPS_ROUNDS:-1}
	IOPS_RUNTIME=${BENCH_IOPS_RUNTIME:-4}
	MEM_SECS=${BENCH_MEM_SECS:-3}
fi
FIO_CPU=${BENCH_CPU:-0}
RETRIES=${BENCH_RETRIES:-1}
NOISE_PCT=3
IMG_MB=${BENCH_IMG_MB:-256}
OUTDIR=build/bench
JSON_OUT=${BENCH_OUT:-$OUTDIR/bench.json}

# ---- helpers --------------------------------------------------------------
log() { printf 'bench: %s\n' "$*" >&2; }
die() {
	printf 'bench: error: %s\n' "$1" >&2
	[ $# -ge 2 ] && printf 'bench:   fix: %s\n' "$2" >&2
	exit 1
}

LOCK=/run/lock/blkwise-bench.lock
[ -d /run/lock ] || LOCK=/tmp/blkwise-bench.lock

# Set up on the way; undone by cleanup in reverse, whatever happens.
WORK=""
LOOPS=""
TRACER_PID=""
FIO_PID=""
STATS_PID=""
STATS_ON=0
BLKWISE=""
BASELINE=""
LOST=0
STATS_OLD=""
TRACEFS_MOUNTED=""

stop_pid() {	# $1 = pid: TERM, wait up to 5 s, then KILL
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local rc=$? l
	set +e
	trap - EXIT INT TERM HUP
	[ -n "$FIO_PID" ] && stop_pid "$FIO_PID"
	[ -n "$TRACER_PID" ] && stop_pid "$TRACER_PID"
	[ -n "$STATS_PID" ] && stop_pid "$STATS_PID"
	for l in $LOOPS; do	# name=image: detach only what is still ours
		if loop_ours "${l%%=*}" "${l#*=}"; then
			losetup -d "/dev/${l%%=*}" 2>/dev/null ||
				log "warning: could not detach /dev/${l%%=*}; run: losetup -d /dev/${l%%=*}"
		fi
	done
	[ -n "$WORK" ] && rm -rf "$WORK"
	[ -n "$BLKWISE" ] && rm -f "$BLKWISE"
	[ -n "$BASELINE" ] && rm -f "$BASELINE"
	if [ -n "$STATS_OLD" ]; then
		if sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD" 2>/dev/null; then
			rm -f "$LOCK.sysctl"
		else
			log "warning: could not restore kernel.bpf_stats_enabled=$STATS_OLD"
		fi
	fi
	[ -n "$TRACEFS_MOUNTED" ] && umount "$TRACEFS_MOUNTED" 2>/dev/null
	[ -n "$WQ_MASK_OLD" ] && { echo "$WQ_MASK_OLD" >"$WQ_MASK" ||
		log "warning: could not restore $WQ_MASK to $WQ_MASK_OLD"; }
	[ "$rc" -ne 0 ] && log "failed (exit $rc); everything set up was removed"
	exit "$rc"
}
trap cleanup EXIT
# Children run in their own session (Ctrl-C reaches only this script, whose
# cleanup stops them) and get SIGTERM if this script dies without cleanup.
KEEP="setsid setpriv --pdeathsig TERM"
trap 'log "interrupted"; exit 130' INT
trap 'exit 143' TERM HUP

# Kernel dev_t of a block device name, as block tracepoints report it.
devt() {
	local mm
	mm=$(cat "/sys/block/$1/dev") || die "no /sys/block/$1/dev"
	echo $(( (${mm%%:*} << 20) | ${mm##*:} ))
}

# Is loop device $1 still backed by our image $2?  Loop numbers are reused:
# another process that detaches "its" stale number may hit ours.
loop_ours() {
	[ "$(cat "/sys/block/$1/loop/backing_file" 2>/dev/null)" = "$2" ]
}

# Not in $(...): the device must reach LOOPS in this shell for cleanup.
attach_loop() {	# $1 = image -> sets NEW_LOOP=loopN
	local dev name
	dev=$(losetup --direct-io=on -f --show "$1") ||
		die "losetup failed" "the kernel needs loop devices (CONFIG_BLK_DEV_LOOP, /dev/loop-control)"
	name=${dev#/dev/}
	LOOPS="$LOOPS $name=$1"
	[ "$(cat "/sys/block/$name/loop/dio" 2>/dev/null)" = 1 ] ||
		die "$dev did not get direct I/O on /dev/shm" "needs a kernel whose tmpfs supports O_DIRECT (>= 6.6)"
	# A loop device keeps its queue settings across detach: the last user's
	# scheduler would put its insert path into every figure.
	echo none >"/sys/block/$name/queue/scheduler" ||
		die "cannot set $dev's scheduler to none" "check /sys/block/$name/queue/scheduler"
	NEW_LOOP=$name
}

new_loop() {	# $1 = image path, $2 = MiB -> sets NEW_LOOP=loopN
	# Allocate every page: reading holes of a tmpfs file is not real work.
	fallocate -l "${2}M" "$1" ||
		die "cannot allocate ${2} MiB in /dev/shm" "free memory or lower BENCH_IMG_MB"
	attach_loop "$1"
}

# The bench device, attached again if someone detached it under us.
ensure_main_dev() {
	loop_ours "$DEV" "$MAIN_IMG" && return 0
	log "warning: /dev/$DEV was detached by another process; attaching the image again"
	attach_loop "$MAIN_IMG"
	DEV=$NEW_LOOP
	BT_PROG=$(bt_prog "$(devt "$DEV")")
	log "device now /dev/$DEV"
}

# BPF object ids held by a process: its prog / link fds name the programs.
pid_prog_ids() {
	{ grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null || true; } |
		awk '{print $2}' | sort -un | paste -sd, -
}
pid_map_ids() {
	{ grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null || true; } |
		awk '{print $2}' | sort -un | paste -sd, -
}

# Stats of the programs with the given ids: [{id, name, rt, cnt}].
prog_stats() {	# $1 = comma-separated ids
	bpftool prog list -j | jq -c --arg ids "$1" '
		($ids | split(",") | map(tonumber)) as $want
		| [.[] | select(.id | IN($want[]))
		  | {id, name, rt: (.run_time_ns // 0), cnt: (.run_cnt // 0)}]'
}

# Stats of every loaded program, to see foreign ones (other tracers on the
# same hooks slow ours down and take CPU from fio).
all_stats() {
	bpftool prog list -j | jq -c '[.[] | {id, name, rt: (.run_time_ns // 0), cnt: (.run_cnt // 0)}]'
}

# Map memory of the process: its map fds plus the maps its programs use.
map_bytes() {	# $1 = pid, $2 = prog ids
	local ids
	ids=$(
		{
			pid_map_ids "$1" | tr , '\n'
			[ -n "$2" ] && bpftool prog list -j | jq -r --arg ids "$2" '
				($ids | split(",") | map(tonumber)) as $want
				| .[] | select(.id | IN($want[]))
				| (.map_ids // [])[]'
		} | sort -un | paste -sd, -
	)
	[ -z "$ids" ] && { echo 0; return; }
	bpftool map list -j | jq --arg ids "$ids" '
		($ids | split(",") | map(tonumber)) as $want
		| [.[] | select(.id | IN($want[])) | .bytes_memlock // 0] | add // 0'
}

# I/Os completed on every other whole block device: background I/O that
# the tracers also see (the floor cannot filter it), reported per run.
other_ios() {	# $1 = our device name
	local d n=0 f
	for d in /sys/block/*; do
		[ "${d##*/}" = "$1" ] && continue
		# reads, writes, discards, flushes completed
		f=$(awk '{ print $1 + $5 + $12 + $16 }' "$d/stat" 2>/dev/null) || continue
		n=$(( n + ${f:-0} ))
	done
	echo "$n"
}

rss_kb() {	# $1 = pid, $2 = VmRSS or VmHWM
	awk -v k="$2:" '$1 == k { print $2 }' /proc/"$1"/status
}

# Start a tracer in the background; sets TRACER_PID.  Returns once its
# programs fire: probe reads are issued until their run_cnt moves.
start_tracer() {	# $1 = name, $2 = command, $3 = probe device
	local name=$1 cmd=$2 probe=$3 i ids c0 c1
	local errlog="$WORK/$name.err"
	# Own session: a Ctrl-C reaches only this script, whose cleanup then
	# stops the tracer (a tracer dying first would look like a failure).
	# $KEEP: and should this script be killed outright, the tracer follows.
	( eval "exec $KEEP $cmd" >/dev/null 2>"$errlog" ) &
	TRACER_PID=$!
	for i in $(seq 300); do
		if ! kill -0 "$TRACER_PID" 2>/dev/null; then
			wait "$TRACER_PID" 2>/dev/null || true
			TRACER_PID=""
			tail -n 5 "$errlog" | sed 's/^/bench:   | /' >&2
			die "$name exited at start: $cmd" "run it by hand as root to see why"
		fi
		if ! loop_ours "$probe" "$MAIN_IMG" && [ "$probe" = "$DEV" ]; then
			LOST=1
			return 0
		fi
		ids=$(pid_prog_ids "$TRACER_PID")
		if [ -n "$ids" ]; then
			# Attached is seen by its programs' run counts: with the
			# accounting off (the IOPS runs), on for the probe only.
			[ "$STATS_ON" = 1 ] || sysctl -qw kernel.bpf_stats_enabled=1
			c0=$(prog_stats "$ids" | jq '[.[].cnt] | add // 0')
			dd if="/dev/$probe" of=/dev/null bs=4096 count=4 iflag=direct status=none
			c1=$(prog_stats "$ids" | jq '[.[].cnt] | add // 0')
			[ "$STATS_ON" = 1 ] || sysctl -qw kernel.bpf_stats_enabled=0
			if [ "$c1" -gt "$c0" ]; then
				sleep 0.5	# let the remaining attachments land
				return 0
			fi
		fi
		sleep 0.1
	done
	tail -n 5 "$errlog" | sed 's/^/bench:   | /' >&2
	log "  $name: prog ids '${ids:-none}', state $(awk '/^State/ { print $2 }' /proc/"$TRACER_PID"/status 2>/dev/null), wchan $(cat /proc/"$TRACER_PID"/wchan 2>/dev/null)"
	die "$name did not attach within 30 s: $cmd" \
		"see the lines above; is /dev/$probe readable (dd if=/dev/$probe iflag=direct count=1)?"
}

# fio: random 4k reads; $FIO_JSON gets the result.
run_fio() {	# $1 = device path(s) (colon separated), $2 = iodepth, $3 = jobs, $4 = secs
	local cpus
	if [ "$3" -gt 1 ]; then
		cpus="--cpus_allowed=0-$(( $3 - 1 )) --cpus_allowed_policy=split"
	else
		cpus="--cpus_allowed=$FIO_CPU"
	fi
	# shellcheck disable=SC2086
	$KEEP fio --name=bench --filename="$1" --ioengine=io_uring --direct=1 \
		--rw=randread --bs=4k --iodepth="$2" --numjobs="$3" $cpus \
		--time_based --runtime="$4" --norandommap --randrepeat=0 \
		--output-format=json --output="$FIO_JSON" >"$WORK/fio.err" 2>&1 &
	FIO_PID=$!
	if ! wait "$FIO_PID"; then
		FIO_PID=""
		if [ "$1" = "/dev/$DEV" ] && ! loop_ours "$DEV" "$MAIN_IMG"; then
			LOST=1	# detached under us: measure() attaches again
			return 0
		fi
		tail -n 5 "$WORK/fio.err" | sed 's/^/bench:   | /' >&2
		die "fio failed on $1" "see the lines above (io_uring needs kernel.io_uring_disabled=0)"
	fi
	FIO_PID=""
}

# One measurement: start the tracer, snapshot, fio, snapshot, stop.
# Writes one JSON record to $WORK/run.json.
measure_once() {	# $1 = section, $2 = shape, $3 = round, $4 = config, $5 = iodepth, $6 = jobs, $7 = command
	local section=$1 shape=$2 round=$3 name=$4 depth=$5 jobs=$6 cmd=$7
	local ids="" before="[]" after="[]" mb=0 rss=0 fio bg0 bg1 x0 x1
	LOST=0
	ensure_main_dev
	if [ "$cmd" != - ]; then
		start_tracer "$name" "$cmd" "$DEV"
		if [ "$LOST" = 1 ]; then
			stop_pid "$TRACER_PID"
			TRACER_PID=""
			return 0
		fi
		ids=$(pid_prog_ids "$TRACER_PID")
		# The default's first exact slice lasts 3 s (so that a class comes
		# as soon as with --exact); measured is the steady state after it.
		case $name in blkwise_default | blkwise_shipped) sleep 3.5 ;; esac
	fi
	x0=$(crossing 100000)
	before=$(all_stats)
	bg0=$(other_ios "$DEV")
	run_fio "/dev/$DEV" "$depth" "$jobs" "$RUNTIME"
	bg1=$(other_ios "$DEV")
	after=$(all_stats)
	x1=$(crossing 100000)
	if ! loop_ours "$DEV" "$MAIN_IMG"; then
		LOST=1
		[ -n "$TRACER_PID" ] && stop_pid "$TRACER_PID"
		TRACER_PID=""
		return 0
	fi
	if [ -n "$ids" ]; then
		mb=$(map_bytes "$TRACER_PID" "$ids")
		rss=$(rss_kb "$TRACER_PID" VmRSS)
		kill -0 "$TRACER_PID" 2>/dev/null ||
			die "$name died during the run" "see $WORK/$name.err"
		[ "$STATS_ON" = 0 ] || [ "$(jq -n --argjson b "$before" --argjson a "$after" --arg ids "$ids" '
			($ids | split(",") | map(tonumber)) as $w
			| ([$a[] | select(.id | IN($w[])) | .cnt] | add // 0)
			  - ([$b[] | select(.id | IN($w[])) | .cnt] | add // 0)')" -gt 0 ] ||
			die "$name: its programs recorded no runs during fio" \
				"check kernel.bpf_stats_enabled and that $name traces /dev/$DEV"
		stop_pid "$TRACER_PID"
		TRACER_PID=""
	fi
	fio=$(jq -c '{iops: ([.jobs[].read.iops] | add),
		ios: ([.jobs[].read.total_ios] | add)}' "$FIO_JSON")
	jq -nc --arg s "$section" --arg sh "$shape" --argjson r "$round" --arg c "$name" \
		--argjson f "$fio" --argjson b "$before" --argjson a "$after" \
		--argjson mb "$mb" --argjson rss "${rss:-0}" --argjson bg $(( bg1 - bg0 )) \
		--arg ids "$ids" --argjson x0 "$x0" --argjson x1 "$x1" '
		($ids | split(",") | map(select(. != "") | tonumber)) as $w
		| ($b | map({key: (.id | tostring), value: .}) | from_entries) as $bb
		| [$a[] | . as $p | ($bb[$p.id | tostring] // {rt: 0, cnt: 0}) as $q
		   | {id: $p.id, name: $p.name, rt: ($p.rt - $q.rt), cnt: ($p.cnt - $q.cnt)}
		   | . + {ns_per_io: (.rt / $f.ios), ev_per_io: (.cnt / $f.ios)}] as $all
		| [$all[] | select(.id | IN($w[])) | del(.id)] as $d
		| [$all[] | select((.id | IN($w[]) | not) and .cnt > 0) | del(.id)] as $x
		| {section: $s, shape: $sh, round: $r, config: $c, status: "ok",
		   iops: $f.iops, ios: $f.ios, other_ios: $bg,
		   foreign_ns_per_io: (([$x[].rt] | add // 0) / $f.ios),
		   foreign_progs: ([$x[] | .name] | unique),
		   ns_per_io: (if ($d | length) > 0 then ([$d[].rt] | add) / $f.ios else null end),
		   ev_per_io: (if ($d | length) > 0 then ([$d[].cnt] | add) / $f.ios else null end),
		   progs: $d, map_bytes: $mb, rss_kb: $rss,
		   crossing_ns: ([$x0, $x1] | map(.median // empty) | if length > 0 then add / length else null end),
		   crossing_ns_before: $x0.median, crossing_ns_after: $x1.median}' >"$WORK/run.json"
}

# A measurement, redone (up to BENCH_RETRIES times) while other devices did
# more than NOISE_PCT % as many I/Os as fio: their events run the tracer's
# programs too.  The quietest attempt is kept.  Appends it to $RESULTS.
measure() {	# $1 = section, $2 = shape, $3 = round, $4 = config, $5 = iodepth, $6 = jobs
	local name=$4 cmd try noisy lost
	cmd=$(config_cmd "$name")
	if [ "$cmd" = NOTBUILT ]; then
		jq -nc --arg s "$1" --arg sh "$2" --argjson r "$3" --arg c "$name" \
			'{section: $s, shape: $sh, round: $r, config: $c, status: "not built"}' >>"$RESULTS"
		return
	fi
	: >"$WORK/tries.jsonl"
	for try in $(seq 0 "$RETRIES"); do
		lost=0
		while :; do
			measure_once "$@" "$cmd"
			[ "$LOST" = 1 ] || break
			lost=$(( lost + 1 ))
			[ "$lost" -le 3 ] || die "the bench device keeps being detached by another process" \
				"stop whatever runs losetup -d on loop devices it does not own, then rerun"
		done
		noisy=$(jq --argjson p "$NOISE_PCT" '.other_ios * 100 > .ios * $p or .foreign_ns_per_io > 5' "$WORK/run.json")
		jq -r --argjson t "$try" '"bench:   \(.shape) round \(.round) \(.config): \(.iops | floor) IOPS"
		  + (if .ns_per_io then ", \(.ns_per_io * 10 | round / 10) ns/IO, \(.ev_per_io * 100 | round / 100) events/IO" else "" end)
		  + (if .crossing_ns then ", crossing \(.crossing_ns_before | round)/\(.crossing_ns_after | round) ns" else "" end)
		  + (if .other_ios > 0 then ", other devices \(.other_ios * 1000 / .ios | round / 10)%" else "" end)
		  + (if .foreign_ns_per_io > 0 then ", foreign BPF \(.foreign_ns_per_io | round) ns/IO (\(.foreign_progs | join(" ")))" else "" end)
		  + (if $t > 0 then " (retry \($t))" else "" end)' "$WORK/run.json" >&2
		jq -c --argjson t "$try" '. + {attempt: $t}' "$WORK/run.json" >>"$WORK/tries.jsonl"
		[ "$noisy" = true ] || break
		[ "$try" -lt "$RETRIES" ] || break
		if [ "$RETRY_BUDGET" -le 0 ]; then
			[ "$RETRY_BUDGET" -eq 0 ] &&
				log "  the machine stays noisy: no more retries (results carry a warning)"
			RETRY_BUDGET=-1
			break
		fi
		RETRY_BUDGET=$(( RETRY_BUDGET - 1 ))
		log "  noisy (other devices' I/O > ${NOISE_PCT}% of fio's, or other BPF programs ran); again"
	done
	jq -sc 'min_by([.foreign_ns_per_io > 5, .other_ios / .ios])' "$WORK/tries.jsonl" >>"$RESULTS"
}

config_cmd() {	# $1 = name -> command, "-", or NOTBUILT
	local cmd
	cmd=$(printf '%s\n' "$CONFIGS" | awk -F'|' -v n="$1" '
		{ k = $1; gsub(/[ \t]/, "", k) } k == n { sub(/^[^|]*\|[ \t]*/, ""); print; exit }')
	[ -n "$cmd" ] || die "unknown configuration $1"
	# shellcheck disable=SC2016
	case $cmd in *'$BLKWISE'*) [ -n "$BLKWISE" ] || cmd=NOTBUILT ;; esac
	printf '%s\n' "$cmd"
}

# ---- setup ----------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "must run as root (BPF, loop devices, sysctl)" "sudo make bench"
log "checking dependencies (tools/deps.sh --bench)"
tools/deps.sh --bench || die "tools/deps.sh --bench failed" "install the packages it names, then rerun"
for t in fio jq bpftool biolatency bpftrace losetup fallocate column setpriv flock; do
	command -v "$t" >/dev/null || die "$t not found" "tools/deps.sh --bench"
done
[ -r /sys/kernel/btf/vmlinux ] ||
	die "kernel has no BTF (/sys/kernel/btf/vmlinux)" "use a kernel built with CONFIG_DEBUG_INFO_BTF=y"

# One bench at a time per machine: runs would skew each other.
exec 9>"$LOCK" || die "cannot open $LOCK" "run as root"
if ! flock -n 9; then
	log "another bench run holds $LOCK; waiting for it (up to 15 min)"
	flock -w 900 9 || die "another bench run still holds $LOCK" "wait for it to finish, or end it"
fi
# Holding the lock, anything left by a bench killed outright is stale.
for img in $(losetup -l -n -O BACK-FILE 2>/dev/null | grep '^/dev/shm/blkwise-bench\.' || true); do
	for l in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
		log "removing $l, left by an earlier bench ($img)"
		losetup -d "$l" || true
	done
done
rm -rf /dev/shm/blkwise-bench.*
if [ -f "$LOCK.sysctl" ]; then
	log "restoring kernel.bpf_stats_enabled=$(cat "$LOCK.sysctl"), left on by an earlier bench"
	sysctl -qw kernel.bpf_stats_enabled="$(cat "$LOCK.sysctl")" || true
	rm -f "$LOCK.sysctl"
fi

log "building build/bench/floor"
make -s -f tools/bench/Makefile ||
	die "building the floor loader failed" "see the compiler output above (needs clang, bpftool, libbpf-dev)"

if [ ! -x ./blkwise ]; then
	if [ -n "${MAKELEVEL:-}" ] || [ "${BENCH_REQUIRE_BLKWISE:-0}" = 1 ]; then
		die "./blkwise is missing" "run make (make bench builds it first); see the build errors"
	fi
	log "warning: ./blkwise not built; its rows will read 'not built' (run make)"
fi
mkdir -p "$OUTDIR"
BLKWISE_VERSION=null
if [ -x ./blkwise ]; then
	BLKWISE=$OUTDIR/blkwise.measured
	cp ./blkwise "$BLKWISE" || die "cannot copy ./blkwise to $BLKWISE" "check space in $OUTDIR"
	BLKWISE_VERSION=$(jq -nc --arg sha "$(sha256sum "$BLKWISE" | cut -c1-16)" \
		--arg mtime "$(date -u -r ./blkwise +%Y-%m-%dT%H:%M:%SZ)" \
		--arg git "$(git describe --always --dirty 2>/dev/null || echo unknown)" \
		'{sha256: $sha, built: $mtime, git: $git}')
fi

if [ -n "${BENCH_BASELINE:-}" ]; then
	[ -x "$BENCH_BASELINE" ] || die "BENCH_BASELINE=$BENCH_BASELINE is not an executable" \
		"build the other version and name its blkwise binary"
	BASELINE=$OUTDIR/blkwise.baseline
	cp "$BENCH_BASELINE" "$BASELINE" || die "cannot copy $BENCH_BASELINE to $BASELINE" "check space in $OUTDIR"
fi

mkdir -p "$OUTDIR" "$(dirname "$JSON_OUT")"
WORK=$(mktemp -d /dev/shm/blkwise-bench.XXXXXX) ||
	die "cannot create a directory in /dev/shm" "mount tmpfs on /dev/shm"
WORK=$(realpath "$WORK")	# as loop/backing_file shows it
RESULTS=$WORK/results.jsonl
FIO_JSON=$WORK/fio.json
: >"$RESULTS"

# bpftrace tracepoints need tracefs.
if [ ! -d /sys/kernel/tracing/events/block ] && [ ! -d /sys/kernel/debug/tracing/events/block ]; then
	mount -t tracefs nodev /sys/kernel/tracing ||
		die "cannot mount tracefs on /sys/kernel/tracing" "mount -t tracefs nodev /sys/kernel/tracing"
	TRACEFS_MOUNTED=/sys/kernel/tracing
fi

STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled) ||
	die "no kernel.bpf_stats_enabled" "needs Linux >= 5.1"
echo "$STATS_OLD" >"$LOCK.sysctl"	# for the next run, should this one be killed
sysctl -qw kernel.bpf_stats_enabled=1 ||
	die "cannot set kernel.bpf_stats_enabled=1" "run as root outside a restricted container"
# Also hold the accounting on by reference (BPF_ENABLE_STATS), so another
# process resetting the sysctl mid-run cannot zero our measurements.
stats_hold() {
	local i
	sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot set kernel.bpf_stats_enabled=1"
	$KEEP build/bench/floor --stats >"$WORK/stats.out" 2>"$WORK/stats.err" &
	STATS_PID=$!
	for i in $(seq 50); do
		grep -q ready "$WORK/stats.out" && break
		kill -0 "$STATS_PID" 2>/dev/null || {
			cat "$WORK/stats.err" >&2
			STATS_PID=""
			die "cannot hold BPF run-time stats on" "see the message above"
		}
		sleep 0.1
	done
	STATS_ON=1
}

# The accounting off, as a user runs: no run time is measured meanwhile.
stats_release() {
	stop_pid "$STATS_PID"
	STATS_PID=""
	sysctl -qw kernel.bpf_stats_enabled=0 || die "cannot set kernel.bpf_stats_enabled=0"
	[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] ||
		die "kernel.bpf_stats_enabled stays on" "another process holds BPF_ENABLE_STATS"
	STATS_ON=0
}
stats_hold

MAIN_IMG=$WORK/main.img
new_loop "$MAIN_IMG" "$IMG_MB"
DEV=$NEW_LOOP
# shellcheck disable=SC2034 # used by the eval'd configuration commands
BT_PROG=$(bt_prog "$(devt "$DEV")")
log "device /dev/$DEV (${IMG_MB} MiB in /dev/shm, direct I/O); fio pinned to CPU $FIO_CPU"

# ---- main comparison ----------------------------------------------------------
ALL=$(printf '%s\n' "$CONFIGS" | awk -F'|' 'NF > 1 { gsub(/[ \t]/, "", $1); print $1 }' | tr '\n' ' ')
ALL=${ALL% }
if [ -n "${BENCH_CONFIGS:-}" ]; then
	MAIN="none"
	for c in $BENCH_CONFIGS; do
		case " $ALL " in *" $c "*) ;; *) die "unknown configuration $c" "one of: $ALL" ;; esac
		case $c in baseline*) [ -n "$BASELINE" ] ;; *) true ;; esac ||
			die "configuration baseline needs BENCH_BASELINE" "BENCH_BASELINE=path/to/other/blkwise"
		[ "$c" = none ] || MAIN="$MAIN $c"
	done
else
	MAIN=$(printf '%s\n' $ALL | grep -v '^prof_' | grep -v '^baseline' | tr '\n' ' ')
	[ -z "$BASELINE" ] || MAIN="$MAIN baseline baseline_streams baseline_record"
	[ "${BENCH_PROFILE:-0}" = 1 ] && MAIN="$MAIN $(printf '%s\n' $ALL | grep '^prof_' | tr '\n' ' ')"
	MAIN=${MAIN% }
fi
words() { echo $#; }
# shellcheck disable=SC2086 # word counts
est=$(( (ROUNDS * (2 * $(words $MAIN) - 2) + SCALE_ROUNDS * $(printf '%s\n' "$SCALE_SHAPES" | grep -c '|') \
	* $(words $SCALE_CONFIGS)) * (RUNTIME + 3) \
	+ IOPS_ROUNDS * 2 * $(words $IOPS_CONFIGS) * (IOPS_RUNTIME + 5) + MEM_SECS + 15 ))
# Retries are for passing noise: at most a sixth of the runs are redone.
RETRY_BUDGET=$(( est / (RUNTIME + 3) / 6 + 1 ))
log "main: $ROUNDS rounds x {$MAIN} x ${RUNTIME} s; scaling: $SCALE_ROUNDS rounds; about $(( est / 60 + 1 )) min"

# What a cache line costs to cross from the fio CPU to another (lineping):
# the unit of what an exact tracer pays when completions run elsewhere.
crossing() {	# $1 = handoffs -> JSON {cpus, median, min, max} or {status}
	local other out m lo hi
	other=$(awk -v c="$FIO_CPU" -F'[-,]' '{ for (i = 1; i <= NF; i++) if ($i != c) { print $i; exit } }' \
		/sys/devices/system/cpu/online)
	if [ -z "$other" ] || [ "$other" = "$FIO_CPU" ]; then
		echo '{"status": "1 CPU"}'
		return
	fi
	if ! out=$(build/bench/lineping "$FIO_CPU" "$other" "$1" 2>&1); then
		jq -nc --arg e "$out" '{status: ("lineping failed: " + $e)}'
		return
	fi
	read -r _ m lo hi <<<"$out"
	jq -nc --argjson a "$FIO_CPU" --argjson b "$other" --argjson m "$m" --argjson lo "$lo" --argjson hi "$hi" \
		'{status: "ok", cpus: [$a, $b], median: $m, min: $lo, max: $hi}'
}
CROSS_BEFORE=$(crossing 1000000)
log "a cache line crossing between CPUs: $(jq -r 'if .status == "ok" then "\(.median) ns" else .status end' <<<"$CROSS_BEFORE")"

log "warm-up"
run_fio "/dev/$DEV" 32 1 1

for r in $(seq "$ROUNDS"); do
	log "round $r/$ROUNDS"
	for c in $MAIN; do
		[ "$c" = none ] && continue
		measure main qd32 "$r" none 32 1	# the traced run's untraced pair
		measure main qd32 "$r" "$c" 32 1
	done
done

# ---- IOPS kept, with the accounting off ------------------------------------------
# What fio keeps of its untraced IOPS, each traced run paired with an
# untraced one right before it, as above, but with kernel.bpf_stats_enabled
# off: the accounting's two clock reads per program run are the bench's
# instrument, not a cost a user pays.  No run time is read here.
# With BENCH_CONFIGS, those of IOPS_CONFIGS it names (blkwise_default
# standing for blkwise_shipped).
iops_selected() {
	[ -n "${BENCH_CONFIGS:-}" ] || return 0
	case " $MAIN " in *" $1 "*) return 0 ;; esac
	[ "$1" = blkwise_shipped ] && case " $MAIN " in *" blkwise_default "*) return 0 ;; esac
	return 1
}
if [ "$IOPS_ROUNDS" -gt 0 ]; then
	stats_release
	main_runtime=$RUNTIME
	RUNTIME=$IOPS_RUNTIME
	for r in $(seq "$IOPS_ROUNDS"); do
		log "IOPS round $r/$IOPS_ROUNDS (BPF accounting off, runs of $RUNTIME s)"
		for c in $IOPS_CONFIGS; do
			iops_selected "$c" || continue
			measure iops qd32 "$r" none 32 1
			measure iops qd32 "$r" "$c" 32 1
		done
	done
	RUNTIME=$main_runtime
	stats_hold
fi

# ---- timing: how exact each design's times are -----------------------------------
# Light (the kernel's stamps alone), the default and --exact, each against
# ftrace's own per-request events at qd1 and at qd32 with batched
# submission (tools/bench/timing.sh): the frontier of cost and error.
TIMING_JSON='[]'
if [ "${BENCH_TIMING:-1}" = 1 ] && [ -n "$BLKWISE" ] && [ -z "${BENCH_CONFIGS:-}" ]; then
	log "timing: light, default and exact against ftrace, qd1 and qd32 batched by 8 (${BENCH_TIMING_RUNTIME:-5} s runs)"
	tools/bench/timing.sh "$DEV" "$WORK/timing.jsonl" "$BLKWISE" "${BENCH_TIMING_RUNTIME:-5}" "$FIO_CPU" ||
		log "warning: the timing runs failed"
	[ -s "$WORK/timing.jsonl" ] && TIMING_JSON=$(jq -sc . "$WORK/timing.jsonl")
fi

# ---- the ceiling: --max-cpu under the main load ------------------------------------
CEIL_JSON='[]'
if [ "${BENCH_CEILING:-1}" = 1 ] && [ -n "$BLKWISE" ] && [ -z "${BENCH_CONFIGS:-}" ]; then
	log "ceiling: stat unbounded, --max-cpu 0.5 and 2 under qd32 (${BENCH_CEIL_RUNTIME:-20} s runs)"
	tools/bench/ceiling.sh "$DEV" "$WORK/ceiling.jsonl" "$BLKWISE" "${BENCH_CEIL_RUNTIME:-20}" "$FIO_CPU" \
		none 0.5 2 || log "warning: the ceiling runs failed"
	[ -s "$WORK/ceiling.jsonl" ] && CEIL_JSON=$(jq -sc . "$WORK/ceiling.jsonl")
fi

# ---- scaling --------------------------------------------------------------------
# Where the main device's completions run, for one shape; "any" restores.
place_completions() {	# $1 = any | same | other
	local aff=1 mask=""
	case $1 in
	same) aff=2 ;;
	other)
		aff=0
		mask=$(printf '%x' $(( ((1 << $(nproc)) - 1) & ~(1 << FIO_CPU) )))
		[ "$mask" != 0 ] || { log "warning: 1 CPU: no other CPU for completions"; mask=""; }
		;;
	esac
	echo "$aff" >"/sys/block/$DEV/queue/rq_affinity" ||
		die "cannot set /sys/block/$DEV/queue/rq_affinity" "run as root"
	if [ -n "$mask" ]; then
		[ -n "$WQ_MASK_OLD" ] || WQ_MASK_OLD=$(cat "$WQ_MASK")
		echo "$mask" >"$WQ_MASK" || die "cannot set $WQ_MASK" "run as root"
	elif [ -n "$WQ_MASK_OLD" ]; then
		echo "$WQ_MASK_OLD" >"$WQ_MASK" && WQ_MASK_OLD=""
	fi
}

if [ "$SCALE_ROUNDS" -gt 0 ]; then
	[ "$(nproc)" -ge 2 ] || log "warning: 1 CPU: the 2-job shape shares it"
	for r in $(seq "$SCALE_ROUNDS"); do
		while IFS='|' read -r shape depth jobs comp; do
			shape=${shape//[[:space:]]/}
			depth=${depth//[[:space:]]/}
			jobs=${jobs//[[:space:]]/}
			comp=${comp//[[:space:]]/}
			[ -n "$shape" ] || continue
			case " ${BENCH_SHAPES:-$shape} " in *" $shape "*) ;; *) continue ;; esac
			log "scaling $shape round $r/$SCALE_ROUNDS (completions: $comp)"
			place_completions "$comp"
			for c in $SCALE_CONFIGS; do
				measure scale "$shape" "$r" "$c" "$depth" "$jobs"
			done
			place_completions any
		done <<EOF
$SCALE_SHAPES
EOF
	done
fi

CROSS_AFTER=$(crossing 1000000)

# ---- memory: blkwise watching 8 devices -------------------------------------------
MEM_JSON='{"status": "not built"}'
[ "$MEM_SECS" -gt 0 ] || MEM_JSON='{"status": "skipped (BENCH_MEM_SECS=0)"}'
if [ -n "$BLKWISE" ] && [ "$MEM_SECS" -gt 0 ]; then
	log "memory: blkwise watching $MEM_NDEV devices for $MEM_SECS s"
	DEVS=""
	first=""
	paths=""
	for i in $(seq "$MEM_NDEV"); do
		new_loop "$WORK/mem$i.img" 16
		d=$NEW_LOOP
		DEVS="${DEVS:+$DEVS }-d $d"
		first=${first:-$d}
		paths="${paths:+$paths:}/dev/$d"
	done
	cmd=$(eval "printf '%s' \"$MEM_CMD\"" | sed "s|$BLKWISE|./blkwise|")
	start_tracer blkwise_mem "$MEM_CMD" "$first"
	run_fio "$paths" 32 1 "$MEM_SECS"
	ids=$(pid_prog_ids "$TRACER_PID")
	mb=$(map_bytes "$TRACER_PID" "$ids")
	rss=$(rss_kb "$TRACER_PID" VmRSS)
	hwm=$(rss_kb "$TRACER_PID" VmHWM)
	nmaps=$(pid_map_ids "$TRACER_PID" | tr , '\n' | grep -c . || true)
	stop_pid "$TRACER_PID"
	TRACER_PID=""
	MEM_JSON=$(jq -nc --arg cmd "$cmd" --argjson n "$MEM_NDEV" --argjson mb "$mb" \
		--argjson rss "$rss" --argjson hwm "$hwm" --argjson nm "$nmaps" \
		--argjson tm "$TARGET_MAP_MIB" --argjson tr "$TARGET_RSS_MIB" '
		{status: "ok", command: $cmd, devices: $n, map_bytes: $mb, maps: $nm,
		 rss_kb: $rss, rss_peak_kb: $hwm,
		 map_mib: ($mb / 1048576), rss_mib: ($rss / 1024),
		 target_map_mib: $tm, target_rss_mib: $tr,
		 map_pass: ($mb / 1048576 <= $tm), rss_pass: ($hwm / 1024 <= $tr)}')
fi

# ---- record and analyze ------------------------------------------------------------
# The last main-section recording (fio qd32): its drops and bytes per event.
# analyze's speed: a synthetic trace of BENCH_SYNTH_IOS requests (3 events
# each) analyzed on one CPU, user+sys time; and, where blktrace's tools are
# installed, the same requests as a blktrace capture through blkparse -d + btt
# and through analyze.
REC_JSON='{"status": "not built"}'
SYNTH=build/synthtrace
SYNTH_IOS=${BENCH_SYNTH_IOS:-4000000}
cpu_secs() {	# command... -> "user+sys elapsed max_rss_kb" of it, on $FIO_CPU
	/usr/bin/time -f '%U %S %e %M' -o "$WORK/time.txt" taskset -c "$FIO_CPU" "$@" \
		>/dev/null 2>"$WORK/time.err" || return 1
	awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' "$WORK/time.txt"
}
if [ -n "$BLKWISE" ] && [ -x "$SYNTH" ] && [ -f "$WORK/record.bwt" ]; then
	log "record and analyze: the last recording, and analyze on $SYNTH_IOS synthetic requests"
	rec=$("$BLKWISE" analyze "$WORK/record.bwt" --json --no-exact 2>/dev/null |
		jq -c --argjson size "$(stat -c %s "$WORK/record.bwt")" '{events, dropped: .dropped_events,
			requests: ([.devices[].requests] | add), file_bytes: $size,
			bytes_per_event: ($size / .events)}')
	"$SYNTH" "$SYNTH_IOS" 16 "$WORK/synth.bwt"
	cat "$WORK/synth.bwt" >/dev/null	# from the page cache, as a file just written
	read -r t_ex e_ex rss_ex < <(cpu_secs "$BLKWISE" analyze "$WORK/synth.bwt" --format csv)
	read -r t_one e_one rss_one < <(cpu_secs "$BLKWISE" analyze "$WORK/synth.bwt" --no-exact --format csv)
	rm -f "$WORK/synth.bwt"
	bt='{"status": "blktrace not installed"}'
	if command -v btt >/dev/null && command -v blkparse >/dev/null; then
		n=$(( SYNTH_IOS / 4 ))
		"$SYNTH" "$n" 16 "$WORK/synth" blktrace
		read -r t_bw e_bw _ < <(cpu_secs "$BLKWISE" analyze "$WORK/synth" --format csv)
		read -r t_bp e_bp _ < <(cd "$WORK" && cpu_secs blkparse -q -i synth -d synth.bin -O)
		# btt writes its *_fp.dat files into the current directory.
		read -r t_bt e_bt _ < <(cd "$WORK" && cpu_secs btt -i synth.bin)
		rm -f "$WORK"/*_fp.dat
		bt=$(jq -nc --argjson n "$n" --argjson a "$t_bw" --argjson p "$t_bp" --argjson b "$t_bt" \
			'{status: "ok", requests: $n, analyze_cpu_s: $a, blkparse_cpu_s: $p, btt_cpu_s: $b,
			  speedup_vs_btt: ($b / $a), speedup_vs_blkparse_btt: (($p + $b) / $a)}')
		rm -f "$WORK"/synth.blktrace.* "$WORK/synth.bin"
	fi
	REC_JSON=$(jq -nc --argjson rec "$rec" --argjson n "$(( SYNTH_IOS * 3 ))" \
		--argjson tex "$t_ex" --argjson tone "$t_one" --argjson rss "$rss_ex" --argjson bt "$bt" \
		--argjson tm "$TARGET_ANALYZE_MEPS" --argjson tb "$TARGET_BTT" '
		{status: "ok", recording: $rec,
		 analyze: {events: $n, exact_cpu_s: $tex, one_pass_cpu_s: $tone, rss_kb: $rss,
			   events_per_s_exact: ($n / $tex), events_per_s_one_pass: ($n / $tone),
			   target_meps: $tm, pass: ($n / $tex >= $tm * 1e6)},
		 blktrace: ($bt | if .status == "ok" then . + {target: $tb, pass: (.speedup_vs_btt >= $tb)}
			  else . end)}')
fi

# ---- report ---------------------------------------------------------------------
# shellcheck disable=SC2086 # one name a line
ORDER=$(printf '%s\n' $ALL | jq -R . | jq -sc .)
SUMMARY=$(jq -s --argjson mem "$MEM_JSON" --argjson order "$ORDER" \
	--argjson timing "$TIMING_JSON" --argjson ceiling "$CEIL_JSON" --argjson ttp "$TARGET_TIMING_PCT" \
	--argjson tceil "$TARGET_CEIL_SHARE" --argjson tcp "$TARGET_CEIL_PCT" \
	--argjson rounds "$ROUNDS" --argjson runtime "$RUNTIME" --argjson srounds "$SCALE_ROUNDS" --arg sconfigs "$SCALE_CONFIGS" \
	--argjson cpu_pin "$FIO_CPU" --argjson tc "$TARGET_CLOCK" --argjson tp "$TARGET_PEER" \
	--argjson tl "$TARGET_LIGHT" --argjson td "$TARGET_DEFAULT" --argjson tk "$TARGET_IOPS_KEPT" \
	--argjson ts "$TARGET_STREAMS" --argjson tsc "$TARGET_STREAMS_CORE" --argjson tr "$TARGET_RECORD" \
	--arg kernel "$(uname -r)" --arg cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
	--argjson blkwise "$BLKWISE_VERSION" --argjson ncpu "$(nproc)" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--argjson cross "[$CROSS_BEFORE, $CROSS_AFTER]" '
	def median: sort | length as $n
		| if $n == 0 then null elif $n % 2 == 1 then .[($n - 1) / 2]
		  else (.[$n / 2 - 1] + .[$n / 2]) / 2 end;
	def spread: map(select(. != null)) | if length == 0 then null
		else {median: median, min: min, max: max} end;
	def rank: . as $c | ($order | index($c)) // 99;
	# IOPS relative to the untraced run just before, in the same section and
	# shape: in the main comparison every traced run has one of its own.
	(reduce .[] as $x ({last: {}, out: []};
		"\($x.section)/\($x.shape)" as $k
		| if $x.config == "none" then (if $x.status == "ok" then .last[$k] = $x.iops else . end) | .out += [$x]
		  elif $x.status == "ok" then
			.out += [$x + {rel_iops: (.last[$k] as $b | if $b then $x.iops / $b else null end)}]
		  else .out += [$x] end) | .out) as $runs
	| ($runs | group_by([.section, .shape, .config])
	   | map(. as $g | $g[0] | {section, shape, config,
		status: (if ($g | map(select(.status == "ok")) | length) > 0 then "ok" else $g[0].status end),
		runs: ($g | map(select(.status == "ok")) | length),
		ns_per_io: ($g | map(.ns_per_io) | spread),
		ev_per_io: ($g | map(.ev_per_io) | spread),
		iops: ($g | map(.iops) | spread),
		rel_iops: ($g | map(.rel_iops) | spread),
		other_ios_per_io: ($g | map(select(.status == "ok") | .other_ios / .ios) | spread),
		foreign_ns_per_io: ($g | map(.foreign_ns_per_io) | spread),
		foreign_progs: ([$g[] | .foreign_progs // [] | .[]] | unique),
		map_bytes: ($g | map(.map_bytes) | spread),
		crossing_ns: ($g | map(select(.status == "ok") | .crossing_ns) | spread),
		rss_kb: ($g | map(.rss_kb) | spread),
		progs: ([$g[] | select(.status == "ok") | .progs[]] | group_by(.name)
		  | map({name: .[0].name,
			ns_per_event: (map(select(.cnt > 0) | .rt / .cnt) | spread),
			ns_per_io: (map(.ns_per_io) | spread),
			ev_per_io: (map(.ev_per_io) | spread)}))})
	   | sort_by(.config | rank)) as $agg
	| def get($sec; $sh; $c): $agg | map(select(.section == $sec and .shape == $sh and .config == $c))[0];
	  def ratio($a; $b): if ($a.ns_per_io.median // null) != null and ($b.ns_per_io.median // null) != null
		and $b.ns_per_io.median > 0 then $a.ns_per_io.median / $b.ns_per_io.median else null end;
	($agg | map(select(.section == "scale"))
	 + ($agg | map(select(.section == "main" and (.config | IN($sconfigs | splits(" +")))) | .section = "scale"))) as $scale
	| {date: $date, kernel: $kernel, cpu: $cpu, ncpu: $ncpu, blkwise: $blkwise,
	 fio: {ioengine: "io_uring", rw: "randread", bs: "4k", iodepth: 32, runtime_s: $runtime,
	       cpus_allowed: $cpu_pin},
	 rounds: $rounds, scale_rounds: $srounds,
	 main: ($agg | map(select(.section == "main"))),
	 scaling: ($scale | map(.shape) | unique
		| sort_by(if . == "qd1" then 0 elif . == "qd32" then 1 elif . == "qd128" then 2
			  elif . == "qd32x2" then 3 else 4 end)
		| map(. as $sh | ($scale | map(select(.shape == $sh))) as $s
		  | {shape: $sh,
		     iodepth: (if $sh == "qd1" then 1 elif $sh == "qd128" then 128 else 32 end),
		     completions: (if $sh == "qd32same" then "submitting CPU"
				   elif $sh == "qd32other" then "another CPU" else "any" end),
		     jobs: (if $sh == "qd32x2" then 2 else 1 end),
		     configs: $s,
		     blkwise_over_floor: ratio($s | map(select(.config == "blkwise"))[0];
					       $s | map(select(.config == "floor"))[0]),
		     blkwise_over_floor_rqfields: ratio($s | map(select(.config == "blkwise"))[0];
						     $s | map(select(.config == "floor_rqfields"))[0])})),
	 targets: [
		{what: "light tier (blkwise stat --exact-period 0) / floor_rqfields", ratio: ratio(get("main"; "qd32"; "blkwise"); get("main"; "qd32"; "floor_rqfields")), max: $tl},
		{what: "default (blkwise_default: stat as it ships) / floor_rqfields", ratio: ratio(get("main"; "qd32"; "blkwise_default"); get("main"; "qd32"; "floor_rqfields")), max: $td},
		{what: "the lean issue stamp (floor_rqissue: completion and an issue program timing every request) / floor_rqfields", ratio: ratio(get("main"; "qd32"; "floor_rqissue"); get("main"; "qd32"; "floor_rqfields")), max: null},
		{what: "light tier / floor_rqfields, completions on the submitting CPU (qd32same)", ratio: ratio(get("scale"; "qd32same"; "blkwise"); get("scale"; "qd32same"; "floor_rqfields")), max: null},
		{what: "light tier / floor_rqfields, completions on another CPU (qd32other)", ratio: ratio(get("scale"; "qd32other"; "blkwise"); get("scale"; "qd32other"; "floor_rqfields")), max: null},
		{what: "IOPS kept under the default as shipped (blkwise_shipped / its paired untraced run, median; accounting off)", ratio: ((get("iops"; "qd32"; "blkwise_shipped") // {}).rel_iops.median // null), max: null, min: $tk},
		{what: "IOPS kept under floor_rqfields (accounting off)", ratio: ((get("iops"; "qd32"; "floor_rqfields") // {}).rel_iops.median // null), max: null},
		{what: "IOPS kept under the light tier alone (accounting off)", ratio: ((get("iops"; "qd32"; "blkwise") // {}).rel_iops.median // null), max: null},
		{what: "IOPS kept under blkwise_default, 20 slices a second (accounting on: the runs above)", ratio: ((get("main"; "qd32"; "blkwise_default") // {}).rel_iops.median // null), max: null},
		{what: "IOPS kept under the light tier alone, BPF accounting on", ratio: ((get("main"; "qd32"; "blkwise") // {}).rel_iops.median // null), max: null},
		{what: "IOPS kept under --exact (blkwise_exact / its paired untraced run, median)", ratio: ((get("main"; "qd32"; "blkwise_exact") // {}).rel_iops.median // null), max: null},
		{what: "IOPS kept under floor_rqfields, BPF accounting on", ratio: ((get("main"; "qd32"; "floor_rqfields") // {}).rel_iops.median // null), max: null},
		{what: "--exact (blkwise_exact) / floor_exact", ratio: ratio(get("main"; "qd32"; "blkwise_exact"); get("main"; "qd32"; "floor_exact")), max: null},
		{what: "--exact (blkwise_exact) / floor_rqfields", ratio: ratio(get("main"; "qd32"; "blkwise_exact"); get("main"; "qd32"; "floor_rqfields")), max: null},
		{what: "floor_rqfields / floor (the completion-only design over two empty programs)", ratio: ratio(get("main"; "qd32"; "floor_rqfields"); get("main"; "qd32"; "floor")), max: null},
		{what: "blkwise_streams / floor_streams_clock", ratio: ratio(get("main"; "qd32"; "blkwise_streams"); get("main"; "qd32"; "floor_streams_clock")), max: $ts},
		{what: "blkwise_streams / blkwise_exact (the exact tier --streams runs on)", ratio: ratio(get("main"; "qd32"; "blkwise_streams"); get("main"; "qd32"; "blkwise_exact")), max: $tsc},
		{what: "export --cgroups (light tier and the cgroups program) / blkwise (light tier)", ratio: ratio(get("main"; "qd32"; "export_cgroups"); get("main"; "qd32"; "blkwise")), max: null},
		{what: "record / floor_record", ratio: ratio(get("main"; "qd32"; "record"); get("main"; "qd32"; "floor_record")), max: $tr},
		{what: "blkwise / biolatency", ratio: ratio(get("main"; "qd32"; "blkwise"); get("main"; "qd32"; "biolatency")), max: $tp},
		{what: "blkwise / bpftrace", ratio: ratio(get("main"; "qd32"; "blkwise"); get("main"; "qd32"; "bpftrace")), max: null},
		{what: "floor_clock / floor (two clock reads, nothing else)", ratio: ratio(get("main"; "qd32"; "floor_clock"); get("main"; "qd32"; "floor")), max: null},
		{what: "floor_exact / floor_clock (the cheapest exact design: entry and in-flight word added)", ratio: ratio(get("main"; "qd32"; "floor_exact"); get("main"; "qd32"; "floor_clock")), max: null},
		{what: "blkwise / floor_exact", ratio: ratio(get("main"; "qd32"; "blkwise"); get("main"; "qd32"; "floor_exact")), max: null},
		{what: "blkwise / baseline (BENCH_BASELINE)", ratio: ratio(get("main"; "qd32"; "blkwise"); get("main"; "qd32"; "baseline")), max: null},
		{what: "blkwise_streams / baseline_streams", ratio: ratio(get("main"; "qd32"; "blkwise_streams"); get("main"; "qd32"; "baseline_streams")), max: null},
		{what: "record / baseline_record", ratio: ratio(get("main"; "qd32"; "record"); get("main"; "qd32"; "baseline_record")), max: null}
	 ] | map(. + {pass: (if .ratio == null then null elif .max != null then .ratio <= .max
			     elif .min != null then .ratio >= .min else null end)}),
	 profile: [[["blkwise", "prof_body", "everything after finding the device"],
		    ["blkwise", "prof_clock_d", "the clock read at issue"],
		    ["blkwise", "prof_atomic", "atomics on the in-flight word"],
		    ["blkwise", "prof_hist", "histograms"],
		    ["blkwise", "prof_flight", "the in-flight word (busy, solo, depth)"],
		    ["blkwise", "prof_table", "the per-request table"],
		    ["blkwise", "prof_sums", "the per-op sums and histograms at C"],
		    ["blkwise", "prof_stall", "dispatch stalls at D and C (nothing waits here: one load each)"],
		    ["blkwise_streams", "prof_s_body", "streams: everything after Q finds the device (Q and C)"],
		    ["blkwise_streams", "prof_s_clock", "streams: the clock read at Q"],
		    ["blkwise_streams", "prof_s_leave", "streams: C taking the request out of its stream (entry found and freed either way)"],
		    ["blkwise_streams", "prof_s_stream", "streams: the stream at Q and C (lookup, enter, leave)"],
		    ["record", "prof_r_body", "record: everything after finding the device"],
		    ["record", "prof_r_q", "record: the Q event"],
		    ["record", "prof_r_comm", "record: process names"]][] as [$base, $c, $what]
		  | get("main"; "qd32"; $c) as $v | select($v != null and $v.status == "ok")
		  | {config: $c, base: $base, part: $what,
		     ns_per_io: ((get("main"; "qd32"; $base) // {}).ns_per_io.median as $b
				 | if $b == null then null else $b - $v.ns_per_io.median end)}],
	 core_by_round: ([$runs[] | select(.section == "main" and .status == "ok"
			      and (.config == "blkwise" or .config == "floor_clock"))]
		| group_by(.round)
		| map((map(select(.config == "blkwise"))[0]) as $b | (map(select(.config == "floor_clock"))[0]) as $f
		      | select($b and $f and $f.ns_per_io > 0)
		      | {round: $b.round, ratio: ($b.ns_per_io / $f.ns_per_io),
			 crossing_ns: ([$b.crossing_ns, $f.crossing_ns] | map(select(. != null))
				       | if length > 0 then max else null end)})),
	 crossing: (($cross | map(select(.status == "ok"))) as $ok
		| if ($ok | length) == 0 then {status: $cross[0].status} else
		  ($ok | map(.median) | add / length) as $x
		  | ((get("main"; "qd32"; "floor_exact") // {}).ns_per_io.median) as $fe
		  | ((get("main"; "qd32"; "floor_clock") // {}).ns_per_io.median) as $fc
		  | {status: "ok", cpus: $ok[0].cpus, before: $cross[0], after: $cross[1], ns: $x,
		     floor_clock: $fc, floor_exact: $fe, target: $tc,
		     exact_extra_crossings: (if $fe and $fc then ($fe - $fc) / $x else null end),
		     bound_ns: (if $fc then ($tc - 1) * $fc else null end),
		     bound_crossings: (if $fc then ($tc - 1) * $fc / $x else null end)} end),
	 memory: $mem,
	 timing: ($timing | map(. as $t | {design, load, iops, ftrace_overrun,
		timing_source: .blkwise.timing_source, timing_share: .blkwise.timing_share,
		ftrace_svc_mean_ms: .ftrace.svc_mean_ms, ftrace_queue_mean_ms: .ftrace.queue_mean_ms,
		err_pct: ({mean: "svc_mean_ms", p50: "svc_p50_ms", p99: "svc_p99_ms", queue: "queue_mean_ms"}
			| with_entries(.value as $k | .value = (if ($t.blkwise[$k] // null) == null or ($t.ftrace[$k] // 0) == 0
				then null else ($t.blkwise[$k] / $t.ftrace[$k] - 1) * 100 end)))}
		| . + {within: ([.err_pct.mean, .err_pct.p50, .err_pct.p99] | all(. != null and fabs <= $ttp))})),
	 frontier: [[["light", "blkwise"], ["default", "blkwise_default"], ["exact", "blkwise_exact"]][] as [$d, $c]
		| {design: $d, config: $c, cost_over_floor_rqfields: ratio(get("main"; "qd32"; $c); get("main"; "qd32"; "floor_rqfields")),
		   errors: ($timing | map(select(.design == $d)) | map({load, mean: ((.blkwise.svc_mean_ms / .ftrace.svc_mean_ms - 1) * 100),
			p50: ((.blkwise.svc_p50_ms / .ftrace.svc_p50_ms - 1) * 100), p99: ((.blkwise.svc_p99_ms / .ftrace.svc_p99_ms - 1) * 100),
			queue: (if .blkwise.queue_mean_ms and .ftrace.queue_mean_ms then (.blkwise.queue_mean_ms / .ftrace.queue_mean_ms - 1) * 100 else null end)}))}],
	 ceiling: ($ceiling | (map(select(.max_cpu_pct == null))[0]) as $u
		| map(. + {counts_exact: (.reads == .reads_diskstats),
			p50_vs_unbounded_pct: (if $u and $u.svc_p50_ms then (.svc_p50_ms / $u.svc_p50_ms - 1) * 100 else null end),
			p99_vs_unbounded_pct: (if $u and $u.svc_p99_ms then (.svc_p99_ms / $u.svc_p99_ms - 1) * 100 else null end)}
		  | . + {pass: (if .max_cpu_pct != 0.5 then null else
			(.cpu_share <= $tceil and .counts_exact and (.p50_vs_unbounded_pct | fabs) <= $tcp
			 and (.p99_vs_unbounded_pct | fabs) <= $tcp) end)})),
	 runs: $runs}' "$RESULTS") || die "summarising the results failed" "the raw runs are in $RESULTS"
printf '%s\n' "$SUMMARY" >"$JSON_OUT"

# shellcheck disable=SC2016 # jq source
JQ_FMT='
	def r0: if . == null then "-" else (. + 0.5 | floor | tostring) end;
	def r1: if . == null then "-" else (. * 10 + 0.5 | floor / 10 | tostring) end;
	def r2: if . == null then "-" else (. * 100 + 0.5 | floor / 100 | tostring) end;
	def pct: if . == null then "-" else (. * 1000 + 0.5 | floor / 10 | tostring) + "%" end;
	def kilo: if . == null then "-" else (. / 100 + 0.5 | floor / 10 | tostring) + "k" end;
	def sp(f): if . == null then "-" else "\(.median | f) (\(.min | f)..\(.max | f))" end;
	def verdict: if .pass == null then "n/a" elif .pass then "PASS" else "MISS" end;
	def main_rows:
		(["config", "ns/IO", "events/IO", "IOPS", "IOPS vs none", "maps KiB", "noise: other I/O", "other BPF ns/IO", "crossing ns"]),
		(.main[] | if .status != "ok" then [.config, .status, "", "", "", "", "", "", ""] else
		 [.config, (.ns_per_io | sp(r0)), (.ev_per_io.median | r2), (.iops.median | kilo),
		  (.rel_iops | sp(pct)), (.map_bytes.median | if . then . / 1024 | r0 else "-" end),
		  (.other_ios_per_io.median | pct), (.foreign_ns_per_io.median | r0), (.crossing_ns | sp(r0))] end);
	def noise_lines:
		[.main[], .scaling[].configs[] | select(.status == "ok")] as $g
		| ([.runs[] | select(.status == "ok" and .foreign_ns_per_io > 5)] | length) as $nf
		| ([.runs[] | select(.status == "ok")] | length) as $n
		| if $nf > 0 then "warning: in \($nf) of \($n) runs other BPF programs ran on the I/O path ("
			+ ([.runs[] | .foreign_progs // [] | .[]] | unique | join(" "))
			+ "): they slow the tracer under test and take CPU from fio; rerun on a quiet machine"
		  else empty end;
	def prog_rows:
		(["program", "ns/event", "events/IO", "ns/IO"]),
		(.main[] | select(.status == "ok") | .config as $c
		 | .progs[] | select(.ev_per_io.median >= 0.01)
		 | ["\($c)/\(.name)", (.ns_per_event.median | r0), (.ev_per_io.median | r2),
		    (.ns_per_io.median | r0)]);
	def profile_lines:
		if (.profile | length) > 0 then
		  "profile (the configuration minus its variant without the part, ns/IO; noise as above):",
		  (.profile[] | "  \(.base): \(.part): \(.ns_per_io | r0)")
		else empty end;
	def target_lines:
		.targets[] | "\(.what): " + (if .ratio == null then "n/a (not measured)" else "\(.ratio | r2)x"
		+ (if .max then " (target <= \(.max)x): " + verdict elif .min then " (target >= \(.min)): " + verdict else "" end) end)
		+ (if .note then "; \(.note)" else "" end);
	def crossing_line:
		.crossing | if .status != "ok" then "a cache line crossing between CPUs: \(.status)" else
		"a cache line crossing from CPU \(.cpus[0]) to CPU \(.cpus[1]) (build/bench/lineping): \(.ns | r0) ns"
		+ " (\(.before.median | r0) before the runs, \(.after.median | r0) after);"
		+ (if .exact_extra_crossings then "; floor_exact spends \(.floor_exact - .floor_clock | r0) ns/IO more than"
		   + " floor_clock, \(.exact_extra_crossings | r1) crossings: where completions run on the other CPU,"
		   + " the issue time and the in-flight word cross with every request" else "" end) end;
	def core_rounds_line:
		if (.core_by_round | length) > 1 then
		  "blkwise / floor_clock by round (the slower crossing measured around the two runs): "
		  + ([.core_by_round[] | "\(.ratio | r2)x (\(.crossing_ns | r0) ns)"] | join(", "))
		else empty end;
	def scale_rows:
		(["config"] + [.scaling[] | "\(.shape)"]),
		(.scaling as $S | [$S[].configs[].config] as $have
		 | ["none", "floor", "floor_rqfields", "floor_clock", "blkwise", "blkwise_default", "blkwise_exact", "baseline"] + ($have | unique)
		 | reduce .[] as $x ([]; if index([$x]) == null and ($have | index([$x])) != null
					    then . + [$x] else . end)
		 | .[] as $c
		 | [$c] + [$S[] | (.configs | map(select(.config == $c))[0])
			| if . == null then "-" elif .status != "ok" then .status
			  elif $c == "none" then "\(.iops.median | kilo) IOPS"
			  else "\(.ns_per_io.median | r0) ns (\(.rel_iops.median | pct))" end]),
		(["blkwise/floor"] + [.scaling[] | .blkwise_over_floor | if . then "\(r2)x" else "-" end]),
		(["blkwise/floor_rqfields"] + [.scaling[] | .blkwise_over_floor_rqfields | if . then "\(r2)x" else "-" end]);
	def mem_line:
		.memory | if .status != "ok" then "memory (blkwise, 8 devices): \(.status)" else
		"memory (\(.command)): BPF maps \(.map_mib | r1) MiB in \(.maps) maps (target <= \(.target_map_mib) MiB): \(if .map_pass then "PASS" else "MISS" end); RSS \(.rss_mib | r1) MiB, peak \(.rss_peak_kb / 1024 | r1) MiB (target <= \(.target_rss_mib) MiB): \(if .rss_pass then "PASS" else "MISS" end)" end;
	def frontier_rows:
		(["design", "cost / floor_rqfields", "qd1 D2C mean, p50, p99 vs ftrace", "qd1 queue", "qd32 batched D2C mean, p50, p99", "qd32 batched queue"]),
		(.frontier[] | (.errors | map({(.load): .}) | add // {}) as $e
		 | [.design, (.cost_over_floor_rqfields | if . then "\(r2)x" else "-" end),
		    ($e.qd1 | if . then "\(.mean | r1)%, \(.p50 | r1)%, \(.p99 | r1)%" else "-" end),
		    ($e.qd1.queue | if . then "\(r1)%" else "-" end),
		    ($e.qd32b8 | if . then "\(.mean | r1)%, \(.p50 | r1)%, \(.p99 | r1)%" else "-" end),
		    ($e.qd32b8.queue | if . then "\(r1)%" else "-" end)]);
	def ceiling_rows:
		(["--max-cpu", "CPU used (BPF + process)", "light tier ran", "IOPS kept", "reads = diskstats", "p50 vs unbounded", "p99 vs unbounded", "verdict"]),
		(.ceiling[] | [(.max_cpu_pct | if . then "\(.)%" else "none" end), (.cpu_share | pct), (.light_share | pct),
		  (.iops_kept | pct), (if .counts_exact then "yes" else "no (\(.reads) vs \(.reads_diskstats))" end),
		  (.p50_vs_unbounded_pct | if . then "\(r1)%" else "-" end), (.p99_vs_unbounded_pct | if . then "\(r1)%" else "-" end),
		  (if .pass == null then "" elif .pass then "PASS" else "MISS" end)]);
	def title:
		"\(.kernel), \(.ncpu) x \(.cpu), blkwise \(.blkwise.git // "not built"); fio io_uring randread 4k qd32 on CPU \(.fio.cpus_allowed), loop device on /dev/shm, \(.fio.runtime_s) s x \(.rounds) rounds; median (min..max)";
'
tsv_table() { column -t -s "$(printf '\t')"; }
{
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' "blkwise bench: " + title'
	echo
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' main_rows | @tsv' | tsv_table
	echo
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' prog_rows | @tsv' | tsv_table
	echo
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' target_lines'
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' crossing_line, core_rounds_line'
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' noise_lines'
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' profile_lines'
	echo
	echo "scaling: ns/IO (IOPS vs none), medians; qd32x2 = 2 jobs pinned to CPUs 0 and 1; qd32same and qd32other: completions on the submitting CPU, on another"
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' scale_rows | @tsv' | tsv_table
	echo
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' mem_line'
	echo
	echo "the frontier: each design's cost beside how far its service and queue time are from ftrace's (tools/bench/timing.sh)"
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' frontier_rows | @tsv' | tsv_table
	echo
	echo "the ceiling under qd32 (tools/bench/ceiling.sh; target: <= 0.6% of a CPU under --max-cpu 0.5, reads exact, p50 and p99 within 5%)"
	printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"' ceiling_rows | @tsv' | tsv_table
}
# The same as markdown, for docs/bench.md.
printf '%s\n' "$SUMMARY" | jq -r "$JQ_FMT"'
	def md: "| " + (map(tostring) | join(" | ")) + " |";
	def mdtable(rows): [rows] | (.[0] | md), (.[0] | map("---") | md), (.[1:][] | md);
	title, "", mdtable(main_rows), "", mdtable(prog_rows), "",
	(target_lines | "- " + .), (crossing_line, core_rounds_line | "- " + .), (noise_lines | "- " + .), (profile_lines | "- " + .), "", "Scaling, ns/IO (IOPS vs none):", "", mdtable(scale_rows), "",
	(mem_line | "- " + .), "", "The frontier:", "", mdtable(frontier_rows), "",
	"The ceiling under qd32:", "", mdtable(ceiling_rows)' >"$OUTDIR/bench.md"
# record and analyze: its own lines, here and in bench.md; its JSON next to bench.json.
REC_FMT='if .status != "ok" then "record/analyze: \(.status)" else
	"record (fio qd32, the record row above for ns/IO): \(.recording.events) events, \(.recording.bytes_per_event * 10 | round / 10) bytes/event, \(.recording.dropped) dropped",
	"analyze: \(.analyze.events) events in \(.analyze.exact_cpu_s) s CPU with exact percentiles (\(.analyze.events_per_s_exact / 1e6 * 10 | round / 10) M events/s, target >= \(.analyze.target_meps) M: \(if .analyze.pass then "PASS" else "MISS" end)), \(.analyze.one_pass_cpu_s) s in one pass (\(.analyze.events_per_s_one_pass / 1e6 * 10 | round / 10) M events/s), RSS \(.analyze.rss_kb / 1024 | round) MiB",
	(.blktrace | if .status != "ok" then "analyze vs btt: \(.status)" else
	"analyze vs btt on a \(.requests)-request blktrace capture: analyze \(.analyze_cpu_s) s, btt \(.btt_cpu_s) s (+ blkparse -d \(.blkparse_cpu_s) s): \(.speedup_vs_btt * 10 | round / 10)x btt (target >= \(.target)x: \(if .pass then "PASS" else "MISS" end)), \(.speedup_vs_blkparse_btt * 10 | round / 10)x blkparse + btt" end) end'
printf '%s\n' "$REC_JSON" >"$OUTDIR/record.json"
echo
printf '%s\n' "$REC_JSON" | jq -r "$REC_FMT"
printf '%s\n' "$REC_JSON" | jq -r "$REC_FMT" | sed 's/^/- /' >>"$OUTDIR/bench.md"
log "wrote $JSON_OUT and $OUTDIR/bench.md in $(( SECONDS / 60 )) min $(( SECONDS % 60 )) s"
# A full run writes the manual's tables and the ratios its prose quotes
# (docs/results/bench.json, tools/bench-results.py); a partial one does not.
if [ "${BW_DOCS:-1}" != 0 ] && [ -z "${BENCH_CONFIGS:-}${BENCH_QUICK:-}" ]; then
	python3 tools/bench-results.py "$JSON_OUT" "$OUTDIR/record.json" ||
		log "docs/results/bench.json: the manual quotes what this run did not give (above)"
fi
