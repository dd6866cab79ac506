#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: which device rows `blkwise stat` shows, and how it names
# them.  The oracle is sysfs itself: /sys/dev/block/M:m/uevent, size, and
# loop/backing_file.
. "$(dirname "$0")/lib.sh"

# dv_rows FILE: "device gone" for every row of every interval.
dv_rows() { jq -r '.devices[] | "\(.device) \(.gone)"' "$1"; }

# An unbound loop device (created if none is free).
dv_unbound_loop() {
	local d
	d=$(losetup -f 2>/dev/null) || return 1
	[ -b "$d" ] || return 1
	basename "$d"
}

# Unbound loop devices and an unconfigured zram have no size: no row, no
# "(gone)", in JSON and in the table, when every device is watched.
test_unbound_and_empty_devices_hidden() {
	local out free zram="" n
	bw_require jq losetup || return 0
	free=$(dv_unbound_loop) || { fail "no free loop device"; return; }
	assertEquals "$free is unbound: size 0" 0 "$(cat /sys/block/"$free"/size)"
	[ -e /sys/block/zram0 ] && [ "$(cat /sys/block/zram0/size)" = 0 ] && zram=zram0
	out=$BW_TMP/all.json
	"$BW_BIN" stat --json --no-state -i 0.3 -c 4 >"$out" 2>"$out.err"
	assertEquals "exit status" 0 $?
	assertEquals "4 intervals" 4 "$(wc -l <"$out")"
	assertEquals "no row for the unbound $free" 0 "$(dv_rows "$out" | grep -c "^$free ")"
	[ -n "$zram" ] && assertEquals "no row for unconfigured zram0" 0 "$(dv_rows "$out" | grep -c '^zram0 ')"
	assertEquals "no device reported gone" 0 "$(dv_rows "$out" | grep -c ' true$')"
	assertFalse "no 'device gone' warning" "grep -q 'device gone' $out.err"
	# Every row is a device with a size, named as its uevent names it.
	for n in $(jq -r '.devices[].device' "$out" | sort -u); do
		assertTrue "$n has a size" "[ \$(cat /sys/class/block/$n/size) -gt 0 ]"
	done
	"$BW_BIN" stat --no-state -i 0.3 -c 3 >"$out.txt" 2>/dev/null
	assertFalse "no (gone) in the table" "grep -q '(gone)' $out.txt"
	assertFalse "no $free in the table" "grep -q '^$free ' $out.txt"
	[ -n "$zram" ] || bw_skip "zram0 missing or configured: only the loop half checked"
}

# A named device is shown even without a size: the user asked for it.
test_named_empty_device_shown() {
	local out free
	bw_require jq losetup || return 0
	free=$(dv_unbound_loop) || { fail "no free loop device"; return; }
	out=$BW_TMP/named.json
	"$BW_BIN" stat --json --no-state -d "$free" -i 0.3 -c 3 >"$out" 2>"$out.err"
	assertEquals "exit status" 0 $?
	assertEquals "a row in each of 3 intervals" 3 "$(dv_rows "$out" | grep -c "^$free false$")"
}

# dv_gone_check OUT DEV: DEV's rows are some "false", then one "true", then none.
dv_gone_check() {
	local rows
	rows=$(jq -r --arg d "$2" '[.devices[] | select(.device == $d) | .gone] | if length == 0
		then "-" else map(tostring) | join(",") end' "$1" | paste -sd' ')
	echo "  $2 per interval: $rows"
	assertEquals "gone exactly once" 1 "$(dv_rows "$1" | grep -c "^$2 true$")"
	assertTrue "shown before it went" "dv_rows $1 | grep -q '^$2 false$'"
	# After the gone row: nothing more of it.
	assertEquals "no row after the gone one" "" \
		"$(jq -c --arg d "$2" '[.devices[] | select(.device == $d)]' "$1" |
			awk '/"gone":true/ { g = 1; next } g && $0 != "[]"')"
}

# A device detached while watched shows "(gone)" once, then no more; with
# every device watched and with -d.
test_detached_shows_gone_once() {
	local a b out
	bw_require fio jq losetup || return 0
	bw_loop a 16 shm --direct-io=on || { fail "loop a"; return; }
	bw_loop b 16 shm --direct-io=on || { fail "loop b"; return; }
	out=$BW_TMP/gone-all.json
	bw_stat_start "$out" -i 0.3 || { fail "blkwise start"; return; }
	sleep 0.8
	losetup -d /dev/"$a"
	sleep 1.5
	bw_stat_stop INT
	assertEquals "exit status" 0 $?
	dv_gone_check "$out" "$a"
	assertEquals "warned once" 1 "$(grep -c "$a: device gone" "$out.err")"
	out=$BW_TMP/gone-named.json
	bw_stat_start "$out" -d "$b" -d "$a" -i 0.3 || { fail "blkwise start"; return; }
	assertEquals "named $a while unbound: shown, not gone" 0 "$(dv_rows "$out" | grep -c ' true$')"
	sleep 0.8
	losetup -d /dev/"$b"
	sleep 1.5
	bw_stat_stop INT
	assertEquals "exit status" 0 $?
	dv_gone_check "$out" "$b"
}

# -z leaves out devices with no I/O in the interval; without it they show.
test_z_hides_idle() {
	local a b out
	bw_require fio jq || return 0
	bw_loop a 32 shm --direct-io=on || { fail "loop a"; return; }
	bw_loop b 32 shm --direct-io=on || { fail "loop b"; return; }
	for z in "" -z; do
		out=$BW_TMP/z$z.json
		bw_stat_start "$out" -d "$a" -d "$b" -i 0.3 $z || { fail "blkwise start"; return; }
		fio --name=z --filename=/dev/"$a" --direct=1 --rw=randread --bs=4k --size=16M \
			--time_based --runtime=1.5 --ioengine=psync >/dev/null
		bw_stat_stop INT
		if [ -z "$z" ]; then
			assertTrue "without -z: idle $b has rows" "dv_rows $out | grep -q '^$b '"
		else
			assertEquals "with -z: idle $b has no row" 0 "$(dv_rows "$out" | grep -c "^$b ")"
			# -s: jq -e on a stream judges only its last interval.
			assertTrue "with -z: busy $a has rows" \
				"jq -s -e --arg d $a 'any(.[]; .devices[] | .device == \$d and .reads_per_s > 0)' $out >/dev/null"
		fi
	done
}

# Names as users give them: a name, a /dev path, MAJ:MIN; rows are named
# by uevent's DEVNAME.
test_device_names_from_sysfs() {
	local a majmin out arg
	bw_require jq || return 0
	bw_loop a 16 shm || { fail "loop a"; return; }
	majmin=$(cat /sys/block/"$a"/dev)
	for arg in "$a" "/dev/$a" "$majmin"; do
		out=$BW_TMP/name.json
		"$BW_BIN" stat --json --no-state -d "$arg" -i 0.2 -c 1 >"$out" 2>"$out.err"
		assertEquals "-d $arg: exit status" 0 $?
		assertEquals "-d $arg: row named by uevent" \
			"$(sed -n 's/^DEVNAME=//p' /sys/block/"$a"/uevent)" "$(jq -r '.devices[0].device' "$out")"
		assertEquals "-d $arg: identity is the backing file, its device and inode" \
			"$(bw_loop_identity "$a")" "$(jq -r '.devices[0].identity' "$out")"
	done
}

# The table says why P_eff is missing, and the legend says what the code means.
test_table_reason_codes() {
	local a out
	bw_require fio || return 0
	bw_require_fetch "depth while busy, maximum depth and P_eff" || return 0
	bw_loop a 32 shm --direct-io=on || { fail "loop a"; return; }
	out=$BW_TMP/table.txt
	"$BW_BIN" stat --no-state --exact -d "$a" -i 0.5 >"$out" 2>/dev/null &
	bw_on_cleanup "kill $!"
	sleep 0.5
	fio --name=t --filename=/dev/"$a" --direct=1 --rw=randread --bs=4k --size=16M \
		--time_based --runtime=1.5 --ioengine=psync >/dev/null
	sleep 0.6
	kill -INT %1 2>/dev/null
	wait %1 2>/dev/null
	assertEquals "one legend line" 1 "$(grep -c '^P_eff undetermined: .*-L<1.5 mean depth under 1.5' "$out")"
	assertTrue "iodepth 1 shows -L<1.5 (got: $(grep "^$a " "$out" | awk '{ print $13 }' | sort -u | paste -sd' '))" \
		"grep '^$a ' $out | awk '{ print \$13 }' | grep -qx -- '-L<1.5'"
}

test_version_and_help() {
	local v commit
	[ -x "$BW_BIN" ] || { bw_skip "blkwise not built"; return 0; }
	v=$("$BW_BIN" --version)
	assertEquals "exit status" 0 $?
	assertTrue "version line: $v" "echo '$v' | grep -qE '^blkwise [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\), libbpf v[0-9]+\.[0-9]+'"
	commit=$(git -C "$BW_ROOT" rev-parse --short=12 HEAD 2>/dev/null) &&
		assertTrue "names HEAD $commit" "echo '$v' | grep -q '$commit'"
	assertEquals "stat --version is the same" "$v" "$("$BW_BIN" stat --version)"
	assertEquals "help stat = stat --help" "$("$BW_BIN" stat --help)" "$("$BW_BIN" help stat)"
	"$BW_BIN" help nosuch >/dev/null 2>"$BW_TMP/help.err"
	assertEquals "help of an unknown command: exit 2" 2 $?
	assertTrue "names it" "grep -q \"unknown command 'nosuch'\" $BW_TMP/help.err"
}

# shellcheck disable=SC1091
. shunit2
