#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages blkwise needs, by purpose (README.md,
# "Dependencies" says why each one is there):
#   tools/deps.sh           build and run: what `make run` needs
#   tools/deps.sh --test    and what the tests need (`make test`)
#   tools/deps.sh --bench   and the benchmark's peers and tables (`make bench`)
#   tools/deps.sh --vm      and the VM tier (`make vmtest`), which runs the tests
#   tools/deps.sh --deb     build, and Debian's packaging tools (`make deb`)
#   tools/deps.sh --image   --deb, and what builds and runs the image (`make image`)
# Idempotent: installs only what is missing, runs apt-get update at most once.
set -eu

# Build: the compiler for BPF and user space, libbpf and bpftool for the
# skeletons, and the libraries the binary links.
BUILD="clang llvm make gcc libc6-dev pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libgnutls28-dev libyaml-dev libcrypt-dev libcap-ng-dev"
# Run: the shared libraries of the binary (libmicrohttpd and GnuTLS are opened
# by export only; libyaml reads its --web.config.file, libcrypt checks bcrypt).
RUN="libbpf1 libelf1 zlib1g libcap-ng0 libmicrohttpd12 libgnutls30 libyaml-0-2 libcrypt1"
# Test: the emulated disk (FUSE), the runner and its oracles and workloads
# (bpftrace: a BPF counter independent of blkwise's code), the servers and
# checkers the suites start, the fuzzers' runtime, and nm for the layer
# check (tools/layers.py), and git for the list of the tree's files (the
# licence check of tests/test_docs.sh), and udev's udevadm, which waits
# for udev's probe of a new loop device before a test counts its I/O.
TEST="libfuse3-dev fuse3 shunit2 fio jq python3 python3-yaml util-linux mount fdisk e2fsprogs
kmod procps iproute2 libcap2-bin curl openssl gzip prometheus apache2-utils chromium systemd
groff-base man-db dmsetup mdadm libclang-rt-14-dev binutils bpftrace git udev"
# Deb: Debian's own tools build the package (`make deb`, debian/): debhelper,
# and dpkg-buildpackage and dpkg-shlibdeps from dpkg-dev.
DEB="debhelper dpkg-dev"
# Image: a Debian root file system made from Debian's packages (mmdebstrap:
# no image registry is reachable), and podman to build and run the image
# (dist/Containerfile); runc as its runtime, since crun refuses a host whose
# cgroup hierarchy is hybrid (v1 controllers beside v2).  mmdebstrap also
# makes the package tests' root file system (tools/pkgroot.sh).
IMAGE="mmdebstrap podman runc"
# Package tests: lintian judges the package (tests/test_package.sh); dpkg
# (dpkg-deb), tar and coreutils (chroot, dd) take it apart and enter the
# roots it is installed in (Essential, but named for the suites' checks).
PKGTEST="lintian dpkg tar coreutils"
# Bench: the peers measured beside blkwise, the blktrace pipeline analyze is
# timed against, and iostat for the parallelism table.
BENCH="libbpf-tools blktrace sysstat"
# VM tier: QEMU, the guest's first stage, what fetches and unpacks the Debian
# kernels it boots, the guest's scratch file systems, and blktrace for the
# captures made in the guest.
VM="qemu-system-x86 busybox-static cpio xz-utils zstd e2fsprogs debian-archive-keyring apt
dpkg blktrace"

PKGS="$BUILD $RUN"
for arg in "$@"; do
	case $arg in
	--test) PKGS="$PKGS $TEST $DEB $IMAGE $PKGTEST" ;;
	--bench) PKGS="$PKGS $TEST $BENCH" ;;
	--vm) PKGS="$PKGS $TEST $DEB $IMAGE $PKGTEST $VM" ;;
	--deb) PKGS="$PKGS $DEB" ;;
	--image) PKGS="$PKGS $DEB $IMAGE" ;;
	--list) LIST=1 ;;
	*) echo "usage: tools/deps.sh [--test] [--bench] [--vm] [--deb] [--image] [--list]" >&2; exit 2 ;;
	esac
done
PKGS=$(echo $PKGS | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' ')
if [ -n "${LIST:-}" ]; then
	echo "$PKGS"
	exit 0
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing; run as root: apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
