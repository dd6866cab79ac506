#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dist/image.sh DEB: the blkwise OCI image, from the Debian package DEB
# (`make image` runs it on build/deb/blkwise_VERSION_amd64.deb):
#   build/image/rootfs.tar   Debian 12 by mmdebstrap: the Essential packages,
#                            DEB's dependencies (apt resolves theirs), and DEB
#                            installed with dpkg, which checks its Depends
#                            (documentation and translations left out, but
#                            the copyright files)
#   blkwise:VERSION          the image, in podman's store (dist/Containerfile)
#   build/image/blkwise_VERSION_oci.tar   the same, as an OCI archive
#                            (`podman load -i`, `skopeo copy oci-archive:...`)
# Needs root, mmdebstrap, podman (tools/deps.sh --image) and Debian's
# mirror (IMAGE_MIRROR, http://deb.debian.org/debian).
set -eu
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: dist/image.sh DEB" >&2; exit 2; }
deb=$(realpath "$1")
cd "$(dirname "$0")/.."
version=$(dpkg-deb -f "$deb" Version)
mirror=${IMAGE_MIRROR:-http://deb.debian.org/debian}
dir=build/image
mkdir -p "$dir"
rm -f "$dir/rootfs.tar" "$dir/blkwise_${version}_oci.tar"
echo "image: $dir/rootfs.tar (Debian bookworm: Essential, and $(basename "$deb") with its dependencies)"
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/([^)]*)//; s/|.*//' | tr -d ' ' | paste -sd,)
# shellcheck disable=SC2016 # "$1" is the root, for mmdebstrap's hooks
mmdebstrap --quiet --variant=essential --include="$deps" \
	--customize-hook="copy-in $deb /tmp" \
	--customize-hook='chroot "$1" dpkg -i "/tmp/'"$(basename "$deb")"'" >/dev/null' \
	--customize-hook='rm -f "$1/tmp/'"$(basename "$deb")"'"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	bookworm "$dir/rootfs.tar" "$mirror"
echo "image: blkwise:$version (dist/Containerfile)"
old=$(podman image inspect --format '{{.Id}}' "blkwise:$version" 2>/dev/null || true)
podman build --quiet --pull=never --layers=false -f dist/Containerfile -t "blkwise:$version" "$dir" >/dev/null
# The image this one replaces, untagged now: removed unless a container uses it.
new=$(podman image inspect --format '{{.Id}}' "blkwise:$version")
[ -z "$old" ] || [ "$old" = "$new" ] || podman rmi "$old" >/dev/null 2>&1 || true
podman save --quiet --format oci-archive -o "$dir/blkwise_${version}_oci.tar" "blkwise:$version"
echo "image: blkwise:$version, $dir/blkwise_${version}_oci.tar ($(du -m "$dir/blkwise_${version}_oci.tar" | cut -f1) MiB)"
