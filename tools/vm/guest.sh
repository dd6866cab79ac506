#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Second stage of the vmtest guest, PID 1 on the overlay of the host's /.
# Mounts what a booted Debian has (devpts, shm, tracefs, debugfs, bpffs,
# cgroup2, configfs), binds the guest kernel's modules on /lib/modules, puts
# /tmp and /var/tmp on the scratch disk (ext4, like the host's), loads the
# test devices' modules, makes a memory disk for BW_MEM_DIR, runs the job
# of the result share and powers off.
# Writes there: output.log (the job's output) and rc (its exit status).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

say() { echo "vmtest: $*"; }
warn() { echo "vmtest: warning: $*"; }

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

# Whatever happens, the guest ends; the host sees no rc and says why.
trap poweroff_now EXIT

param() { sed -n "s/.*vmtest\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }

out=$(param out)
timeout=$(param timeout)
load=$(param load | tr ',' ' ')

mnt() {
	mkdir -p "$3"
	mount -t "$1" "$2" "$3" || warn "cannot mount $1 on $3"
}

# The guest kernel's modules (and config) in the places modprobe looks,
# first: mounting configfs may need its module.
mkdir -p /lib/modules
mount --bind "$(param modules)" /lib/modules || warn "cannot bind the guest kernel's modules"
b=$(param boot)
[ -d "$b" ] && [ "$b" != /boot ] && mount --bind "$b" /boot

mnt devpts devpts /dev/pts
mnt tmpfs shm /dev/shm
mount -t tmpfs -o mode=755,nosuid,nodev run /run && mkdir -p /run/lock || warn "cannot mount tmpfs on /run"
mnt tracefs tracefs /sys/kernel/tracing
mnt debugfs debugfs /sys/kernel/debug
mnt bpf bpf /sys/fs/bpf
mnt cgroup2 cgroup2 /sys/fs/cgroup
modprobe -q configfs
mnt configfs configfs /sys/kernel/config
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr

# The kernel's BPF accounting held on for the whole run: blkwise turns it
# on for a second now and then to price its programs (user/watch/cost.c),
# and each turn patches the call site of every program run in the kernel;
# under multi-threaded TCG a CPU has been seen to spin for good at such a
# site (soft lockups at bpf_trace_run1, tools/vmtest.sh's watch_lockup).
# Where it is on already, blkwise reads it and turns nothing.
sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null || echo 1 >/proc/sys/kernel/bpf_stats_enabled ||
	warn "cannot turn the kernel's BPF accounting on"

ulimit -l "$(param memlock)" 2>/dev/null || warn "cannot set ulimit -l $(param memlock)"
ulimit -n "$(param nofile)" 2>/dev/null || warn "cannot set ulimit -n $(param nofile)"
hostname "vmtest-$(uname -r)"
ip link set lo up 2>/dev/null || busybox ip link set lo up || warn "cannot bring lo up"
modprobe -q virtio_rng 2>/dev/null

# A tree or result share under the host's /tmp or /var/tmp would be hidden
# by the scratch disk mounted there: held aside, then bound back at their
# paths (the tree first, the result share may lie inside it).
keep=()
for p in "$(param root)" "$out"; do
	case $p in /tmp/*|/var/tmp/*) ;; *) continue ;; esac
	mkdir -p "/run/vmtest-keep/${#keep[@]}" &&
		mount --bind "$p" "/run/vmtest-keep/${#keep[@]}" && keep+=("$p")
done
modprobe -q virtio_blk && modprobe -q ext4 || warn "cannot load virtio_blk, ext4"
for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
if mkdir -p /run/vmtest-scratch && mount -t ext4 /dev/vda /run/vmtest-scratch; then
	mkdir -p /run/vmtest-scratch/tmp /run/vmtest-scratch/var-tmp
	chmod 1777 /run/vmtest-scratch/tmp /run/vmtest-scratch/var-tmp
	mount --bind /run/vmtest-scratch/tmp /tmp
	mount --bind /run/vmtest-scratch/var-tmp /var/tmp
	for i in "${!keep[@]}"; do
		mkdir -p "${keep[i]}" && mount --bind "/run/vmtest-keep/$i" "${keep[i]}" ||
			warn "cannot keep ${keep[i]} reachable under the scratch /tmp"
	done
else
	warn "no scratch disk: /tmp and /var/tmp are on the overlay's tmpfs"
fi

# A memory-backed directory that takes O_DIRECT, for the tests' "shm" loop
# images where tmpfs does not (before 6.6): ext4 on a brd ramdisk.
memdisk=$(param memdisk)
if [ "${memdisk:-0}" -gt 0 ]; then
	if modprobe brd rd_nr=1 rd_size=$((memdisk * 1024)) && [ -b /dev/ram0 ] &&
		mkfs.ext4 -q -F -L vmmem /dev/ram0 >/dev/null 2>&1 &&
		mkdir -p /run/vmtest-mem && mount -t ext4 /dev/ram0 /run/vmtest-mem; then
		chmod 1777 /run/vmtest-mem
		export BW_MEM_DIR=/run/vmtest-mem
	else
		warn "no memory disk: BW_MEM_DIR not set"
	fi
fi

for m in $load; do
	modprobe "$m" || warn "cannot load module $m"
done

read -r up _ </proc/uptime
say "userland up after ${up}s: kernel $(uname -r), job $out/job, timeout ${timeout}s${BW_MEM_DIR:+, BW_MEM_DIR=$BW_MEM_DIR}"
start=$(date +%s)
timeout -k 10 "$timeout" bash "$out/job" </dev/null 2>&1 | tee "$out/output.log"
rc=${PIPESTATUS[0]}
say "job exited $rc after $(($(date +%s) - start))s"
echo "$rc" >"$out/rc"
sync
