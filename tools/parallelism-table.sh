#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One table: what iostat -x says about emulated disks of known parallelism,
# next to the fixture's own truth and blkwise's P_eff, for the same runs.
#
#   tools/parallelism-table.sh [--warm S] [--deep S] [--depth N] [--quick]
#
# For each fixture setting (tools/fakedisk: dispatch=any P = 1, 2, 4, 8;
# RAID-0 stripe P = 4; a seek-heavy single spindle), on a fresh device:
#   1. blkwise stat --exact --json watches it from the start (the exact tier
#      throughout: P_eff every interval, not the default's sampled one);
#   2. fio randread 4k iodepth 1 for --warm s, so blkwise learns S1;
#   3. at an interval boundary: reset the fixture's counters, then fio
#      randread 4k iodepth --depth (16) for --deep s, io_uring, direct;
#      iostat -x runs over the middle of that run (it starts 0.3 s after
#      fio, and only reports that ended while fio ran are kept).
# Row: P (configured), fixture truth = mean busy servers over the deep run
# (sum spindle_busy_ns / busy_ns), blkwise P_eff (median of the intervals
# written while the deep run ran) and class, iostat's %util and aqu-sz
# (means over its reports), fio's IOPS.  Markdown on stdout, JSON in
# build/parallelism-table.json.  Needs root, fio, jq, iostat (sysstat),
# FUSE, and blkwise and the fixture built (make && make fixture).  Run
# with the defaults, it writes the table into the manual too
# (docs/results/parallelism.json, tools/docgen.py); BW_DOCS=0 does not.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
fakedisk=$root/tools/fakedisk.sh
bin=$root/blkwise
warm=3
deep=6
depth=16
json_out=$root/build/parallelism-table.json

# name|fixture options
rows=(
	"any P=1|dispatch=any,parallel=1,service_us=2000"
	"any P=2|dispatch=any,parallel=2,service_us=2000"
	"any P=4|dispatch=any,parallel=4,service_us=2000"
	"any P=8|dispatch=any,parallel=8,service_us=2000"
	"stripe P=4 (RAID-0)|dispatch=stripe,parallel=4,service_us=2000"
	"seeky P=1 (1 ms + seek)|dispatch=stripe,parallel=1,service_us=1000,seek_us_per_gib=3000"
)

die() {
	echo "parallelism-table: $*" >&2
	exit 1
}

docs=${BW_DOCS:-1}
[ $# -eq 0 ] || docs=0
while [ $# -gt 0 ]; do
	case $1 in
	--warm) warm=$2; shift 2 ;;
	--deep) deep=$2; shift 2 ;;
	--depth) depth=$2; shift 2 ;;
	--quick) warm=2; deep=4; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
[ "$deep" -ge 3 ] || die "--deep must be >= 3 s (blkwise needs 3 s of evidence for a class)"

[ "$(id -u)" -eq 0 ] || die "needs root"
for c in fio jq iostat losetup fusermount3; do
	command -v "$c" >/dev/null || die "$c not installed"
done
[ -x "$bin" ] || die "blkwise not built: make"
make -s -C "$root/tools/fakedisk" >&2 || die "cannot build the fixture: make fixture"

tmp=$(mktemp -d /tmp/blkwise-table.XXXXXX)
dir=
bw_pid=
io_pid=
fio_pid=

stop_pid() {
	[ -n "$1" ] || return 0
	kill -"${2:-TERM}" "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	stop_pid "$fio_pid"
	stop_pid "$io_pid"
	stop_pid "$bw_pid" INT
	fio_pid='' io_pid='' bw_pid=''
	[ -z "$dir" ] || "$fakedisk" down "$dir"
	dir=
}
trap 'cleanup; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

lines() { wc -l <"$1"; }

# Wait for blkwise's next interval line; print the new line count.
next_line() {
	local n0 n
	n0=$(lines "$1")
	for _ in $(seq 100); do
		n=$(lines "$1")
		[ "$n" -gt "$n0" ] && { echo "$n"; return 0; }
		sleep 0.05
	done
	return 1
}

# One row: name opts -> a JSON object on stdout.
measure() {
	local name=$1 opts=$2 dev out n0 n1
	dir=$tmp/fd
	dev=$("$fakedisk" up "$dir" "$opts") || return 1
	# One request per fio I/O: two random 4k reads can be adjacent.
	echo 2 >"/sys/block/$dev/queue/nomerges"
	out=$tmp/bw.json
	"$bin" stat --exact --no-state -d "$dev" -i 1 --json >"$out" 2>"$out.err" &
	bw_pid=$!
	for _ in $(seq 100); do
		grep -q "Ctrl-C to stop" "$out.err" && break
		kill -0 "$bw_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "Ctrl-C to stop" "$out.err" || { cat "$out.err" >&2; return 1; }

	fio --name=warm --filename="/dev/$dev" --direct=1 --ioengine=io_uring \
		--rw=randread --bs=4k --iodepth=1 --time_based --runtime="$warm" \
		--output-format=json --output="$tmp/warm.json" >/dev/null || return 1
	# Start the deep run at an interval boundary so no interval mixes both.
	n0=$(next_line "$out") || return 1
	echo 1 >"$dir/reset"
	fio --name=deep --filename="/dev/$dev" --direct=1 --ioengine=io_uring \
		--rw=randread --bs=4k --iodepth="$depth" --time_based --runtime="$deep" \
		--output-format=json --output="$tmp/deep.json" >/dev/null &
	fio_pid=$!
	sleep 0.3
	LC_ALL=C S_TIME_FORMAT='' iostat -x -d -y "$dev" 1 >"$tmp/iostat.txt" 2>&1 &
	io_pid=$!
	wait "$fio_pid" || return 1
	fio_pid=
	jq -c . "$dir/stats" >"$tmp/stats.json"
	n1=$(lines "$out")
	# iostat prints a report and then its blank lines; all printed ones ended
	# while fio ran.
	stop_pid "$io_pid"
	io_pid=
	next_line "$out" >/dev/null
	stop_pid "$bw_pid" INT
	bw_pid=
	"$fakedisk" down "$dir"
	dir=

	awk -v d="$dev" '
		$1 == "Device" { for (i = 1; i <= NF; i++) { if ($i == "%util") u = i; if ($i == "aqu-sz") a = i } }
		$1 == d && u && a { su += $u; sa += $a; n++ }
		END { if (n) printf "{\"util_pct\":%.2f,\"aqu_sz\":%.2f,\"iostat_samples\":%d}\n", su / n, sa / n, n;
		      else print "{\"util_pct\":null,\"aqu_sz\":null,\"iostat_samples\":0}" }' \
		"$tmp/iostat.txt" >"$tmp/io.json"
	# Intervals n0+1..n1 were written while the deep run ran.
	sed -n "$((n0 + 1)),${n1}p" "$out" |
		jq -s -c --arg d "$dev" '[.[].devices[] | select(.device == $d)] |
			([.[] | .p_eff | select(. != null)] | sort) as $p |
			{ p_eff: (if ($p | length) > 0 then $p[($p | length) / 2 | floor] else null end),
			  p_eff_min: ($p | min), p_eff_max: ($p | max), p_eff_samples: ($p | length),
			  class: (last | .class), solo_svc_ms: (last | .solo_svc_ms),
			  depth_mean_busy: ([.[] | .depth_mean_busy | select(. != null)] | add / length) }' \
			>"$tmp/bw_row.json"
	jq -n -c --arg name "$name" --arg opts "$opts" \
		--slurpfile st "$tmp/stats.json" --slurpfile bw "$tmp/bw_row.json" \
		--slurpfile io "$tmp/io.json" --slurpfile fw "$tmp/warm.json" \
		--slurpfile fd "$tmp/deep.json" \
		'{ setting: $name, fixture_opts: $opts, p: $st[0].parallel, dispatch: $st[0].dispatch,
		   truth_busy_servers: $st[0].busy_servers_avg,
		   fixture_inflight_avg_busy: $st[0].inflight_avg_busy,
		   iops: $fd[0].jobs[0].read.iops, iops_qd1: $fw[0].jobs[0].read.iops }
		 + $bw[0] + $io[0]'
}

: >"$tmp/rows.json"
for r in "${rows[@]}"; do
	name=${r%%|*}
	echo "parallelism-table: $name ..." >&2
	measure "$name" "${r#*|}" >>"$tmp/rows.json" || die "row '$name' failed"
done

mkdir -p "$(dirname "$json_out")"
jq -s --argjson warm "$warm" --argjson deep "$deep" --argjson depth "$depth" \
	'{ warm_s: $warm, deep_s: $deep, iodepth: $depth, rows: . }' "$tmp/rows.json" >"$json_out"

{
	echo "| fixture | P | truth: mean busy servers | blkwise P_eff (min-max) | class | S1 ms | iostat %util | iostat aqu-sz | IOPS |"
	echo "|---|---|---|---|---|---|---|---|---|"
	jq -r 'def r2: . * 100 | round / 100;
		.rows[] | "| \(.setting) | \(.p) | \(.truth_busy_servers | r2) | " +
		(if .p_eff == null then "undetermined" else
		 "\(.p_eff | r2) (\(.p_eff_min | r2)-\(.p_eff_max | r2))" end) +
		" | \(.class) | \(.solo_svc_ms | r2) | \(.util_pct) | \(.aqu_sz) | \(.iops | round) |"' "$json_out"
} | tee "$tmp/table.md"
[ "$docs" = 0 ] || python3 "$root/tools/docgen.py" put parallelism "$tmp/table.md" \
	--command tools/parallelism-table.sh || die "cannot write docs/results/parallelism.json"
echo
echo "iodepth $depth, randread 4k, ${deep} s per row after ${warm} s at iodepth 1; P_eff is the"
echo "median of the intervals of the run; S1 = blkwise's solo service (the fixture's service"
echo "plus the loop/FUSE path, which overlaps at depth: P_eff ~ truth * S1 / service)."
echo "JSON: ${json_out#"$root"/}"
