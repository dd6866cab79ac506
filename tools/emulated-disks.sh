# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The emulated disks of the idling benchmarks (tools/idling-table.sh,
# tools/probe-cost.sh), defined once: tools/fakedisk under a loop device.
# One spindle with a seek model (100 us per request, 8 ms per MiB
# transferred, 1 ms per seek plus 30 us per MiB of distance) and a RAID-0 of
# four such spindles (chunk 256 KiB: one request, one spindle).  Sourced by
# a script that has set TMP (its scratch directory) and die(); the tuner's
# tests take SPINDLE_OPTS from it (tests/lib.sh, BW_SPINDLE).

FD=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fakedisk.sh
# DISK_SCALE=K: every time constant K times (tools/fakedisk.sh's scale=K),
# for a TCG guest, whose own path per request is milliseconds.
SPINDLE_OPTS="service_us=100,xfer_us_per_mib=8000,seek_us=1000,seek_us_per_gib=30720,size_mb=1024"
DISK_OPTS="$SPINDLE_OPTS,scale=${DISK_SCALE:-1}"

# disks_check CMD...: root, the commands named, and tools/fakedisk built.
disks_check() {
	local c
	[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, FUSE, sysfs)"
	for c in "$@"; do command -v "$c" >/dev/null || die "$c missing: tools/deps.sh"; done
	make -s -C "$(dirname "$FD")"/fakedisk || die "cannot build tools/fakedisk"
}

# disk_up spindle|stripe: that disk in TMP, scheduler none; prints the
# loop device's name.
disk_up() {
	local opts=parallel=1 dev
	[ "$1" = stripe ] && opts=parallel=4,dispatch=stripe,chunk_kb=256
	dev=$("$FD" up "$TMP/$1" "$DISK_OPTS,$opts") || die "fakedisk $1"
	echo none >/sys/block/"$dev"/queue/scheduler
	echo "$dev"
}

# disks_up: SPINDLE and STRIPE, the two disks' loop devices.
# shellcheck disable=SC2034 # for the scripts that source this
disks_up() {
	SPINDLE=$(disk_up spindle) || exit 1
	STRIPE=$(disk_up stripe) || exit 1
}

disks_down() {
	local d
	for d in "$TMP"/spindle "$TMP"/stripe; do [ -d "$d" ] && "$FD" down "$d" >/dev/null 2>&1; done
}

# new_bfq DEV: a new BFQ instance (it keeps state across runs: budgets,
# peak rate, each queue's flags, whether the device queues), rotational=1
# written first since BFQ reads it at init; low_latency=0.
new_bfq() {
	local q=/sys/block/$1/queue
	echo none >"$q"/scheduler
	echo 1 >"$q"/rotational
	echo bfq >"$q"/scheduler || die "$1: no bfq"
	echo 0 >"$q"/iosched/low_latency
}
