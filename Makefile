# SPDX-License-Identifier: GPL-2.0
# blkwise — build, test and bench.  `make V=1` shows the commands.
ARCH ?= x86
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PKG_CONFIG ?= pkg-config

OUT := build
# The version is the Debian changelog's (one source for the binary and the package).
VERSION := $(shell sed -n 1p debian/changelog | cut -d' ' -f2 | tr -d '()')
$(if $(VERSION),,$(error no version in debian/changelog's first line))
VMLINUX := vmlinux/$(ARCH)/vmlinux.h
CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror=implicit-function-declaration -std=gnu11 -D_GNU_SOURCE
CFLAGS += -I$(OUT) -Ibpf -Iuser
LIBS := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz) -lm
# export: libmicrohttpd serves HTTP (opened with dlopen by user/export/export.c, so
# only export pays for it and the GnuTLS it brings); libcap-ng drops to a
# user without capabilities.
# --web.config.file: libyaml parses it, libxcrypt's crypt_r checks bcrypt
# hashes; GnuTLS (libmicrohttpd's, opened with it) only needs its header.
CFLAGS += $(shell $(PKG_CONFIG) --cflags libmicrohttpd gnutls yaml-0.1 libxcrypt 2>/dev/null)
LIBS += $(shell $(PKG_CONFIG) --libs libcap-ng 2>/dev/null || echo -lcap-ng) -ldl -lpthread
WEB_LIBS := $(shell $(PKG_CONFIG) --libs yaml-0.1 libxcrypt 2>/dev/null || echo -lyaml -lcrypt)
LIBS += $(WEB_LIBS)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) -Ibpf \
	-Wall -Wno-unused-function

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
# The layers (docs/design.md, "Source layout"): cmd/ over export/ and analyze/,
# over tune/, over watch/, over load/, over sys/ and model/.  model/ is pure logic: no BPF, no
# syscalls beyond stdio; unit-tested without root.
PURE_SRCS := $(wildcard user/model/*.c)
USER_SRCS := $(wildcard user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/%.o,$(USER_SRCS))
PURE_OBJS := $(patsubst user/%.c,$(OUT)/%.o,$(PURE_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/unit/%,$(UNIT_SRCS))

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all clean deps run test unit bench fixture vmlinux fuzz FORCE

all: blkwise

$(OUT) $(OUT)/unit:
	$(Q)mkdir -p $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX) | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Rewritten only when the version or commit changes, so builds stay incremental.
# COMMIT: the commit, given by a build outside the git tree (`make deb`).
$(OUT)/version.h: FORCE | $(OUT)
	$(Q)c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	[ -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || c="$$c-dirty"; \
	[ -z "$(COMMIT)" ] || c="$(COMMIT)"; \
	printf '#define BW_VERSION "%s"\n#define BW_COMMIT "%s"\n' "$(VERSION)" "$$c" >$@.tmp; \
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(USER_OBJS): $(OUT)/%.o: user/%.c $(wildcard user/*/*.h) $(wildcard bpf/*.h) $(SKELS) $(OUT)/version.h | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# The HTML report's script (user/analyze/report.js) as a C string for user/analyze/html.c.
$(OUT)/report_js.h: user/analyze/report.js | $(OUT)
	$(call msg,GEN,$@)
	$(Q){ echo 'static const char bw_report_js[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t"/; s/$$/\\n"/' $<; echo ';'; } >$@
$(OUT)/analyze/html.o: $(OUT)/report_js.h

blkwise: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

$(OUT)/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(PURE_OBJS) | $(OUT)/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(PURE_OBJS) $(UNIT_LIBS) -lm -o $@

# The web config's parser, with libyaml and libxcrypt.
$(OUT)/unit/test_webcfg: $(OUT)/export/webcfg.o
$(OUT)/unit/test_webcfg: UNIT_LIBS = $(OUT)/export/webcfg.o $(WEB_LIBS) -lpthread

# A synthetic trace generator, for analyze's speed (tools/bench.sh).
$(OUT)/synthtrace: tools/synthtrace.c $(PURE_OBJS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(PURE_OBJS) -lm -o $@

# The docs' lists of figures, from the figure table (tools/sync-docs.sh, tests/test_docs.sh).
$(OUT)/figdoc: tools/figdoc.c $(PURE_OBJS) | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(PURE_OBJS) -lm -o $@

# The functions export looks up with dlsym (user/export/mhd.c), linked into
# one object: dpkg-shlibdeps reads from it the packages and versions of the
# libraries export opens with dlopen (debian/rules, ${dlopen:Depends}).
$(OUT)/dlopen-probe.so: user/export/mhd.c | $(OUT)
	$(call msg,GEN,$@)
	$(Q){ grep -o '!MHD_SYM([a-z0-9_]*)' $< | sed 's/.*(\(.*\))/MHD_\1/'; \
	  grep -o '!GT_SYM([a-z0-9_]*)' $< | sed 's/.*(\(.*\))/gnutls_\1/'; } >$@.syms
	$(Q)grep -q '^MHD_' $@.syms && grep -q '^gnutls_' $@.syms || \
		{ echo "$@: no MHD_SYM() or GT_SYM() found in $<" >&2; exit 1; }
	$(Q)awk '{ print "extern char " $$1 "[];" } END { printf "void *const bw_dlopen_probe[] = {" } \
		{ l = l " " $$1 "," } END { print l " };" }' $@.syms | \
		$(CC) -shared -fPIC -x c - -o $@ -Wl,--no-as-needed \
		$(shell $(PKG_CONFIG) --libs libmicrohttpd gnutls 2>/dev/null || echo -lmicrohttpd -lgnutls)
	$(Q)rm -f $@.syms

# The man page's option lists, from the option table alone (tools/sync-docs.sh, tests/test_docs.sh).
$(OUT)/optdoc: tools/optdoc.c $(OUT)/cmd/optdocs.o | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

# libFuzzer harnesses of the trace readers (clang's fuzzer runtime: libclang-rt-14-dev).
FUZZ_LIB := $(addprefix user/model/,trace.c blktrace.c replay.c metrics.c classify.c hist.c snap.c)
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=gnu11 -D_GNU_SOURCE -Ibpf -Iuser -I$(OUT)
$(OUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $(wildcard user/*/*.h) | $(OUT)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(OUT)/fuzz
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_LIB) -lm -o $@

fuzz: $(OUT)/fuzz/fuzz_trace $(OUT)/fuzz/fuzz_blktrace

unit: $(UNIT_BINS)
	$(Q)for t in $(UNIT_BINS); do $$t || exit 1; done

# Regenerate the checked-in vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX).tmp
	mv $(VMLINUX).tmp $(VMLINUX)

# What each needs is installed first (tools/deps.sh: build + run, --test,
# --bench), then built, so that `make -j` cannot build before installing.
deps:
	tools/deps.sh

run:
	$(Q)tools/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	./blkwise stat

# The test run includes the VM tier (QEMU, a Debian kernel; tools/run-tests.sh),
# whose packages come with tools/deps.sh --vm; BW_VM=0 leaves it out.
# The package (make deb; its build's unit tests left to the run below) and
# the root file system the VM tier installs it in (tools/pkgroot.sh, made
# again only when the package's dependencies change) are built before the
# tests: tests/test_package*.sh check them.
test:
	$(Q)tools/deps.sh $(if $(filter 0,$(BW_VM)),--test,--vm)
	$(Q)$(MAKE) --no-print-directory all fixture $(UNIT_BINS) $(OUT)/figdoc $(OUT)/optdoc
	$(Q)DEB_BUILD_OPTIONS=nocheck $(MAKE) --no-print-directory deb
	$(Q)tools/pkgroot.sh $(DEB)
	tools/run-tests.sh

fixture:
	$(Q)$(MAKE) -s -C tools/fakedisk

bench:
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory all fixture $(OUT)/synthtrace
	tools/bench.sh

clean:
	rm -rf $(OUT) blkwise
	$(MAKE) -s -C tools/fakedisk clean

include mk/install.mk
include mk/deb.mk
include mk/vmtest.mk
