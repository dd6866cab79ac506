#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's quick tour, rerunnable (root, about a minute): every subcommand
# on an emulated 4-way disk (tools/fakedisk: 4 servers, 2 ms a request,
# each request to the first free server) under a loop device.
#   tools/tour.sh [--write] [PORT]
#     PORT     for export (default 19796)
#     --write  also writes what it printed into the example blocks of
#              README.md and docs/ (each between "<!-- tour:NAME -->" and
#              "<!-- /tour -->"), so
#              that they show what this build prints (a block the tour
#              could not make, tune's on a kernel without BFQ, stays as it
#              is); tests/test_docs.sh holds their table headers, JSON keys
#              and options to the build
set -eu
cd "$(dirname "$0")/.."
BW=./blkwise
WRITE=0
if [ "${1:-}" = --write ]; then
	WRITE=1
	shift
fi
PORT=${1:-19796}
dir=$(mktemp -d /tmp/blkwise-tour.XXXXXX)
dev=$(tools/fakedisk.sh up "$dir/mnt" service_us=2000,parallel=4,dispatch=any)
trap 'kill $(jobs -p) 2>/dev/null || true; wait; tools/fakedisk.sh down "$dir/mnt"; rm -rf "$dir"' EXIT
state=$dir/state
blocks=$dir/blocks
mkdir -p "$blocks"
fio_run() { # IODEPTH SECONDS [extra]
	fio --name=tour --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth="$1" --time_based --runtime="$2" --output=/dev/null
}
# The tour's temporary directory as the README names it; ./blkwise as blkwise.
tidy() { sed -e "s|$dir|/tmp/tour|g" -e 's|^\$ \./blkwise|$ blkwise|'; }
# say BLOCK LINE...: lines shown as they are, kept for BLOCK.
say() {
	local b=$1
	shift
	printf '%s\n' "$@" | tidy | tee -a "$blocks/$b"
}
# run BLOCK CMD...: the command line, then what it prints, kept for BLOCK.
run() {
	local b=$1
	shift
	{ echo "\$ $*"; "$@" 2>&1; } | tidy | tee -a "$blocks/$b"
	echo
}

# stat: S1 learned at depth 1, then P_eff at depth 16.
fio_run 1 3 & sleep 0.5
$BW stat -d "$dev" --state-dir "$state" -i 2 -c 1 >/dev/null 2>&1; wait
fio_run 16 8 & sleep 1
run stat $BW stat -d "$dev" --state-dir "$state" -i 2 -c 3
wait
fio_run 16 3 & sleep 1
run stat-json $BW stat -d "$dev" --state-dir "$state" -c 1 --json
wait

# tune: what it would set for two sequential readers on this deep device,
# learning the class itself (--no-state).
echo 0 >/sys/block/"$dev"/queue/rotational
echo bfq >/sys/block/"$dev"/queue/scheduler 2>/dev/null ||
	echo "tour.sh: tune skipped: this kernel offers no BFQ (its README block stays as it is)" >&2
if grep -q '\[bfq\]' /sys/block/"$dev"/queue/scheduler; then
	for o in 0 256; do
		fio --name=seq$o --filename=/dev/"$dev" --direct=1 --rw=read --bs=64k --offset=${o}M \
			--size=64M --time_based --runtime=8 --output=/dev/null &
	done
	sleep 0.5
	run tune timeout -s INT 6 $BW tune -d "$dev" --no-state --dry-run
	wait
fi

# export: a scrape.
echo none >/sys/block/"$dev"/queue/scheduler
$BW export -d "$dev" --state-dir "$state" -l 127.0.0.1:"$PORT" >/dev/null 2>&1 &
exporter=$!
fio_run 16 4 & sleep 3
say export "\$ blkwise export -d $dev --state-dir /tmp/tour/state -l 127.0.0.1:$PORT &" \
	"\$ curl -s localhost:$PORT/metrics | grep ...   # a few of the series"
curl -s "127.0.0.1:$PORT/metrics" | grep -E "^blkwise_(requests_total|service_seconds_(sum|count)|device_busy_seconds_total|effective_parallelism|device_class)\{device=\"$dev\"" |
	grep -vE 'op="(discard|flush|passthrough)"' | tidy | tee -a "$blocks/export"
echo
kill -INT $exporter; wait

# record and analyze.
fio_run 16 3 & sleep 0.5
run record $BW record -d "$dev" -o "$dir/t.bwt" --duration 2
wait
echo >>"$blocks/record"
# analyze: its head, the exact latencies and the losses, then its last line.
echo "\$ blkwise analyze /tmp/tour/t.bwt" >>"$blocks/record"
$BW analyze "$dir/t.bwt" 2>&1 | tidy | tee "$dir/analyze" |
	awk '/^Over time/ { print "(stat'"'"'s figures per interval, left out here)"; print ""; skip = 1; next }
	     /^Latency per device/ { skip = 0 } /^Whole trace/ { skip = 1; next }
	     /^Merges, requeues, losses/ { skip = 0; m = 1 } m && /^$/ { exit } !skip { print }' >>"$blocks/record"
printf '\n(the whole trace'"'"'s figures, seek distances, streams and the slowest requests follow)\n\n%s\n' \
	"$(tail -n 1 "$dir/analyze")" >>"$blocks/record"
cat "$dir/analyze"

[ "$WRITE" = 1 ] || exit 0
# Each README block between its markers becomes a fenced copy of what ran.
python3 - "$blocks" README.md docs/*.md <<'PY'
import os, re, sys
blocks = sys.argv[1]
def block(m):
	name = m.group(1)
	f = os.path.join(blocks, name)
	if not os.path.exists(f):
		print("tour.sh: block %s not made here; left as it was" % name, file=sys.stderr)
		return m.group(0)
	body = open(f).read().rstrip("\n")
	return "<!-- tour:%s -->\n```\n%s\n```\n<!-- /tour -->" % (name, body)
for path in sys.argv[2:]:
	text = open(path).read()
	new, n = re.subn(r"<!-- tour:([a-z-]+) -->\n.*?<!-- /tour -->", block, text, flags=re.S)
	if n:
		open(path, "w").write(new)
		print("tour.sh: %d blocks of %s written" % (n, path), file=sys.stderr)
PY
