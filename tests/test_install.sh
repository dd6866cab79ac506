#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: `make install` and `make uninstall` (mk/install.mk), staged
# under DESTDIR: every file lands with its mode, the man page renders
# without warnings, the installed unit passes `systemd-analyze verify`, the
# fleet example passes `promtool check config`, and uninstall removes
# everything install put there.  Nothing is installed outside $BW_TMP.
. "$(dirname "$0")/lib.sh"

# What DATADIR may hold; the ones in dashboards/ are installed.
TI_DATA="blkwise.json blkwise-rules.yml prometheus-fleet.yml targets/example.json"
# The unit's arguments after the binary ($BLKWISE_EXPORT_OPTS is systemd's to expand).
# shellcheck disable=SC2016
TI_ARGS='export $BLKWISE_EXPORT_OPTS'

# ti_make DESTDIR TARGET [VAR=VALUE...]: make TARGET in the tree, output to
# $BW_TMP/make.out (shown on failure); its exit status.
ti_make() {
	local dest=$1 target=$2 rc
	shift 2
	make -s -C "$BW_ROOT" "$target" DESTDIR="$dest" "$@" >"$BW_TMP/make.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || { echo "make $target failed ($rc):" >&2; cat "$BW_TMP/make.out" >&2; }
	return $rc
}

# ti_install DESTDIR [VAR=VALUE...]: make install, failing the test if it fails.
ti_install() {
	local dest=$1
	shift
	ti_make "$dest" install "$@" ||
		{ fail "make install DESTDIR=$dest $* failed (is mk/install.mk included by the Makefile?)"; return 1; }
}

# The files under DESTDIR, sorted, relative to it.
ti_files() { (cd "$1" && find . -type f -printf '%P\n' | sort); }

# ti_expected PREFIX UNITDIR: what install should put under DESTDIR.
ti_expected() {
	local f
	{
		echo "${1#/}/sbin/blkwise"
		echo "${1#/}/share/man/man8/blkwise.8.gz"
		echo "${2#/}/blkwise-export.service"
		echo "${2#/}/blkwise-tune@.service"
		for f in $TI_DATA; do
			[ -f "$BW_ROOT/dashboards/$f" ] && echo "${1#/}/share/blkwise/$f"
		done
	} | sort
}

ti_mode() { stat -c %a "$1"; }

# PREFIX=/usr: every file where it belongs, with its mode, and nothing else.
test_install_files_and_modes() {
	local root=$BW_TMP/root.usr f unit
	bw_require gzip || return 0
	ti_install "$root" PREFIX=/usr || return
	assertEquals "the installed files" "$(ti_expected /usr /usr/lib/systemd/system)" "$(ti_files "$root")"
	assertEquals "blkwise mode" 755 "$(ti_mode "$root/usr/sbin/blkwise")"
	assertTrue "blkwise is the built binary" "cmp -s $BW_BIN $root/usr/sbin/blkwise"
	assertEquals "man page mode" 644 "$(ti_mode "$root/usr/share/man/man8/blkwise.8.gz")"
	assertTrue "man page is gzip -9n of man/blkwise.8 (no name, no time stamp)" \
		"gzip -9n -c $BW_ROOT/man/blkwise.8 | cmp -s - $root/usr/share/man/man8/blkwise.8.gz"
	unit=$root/usr/lib/systemd/system/blkwise-export.service
	assertEquals "unit mode" 644 "$(ti_mode "$unit")"
	assertEquals "unit ExecStart" "ExecStart=/usr/sbin/blkwise $TI_ARGS" \
		"$(grep '^ExecStart=' "$unit")"
	assertFalse "no @VAR@ left in the unit" "grep -q '@[A-Z_]*@' $unit"
	unit=$root/usr/lib/systemd/system/blkwise-tune@.service
	assertEquals "tune unit mode" 644 "$(ti_mode "$unit")"
	assertEquals "tune unit ExecStart" "ExecStart=/usr/sbin/blkwise tune -d /dev/%I \$BLKWISE_TUNE_OPTS" \
		"$(grep '^ExecStart=' "$unit")"
	assertFalse "no @VAR@ left in the tune unit" "grep -q '@[A-Z_]*@' $unit"
	for f in $TI_DATA; do
		[ -f "$BW_ROOT/dashboards/$f" ] || { echo "  (dashboards/$f does not exist: not installed)"; continue; }
		assertEquals "$f mode" 644 "$(ti_mode "$root/usr/share/blkwise/$f")"
		assertTrue "$f is the tree's" "cmp -s $BW_ROOT/dashboards/$f $root/usr/share/blkwise/$f"
	done
	# Installing again over it is fine and changes nothing.
	ti_install "$root" PREFIX=/usr || return
	assertEquals "installed twice: the same files" "$(ti_expected /usr /usr/lib/systemd/system)" \
		"$(ti_files "$root")"
}

# The defaults: PREFIX=/usr/local, the unit in /usr/local/lib/systemd/system
# (on systemd's search path); SBINDIR set alone moves ExecStart with it.
test_install_default_prefix_and_sbindir() {
	local root=$BW_TMP/root.local unit
	bw_require gzip || return 0
	ti_install "$root" || return
	assertEquals "the installed files" \
		"$(ti_expected /usr/local /usr/local/lib/systemd/system)" "$(ti_files "$root")"
	unit=$root/usr/local/lib/systemd/system/blkwise-export.service
	assertEquals "unit ExecStart" "ExecStart=/usr/local/sbin/blkwise $TI_ARGS" \
		"$(grep '^ExecStart=' "$unit")"
	root=$BW_TMP/root.opt
	ti_install "$root" PREFIX=/opt/blkwise SBINDIR=/opt/blkwise/bin UNITDIR=/etc/systemd/system || return
	assertTrue "SBINDIR: the binary there" "[ -x $root/opt/blkwise/bin/blkwise ]"
	assertEquals "SBINDIR: the unit's ExecStart follows" \
		"ExecStart=/opt/blkwise/bin/blkwise $TI_ARGS" \
		"$(grep '^ExecStart=' "$root/etc/systemd/system/blkwise-export.service")"
}

# The installed man page renders with no warning, through groff and man.
test_installed_man_page_renders() {
	local root=$BW_TMP/root.man page err=$BW_TMP/man.err
	bw_require groff man gzip || return 0
	ti_install "$root" PREFIX=/usr || return
	page=$root/usr/share/man/man8/blkwise.8.gz
	zcat "$page" | groff -man -ww -z 2>"$err"
	assertEquals "groff -man -ww -z: exit status" 0 $?
	assertEquals "groff -man -ww -z: no warnings" "" "$(cat "$err")"
	MANWIDTH=80 man --warnings -l "$page" >"$BW_TMP/man.out" 2>"$err"
	assertEquals "man --warnings -l: exit status" 0 $?
	assertEquals "man --warnings -l: no warnings" "" "$(cat "$err")"
	assertTrue "it has every command" \
		"grep -q 'blkwise stat' $BW_TMP/man.out && grep -q 'blkwise tune' $BW_TMP/man.out &&
		 grep -q 'blkwise export' $BW_TMP/man.out && grep -q 'blkwise help' $BW_TMP/man.out"
	assertTrue "and EXIT STATUS, FILES, SEE ALSO" \
		"grep -q '^EXIT STATUS' $BW_TMP/man.out && grep -q '^FILES' $BW_TMP/man.out &&
		 grep -q '^SEE ALSO' $BW_TMP/man.out"
}

# The installed units, as installed (ExecStart=/usr/sbin/blkwise under DESTDIR),
# pass systemd-analyze verify with nothing said.  The same check says
# something when a unit has an unknown key, and fails when the binary is
# missing: it can fail.
test_installed_unit_verifies() {
	local root=$BW_TMP/root.unit vroot=$BW_TMP/vroot rc unit
	bw_require systemd-analyze || return 0
	ti_install "$root" PREFIX=/usr || return
	cp -a "$root" "$vroot"
	bw_units_verify "$vroot" blkwise-export.service blkwise-tune@sda.service
	rc=$?
	[ -s "$BW_TMP/verify.out" ] && sed 's/^/  verify: /' "$BW_TMP/verify.out"
	assertEquals "systemd-analyze verify: exit status" 0 "$rc"
	assertEquals "systemd-analyze verify: nothing said" "" "$(cat "$BW_TMP/verify.out")"
	unit=$vroot/usr/lib/systemd/system/blkwise-export.service
	sed -i 's/^LockPersonality=yes$/&\nLockPersonalty=yes/' "$unit"
	bw_units_verify "$vroot" blkwise-export.service blkwise-tune@sda.service
	assertTrue "control: a misspelt key is reported" "grep -q 'Unknown key' $BW_TMP/verify.out"
	cp "$root/usr/lib/systemd/system/blkwise-export.service" "$unit"
	unit=$vroot/usr/lib/systemd/system/blkwise-tune@.service
	sed -i 's/^LockPersonality=yes$/&\nLockPersonalty=yes/' "$unit"
	bw_units_verify "$vroot" blkwise-export.service blkwise-tune@sda.service
	assertTrue "control: a misspelt key in the tune unit is reported" \
		"grep -q 'blkwise-tune@.service:[0-9]*: Unknown key' $BW_TMP/verify.out"
	cp "$root/usr/lib/systemd/system/blkwise-tune@.service" "$unit"
	rm "$vroot/usr/sbin/blkwise"
	bw_units_verify "$vroot" blkwise-export.service blkwise-tune@sda.service
	assertNotEquals "control: a missing binary fails verify" 0 $?
	assertTrue "control: and is named" "grep -q '/usr/sbin/blkwise' $BW_TMP/verify.out"
}

# The installed fleet example passes promtool check config, with the rules
# file beside it (rule_files are relative to the config); so does the tree's.
test_fleet_config_checks() {
	local root=$BW_TMP/root.prom dir
	bw_require promtool jq || return 0
	ti_install "$root" PREFIX=/usr || return
	dir=$root/usr/share/blkwise
	assertTrue "prometheus-fleet.yml installed" "[ -f $dir/prometheus-fleet.yml ]"
	assertTrue "blkwise-rules.yml installed beside it" "[ -f $dir/blkwise-rules.yml ]"
	promtool check config "$dir/prometheus-fleet.yml" >"$BW_TMP/promtool.out" 2>&1
	assertEquals "promtool check config (installed): exit status" 0 $?
	grep -q 'SUCCESS: 1 rule files found' "$BW_TMP/promtool.out" ||
		fail "promtool did not check the rules file: $(cat "$BW_TMP/promtool.out")"
	promtool check config "$BW_ROOT/dashboards/prometheus-fleet.yml" >/dev/null 2>&1
	assertEquals "promtool check config (tree): exit status" 0 $?
	assertTrue "targets/example.json is a file_sd target list" \
		"jq -e 'type == \"array\" and all(.[]; (.targets | type) == \"array\" and (.targets | length) > 0)' \
		$dir/targets/example.json >/dev/null"
}

# uninstall removes every file install put there, and DATADIR; twice is fine.
test_uninstall_removes_everything() {
	local root=$BW_TMP/root.un p
	bw_require gzip || return 0
	for p in /usr /usr/local; do
		ti_install "$root" PREFIX="$p" || return
		assertNotEquals "PREFIX=$p: something installed" "" "$(ti_files "$root")"
		ti_make "$root" uninstall PREFIX="$p" || { fail "make uninstall PREFIX=$p failed"; return; }
		assertEquals "PREFIX=$p: no file left" "" "$(ti_files "$root")"
		assertFalse "PREFIX=$p: DATADIR removed" "[ -e $root$p/share/blkwise ]"
		ti_make "$root" uninstall PREFIX="$p"
		assertEquals "PREFIX=$p: uninstall again: exit status" 0 $?
	done
	# A file of someone else's in DATADIR stays, and so does the directory.
	ti_install "$root" PREFIX=/usr || return
	echo mine >"$root/usr/share/blkwise/local.yml"
	ti_make "$root" uninstall PREFIX=/usr || { fail "make uninstall failed"; return; }
	assertEquals "only the foreign file is left" "usr/share/blkwise/local.yml" "$(ti_files "$root")"
}

# shellcheck disable=SC1091
. shunit2
