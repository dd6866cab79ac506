#!/bin/sh
# Install exactly the Debian packages blkwise needs to build, test and bench.
# Idempotent: installs only what is missing, runs apt-get update at most once.
set -eu

PKGS="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc
libfuse3-dev fuse3 shunit2 fio jq util-linux libcap2-bin
sysstat kmod procps fdisk python3 python3-yaml
libmicrohttpd-dev libgnutls28-dev libyaml-dev libcrypt-dev libcap-ng-dev prometheus apache2-utils
openssl curl systemd groff-base man-db
libclang-rt-14-dev chromium dmsetup mdadm"
[ "${1:-}" = "--bench" ] && PKGS="$PKGS libbpf-tools bpftrace blktrace"
# tools/vmtest.sh: QEMU, the guest's first stage, and what fetches and
# unpacks the Debian kernels it boots.
[ "${1:-}" = "--vm" ] && PKGS="$PKGS qemu-system-x86 busybox-static cpio xz-utils e2fsprogs
debian-archive-keyring apt dpkg blktrace"

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
