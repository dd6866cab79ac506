#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the Debian package (`make deb`) installed and run on a
# machine that has none of the packages it was built with, the way an
# operator installs it: `apt-get install ./blkwise_VERSION_amd64.deb`.
#
# That machine is a root file system of Debian 12, mmdebstrap's minbase
# (tools/pkgroot.sh: the Essential packages and apt, with the archives of
# the package's dependencies in apt's cache, since the guest has no
# network), unpacked here and entered with chroot; the kernel, /proc, /sys
# and /dev are this machine's.  It runs in the VM tier's 6.1 guest (a kernel
# the package was not built on; the guest's own userland is the build
# host's, so the root file system is what has none of the build's
# packages), and on the host only with BW_PKG_HERE=1 (elsewhere every test
# SKIPs, naming the guest).  The tests run in order, on one root:
#   install  what apt installs, from the package's Depends alone; the unit
#            enabled; the units pass systemd-analyze verify in that root
#   stat     `blkwise stat -c 1` there counts a loop device's reads as
#            /proc/diskstats does
#   export   `blkwise export` there, scraped from outside: its request
#            counter's delta is diskstats' delta
#   tune     the tune unit's ExecStart, with only its capabilities, switches
#            a device to bfq and puts it back on SIGTERM (where BFQ is)
#   remove   `dpkg -r` leaves of what the package owned only its conffiles,
#            and dpkg's state of them
#   purge    `dpkg --purge` leaves nothing the package owned or made
# Needs `make deb` and tools/pkgroot.sh run first (`make test` does both);
# without them each test FAILs in the guest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

PK_VERSION=$(sed -n 1p "$BW_ROOT/debian/changelog" | cut -d' ' -f2 | tr -d '()')
PK_DEB=${PK_DEB:-$BW_ROOT/build/deb/blkwise_${PK_VERSION}_amd64.deb}
PK_TAR=$BW_ROOT/build/pkgroot/root.tar
PK_ROOT=$BW_TMP/root
# What the package owned (dpkg -L after the install), and which of its
# directories existed before it (shared with other packages).
PK_OWNED=$BW_TMP/owned
PK_BEFORE=$BW_TMP/dirs-before

# pk_here: whether this suite runs here; SKIPs naming the guest if not.
pk_here() {
	[ -n "${BW_VM_TIER:-}" ] || [ "${BW_PKG_HERE:-}" = 1 ] && return 0
	bw_skip "runs in the VM tier's 6.1 guest (or here with BW_PKG_HERE=1): a machine the package was not built on"
	return 1
}

# pk_require: the package and the root file system exist (FAIL if not).
pk_require() {
	bw_require chroot unshare tar dpkg-deb curl jq || return 1
	[ -f "$PK_DEB" ] || { fail "no $PK_DEB: make deb (make test makes it)"; return 1; }
	[ -f "$PK_TAR" ] || { fail "no $PK_TAR: tools/pkgroot.sh $PK_DEB (make test makes it)"; return 1; }
	return 0
}

# "${PK_C[@]}" CMD...: CMD in the root, with a plain environment (BW_RUN_ID
# kept: the leak checks find what it starts); one process, CMD's pid.
PK_C=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 BW_RUN_ID="${BW_RUN_ID:-}"
	DEBIAN_FRONTEND=noninteractive chroot "$PK_ROOT")
pk_c() { "${PK_C[@]}" "$@"; }

# pk_mount: /proc, /sys and /dev of this machine in the root, until the
# test's end (blkwise needs the kernel's BTF, sysfs and the devices).
pk_mount() {
	local m
	for m in proc sys dev; do
		mkdir -p "$PK_ROOT/$m"
		mount --rbind "/$m" "$PK_ROOT/$m" && mount --make-rslave "$PK_ROOT/$m" ||
			{ fail "cannot bind /$m into the root"; return 1; }
		bw_on_cleanup "umount -R $PK_ROOT/$m"
	done
}

# pk_pkgs_installed PKG...: those of PKG installed in the root.
pk_pkgs_installed() {
	local p
	for p in "$@"; do
		pk_c dpkg-query -W -f='${db:Status-Abbrev}\n' "$p" 2>/dev/null | grep -q '^ii' && echo "$p"
	done
}

# The packages blkwise is built with: debian/control's Build-Depends (with
# debhelper for debhelper-compat), the compiler and dpkg-dev.
pk_build_pkgs() {
	sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*: /p' "$BW_ROOT/debian/control" | grep -v '^Standards' |
		sed 's/^Build-Depends://; s/([^)]*)//g' | tr ',' '\n' | tr -d ' ' | grep . |
		sed 's/^debhelper-compat$/debhelper/'
	echo gcc make dpkg-dev | tr ' ' '\n'
}

# The dependencies the package names (Depends, without versions or alternatives).
pk_deps() {
	dpkg-deb -f "$PK_DEB" Depends | tr ',' '\n' | sed 's/([^)]*)//; s/|.*//' | tr -d ' ' | grep .
}

# The root, unpacked once; the tests go on from where the last one left it.
test_1_install() {
	local built deps missing f
	pk_here && pk_require || return 0
	mkdir -p "$PK_ROOT"
	tar -C "$PK_ROOT" -xf "$PK_TAR" || { fail "cannot unpack $PK_TAR"; return; }
	# shellcheck disable=SC2046 # a package name a word
	built=$(pk_pkgs_installed $(pk_build_pkgs))
	assertEquals "none of the build's packages in the root" "" "$built"
	deps=$(pk_deps)
	assertNotEquals "the package has dependencies" "" "$deps"
	# Those not in minbase (libbpf1, libmicrohttpd12, ...): apt must bring them.
	missing=$(comm -23 <(echo "$deps" | sort) <(pk_pkgs_installed $deps | sort))
	echo "  dependencies apt has to install: $(echo $missing)"
	assertTrue "libbpf1 and libmicrohttpd12 not installed before" \
		"echo '$missing' | grep -qx libbpf1 && echo '$missing' | grep -qx libmicrohttpd12"
	pk_mount || return
	# What was there before, to tell the package's directories from shared ones.
	(cd "$PK_ROOT" && find . -xdev -printf '/%P\n' | sort) >"$PK_BEFORE"
	cp "$PK_DEB" "$PK_ROOT/tmp/"
	# In a network namespace of its own: what apt installs comes from the root's cache.
	unshare --net "${PK_C[@]}" apt-get install -y -q "/tmp/$(basename "$PK_DEB")" >"$BW_TMP/apt.out" 2>&1
	assertEquals "apt-get install /tmp/$(basename "$PK_DEB") (no network): exit status" 0 $?
	tail -n 3 "$BW_TMP/apt.out" | sed 's/^/  apt: /'
	rm -f "$PK_ROOT/tmp/$(basename "$PK_DEB")"
	assertEquals "blkwise is installed" "ii" "$(pk_c dpkg-query -W -f='${db:Status-Abbrev}' blkwise | tr -d ' ')"
	missing=$(comm -23 <(echo "$deps" | sort) <(pk_pkgs_installed $deps | sort))
	assertEquals "every dependency installed by apt" "" "$missing"
	# shellcheck disable=SC2046
	assertEquals "and still none of the build's packages" "" "$(pk_pkgs_installed $(pk_build_pkgs))"
	pk_c dpkg -L blkwise | grep -vx '/\.' | pk_canon >"$PK_OWNED"
	for f in /usr/sbin/blkwise /usr/share/man/man8/blkwise.8.gz /usr/lib/systemd/system/blkwise-export.service \
		/usr/lib/systemd/system/blkwise-tune@.service /etc/default/blkwise-export /etc/default/blkwise-tune \
		/usr/share/blkwise/blkwise.json /usr/share/blkwise/blkwise-rules.yml \
		/usr/share/blkwise/prometheus-fleet.yml; do
		assertTrue "$f installed" "grep -qx '$f' $PK_OWNED && [ -f $PK_ROOT$f ]"
	done
	assertEquals "the conffiles" "/etc/default/blkwise-export /etc/default/blkwise-tune" \
		"$(pk_c dpkg-query -W -f='${Conffiles}\n' blkwise | awk 'NF { print $1 }' | sort | paste -sd' ')"
	assertTrue "blkwise-export.service enabled at install" \
		"[ -L $PK_ROOT/etc/systemd/system/multi-user.target.wants/blkwise-export.service ]"
	pk_c ldd /usr/sbin/blkwise >"$BW_TMP/ldd" 2>&1
	assertFalse "every library found in the root: $(grep 'not found' "$BW_TMP/ldd")" "grep -q 'not found' $BW_TMP/ldd"
	pk_c /usr/sbin/blkwise --version >"$BW_TMP/version" 2>&1
	assertTrue "blkwise --version runs there: $(cat "$BW_TMP/version")" \
		"grep -q '^blkwise $PK_VERSION (commit [0-9a-f]' $BW_TMP/version"
	pk_units_verify
}

# The installed units, in the root as installed, pass systemd-analyze verify
# (the guest's, whose userland has systemd) with nothing said.
pk_units_verify() {
	if ! command -v systemd-analyze >/dev/null; then
		echo "  (no systemd-analyze here: the units were not verified)"
		return 0
	fi
	bw_units_verify "$PK_ROOT" blkwise-export.service blkwise-tune@loop0.service
	assertEquals "systemd-analyze verify of the installed units: exit status" 0 $?
	[ -s "$BW_TMP/verify.out" ] && sed 's/^/  verify: /' "$BW_TMP/verify.out"
	assertEquals "systemd-analyze verify of the installed units: nothing said" "" "$(cat "$BW_TMP/verify.out")"
}

# pk_reads DEV: reads completed on DEV, from /proc/diskstats.
pk_reads() { awk -v d="$1" '$3 == d { print $4 }' /proc/diskstats; }

# `blkwise stat -c 1` in the root counts the reads of a loop device made
# from outside as diskstats does.
test_2_stat() {
	local dev d0 d1 n out=$BW_TMP/stat.json
	pk_here && pk_require || return 0
	[ -x "$PK_ROOT/usr/sbin/blkwise" ] || { fail "not installed (test_1_install failed)"; return; }
	bw_require losetup dd || return 0
	pk_mount || return
	bw_loop dev 64 shm || { fail "no loop device"; return; }
	bw_bg_start "$out" "Ctrl-C to stop" "${PK_C[@]}" /usr/sbin/blkwise stat -d "$dev" -i 4 -c 1 --json --no-state ||
		{ fail "blkwise stat did not start in the root"; return; }
	d0=$(pk_reads "$dev")
	dd if=/dev/"$dev" of=/dev/null bs=4k count=500 iflag=direct status=none
	d1=$(pk_reads "$dev")
	wait "$BW_BG_PID"
	assertEquals "stat -c 1: exit status" 0 $?
	n=$(jq -r --arg d "$dev" '.devices[] | select(.device == $d) | .ops.read.ios' "$out")
	echo "  $dev: stat counted ${n:-nothing} reads; diskstats $((d1 - d0))"
	assertEquals "500 reads made" 500 $((d1 - d0))
	bw_expect_count "stat's reads vs diskstats" $((d1 - d0)) "${n:-0}" "$(bw_missed "$out" "$dev")"
}

# `blkwise export` in the root, as the unit runs it (root, dropping to
# nobody, the state in /var/lib/blkwise), scraped from outside the root:
# a loop device's request counter moves as diskstats does.
test_3_export() {
	local dev port url r0 r1 d0 d1
	pk_here && pk_require || return 0
	[ -x "$PK_ROOT/usr/sbin/blkwise" ] || { fail "not installed (test_1_install failed)"; return; }
	bw_require losetup dd || return 0
	pk_mount || return
	bw_loop dev 64 shm || { fail "no loop device"; return; }
	port=$(bw_free_port)
	url=http://127.0.0.1:$port
	bw_bg_start "$BW_TMP/export.out" "serving" "${PK_C[@]}" /usr/sbin/blkwise export -d "$dev" \
		--listen 127.0.0.1:"$port" -i 0.5 || { fail "blkwise export did not start in the root"; return; }
	assertTrue "it dropped to nobody: $(grep -m 1 'running as' "$BW_TMP/export.out.err")" \
		"grep -q 'running as nobody' $BW_TMP/export.out.err"
	d0=$(pk_reads "$dev")
	ex_page_after "$url" "$(date +%s.%N)" "$BW_TMP/page" || { fail "no sample after start"; return; }
	r0=$(ex_dev_requests "$BW_TMP/page" "$dev")
	dd if=/dev/"$dev" of=/dev/null bs=4k count=700 iflag=direct status=none
	d1=$(pk_reads "$dev")
	ex_page_after "$url" "$(date +%s.%N)" "$BW_TMP/page" || { fail "no sample after the reads"; return; }
	r1=$(ex_dev_requests "$BW_TMP/page" "$dev")
	echo "  $dev: blkwise_requests_total $r0 -> $r1; diskstats reads $d0 -> $d1"
	assertEquals "700 reads made" 700 $((d1 - d0))
	assertEquals "the exporter's request counter moved as diskstats" $((d1 - d0)) $((r1 - r0))
	assertTrue "the page has the device's info" "grep -q 'blkwise_device_info{.*device=\"$dev\"' $BW_TMP/page"
	kill -TERM "$BW_BG_PID"
	wait "$BW_BG_PID"
	assertEquals "export stopped by SIGTERM: exit status" 0 $?
	assertTrue "it made its state directory, the root's /var/lib/blkwise" "[ -d $PK_ROOT/var/lib/blkwise ]"
}

# The tuner as blkwise-tune@DEV.service runs it: the installed unit's
# ExecStart for a loop device, with the options /etc/default/blkwise-tune
# suggests for a device not on bfq, holding only the capabilities of the
# unit's CapabilityBoundingSet (setpriv, as root): it loads, switches the
# device to bfq, and on SIGTERM (systemctl stop) puts the scheduler back and
# exits 0.  Where the kernel has no BFQ (the host) it SKIPs.
test_3_tune() {
	local dev unit=$PK_ROOT/lib/systemd/system/blkwise-tune@.service exec caps sched
	pk_here && pk_require || return 0
	[ -f "$unit" ] || { fail "not installed (test_1_install failed)"; return; }
	bw_require losetup || return 0
	modprobe -q bfq 2>/dev/null
	grep -qw bfq /proc/modules 2>/dev/null || [ -d /sys/module/bfq ] ||
		{ bw_skip "no bfq in this kernel ($(uname -r)): the tuner runs in the guest"; return 0; }
	pk_mount || return
	bw_loop dev 64 shm || { fail "no loop device"; return; }
	# What systemd makes for the unit first: RuntimeDirectory=, StateDirectory=.
	mkdir -p "$PK_ROOT/run/blkwise" "$PK_ROOT/var/lib/blkwise"
	exec=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s|%I|$dev|g; s|\$BLKWISE_TUNE_OPTS|--set-scheduler bfq|")
	caps=$(sed -n 's/^CapabilityBoundingSet=CAP_//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	echo "  ExecStart: $exec; capabilities: $caps"
	assertEquals "the unit's capabilities" "+bpf,+perfmon,+sys_resource" "$caps"
	# shellcheck disable=SC2086 # ExecStart's words
	bw_bg_start "$BW_TMP/tune.out" "tuning" "${PK_C[@]}" setpriv --bounding-set=-all,"$caps" \
		--inh-caps=-all $exec || { fail "the unit's tuner did not start"; return; }
	sched=$(cat /sys/block/"$dev"/queue/scheduler)
	assertTrue "the device on bfq while it tunes: $sched" "echo '$sched' | grep -q '\[bfq\]'"
	assertTrue "its values kept in the root's /run/blkwise" "[ -f $PK_ROOT/run/blkwise/tune-$dev ]"
	kill -TERM "$BW_BG_PID"
	wait "$BW_BG_PID"
	assertEquals "stopped by SIGTERM: exit status" 0 $?
	sched=$(cat /sys/block/"$dev"/queue/scheduler)
	assertTrue "the scheduler put back: $sched" "echo '$sched' | grep -q '\[none\]'"
}

# pk_canon: the paths on stdin as the root resolves them (/lib/systemd is
# /usr/lib/systemd on a merged /usr), sorted.  find lists the paths before
# the install so already (it follows no link).
pk_canon() { pk_c xargs -d '\n' realpath -m -- | sort -u; }

# pk_left: of what the package owned, what still exists and did not before
# the install (a directory it shares with other packages stays).
pk_left() {
	local p
	while read -r p; do
		[ -e "$PK_ROOT$p" ] || [ -L "$PK_ROOT$p" ] || continue
		grep -qxF "$p" "$PK_BEFORE" && continue
		echo "$p"
	done <"$PK_OWNED"
}

# dpkg -r: of what the package owned only the conffiles stay, and dpkg
# keeps it as config-files, with those files' list and checksums; the
# unit's enablement stays as state (a link to the unit, gone), for a
# reinstall to find, as for any Debian service.
test_4_remove() {
	pk_here && pk_require || return 0
	[ -s "$PK_OWNED" ] || { fail "not installed (test_1_install failed)"; return; }
	pk_c dpkg -r blkwise >"$BW_TMP/dpkg.out" 2>&1
	assertEquals "dpkg -r blkwise: exit status" 0 $?
	assertEquals "left of what it owned: the conffiles" \
		"/etc/default/blkwise-export /etc/default/blkwise-tune" "$(pk_left | paste -sd' ')"
	assertEquals "dpkg's state: removed, config-files kept" "rc" \
		"$(pk_c dpkg-query -W -f='${db:Status-Abbrev}' blkwise | tr -d ' ')"
	assertEquals "dpkg still knows the conffiles" "/etc/default/blkwise-export /etc/default/blkwise-tune" \
		"$(pk_c dpkg-query -W -f='${Conffiles}\n' blkwise | awk 'NF { print $1 }' | sort | paste -sd' ')"
	assertFalse "the unit gone" "[ -e $PK_ROOT/lib/systemd/system/blkwise-export.service ]"
	assertTrue "the state directory kept" "[ -d $PK_ROOT/var/lib/blkwise ]"
}

# dpkg --purge: nothing of what the package owned, nor its state, nor what
# it made (the unit's enablement, the exporter's /var/lib/blkwise).
test_5_purge() {
	pk_here && pk_require || return 0
	[ -s "$PK_OWNED" ] || { fail "not installed (test_1_install failed)"; return; }
	assertTrue "before: the unit's enablement, /var/lib/blkwise" \
		"[ -L $PK_ROOT/etc/systemd/system/multi-user.target.wants/blkwise-export.service ] &&
		 [ -d $PK_ROOT/var/lib/blkwise ]"
	pk_c dpkg --purge blkwise >"$BW_TMP/dpkg.out" 2>&1
	assertEquals "dpkg --purge blkwise: exit status" 0 $?
	assertEquals "left of the $(wc -l <"$PK_OWNED") paths it owned" "" "$(pk_left | paste -sd' ')"
	assertEquals "dpkg knows it no more" "" \
		"$(pk_c dpkg-query -W -f='${db:Status-Abbrev}' blkwise 2>/dev/null | tr -d ' ')"
	assertEquals "none of dpkg's files of it" "" "$(find "$PK_ROOT"/var/lib/dpkg/info -name 'blkwise.*')"
	assertEquals "none of deb-systemd-helper's state of it" "" \
		"$(find "$PK_ROOT"/var/lib/systemd "$PK_ROOT"/etc/systemd -name 'blkwise*' 2>/dev/null)"
	assertFalse "/var/lib/blkwise (the exporter made it) removed" "[ -e $PK_ROOT/var/lib/blkwise ]"
}

bw_suite_cleanup() {
	# Nothing may stay mounted in the root before it is removed.
	local m
	for m in proc sys dev; do
		mountpoint -q "$PK_ROOT/$m" 2>/dev/null && umount -R -l "$PK_ROOT/$m"
	done
	return 0
}

# shellcheck disable=SC1091
. shunit2
