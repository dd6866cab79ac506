# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The seed runs' measurements, shared by tools/vm/seeds.sh (the tables of
# docs/seeds.md) and tests/test_seeds.sh (their assertions), run in a
# vmtest guest (virtio-blk seed disks from VM_SEED_DISK, scsi_debug):
#
#   seed001_run DEV NOMERGES RW BS SECS    one fio run on a virtio-blk disk
#   seed002_run MAXQ SCHED SECS            fio on every LUN of a scsi_debug host
#
# Each prints tab-separated lines (the fields are named in SEED001_FIELDS and
# SEED002_FIELDS); a figure that is not measured is "-".  They need root,
# fio and jq, and SEED_BIN (blkwise) and SEED_TMP (a directory) set.

# shellcheck disable=SC2034 # read by the scripts that source this file
SEED001_FIELDS="dev nomerges rw bs fio_iops ds_reads bw_reads ds_merges bw_merges seg_per_rq hist_total seg_max_lo max_segments indirect_share virtio_adds ring_seg_per_rq missed"
# shellcheck disable=SC2034
SEED002_FIELDS="max_queue sched dev fio_iops bw_iops depth_mean depth_max stall_s stall_share stalls"

# seed_field LINE NAME FIELDS: the named field of a tab-separated line.
seed_field() {
	local i=1 f
	for f in $3; do
		[ "$f" = "$2" ] && { printf '%s\n' "$1" | cut -f "$i"; return; }
		i=$((i + 1))
	done
	return 1
}

# seed_disk SERIAL: the virtio-blk disk with that serial (reading serial
# sends the device a request: done before any measurement), or fails.
seed_disk() {
	local d
	for d in /sys/block/vd*; do
		[ -e "$d/serial" ] || continue
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

# seed_diskstats DEV: reads completed, read merges, in flight.
seed_diskstats() { awk -v d="$1" '$3 == d { print $4, $5, $12 }' /proc/diskstats; }

# seed_settle DEV...: returns once nothing is in flight and the counts
# stopped moving for 0.3 s on every DEV.
seed_settle() {
	local a b d
	for _ in $(seq 60); do
		a=$(for d in "$@"; do seed_diskstats "$d"; done)
		sleep 0.3
		b=$(for d in "$@"; do seed_diskstats "$d"; done)
		[ "$a" = "$b" ] && echo "$b" | awk '$3 != 0 { busy = 1 } END { exit busy }' && return 0
	done
	return 1
}

# seed_stat_start OUT ARGS...: blkwise stat --json --exact (the seeds
# read depth and dispatch stalls, which the light tier does not give),
# attached when this returns; SEED_STAT_PID.
seed_stat_start() {
	local out=$1
	shift
	"$SEED_BIN" stat --json --no-state --exact -i 1 "$@" >"$out" 2>"$out.err" &
	SEED_STAT_PID=$!
	for _ in $(seq 300); do
		grep -q 'Ctrl-C to stop' "$out.err" 2>/dev/null && return 0
		kill -0 "$SEED_STAT_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "seeds: blkwise stat did not start: $(head -n 3 "$out.err")" >&2
	return 1
}

# seed_stat_stop: one more interval (the last completions are in it), then stop.
seed_stat_stop() {
	sleep 1.2
	kill -INT "$SEED_STAT_PID" 2>/dev/null
	wait "$SEED_STAT_PID"
}

# seed_jq FILE DEV EXPR: EXPR over the array of DEV's intervals.
seed_jq() {
	jq -s -r --arg d "$2" "[.[] | .devices[]? | select(.device == \$d)] | $3" "$1"
}

# seed_virtio_args: --virtio where this blkwise has it (else nothing).
seed_virtio_args() {
	"$SEED_BIN" stat --help 2>/dev/null | grep -q -- '--virtio' && echo --virtio
}

seed001_run() {
	local dev=$1 nm=$2 rw=$3 bs=$4 secs=$5 out=$SEED_TMP/s1-$1-$2-$3-$4 s0 s1 iops q
	echo "$nm" >/sys/block/"$dev"/queue/nomerges
	seed_settle "$dev"
	# shellcheck disable=SC2046
	seed_stat_start "$out.json" -d "$dev" $(seed_virtio_args) || return 1
	s0=$(seed_diskstats "$dev")
	# Batches of 16: io_submit plugs them, and sequential ones merge there.
	# Buffers in SysV shared memory, of 4 KiB pages: fio's 2 MiB malloc can
	# land in one transparent huge page (the VM tier's kernels enable them
	# always), and a request's pages would then be one segment.
	fio --name=seed001 --filename=/dev/"$dev" --direct=1 --ioengine=libaio --iodepth=16 --iomem=shm \
		--iodepth_batch_submit=16 --iodepth_batch_complete_min=16 --rw="$rw" --bs="$bs" --size=512m --time_based \
		--runtime="$secs" --randrepeat=1 --output-format=json --output="$out.fio" >/dev/null ||
		{ kill "$SEED_STAT_PID"; return 1; }
	seed_settle "$dev"
	s1=$(seed_diskstats "$dev")
	seed_stat_stop || return 1
	iops=$(jq -r '.jobs[0].read.iops | floor' "$out.fio")
	q='(map(.ops.read.ios) | add) as $r | (map(.merges) | add) as $m
		| (map(.segments // 0) | add) as $s | (map(.seg_hist[][2]) | add // 0) as $h
		| (map(.seg_hist[][0]) | max // 0) as $x
		| (map(.virtio_indirect // empty) | add) as $vi | (map(.virtio_direct // empty) | add) as $vd
		| (map(.virtio_descs // empty) | add) as $vc
		| (last | .lost_completions_total + .inflight) as $lost
		| [$r, $m, (if $r > 0 then ($s / $r * 100 | round / 100) else "-" end), $h, $x,
		   (if $vi == null then "-" elif $vi + $vd > 0 then ($vi / ($vi + $vd) * 1000 | round / 1000) else "-" end),
		   (if $vi == null then "-" else $vi + $vd end),
		   (if $vi == null or $vi + $vd == 0 then "-" else (($vc - 2 * ($vi + $vd)) / ($vi + $vd) * 100 | round / 100) end),
		   $lost]
		| map(tostring) | join(" ")'
	# shellcheck disable=SC2046
	set -- $(seed_jq "$out.json" "$dev" "$q")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dev" "$nm" "$rw" "$bs" "$iops" \
		"$(( ${s1%% *} - ${s0%% *} ))" "$1" \
		"$(( $(echo "$s1" | cut -d' ' -f2) - $(echo "$s0" | cut -d' ' -f2) ))" "$2" "$3" "$4" "$5" \
		"$(cat /sys/block/"$dev"/queue/max_segments)" "$6" "$7" "$8" "$9"
}

# seed_scsi_disks: the scsi_debug disks, by LUN.
seed_scsi_disks() {
	local h
	for h in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
		[ -e "$h" ] && echo "$(basename "$(dirname "$(dirname "$h")")") $(basename "$h")"
	done | sort -t: -k4n | awk '{ print $2 }'
}

seed002_run() {
	local maxq=$1 sched=$2 secs=$3 out=$SEED_TMP/s2-$1-$2 devs=() d i args=() q
	modprobe scsi_debug add_host=1 num_tgts=1 max_luns=4 max_queue="$maxq" dev_size_mb=64 \
		ndelay=1000000 || return 1
	for _ in $(seq 50); do
		mapfile -t devs < <(seed_scsi_disks)
		[ "${#devs[@]}" -ge 4 ] && [ -b /dev/"${devs[3]}" ] && break
		sleep 0.1
	done
	[ "${#devs[@]}" -ge 4 ] || { echo "seeds: scsi_debug made ${#devs[@]} disks, not 4" >&2; seed_scsi_unload; return 1; }
	for d in "${devs[@]}"; do
		echo "$sched" >/sys/block/"$d"/queue/scheduler || { seed_scsi_unload; return 1; }
		args+=(-d "$d")
	done
	seed_settle "${devs[@]}"
	seed_stat_start "$out.json" "${args[@]}" || { seed_scsi_unload; return 1; }
	args=()
	for d in "${devs[@]}"; do args+=(--name="$d" --filename=/dev/"$d"); done
	fio --direct=1 --ioengine=libaio --iodepth=16 --rw=randread --bs=4k --time_based \
		--runtime="$secs" --randrepeat=0 --output-format=json --output="$out.fio" "${args[@]}" >/dev/null
	seed_settle "${devs[@]}"
	seed_stat_stop
	# The intervals with reads in them, less the first and last (partial).
	q='[.[] | select(.ops.read.ios > 0)] | .[1:-1] as $in
		| def mean(f): if ($in | length) > 0 then ($in | map(f) | add / length) else null end;
		def fmt(p): if . == null then "-" else (. * p | round / p | tostring) end;
		[(mean(.reads_per_s) | fmt(1)), (mean(.depth_mean_busy) | fmt(100)),
		 ($in | map(.depth_max) | max | fmt(1)),
		 (if ($in | length) > 0 and ($in[0] | has("dispatch_stall_s")) then
			($in | map(.dispatch_stall_s) | add | fmt(1000)),
			(mean(.dispatch_stall_share) | fmt(1000)),
			($in | map(.dispatch_stalls) | add | fmt(1))
		  else "-", "-", "-" end)] | join(" ")'
	i=0
	for d in "${devs[@]}"; do
		# shellcheck disable=SC2046
		set -- $(seed_jq "$out.json" "$d" "$q")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$maxq" "$sched" "$d" \
			"$(jq -r --arg d "$d" '.jobs[] | select(.jobname == $d) | .read.iops | round' "$out.fio")" \
			"$1" "$2" "$3" "$4" "$5" "$6"
		i=$((i + 1))
	done
	seed_scsi_unload
}

seed_scsi_unload() {
	for _ in $(seq 50); do
		modprobe -r scsi_debug 2>/dev/null && return 0
		sleep 0.2
	done
	echo "seeds: cannot unload scsi_debug" >&2
	return 1
}
