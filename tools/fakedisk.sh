#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bring an emulated disk (tools/fakedisk) up under a loop device, or down.
#
#   tools/fakedisk.sh up DIR [MOUNT_OPTS]   prints the loop device name (loopN)
#   tools/fakedisk.sh down DIR              detach, unmount, stop, remove DIR
#
# MOUNT_OPTS is the daemon's -o list, e.g. service_us=2000,parallel=4 (RAID-0)
# or service_us=2000,parallel=4,dispatch=any (first free server), and one of
# this script's own: scale=K multiplies the time constants (service_us,
# xfer_us_per_mib, seek_us, seek_us_per_gib, hold_us) by K, a slower disk
# for a slow machine (a TCG guest, whose own path per request is
# milliseconds: tools/disk-path.sh).
# The daemon's pid and log live next to DIR, in DIR.fakedisk.pid and
# DIR.fakedisk.log, because DIR itself is covered by the mount.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/fakedisk/fakedisk

die() {
	echo "fakedisk.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: $0 up DIR [MOUNT_OPTS] | down DIR" >&2
	exit 2
}

# A FUSE mount whose daemon died fails stat(), so ask the mount table.
is_mounted() {
	awk -v d="$1" '$5 == d { f = 1 } END { exit !f }' /proc/self/mountinfo
}

# Alive means running, not a zombie waiting for a slow reaper.
is_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) ||
		return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Only signal the pid if it is still our daemon for this DIR.
is_our_daemon() {
	is_alive "$1" || return 1
	arg1=$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | sed -n 2p)
	[ "$arg1" = "$2" ]
}

wait_gone() {
	i=0
	while is_alive "$1" && [ $i -lt "$2" ]; do
		sleep 0.05
		i=$((i + 1))
	done
	! is_alive "$1"
}

loops_of() {
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] || continue
		b=$(cat "$f" 2>/dev/null) || continue
		case $b in
		"$1/disk" | "$1/disk (deleted)")
			n=${f#/sys/block/}
			echo "${n%%/*}"
			;;
		esac
	done
}

down() {
	dir=$1
	pidf=$dir.fakedisk.pid

	for l in $(loops_of "$dir"); do
		losetup -d "/dev/$l" ||
			echo "fakedisk.sh: losetup -d /dev/$l failed; is it still open? (fuser -v /dev/$l)" >&2
	done
	# Detach drops the last reference asynchronously; retry before going lazy.
	i=0
	while is_mounted "$dir" && [ $i -lt 20 ]; do
		fusermount3 -u "$dir" 2>/dev/null && break
		sleep 0.1
		i=$((i + 1))
	done
	if is_mounted "$dir"; then
		echo "fakedisk.sh: $dir busy, lazy unmount" >&2
		fusermount3 -uz "$dir" 2>/dev/null || umount -l "$dir" ||
			echo "fakedisk.sh: cannot unmount $dir; check: fuser -vm $dir" >&2
	fi
	if [ -r "$pidf" ]; then
		pid=$(cat "$pidf")
		if is_our_daemon "$pid" "$dir" && ! wait_gone "$pid" 40; then
			kill -TERM "$pid" 2>/dev/null || true
			wait_gone "$pid" 40 || kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidf" "$dir.fakedisk.log"
	if [ -d "$dir" ] && ! is_mounted "$dir"; then
		rmdir "$dir" 2>/dev/null ||
			echo "fakedisk.sh: $dir not empty, left in place" >&2
	fi
	return 0
}

# Roll back whatever up did so far, then report why.
up_fail() {
	echo "fakedisk.sh: up $dir failed: $*" >&2
	if [ -s "$dir.fakedisk.log" ]; then
		echo "fakedisk.sh: daemon log:" >&2
		sed 's/^/  /' "$dir.fakedisk.log" >&2
	fi
	down "$dir"
	exit 1
}

# scaled OPTS: OPTS with scale=K applied to the time constants and taken out.
scaled() {
	echo "$1" | awk -v RS=, -v ORS=, '
		{ sub(/\n$/, "") }
		/^scale=/ { k = substr($0, 7); next }
		$0 != "" { o[++n] = $0 }
		END {
			if (k == "") k = 1
			for (i = 1; i <= n; i++) {
				if (o[i] ~ /^(service_us|xfer_us_per_mib|seek_us|seek_us_per_gib|hold_us)=/) {
					split(o[i], kv, "=")
					o[i] = kv[1] "=" int(kv[2] * k + 0.5)
				}
				print o[i]
			}
		}' | sed 's/,$//'
}

up() {
	dir=$1
	opts=$(scaled "$2")
	log=$dir.fakedisk.log

	[ "$(id -u)" -eq 0 ] || die "up needs root (losetup)"
	[ -c /dev/fuse ] || die "/dev/fuse missing: FUSE unavailable here"
	command -v fusermount3 >/dev/null || die "fusermount3 missing: apt-get install fuse3"
	if [ ! -x "$bin" ]; then
		make -s -C "$here/fakedisk" >&2 ||
			die "cannot build $bin; run: make -C $here/fakedisk"
	fi
	is_mounted "$dir" && die "$dir is already mounted; run: $0 down $dir"
	mkdir -p "$dir"

	# No -o at all when empty: fuse rejects an empty option list.
	if [ -n "$opts" ]; then
		set -- -o "$opts"
	else
		set --
	fi
	"$bin" "$dir" -f "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir.fakedisk.pid"

	i=0
	while [ ! -e "$dir/disk" ]; do
		is_alive "$pid" || up_fail "daemon exited"
		[ $i -lt 100 ] || up_fail "$dir/disk did not appear within 5 s"
		sleep 0.05
		i=$((i + 1))
	done

	dev=$(losetup --direct-io=on --find --show "$dir/disk") ||
		up_fail "losetup --direct-io=on $dir/disk failed"
	name=${dev#/dev/}
	dio=$(cat "/sys/block/$name/loop/dio" 2>/dev/null || echo missing)
	# Without dio loop goes through the page cache one request at a time,
	# so the disk would show no parallelism at all.
	[ "$dio" = 1 ] ||
		up_fail "direct I/O not enabled on $name (loop/dio=$dio)"
	echo "$name"
}

[ $# -ge 2 ] || usage
cmd=$1
case $2 in
*[[:space:]]*) die "DIR must not contain whitespace: '$2'" ;;
esac
dir=$(realpath -m -- "$2")
[ "$dir" != / ] || die "refusing to use / as DIR"

case $cmd in
up) up "$dir" "${3:-}" ;;
down) down "$dir" ;;
*) usage ;;
esac
