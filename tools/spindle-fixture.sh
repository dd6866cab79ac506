#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Records the shipped what-if fixture: the emulated spindle of
# tools/idling-table.sh under four sequential 256 KiB direct readers, BFQ
# at its default slice_idle_us 8000 on a new instance (rotational=1 first,
# low_latency=0), nothing changed during the run.  BFQ stops idling by
# itself on this disk after a while (docs/idling.md); a recording in which
# it did shows `analyze --what-if-tune` noticing it.  Up to TRIES runs; the
# first whose what-if holds a repair is kept.
#
#   tools/spindle-fixture.sh [SECS [TRIES]]            (root; default 30 3)
#
# Writes tests/data/record/spindle.bwt and prints its what-if.
set -u
cd "$(dirname "$0")/.."
SECS=${1:-30}
TRIES=${2:-3}
OUT=tests/data/record/spindle.bwt
DISK_OPTS="service_us=100,xfer_us_per_mib=8000,seek_us=1000,seek_us_per_gib=30720,size_mb=1024"
BENCH_LOCK=${BENCH_LOCK:-/run/lock/blkwise-bench.lock}
die() { echo "spindle-fixture: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, FUSE, sysfs)"
for c in fio losetup flock; do command -v $c >/dev/null || die "$c missing: tools/deps.sh"; done
[ -x ./blkwise ] || die "./blkwise missing: run make"
TMP=$(mktemp -d /tmp/blkwise-fixture.XXXXXX)
trap 'tools/fakedisk.sh down "$TMP/disk" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
exec 9>>"$BENCH_LOCK" || die "cannot open $BENCH_LOCK"
flock 9
dev=$(tools/fakedisk.sh up "$TMP/disk" "$DISK_OPTS") || die "fakedisk"
q=/sys/block/$dev/queue
mkdir -p "$(dirname "$OUT")"
for try in $(seq "$TRIES"); do
	echo none >$q/scheduler
	echo 1 >$q/rotational
	echo bfq >$q/scheduler || die "$dev: no bfq"
	echo 0 >$q/iosched/low_latency
	./blkwise record -d "$dev" -o "$TMP/t.bwt" -t $((SECS + 1)) 2>"$TMP/rec.err" &
	rec=$!
	sleep 0.5
	fio --name=spindle --filename=/dev/"$dev" --direct=1 --rw=read --bs=256k \
		--ioengine=psync --numjobs=4 --size=256m --offset_increment=256m --time_based \
		--runtime="$SECS" >/dev/null 2>&1
	wait "$rec" || die "record failed: $(cat "$TMP/rec.err")"
	./blkwise analyze "$TMP/t.bwt" --what-if-tune >"$TMP/whatif.txt" || die "analyze failed"
	if grep -q " repair: " "$TMP/whatif.txt"; then
		cp "$TMP/t.bwt" "$OUT"
		sed -n '/^What if/,/^$/p' "$TMP/whatif.txt"
		echo "spindle-fixture: $OUT (run $try of $TRIES)" >&2
		exit 0
	fi
	echo "spindle-fixture: run $try: BFQ kept idling (no repair); again" >&2
done
die "no run of $TRIES showed BFQ stop idling"
