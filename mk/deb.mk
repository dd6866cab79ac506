# SPDX-License-Identifier: GPL-2.0
# mk/deb.mk: the Debian package and the container image, included from the
# top Makefile.
#
#   make deb     build/deb/blkwise_$(VERSION)_amd64.deb, with debhelper and
#                dpkg-buildpackage (debian/), from a copy of the git tree's
#                files (nothing built here goes in), in a network namespace
#                of its own where unshare(1) can make one: no download.
#   make image   the OCI image of the package (dist/Containerfile, dist/image.sh):
#                blkwise:$(VERSION) in podman's store, and
#                build/image/blkwise_$(VERSION)_oci.tar
#
# What they need is installed first: tools/deps.sh --deb (--image).

DEB_DIR := build/deb
DEB_SRC := $(DEB_DIR)/blkwise-$(VERSION)
DEB := $(DEB_DIR)/blkwise_$(VERSION)_amd64.deb

.PHONY: deb deb-deps image

deb-deps:
	$(Q)tools/deps.sh --deb

deb: deb-deps
	$(Q)git rev-parse --git-dir >/dev/null 2>&1 || \
		{ echo "make deb: needs the git tree (its files are what is packaged)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(call msg,COPY,$(DEB_SRC) (the tree's files))
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -C $(DEB_SRC) -xf -
	$(call msg,DPKG-BP,$(DEB))
	$(Q)c=$$(git rev-parse --short=12 HEAD); \
	[ -z "$$(git status --porcelain --untracked-files=no)" ] || c="$$c-dirty"; \
	net=""; ! unshare --net true 2>/dev/null || net="unshare --net --"; \
	cd $(DEB_SRC) && BW_COMMIT=$$c $$net dpkg-buildpackage -b --no-sign \
		>../build.log 2>&1 || { tail -n 40 ../build.log >&2; exit 1; }
	$(Q)test -f $(DEB) || { echo "make deb: $(DEB) was not made" >&2; exit 1; }
	$(Q)dpkg-deb -f $(DEB) Package Version Architecture Depends
	@echo "make deb: $(DEB) (log: $(DEB_DIR)/build.log)"

image: deb
	$(Q)tools/deps.sh --image
	$(Q)dist/image.sh $(DEB)
