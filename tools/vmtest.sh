#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs the test suites (or a command) inside a QEMU guest on stock Debian
# kernels, with the host's userland and work tree shared read-only over 9p.
#
#   tools/vmtest.sh [-s SUITES] [-c CMD] KVER...     KVER: 5.10 6.1 6.12 host
#   tools/vmtest.sh --all [-s SUITES] [-c CMD]       5.10 6.1 6.12 host, and a table
#
# Per kernel it prints "KVER: N passed, N failed, N skipped", "KVER: SKIPPED
# (why)" or "KVER: FAILED to boot (why)".  Exit status is non-zero when a
# kernel failed (tests failed, or it did not boot); a skipped kernel is
# listed, never counted as passed, and does not fail the run.
#
# Everything fetched, extracted and built lives under build/vm/:
#   apt/SUITE/         private apt sources, lists and cache (the system's apt
#                      configuration and state are not touched)
#   KVER/deb/          the linux-image .deb;  KVER/root/  dpkg-deb -x of it
#   KVER/initrd.gz     busybox + the modules needed to mount the host over 9p
#   KVER/scratch.img   an ext4 disk for the guest's /tmp and /var/tmp (new per run;
#                      the guest also has an ext4 ramdisk as BW_MEM_DIR)
#   KVER/seed*.img     with VM_SEED_DISK: the seed disks (sparse, new per run)
#   out/KVER/          console.log, output.log (the command's), rc, job, and
#                      results (the runner's PASS/FAIL/SKIP lines)
#
# Environment (or make's command line):
#   VM_TIMEOUT  seconds per kernel, boot to power-off (1800: every suite
#               takes about 17 minutes on 6.12 under TCG)
#   VM_DEADLINE  a time (seconds since the epoch) no boot runs past: each
#               boot's limit is the less of VM_TIMEOUT and what is left, and
#               none starts with under VM_MIN_LEFT (180) left (a run with a
#               limit of its own, such as CI's, ends with its results)
#   VM_MEM VM_SMP VM_ACCEL VM_CPU   guest MiB (2048), CPUs (2), -accel (tcg), -cpu
#   VM_SCRATCH  size of the scratch disk (8G)
#   VM_MEMDISK  MiB of the brd ramdisk (ext4) given to the tests as BW_MEM_DIR,
#               memory that takes O_DIRECT where tmpfs does not (768; 0: none)
#   VM_MODULES  modules loaded at boot besides loop fuse zram dm-mod sd_mod
#               (e.g. "null_blk scsi_debug"); any other can be modprobed, but
#               there is no udev: a new device's driver is not loaded for it
#               (hence sd_mod, for scsi_debug's disks)
#   VM_SEED_DISK  size of two more virtio-blk disks, each of VM_SEED_QUEUES
#               queues, for the seed runs (tools/vm/seeds.sh, tests/test_seeds.sh):
#               serial blkwise-seed (indirect descriptors offered, QEMU's
#               default) and blkwise-seed-direct (indirect_desc=off).  Default:
#               1G when SUITES names test_seeds, else 0 (none)
#   VM_SEED_QUEUES  virtio-blk num-queues of the seed disks (2)
#   VM_VERBOSE=1  the console shown live as well as logged
#   VM_REFRESH=1  fetch the kernel again though one is cached
#   VM_BOOT_RETRIES  boots more when a guest dies before its userland is up,
#               or its kernel locks up (a soft lockup: the job starts again) (1)
#   BW_DISK_SCALE  the tuner tests' emulated disks' time constants times this
#               (tools/fakedisk.sh scale=K): 2 with tcg, whose own path per
#               request is milliseconds (tools/disk-path.sh), 1 with kvm
#   VM_FIRST_OUTPUT  seconds the guest kernel has to print its first line
#               ("Linux version"), else the boot is stopped and said to hang
#               (15 with VM_ACCEL=kvm, where it takes under one; 300 with tcg)
set -eu

cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Physical: the guest's first stage resolves a symlinked build/vm (a
# worktree sharing another's kernels) outside its new root.
mkdir -p build/vm
VMDIR=$(cd build/vm && pwd -P)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian
ALL_KERNELS="5.10 6.1 6.12 host"
# Modules the first stage needs: the host's / over virtio-9p, and overlayfs.
INITRD_MODULES="virtio_pci 9pnet_virtio 9p overlay"

VM_TIMEOUT=${VM_TIMEOUT:-1800}
VM_DEADLINE=${VM_DEADLINE:-0}
VM_MIN_LEFT=${VM_MIN_LEFT:-180}
VM_MEM=${VM_MEM:-2048}
VM_SMP=${VM_SMP:-2}
VM_ACCEL=${VM_ACCEL:-tcg}
VM_CPU=${VM_CPU:-}
VM_SCRATCH=${VM_SCRATCH:-8G}
VM_MODULES=${VM_MODULES:-}
VM_VERBOSE=${VM_VERBOSE:-0}
VM_MEMDISK=${VM_MEMDISK:-768}
VM_REFRESH=${VM_REFRESH:-0}
VM_BOOT_RETRIES=${VM_BOOT_RETRIES:-1}
VM_SEED_DISK=${VM_SEED_DISK:-}
VM_SEED_QUEUES=${VM_SEED_QUEUES:-2}
case $VM_ACCEL in
*kvm*) VM_FIRST_OUTPUT=${VM_FIRST_OUTPUT:-15} BW_DISK_SCALE=${BW_DISK_SCALE:-1} ;;
*) VM_FIRST_OUTPUT=${VM_FIRST_OUTPUT:-300} BW_DISK_SCALE=${BW_DISK_SCALE:-2} ;;
esac

log() { echo "vmtest: $*" >&2; }
die() { echo "vmtest: error: $*" >&2; exit 1; }

usage() {
	sed -n '2,/^set -eu/{/^#/s/^# \{0,1\}//p}' "$0" >&2
	exit 2
}

# Suites tried in order for a kernel series.
kernel_suites() {
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo "trixie bookworm-backports" ;;
	*) return 1 ;;
	esac
}

# apt_opts SUITE: a private apt configuration and state for SUITE.
apt_opts() {
	d=$VMDIR/apt/$1
	echo "-q -o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=-" \
		"-o Dir::Etc::Preferences=$d/preferences -o Dir::Etc::PreferencesParts=-" \
		"-o Dir::State=$d/state -o Dir::Cache=$d/cache -o Acquire::Languages=none" \
		"-o APT::Sandbox::User=root"
}

# apt_update SUITE: the suite's package lists, in its private state.
apt_update() {
	d=$VMDIR/apt/$1
	mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial"
	echo "deb [signed-by=$KEYRING] $MIRROR $1 main" >"$d/sources.list"
	: >"$d/preferences"
	# shellcheck disable=SC2046
	apt-get $(apt_opts "$1") update >"$d/update.log" 2>&1 ||
		{ log "apt-get update for $1 failed: $(grep -E '^(E|W):' "$d/update.log" | head -n 1)"; return 1; }
	# apt-get update exits 0 on some failures; the lists must be there.
	ls "$d/state/lists/"*_Packages* >/dev/null 2>&1 ||
		{ log "apt-get update for $1 fetched no package list: $(grep -E '^(E|W):' "$d/update.log" | head -n 1)"; return 1; }
}

# fetch_debian KVER: download and extract the stock kernel of KVER's suite
# into build/vm/KVER (kept: a second run reuses it).  Prints why on failure.
fetch_debian() {
	kver=$1 dir=$VMDIR/$1
	[ "$VM_REFRESH" != 1 ] && [ -s "$dir/release" ] &&
		[ -f "$dir/root/boot/vmlinuz-$(cat "$dir/release")" ] && return 0
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
		{ echo "apt-get or dpkg-deb missing"; return 1; }
	[ -r "$KEYRING" ] || { echo "$KEYRING missing (debian-archive-keyring)"; return 1; }
	why=""
	# passed_over WHY: this suite will not do; the next one is tried.
	passed_over() { log "$kver: $suite: $*"; why="$why${why:+; }$*"; }
	for suite in $(kernel_suites "$kver"); do
		apt_update "$suite" || { passed_over "apt-get update $suite failed"; continue; }
		# The meta package depends on the ABI-versioned image of this suite.
		# shellcheck disable=SC2046
		pkg=$(apt-cache $(apt_opts "$suite") depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
		[ -n "$pkg" ] || { passed_over "no linux-image-amd64 in $suite"; continue; }
		case $pkg in linux-image-"$kver".*) ;; *)
			passed_over "$suite has $pkg, not $kver"; continue ;;
		esac
		log "$kver: fetching $pkg from $suite"
		rm -rf "$dir/deb" "$dir/root" "$dir/release"
		mkdir -p "$dir/deb"
		# shellcheck disable=SC2046
		(cd "$dir/deb" && apt-get $(apt_opts "$suite") download "$pkg") >"$dir/download.log" 2>&1 ||
			{ passed_over "apt-get download $pkg failed: $(grep -E '^(E|W):' "$dir/download.log" | head -n 1)"; continue; }
		deb=$(ls "$dir/deb/"*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || { passed_over "apt-get download $pkg left no .deb"; continue; }
		dpkg-deb -x "$deb" "$dir/root" || { passed_over "dpkg-deb -x $deb failed"; continue; }
		# trixie's packages have /usr/lib/modules only: merge /lib as a
		# booted system has it, for depmod -b and modprobe -d.
		[ -e "$dir/root/lib" ] || [ ! -d "$dir/root/usr/lib/modules" ] || ln -s usr/lib "$dir/root/lib"
		rel=$(ls "$dir/root/lib/modules" 2>/dev/null | head -n 1)
		[ -n "$rel" ] && [ -f "$dir/root/boot/vmlinuz-$rel" ] ||
			{ passed_over "$pkg has no /boot/vmlinuz or /lib/modules"; continue; }
		depmod -b "$dir/root" "$rel" || { passed_over "depmod -b failed"; continue; }
		echo "$pkg $suite" >"$dir/package"
		echo "$rel" >"$dir/release"
		return 0
	done
	echo "${why:-no suite for $kver}"
	return 1
}

# fetch_host: the running kernel's image and modules, as build/vm/host/root.
fetch_host() {
	dir=$VMDIR/host rel=$(uname -r)
	[ -f "/boot/vmlinuz-$rel" ] || { echo "/boot/vmlinuz-$rel missing: the running kernel's image is not on this machine"; return 1; }
	[ -d "/lib/modules/$rel" ] || { echo "/lib/modules/$rel missing: the running kernel's modules are not on this machine"; return 1; }
	if [ "$(cat "$dir/release" 2>/dev/null)" != "$rel" ]; then
		rm -rf "$dir/root" "$dir/release"
		mkdir -p "$dir/root/boot" "$dir/root/lib/modules"
		cp "/boot/vmlinuz-$rel" "$dir/root/boot/"
		[ -f "/boot/config-$rel" ] && cp "/boot/config-$rel" "$dir/root/boot/"
		cp -a "/lib/modules/$rel" "$dir/root/lib/modules/"
		depmod -b "$dir/root" "$rel" || { echo "depmod -b failed"; return 1; }
		echo "$rel" >"$dir/release"
	fi
}

# fetch KVER: prints why and fails when KVER cannot be had.
fetch() {
	case $1 in
	host) fetch_host ;;
	*) fetch_debian "$1" ;;
	esac
}

# copy_module SRC DST: a module, decompressed (busybox insmod wants it plain).
copy_module() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# build_initrd KVER: busybox, tools/vm/init and INITRD_MODULES (with their
# dependencies, in load order) that are not built in.
build_initrd() {
	dir=$VMDIR/$1 rel=$(cat "$VMDIR/$1/release")
	tree=$dir/initrd.d
	rm -rf "$tree"
	mkdir -p "$tree/bin" "$tree/lib/modules" "$tree/proc" "$tree/sys" "$tree/dev" \
		"$tree/lower" "$tree/upper" "$tree/newroot"
	cp "$BUSYBOX" "$tree/bin/busybox"
	cp tools/vm/init "$tree/init"
	chmod 755 "$tree/init"
	: >"$tree/modules.list"
	builtin=""
	for m in $INITRD_MODULES; do
		modprobe -d "$dir/root" -S "$rel" --show-depends "$m" >"$tree/deps" 2>&1 ||
			{ echo "module $m: $(head -n 1 "$tree/deps")"; return 1; }
		while read -r what path _; do
			case $what in
			builtin) builtin="$builtin $path"; continue ;;
			insmod) ;;
			*) continue ;;
			esac
			name=$(basename "$path" | sed 's/\.ko.*//')
			grep -qx "$name.ko" "$tree/modules.list" && continue
			copy_module "$path" "$tree/lib/modules/$name.ko" || { echo "cannot copy $path"; return 1; }
			echo "$name.ko" >>"$tree/modules.list"
		done <"$tree/deps"
	done
	rm -f "$tree/deps"
	tr '\n' ' ' <"$tree/modules.list" >"$dir/initrd.modules"
	echo "${builtin# }" >"$dir/initrd.builtin"
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initrd.gz.tmp"
	mv "$dir/initrd.gz.tmp" "$dir/initrd.gz"
	rm -rf "$tree"
}

# make_scratch KVER: a fresh ext4 image for the guest's /tmp and /var/tmp
# (as on the host: a real disk, so O_DIRECT and loop devices behave).
make_scratch() {
	img=$VMDIR/$1/scratch.img
	rm -f "$img"
	truncate -s "$VM_SCRATCH" "$img"
	mkfs.ext4 -q -F -L vmscratch "$img" >/dev/null 2>&1 || { echo "mkfs.ext4 $img failed"; return 1; }
}

# make_seed KVER: the seed disks, sparse and new per run (none when
# VM_SEED_DISK is 0).
make_seed() {
	dir=$VMDIR/$1
	rm -f "$dir/seed.img" "$dir/seed-direct.img"
	[ "$VM_SEED_DISK" != 0 ] || return 0
	truncate -s "$VM_SEED_DISK" "$dir/seed.img" "$dir/seed-direct.img" ||
		{ echo "cannot make the seed disks of $VM_SEED_DISK"; return 1; }
}

# write_job OUT: the script the guest runs, from BW_ROOT.  The runner there
# keeps its PASS/FAIL/SKIP lines in OUT/results (tools/run-tests.sh reads
# them back) and runs no VM tier of its own; BW_UNITS=0 and BW_TESTS (the
# tests the host moved here) pass through.
write_job() {
	if [ -n "$CMD" ]; then
		printf 'cd %s\n%s\n' "$ROOT" "$CMD"
	else
		printf "cd %s && BW_VM_TIER=%s BW_RESULTS_OUT=%s/results BW_UNITS=%s BW_SUITES='%s' BW_TESTS='%s' BW_DISK_SCALE=%s exec tools/run-tests.sh\n" \
			"$ROOT" "$(basename "$1")" "$1" "${BW_UNITS:-1}" "$SUITES" "${BW_TESTS:-}" "$BW_DISK_SCALE"
	fi >"$1/job"
}

# qemu_run KVER OUT: one boot of the guest; QEMU_RC is qemu's exit status
# (124: killed at its limit, TMO).
qemu_run() {
	dir=$VMDIR/$1 out=$2 rel=$(cat "$VMDIR/$1/release")
	append="console=ttyS0 panic=-1 no_timer_check vmtest.root=$ROOT vmtest.out=$out"
	append="$append vmtest.modules=$dir/root/lib/modules vmtest.boot=$dir/root/boot"
	# shellcheck disable=SC3045 # dash has ulimit -l and -n
	append="$append vmtest.timeout=$((TMO - 60)) vmtest.memlock=$(ulimit -l) vmtest.nofile=$(ulimit -n)"
	# shellcheck disable=SC2086
	append="$append vmtest.memdisk=$VM_MEMDISK vmtest.load=$(echo loop fuse zram dm-mod sd_mod $VM_MODULES | tr ' ' ',')"
	set -- -accel "$VM_ACCEL" -smp "$VM_SMP" -m "$VM_MEM" -nographic -no-reboot \
		-kernel "$dir/root/boot/vmlinuz-$rel" -initrd "$dir/initrd.gz" -append "$append" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap" \
		-virtfs "local,path=$out,mount_tag=vmout,security_model=passthrough" \
		-drive "file=$dir/scratch.img,if=virtio,format=raw,cache=unsafe" \
		-device virtio-rng-pci -nic none
	if [ -n "$VM_CPU" ]; then set -- "$@" -cpu "$VM_CPU"; fi
	if [ "$VM_SEED_DISK" != 0 ]; then
		# Slots after the scratch disk's: it stays vda, the guest's /tmp.
		for sd in seed:0x1e seed-direct:0x1f; do
			o=",addr=${sd#*:}"
			sd=${sd%:*}
			[ "$sd" = seed ] || o="$o,indirect_desc=off"
			set -- "$@" -drive "file=$dir/$sd.img,if=none,id=$sd,format=raw,cache=unsafe" \
				-device "virtio-blk-pci,drive=$sd,serial=blkwise-$sd,num-queues=$VM_SEED_QUEUES$o"
		done
	fi
	set -- "$@" -pidfile "$out/qemu.pid"
	rm -f "$out/qemu.rc" "$out/qemu.pid" "$out/hung" "$out/locked"
	: >"$out/console.log"
	if [ "$VM_VERBOSE" = 1 ]; then
		{ timeout -k 10 "$TMO" "$QEMU" "$@" </dev/null 2>"$out/qemu.err"; echo $? >"$out/qemu.rc"; } |
			tee "$out/console.log" &
	else
		{ timeout -k 10 "$TMO" "$QEMU" "$@" </dev/null >"$out/console.log" 2>"$out/qemu.err"; echo $? >"$out/qemu.rc"; } &
	fi
	watch_first_output "$out" && watch_lockup "$out"
	wait
	QEMU_RC=$(cat "$out/qemu.rc")
}

# watch_first_output OUT: stops the guest (OUT/hung says why) when its
# kernel prints nothing within VM_FIRST_OUTPUT seconds: a boot that hangs
# (a stock kernel on a KVM it cannot run on stops after "Probing EDD")
# is said so at once, not at its limit.
watch_first_output() {
	t=0
	while [ ! -f "$1/qemu.rc" ]; do
		grep -q 'Linux version' "$1/console.log" 2>/dev/null && return 0
		if [ "$t" -ge "$VM_FIRST_OUTPUT" ]; then
			echo "no kernel output within ${VM_FIRST_OUTPUT}s$(kvm_note)" >"$1/hung"
			kill "$(cat "$1/qemu.pid" 2>/dev/null)" 2>/dev/null || true
			return 0
		fi
		sleep 1
		t=$((t + 1))
	done
}

# watch_lockup OUT: stops the guest (OUT/locked says why) when its kernel
# reports a soft lockup or traps on an int3: under multi-threaded TCG a CPU
# can spin for good on code the kernel patched from another CPU (an int3
# that is no longer there), or execute the int3 of a patch under way that
# the kernel no longer expects (an oops at a tracepoint's site as it is
# switched on), and the guest would sit until its limit or die.
# Meanwhile it shows each result line of the guest's runner as it comes,
# with the seconds since boot, so a long run's log says where it is.
watch_lockup() {
	shown=0 t0=$(date +%s)
	while [ ! -f "$1/qemu.rc" ]; do
		shown=$(show_results "$1" "$shown" "$t0")
		w=$(grep -a -m 1 -E 'soft lockup - CPU#|Oops: int3' "$1/console.log" 2>/dev/null | tr -d '\r' |
			sed 's/^\[[ 0-9.]*\] //' | cut -c 1-100)
		if [ -n "$w" ]; then
			echo "guest kernel: $w" >"$1/locked"
			kill "$(cat "$1/qemu.pid" 2>/dev/null)" 2>/dev/null || true
			return 0
		fi
		sleep 2
	done
	show_results "$1" "$shown" "$t0" >/dev/null
}

# show_results OUT SHOWN T0: prints the guest's result lines after the first
# SHOWN (to stderr, with the seconds since T0); prints how many there are.
show_results() {
	n=$(grep -c . "$1/results" 2>/dev/null || true)
	n=${n:-0}
	if [ "$n" -gt "$2" ]; then
		sed -n "$(($2 + 1)),${n}p" "$1/results" |
			sed "s/^/vmtest: $(basename "$1") +$(($(date +%s) - $3))s /" >&2
	fi
	echo "$n"
}

# kvm_note: with VM_ACCEL=kvm, what /dev/kvm is, for a guest that hung.
kvm_note() {
	case $VM_ACCEL in *kvm*) ;; *) return 0 ;; esac
	if [ -d /sys/module/kvm_pvm ]; then
		printf ' (VM_ACCEL=%s: /dev/kvm is kvm_pvm, which runs PVM guest kernels only; VM_ACCEL=tcg boots)' "$VM_ACCEL"
	else
		printf ' (VM_ACCEL=%s: VM_ACCEL=tcg may boot)' "$VM_ACCEL"
	fi
}

# kernel_trouble OUT: the guest kernel's first oops, BUG or WARNING, if any.
kernel_trouble() {
	grep -m 1 -E '(Oops|BUG|WARNING|general protection fault)[: ]' "$1/console.log" 2>/dev/null |
		tr -d '\r' | sed 's/^\[[ 0-9.]*\] //' | cut -c 1-120 || true
}

# set_aside OUT TRY: keeps a run that is to be done again as OUT/*.TRY*.
set_aside() {
	local f
	for f in console output; do
		[ ! -f "$1/$f.log" ] || mv "$1/$f.log" "$1/$f.$2.log"
	done
	for f in results rc; do
		[ ! -f "$1/$f" ] || mv "$1/$f" "$1/$f.$2"
	done
}

# boot KVER: runs the job in a guest; sets RESULT (the one-line status)
# and STATUS (pass, fail or skip).  A guest that dies before its userland
# is up, or whose kernel locks up (watch_lockup), is booted once more
# (VM_BOOT_RETRIES) and the job starts again: TCG's multi-threaded mode has
# been seen to oops a boot, and to leave a CPU spinning, while the kernel
# patches its own code.
boot() {
	kver=$1 dir=$VMDIR/$1 out=$VMDIR/out/$1
	rm -rf "$out"
	mkdir -p "$out"
	write_job "$out"
	why=$(build_initrd "$kver") || { RESULT="FAILED to boot (initramfs: $why)"; STATUS=fail; return; }
	log "$kver: booting $(cat "$dir/release") (initramfs modules: $(cat "$dir/initrd.modules")built in:" \
		"$(grep . "$dir/initrd.builtin" || echo none)); log in ${out#"$ROOT"/}/console.log"
	start=$(date +%s) try=0 retried=""
	while :; do
		TMO=$VM_TIMEOUT
		if [ "$VM_DEADLINE" != 0 ]; then
			left=$((VM_DEADLINE - $(date +%s)))
			if [ "$left" -lt "$VM_MIN_LEFT" ]; then
				RESULT="FAILED (not booted: ${left}s left before the run's deadline (VM_DEADLINE)${retried:+$retried})"
				STATUS=fail
				return
			fi
			[ "$left" -ge "$TMO" ] || TMO=$left
		fi
		why=$(make_scratch "$kver") || { RESULT="FAILED to boot ($why)"; STATUS=fail; return; }
		why=$(make_seed "$kver") || { RESULT="FAILED to boot ($why)"; STATUS=fail; return; }
		qemu_run "$kver" "$out"
		BOOT=$(sed -n 's/.*vmtest: userland up after \([0-9.]*\)s.*/\1/p' "$out/console.log" | head -n 1)
		[ "$try" -lt "$VM_BOOT_RETRIES" ] || break
		if [ -f "$out/locked" ]; then
			try=$((try + 1))
			what="run $try stopped" w=$(cat "$out/locked")
		elif [ -z "$BOOT" ] && [ "$QEMU_RC" != 124 ] && [ ! -f "$out/hung" ]; then
			try=$((try + 1))
			what="boot $try failed" w=$(boot_why "$out" "$QEMU_RC")
		else
			break
		fi
		retried="$retried; $what: $w"
		set_aside "$out" "$try"
		log "$kver: $what ($w), booting again; its log: ${out#"$ROOT"/}/console.$try.log"
	done
	TOTAL=$(($(date +%s) - start))
	times="boot ${BOOT:-?}s, total ${TOTAL}s"
	if [ -n "$retried" ]; then
		[ -n "$BOOT" ] || retried="; $((try + 1)) boots"
		times="$times$retried"
	fi
	trouble=$(kernel_trouble "$out")
	[ -z "$trouble" ] || times="$times; guest kernel: $trouble"
	STATUS=fail
	if [ -z "$BOOT" ]; then
		RESULT="FAILED to boot ($(boot_why "$out" "$QEMU_RC"); $times)"
		return
	fi
	if [ ! -s "$out/rc" ]; then
		# qemu exits 0 on SIGTERM: say who sent it, if it says.
		killed=$(sed -n 's/.*terminating on \(signal .*\)/\1/p' "$out/qemu.err" | head -n 1)
		if [ -f "$out/locked" ]; then
			why="stopped: $(cat "$out/locked")"
		elif [ "$QEMU_RC" = 124 ]; then
			why="timed out after ${TMO}s"
		elif [ -n "$killed" ]; then
			why="qemu killed: $killed"
		else
			why="guest ended, qemu exited $QEMU_RC"
		fi
		RESULT="FAILED ($why before the job ended; $times)"
		return
	fi
	jobrc=$(cat "$out/rc")
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out/output.log" | tail -n 1 || true)
	if [ "$jobrc" = 124 ]; then
		RESULT="FAILED (the job timed out in the guest after $((TMO - 60))s${summary:+: $summary}; $times)"
	elif [ -n "$summary" ]; then
		RESULT="$summary ($times)"
		case $summary in *" 0 failed,"*) [ "$jobrc" != 0 ] || STATUS=pass ;; esac
	else
		[ "$jobrc" != 0 ] || STATUS=pass
		RESULT="exit status $jobrc, no summary line ($times)"
	fi
}

# boot_why OUT QEMU_RC: the first reason the console log or qemu gives.
boot_why() {
	if [ -f "$1/hung" ]; then
		echo "$(cat "$1/hung"); last console line: $(last_line "$1")"
		return
	fi
	w=$(grep -m 1 -E 'vmtest-init: error|(Oops|BUG)[: ]|Kernel panic' "$1/console.log" 2>/dev/null |
		tr -d '\r' | sed 's/^\[[ 0-9.]*\] //' || true)
	if [ -n "$w" ]; then echo "$w"; return; fi
	if [ "$2" = 124 ]; then
		echo "timed out after ${TMO}s; last console line: $(last_line "$1")"
		return
	fi
	w=$(grep -v -m 1 -e 'warning:' -e 'terminating on signal' "$1/qemu.err" 2>/dev/null || true)
	if [ -z "$w" ]; then
		w=$(sed -n 's/.*terminating on \(signal .*\)/killed by \1/p' "$1/qemu.err" | head -n 1)
	fi
	if [ -n "$w" ]; then echo "qemu exited $2: $w"; return; fi
	echo "qemu exited $2 without a result"
}

# last_line OUT: the console's last line with text, escapes removed.
last_line() {
	esc=$(printf '\033')
	w=$(sed "s/${esc}\[[0-9;?]*[A-Za-z]//g; s/${esc}.//g" "$1/console.log" | tr -d '\r' |
		grep '[[:alnum:]]' | tail -n 1 | cut -c 1-100)
	echo "${w:-none}"
}

# run KVER: prints KVER's line and records it for the table.
run() {
	RESULT="" STATUS="" TOTAL="" BOOT=""
	if why=$(fetch "$1"); then
		boot "$1"
	else
		RESULT="SKIPPED ($why)" STATUS=skip
	fi
	echo "$1: $RESULT"
	# The runner's list of failed checks, if any.
	if [ "$STATUS" = fail ] && [ -f "$VMDIR/out/$1/output.log" ]; then
		sed -n '/^Failed:$/,/^[0-9]* passed, /{/^  /s/^/    /p}' "$VMDIR/out/$1/output.log"
	fi
	if [ "$STATUS" = skip ]; then log "$1 SKIPPED, not tested: $why"; fi
	printf '%s\t%s\t%s\n' "$1" "$STATUS" "$RESULT" >>"$TABLE"
}

SUITES="" CMD="" KERNELS="" ALL=0
while [ $# -gt 0 ]; do
	case $1 in
	-s | --suites) [ $# -ge 2 ] || usage; SUITES=$2; shift 2 ;;
	-c | --cmd) [ $# -ge 2 ] || usage; CMD=$2; shift 2 ;;
	-a | --all) ALL=1; shift ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) KERNELS="$KERNELS $1"; shift ;;
	esac
done
[ "$ALL" = 1 ] && KERNELS="$ALL_KERNELS"
if [ -z "$VM_SEED_DISK" ]; then
	case " $SUITES " in *" test_seeds "*) VM_SEED_DISK=1G ;; *) VM_SEED_DISK=0 ;; esac
fi
[ -n "$KERNELS" ] || usage
for k in $KERNELS; do
	[ "$k" = host ] || kernel_suites "$k" >/dev/null || die "unknown kernel $k (one of: $ALL_KERNELS)"
done
[ "$(id -u)" -eq 0 ] || die "needs root (9p passthrough of the host's files)"
QEMU=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 missing: tools/deps.sh --vm"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
	die "no static $BUSYBOX: tools/deps.sh --vm (busybox-static)"
for c in cpio gzip xz depmod modprobe mkfs.ext4 timeout; do
	command -v "$c" >/dev/null || die "$c missing: tools/deps.sh --vm"
done
[ "$VM_TIMEOUT" -gt 120 ] || die "VM_TIMEOUT must be more than 120 seconds"
case $VM_ACCEL in *kvm*)
	[ -c /dev/kvm ] || die "VM_ACCEL=$VM_ACCEL: no /dev/kvm here; the default, VM_ACCEL=tcg, needs none"
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || die "VM_ACCEL=$VM_ACCEL: /dev/kvm not readable and writable"
esac

mkdir -p "$VMDIR/out"
TABLE=$(mktemp)
trap 'rm -f "$TABLE"' EXIT
for k in $KERNELS; do
	run "$k"
done

if [ "$(wc -l <"$TABLE")" -gt 1 ]; then
	echo
	printf '%-6s %-6s %s\n' kernel status result
	while IFS='	' read -r k s r; do
		printf '%-6s %-6s %s\n' "$k" "$s" "$r"
	done <"$TABLE"
	skipped=$(awk -F'\t' '$2 == "skip" { printf " %s", $1 }' "$TABLE")
	[ -z "$skipped" ] || echo "skipped (not tested):$skipped"
fi
! grep -q '	fail	' "$TABLE"
