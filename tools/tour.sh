#!/bin/bash
# The README's quick tour, rerunnable (root, about a minute): every subcommand
# on an emulated 4-way disk (tools/fakedisk: 4 servers, 2 ms a request,
# each request to the first free server) under a loop device.
#   tools/tour.sh [PORT]      PORT for export (default 19796)
set -eu
cd "$(dirname "$0")/.."
BW=./blkwise
PORT=${1:-19796}
dir=$(mktemp -d /tmp/blkwise-tour.XXXXXX)
dev=$(tools/fakedisk.sh up "$dir/mnt" service_us=2000,parallel=4,dispatch=any)
trap 'kill $(jobs -p) 2>/dev/null || true; wait; tools/fakedisk.sh down "$dir/mnt"; rm -rf "$dir"' EXIT
state=$dir/state
fio_run() { # IODEPTH SECONDS [extra]
	fio --name=tour --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth="$1" --time_based --runtime="$2" --output=/dev/null
}
run() { echo "\$ $*" | sed "s|$dir|/tmp/tour|g"; "$@" 2>&1 | sed "s|$dir|/tmp/tour|g"; echo; }

# stat: S1 learned at depth 1, then P_eff at depth 16.
fio_run 1 3 & sleep 0.5
$BW stat -d "$dev" --state-dir "$state" -i 2 -c 1 >/dev/null 2>&1; wait
fio_run 16 8 & sleep 1
run $BW stat -d "$dev" --state-dir "$state" -i 2 -c 3
wait
fio_run 16 3 & sleep 1
run $BW stat -d "$dev" --state-dir "$state" -c 1 --json
wait

# tune: what it would set for two sequential readers on this deep device,
# learning the class itself (--no-state).
echo 0 >/sys/block/"$dev"/queue/rotational
echo bfq >/sys/block/"$dev"/queue/scheduler
for o in 0 256; do
	fio --name=seq$o --filename=/dev/"$dev" --direct=1 --rw=read --bs=64k --offset=${o}M \
		--size=64M --time_based --runtime=8 --output=/dev/null &
done
sleep 0.5
run timeout -s INT 6 $BW tune -d "$dev" --no-state --dry-run
wait

# export: a scrape.
echo none >/sys/block/"$dev"/queue/scheduler
$BW export -d "$dev" --state-dir "$state" -l 127.0.0.1:"$PORT" >/dev/null 2>&1 &
exporter=$!
fio_run 16 4 & sleep 3
echo "\$ curl -s localhost:$PORT/metrics | grep ...   # a few of the series"
curl -s "127.0.0.1:$PORT/metrics" | grep -E "^blkwise_(requests_total|service_seconds_(sum|count)|device_busy_seconds_total|effective_parallelism|device_class)\{device=\"$dev\"" |
	grep -vE 'op="(discard|flush|other)"'
echo
kill -INT $exporter; wait

# record and analyze.
fio_run 16 3 & sleep 0.5
run $BW record -d "$dev" -o "$dir/t.bwt" --duration 2
wait
run $BW analyze "$dir/t.bwt"
