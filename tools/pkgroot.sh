#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tools/pkgroot.sh DEB: the machine the package tests install DEB on, as a
# root file system: Debian 12 as mmdebstrap's minbase variant makes it (the
# Essential packages and apt: none of the packages blkwise is built with),
# with apt's lists and, in its apt cache, the archives of what DEB depends
# on and recommends, fetched here; nothing of them is installed.  So that
# `apt-get install ./DEB` in it resolves and installs DEB's dependencies as
# on any Debian 12 machine, with no network: tests/test_package_install.sh
# does that in the VM tier's guest, which has none.
#
# Output: build/pkgroot/root.tar, and build/pkgroot/key: the suite, mirror
# and DEB's Depends, Recommends and Pre-Depends; made again only when the
# key changes.  Needs root, mmdebstrap (tools/deps.sh --image) and Debian's
# mirror (PKGROOT_MIRROR, http://deb.debian.org/debian).
set -eu
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: tools/pkgroot.sh DEB" >&2; exit 2; }
cd "$(dirname "$0")/.."
deb=$(realpath "$1")
suite=bookworm
mirror=${PKGROOT_MIRROR:-http://deb.debian.org/debian}
dir=build/pkgroot
key=$(printf '%s %s\n' "$suite" "$mirror"; dpkg-deb -f "$deb" Depends Recommends Pre-Depends)
if [ -f "$dir/root.tar" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
	echo "pkgroot: $dir/root.tar is up to date"
	exit 0
fi
command -v mmdebstrap >/dev/null || { echo "pkgroot: mmdebstrap missing: tools/deps.sh --image" >&2; exit 1; }
mkdir -p "$dir"
rm -f "$dir/root.tar" "$dir/key"
echo "pkgroot: making $dir/root.tar (Debian $suite, minbase, and the archives $(basename "$deb") needs)"
# shellcheck disable=SC2016 # "$1" is the root, for mmdebstrap's hooks
# The lists kept compressed, apt's caches of them left for apt to make
# again: a third less for the guest to unpack.
mmdebstrap --quiet --variant=minbase --skip=cleanup/apt \
	--aptopt='Acquire::GzipIndexes "true"' --aptopt='Acquire::CompressionTypes::Order:: "gz"' \
	--customize-hook="copy-in $deb /tmp" \
	--customize-hook='chroot "$1" apt-get install --download-only -y -q "/tmp/'"$(basename "$deb")"'" >/dev/null' \
	--customize-hook='rm -f "$1/tmp/'"$(basename "$deb")"'" "$1"/var/cache/apt/*.bin' \
	"$suite" "$dir/root.new.tar" "$mirror"
mv "$dir/root.new.tar" "$dir/root.tar"
printf '%s\n' "$key" >"$dir/key"
echo "pkgroot: $dir/root.tar ($(du -m "$dir/root.tar" | cut -f1) MiB)"
