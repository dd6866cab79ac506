# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers of the shunit2 suites: results, skips, loop devices, fio,
# blkwise in the background, and cleanup of everything a test made.
#
# A suite sources this file, defines test_* functions (and optionally
# bw_suite_setup / bw_suite_cleanup), then sources shunit2.  Every test's
# outcome (PASS, FAIL or SKIP) is appended to $BW_RESULTS for the runner.

BW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BW_BIN=${BW_BIN:-$BW_ROOT/blkwise}
BW_RESULTS=${BW_RESULTS:-/dev/null}
BW_SUITE=$(basename "$0" .sh)
# Every temporary file, loop image and mount point of a test is named
# $BW_TAG*: the runner's leak checks (tests/leaks.sh) find this run's by it.
BW_TAG=blkwise-test${BW_RUN_ID:+-$BW_RUN_ID}
BW_TMP=$(mktemp -d /tmp/"$BW_TAG".XXXXXX)
SHUNIT_COLOR=none

bw_cleanups=()
bw_skipped=""
bw_moved=""
bw_first_failure=""

# Run at the end of each test, last registered first.
bw_on_cleanup() { bw_cleanups+=("$*"); }

bw_run_cleanups() {
	local i
	for ((i = ${#bw_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${bw_cleanups[i]}" >/dev/null 2>&1 || true
	done
	bw_cleanups=()
}

# A test's time limit: one that hangs is stopped, named and failed, and costs
# no more than this (seconds; the runner's per-suite limit is the backstop).
BW_TEST_LIMIT=${BW_TEST_LIMIT:-600}
[ -z "${BW_VM_TIER:-}" ] || BW_TEST_LIMIT=${BW_VM_TEST_LIMIT:-1200}
bw_watchdog=""

# bw_watchdog_start: at BW_TEST_LIMIT, marks the test timed out and stops
# what it waits on (the suite's children, so the foreground one returns),
# then the suite itself: its TERM trap runs tearDown, which records a FAIL.
# It is not a child of the suite's shell (started from a command
# substitution, which exits at once), so a test's own "wait" or "%1" never
# meets it.
bw_watchdog_start() {
	local me=$$
	rm -f "$BW_TMP/.timedout"
	bw_watchdog=$(
		(
			sleep "$BW_TEST_LIMIT"
			echo "$BW_TEST_LIMIT" >"$BW_TMP/.timedout"
			kill -TERM "$me"
			for p in $(pgrep -P "$me"); do
				kill -TERM "$p"
			done
		) >/dev/null 2>&1 &
		echo $!
	)
}

# The watchdog first (its sleep, killed first, would let it fire), then its sleep.
bw_watchdog_stop() {
	local s
	[ -n "$bw_watchdog" ] || return 0
	s=$(pgrep -P "$bw_watchdog")
	kill "$bw_watchdog" 2>/dev/null
	# shellcheck disable=SC2086
	[ -z "$s" ] || kill $s 2>/dev/null
	bw_watchdog=""
}

# bw_keep_first_failure: shunit2's failure hook (defined when the suite
# sources shunit2, so wrapped here, at the first test) also keeps the test's
# first failed check, which its FAIL line carries: a run's closing list then
# says why each test failed, not only which.
bw_keep_first_failure() {
	[ "$(type -t bw_shunit_assert_fail)" = function ] && return 0
	[ "$(type -t _shunit_assertFail)" = function ] || return 0
	eval "$(declare -f _shunit_assertFail | sed '1s/_shunit_assertFail/bw_shunit_assert_fail/')"
	_shunit_assertFail() {
		[ -n "$bw_first_failure" ] || bw_first_failure=$(printf '%s' "$*" | head -n 1 | cut -c 1-240)
		bw_shunit_assert_fail "$@"
	}
}

setUp() {
	bw_skipped=""
	bw_moved=""
	bw_first_failure=""
	bw_keep_first_failure
	bw_cleanups=()
	bw_test_t0=$SECONDS
	bw_watchdog_start
	[ "$(type -t bw_suite_setup)" = function ] && bw_suite_setup
	return 0
}

tearDown() {
	local result=PASS
	bw_watchdog_stop
	bw_run_cleanups
	# shunit2 also calls tearDown from its exit trap, outside any test.
	[ -n "${_shunit_test_:-}" ] || return 0
	echo "  ($((SECONDS - bw_test_t0)) s)"
	if [ -f "$BW_TMP/.timedout" ] && [ $((SECONDS - bw_test_t0)) -ge "$BW_TEST_LIMIT" ]; then
		result=FAIL
		bw_skipped=""
		echo "FAIL $BW_SUITE:${_shunit_test_} (timed out after $(cat "$BW_TMP/.timedout") s)" >>"$BW_RESULTS"
		echo "FAIL: $BW_SUITE:${_shunit_test_}: timed out after $(cat "$BW_TMP/.timedout") s" >&2
		return 0
	fi
	if [ "${__shunit_testSuccess}" != "${SHUNIT_TRUE}" ]; then
		echo "FAIL $BW_SUITE:${_shunit_test_}${bw_first_failure:+ ($bw_first_failure)}" >>"$BW_RESULTS"
		return 0
	elif [ -n "$bw_moved" ]; then
		echo "MOVED $BW_SUITE:${_shunit_test_} ($bw_moved)" >>"$BW_RESULTS"
		return 0
	elif [ -n "$bw_skipped" ]; then
		result=SKIP
	fi
	echo "$result $BW_SUITE:${_shunit_test_}${bw_skipped:+ ($bw_skipped)}" >>"$BW_RESULTS"
	[ "$result" = SKIP ] && echo "SKIP: $BW_SUITE:${_shunit_test_}: $bw_skipped" >&2
	return 0
}

oneTimeTearDown() {
	[ "$(type -t bw_suite_cleanup)" = function ] && bw_suite_cleanup
	rm -rf "$BW_TMP"
	return 0
}

# Marks the current test skipped, loudly; the test should return right after.
bw_skip() {
	bw_skipped="$*"
	echo "SKIP: $*" >&2
	startSkipping
}

# bw_require CMD...: skip unless every command exists.
bw_require() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { bw_skip "$c not installed"; return 1; }
	done
	[ "$(id -u)" -eq 0 ] || { bw_skip "needs root"; return 1; }
	[ -x "$BW_BIN" ] || { bw_skip "blkwise not built (make)"; return 1; }
	return 0
}

# What blkwise says where the kernel lacks BPF atomic fetch-and-add (5.12+):
# P_eff's reason in its JSON, and the reason the checks it cannot give skip
# with (one source: user/model/model.h).
BW_NO_FETCH_WHY=$(sed -n 's/^#define BW_NO_FETCH_WHY "\(.*\)"$/\1/p' "$BW_ROOT/user/model/model.h")

# bw_has_fetch: whether the kernel has it.
bw_has_fetch() {
	[ "$(uname -r | awk -F. '{ printf "%d", $1 * 1000 + $2 }')" -ge 5012 ]
}

# bw_require_fetch WHAT: SKIP unless the kernel has BPF atomic fetch-and-add
# (5.12+), without which blkwise measures no busy time, solo time or maximum
# depth.
bw_require_fetch() {
	bw_has_fetch && return 0
	bw_skip "$1: $BW_NO_FETCH_WHY (this is $(uname -r))"
	return 1
}

# bw_no_bfq: this test needs BFQ and the kernel has none.  Where the runner
# moved such tests to a guest that has it (BW_BFQ_ELSEWHERE, the tier's
# name), the test is MOVED: not run, not counted here, and the runner
# checks that it passed there.  Otherwise a SKIP.
bw_no_bfq() {
	if [ -n "${BW_BFQ_ELSEWHERE:-}" ]; then
		bw_moved="runs in $BW_BFQ_ELSEWHERE: no bfq scheduler in $(uname -r)"
		startSkipping
	else
		bw_skip "no bfq scheduler in this kernel ($(uname -r), CONFIG_IOSCHED_BFQ)"
	fi
	return 1
}

# bw_use_bfq DEV: DEV on bfq (loading the module where there is one), or
# bw_no_bfq: the write can succeed and leave the scheduler as it was.
bw_use_bfq() {
	modprobe -q bfq 2>/dev/null
	echo bfq >/sys/block/"$1"/queue/scheduler 2>/dev/null
	grep -q '\[bfq\]' /sys/block/"$1"/queue/scheduler && return 0
	grep -qw bfq /sys/block/"$1"/queue/scheduler && {
		bw_skip "bfq listed for $1 but not taken"
		return 1
	}
	bw_no_bfq
}

# bw_loop VAR SIZE_MB WHERE [losetup options]: a loop device over a new
# image; its name (loopN) goes into VAR.  WHERE is "shm" (memory, see
# bw_mem_dir) or "disk" (root filesystem, real data written so reads reach
# the disk).  Not in a
# $(...) subshell: the cleanup it registers must reach this shell.
# bw_mem_dir: where "shm" images go: /dev/shm where tmpfs takes O_DIRECT
# (6.6 and later), else $BW_MEM_DIR (the VM tier sets one), else /var/tmp
# if it takes O_DIRECT; empty when none does.
bw_mem_dir() {
	local d
	for d in /dev/shm ${BW_MEM_DIR:-} /var/tmp; do
		if dd if=/dev/zero of="$d/.blkwise-odirect" bs=4096 count=1 oflag=direct \
			status=none 2>/dev/null; then
			rm -f "$d/.blkwise-odirect"
			echo "$d"
			return 0
		fi
		rm -f "$d/.blkwise-odirect"
	done
	return 1
}

bw_loop() {
	local _var=$1 _size=$2 _where=$3 _img _dev _dir
	shift 3
	if [ "$_where" = shm ]; then
		_dir=$(bw_mem_dir)
		[ -n "$_dir" ] || { echo "no directory takes O_DIRECT here (set BW_MEM_DIR)" >&2; return 1; }
		_img=$(mktemp "$_dir/$BW_TAG".XXXXXX)
		truncate -s "${_size}M" "$_img"
	else
		_img=$(mktemp /var/tmp/"$BW_TAG".XXXXXX)
		dd if=/dev/urandom of="$_img" bs=1M count="$_size" oflag=direct status=none
	fi
	_dev=$(losetup --find --show "$@" "$_img") || { rm -f "$_img"; return 1; }
	# Detach only if it is still ours: a test may remove the device, and its
	# number may since belong to someone else.
	bw_on_cleanup "losetup -n -O BACK-FILE $_dev 2>/dev/null | grep -qF $_img && losetup -d $_dev; rm -f $_img"
	# Queue settings outlive a detach: start from the defaults.
	echo 0 >/sys/block/"${_dev#/dev/}"/queue/nomerges
	echo 0 >/sys/block/"${_dev#/dev/}"/queue/rotational
	echo none >/sys/block/"${_dev#/dev/}"/queue/scheduler
	# udev reads a new device (blkid's probe): done before a test counts its requests.
	command -v udevadm >/dev/null && udevadm settle -t 10
	printf -v "$_var" '%s' "$(basename "$_dev")"
}

# bw_ext4 VAR DEV: a new ext4 on DEV, mounted (unmounted at cleanup); its
# mount point goes into VAR.
bw_ext4() {
	local _mnt=$BW_TMP/mnt.$2
	mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 /dev/"$2" || return 1
	mkdir -p "$_mnt"
	mount /dev/"$2" "$_mnt" || return 1
	bw_on_cleanup "umount $_mnt 2>/dev/null"
	printf -v "$1" '%s' "$_mnt"
}

# bw_settle DEV: returns once the device's diskstats stopped moving for 0.5 s.
bw_settle() {
	local a b i
	b=$(bw_diskstats "$1")
	for i in $(seq 40); do
		sleep 0.5
		a=$b
		b=$(bw_diskstats "$1")
		[ "$a" = "$b" ] && return 0
	done
	return 1
}

# bw_stat_start_quiet OUT DEV ARGS...: bw_stat_start on DEV once nothing
# reaches it (a new filesystem's udev probe can come late): started again,
# up to three times, until diskstats did not move while it started;
# BW_S0 is diskstats from then on.
bw_stat_start_quiet() {
	local out=$1 dev=$2 pre try
	shift 2
	for try in 1 2 3; do
		bw_settle "$dev" || return 1
		pre=$(bw_diskstats "$dev")
		bw_stat_start "$out" -d "$dev" "$@" || return 1
		BW_S0=$(bw_diskstats "$dev")
		[ "$pre" = "$BW_S0" ] && return 0
		bw_stat_stop INT
	done
	echo "requests kept reaching $dev while blkwise started" >&2
	return 1
}

# bw_bpf_count_start DEV: an independent count, by bpftrace, of DEV's
# block_rq_complete events that reach BPF programs at all (some kernels
# never hand a few to any: docs/design.md, "Lost completions"); attached
# when this returns (false where bpftrace cannot run).  bw_bpf_count_stop
# VAR ends it and puts the count in VAR.
bw_bpf_count_start() {
	local d prog
	command -v bpftrace >/dev/null || return 1
	d=$(cat /sys/block/"$1"/dev) || return 1
	prog="tracepoint:block:block_rq_complete /args->dev == $(((${d%:*} << 20) | ${d#*:}))/ { @n = count(); }"
	BW_BT_OUT=$BW_TMP/bpfcount.$$.$RANDOM
	# bpftrace says "Attaching" and prints the count on stdout: both go to
	# the log bw_bg_start watches.
	bw_bg_start "$BW_BT_OUT" '^Attaching' sh -c 'exec bpftrace -e "$0" >&2' "$prog" || return 1
	BW_BT_PID=$BW_BG_PID
}

bw_bpf_count_stop() {
	kill -INT "$BW_BT_PID"
	wait "$BW_BT_PID"
	printf -v "$1" '%s' "$(awk '/^@n: / { n = $2 } END { print n + 0 }' "$BW_BT_OUT.err")"
}

# bw_disk_scaled OPTS: the emulated disk's mount options with its time
# constants multiplied by BW_DISK_SCALE (1; tools/fakedisk.sh's scale=K).
# Under TCG the guest's own path per request (FUSE, loop, fio) costs
# milliseconds (tools/disk-path.sh); a slower disk keeps that path a
# smaller share of each request's time, as it is on a real machine.
bw_disk_scaled() { echo "$1,scale=${BW_DISK_SCALE:-1}"; }

# bw_deep_mark: the P_eff a test holds a deep device's measurement to:
# the class's mark (2) on a real machine; 1.5 in a TCG guest
# (BW_DISK_SCALE > 1), where each request's D2C carries milliseconds of the
# guest's own path, which its 2 vCPUs serialise, and its readers keep fewer
# requests in flight: there it must show clearly more than one request
# served at a time (a one-at-a-time device reads near 1).
bw_deep_mark() { [ "${BW_DISK_SCALE:-1}" = 1 ] && echo 2 || echo 1.5; }

# The emulated spindle of the tuner's tests, the idling benchmarks' own
# (tools/emulated-disks.sh): a head that pays for every move (1 ms, plus
# 30 us per MiB of distance: 7.5 ms between readers 256 MiB apart), 8 ms
# per MiB read, 100 us per request.  Idling for a sequential reader saves
# a seek per request, several times what a request costs, so it wins
# clearly on a slowed guest too (a disk whose moves cost 2 ms let 0 come
# within a window's noise of idling that BFQ kept up only now and then).
BW_SPINDLE=$(bw_disk_scaled "$(. "$BW_ROOT"/tools/emulated-disks.sh && echo "$SPINDLE_OPTS")")

# bw_fakedisk VAR OPTS: a loop device over the emulated disk of
# tools/fakedisk.sh (OPTS as its mount options); its name goes into VAR.
bw_fakedisk() {
	local _var=$1 _dir _dev
	_dir=$(mktemp -d /tmp/"$BW_TAG"-fd.XXXXXX)
	bw_on_cleanup "$BW_ROOT/tools/fakedisk.sh down $_dir/mnt; rm -rf $_dir"
	_dev=$("$BW_ROOT"/tools/fakedisk.sh up "$_dir/mnt" "$2") || return 1
	# Queue settings outlive a detach (a bfq with another test's settings): the defaults.
	echo 0 >/sys/block/"$_dev"/queue/nomerges
	echo 0 >/sys/block/"$_dev"/queue/rotational
	echo none >/sys/block/"$_dev"/queue/scheduler
	BW_FAKEDISK_DIR=$_dir/mnt
	printf -v "$_var" '%s' "$_dev"
}

# bw_loop_identity DEV: the identity blkwise gives a loop device (its store
# key): the backing file, and the file's own device, inode and birth time.
bw_loop_identity() {
	local f b birth=""
	f=$(cat /sys/block/"$1"/loop/backing_file) || return 1
	b=$(stat -c '%w' "$f") || return 1
	[ "$b" = - ] || birth=":$(date -u -d "$b" +%s.%N)"
	echo "loop:$f#$(stat -c '%Hd:%Ld:%i' "$f")$birth"
}

# bw_store DIR ID CLASS [IDLE_US GAIN [STRICT]]: a store in DIR (the
# tuner's --state-dir) that knows the device named ID as CLASS, and with
# IDLE_US, that a probe found IDLE_US faster by GAIN ten minutes ago (with
# STRICT 1: that strict_guarantees won as a repair).
bw_store() {
	mkdir -p "$1"
	printf 'blkwise-s1 4\nclass\t%s\t%s\t%s\t%s\n' "$2" "$3" \
		"$([ "$3" = deep ] && echo 3.000 || echo 1.000)" "$(date +%s)" >"$1/s1"
	[ $# -lt 5 ] || printf 'idle\t%s\t%s\t%s\t%s\t%s\n' "$2" "$4" "$5" \
		$(($(date +%s) - 600)) "${6:-0}" >>"$1/s1"
}

# Fields of /proc/diskstats for one device, from the reads-completed field on.
bw_diskstats() { awk -v d="$1" '$3 == d { $1 = $2 = $3 = ""; print }' /proc/diskstats; }

# bw_diskstat_delta BEFORE AFTER FIELD: FIELD counted from 1 = reads completed.
bw_diskstat_delta() {
	local a b
	a=$(echo "$1" | awk -v f="$3" '{ print $f }')
	b=$(echo "$2" | awk -v f="$3" '{ print $f }')
	echo $((b - a))
}

# bw_bg_start OUT READY CMD...: CMD in the background, stdout to OUT and
# stderr to OUT.err; returns once stderr has a line matching READY (the
# command is attached and running).  Sets BW_BG_PID; killed at cleanup.
# It waits up to 60 s: loading the BPF objects takes seconds on an emulated
# CPU (TCG), and the wait ends as soon as the line comes or CMD exits.
bw_bg_start() {
	local out=$1 ready=$2 i
	shift 2
	"$@" >"$out" 2>"$out.err" &
	BW_BG_PID=$!
	bw_on_cleanup "kill -KILL $BW_BG_PID"
	for i in $(seq 600); do
		grep -q "$ready" "$out.err" 2>/dev/null && return 0
		kill -0 "$BW_BG_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "$1 did not start:" >&2
	cat "$out.err" >&2
	return 1
}

# bw_rec_start FILE ARGS...: blkwise record in the background, attached when
# this returns.  Sets BW_REC_PID.
bw_rec_start() {
	local file=$1
	shift
	bw_bg_start "$file.log" "Ctrl-C to stop" "$BW_BIN" record -o "$file" "$@"
	local rc=$?
	BW_REC_PID=$BW_BG_PID
	return $rc
}

bw_rec_stop() {
	kill -"${1:-INT}" "$BW_REC_PID" 2>/dev/null
	wait "$BW_REC_PID"
}

# bw_stat_start OUT ARGS...: blkwise stat --json in the background, ready
# (attached) when this returns.  Sets BW_STAT_PID.  Learned S1 goes to the
# suite's own store ($BW_TMP/state), never the machine's, unless ARGS say
# where (--state-dir) or not at all (--no-state).
bw_stat_start() {
	local out=$1 state=(--state-dir "$BW_TMP/state") rc
	shift
	case " $* " in *" --state-dir "* | *" --no-state "*) state=() ;; esac
	bw_bg_start "$out" "Ctrl-C to stop" "$BW_BIN" stat --json "${state[@]}" "$@"
	rc=$?
	BW_STAT_PID=$BW_BG_PID
	return $rc
}

# IDs of the BPF programs a process holds (from its fdinfo: bpftool's pid
# column needs BPF iterators, which a locked-down kernel may refuse).
bw_prog_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u
}

# bw_stat_stop [SIGNAL]: stop it and return its exit status.
bw_stat_stop() {
	kill -"${1:-INT}" "$BW_STAT_PID" 2>/dev/null
	wait "$BW_STAT_PID"
}

# bw_fio OUT ARGS...: fio with JSON output.
bw_fio() {
	local out=$1
	shift
	fio --output-format=json --output="$out" "$@" >/dev/null
}

# bw_jsum FILE DEVICE JQ: sum of a device's field over every interval.
bw_jsum() {
	jq -s --arg d "$2" "[.[] | .devices[]? | select(.device == \$d) | $3] | add // 0" "$1"
}

# bw_missed FILE DEVICE: completions blkwise never saw (see docs/design.md, "Lost
# completions"): those detected on tag reuse plus those still marked in
# flight once the device is idle at the end.
# The light tier cannot tell a lost completion (no per-request entry a
# reissue could find: lost_completions_total is null): "~N", N those in
# flight, which bw_expect_count reads as "and any losses, at their rate";
# bw_missed_n gives N alone.
bw_missed() {
	jq -rs --arg d "$2" '[.[] | .devices[]? | select(.device == $d)] | last
		| if .lost_completions_total == null then "~\(.inflight)"
		  else (.lost_completions_total + .inflight) end' "$1"
}

bw_missed_n() {
	local m
	m=$(bw_missed "$@")
	echo "${m#\~}"
}

# bw_clean_intervals FILE DEVICE: the device's intervals (JSON array) in
# which no lost completion was detected, nor in the interval before or
# after.  A loss is detected when its tag is issued again, so the ghost it
# leaves (one request too many in flight) lives from the loss, which may
# be in the interval before the detection, until then; the interval after
# is left out too, as a detection near its end may straddle it.
bw_clean_intervals() {
	jq -s --arg d "$2" '[.[].devices[] | select(.device == $d)]
		| [range(1; length - 1) as $i | select(.[$i].lost_completions == 0 and
			.[$i - 1].lost_completions == 0 and .[$i + 1].lost_completions == 0) | .[$i]]' "$1"
}

# bw_expect_count WHAT ORACLE SEEN MISSED: SEEN + MISSED == ORACLE, exactly
# (every loss is detected and counted), and MISSED is at most 0.5% of
# ORACLE (plus one): the rate is the kernel's, not blkwise's (docs/design.md,
# "Lost completions"; up to 1 in 900 seen under the Q2C test's load).
# MISSED "~N" (the light tier, bw_missed): SEEN + N <= ORACLE, short by at
# most the same 0.5%.
bw_expect_count() {
	if [ "${4#\~}" != "$4" ]; then	# the light tier: losses not counted
		assertTrue "$1: seen $3 + in flight ${4#\~} <= oracle $2, short by <= 0.5% (completions never seen)" \
			"[ $(($3 + ${4#\~})) -le $2 ] && [ $((($2 - $3 - ${4#\~}) * 200)) -le $(($2 + 200)) ]"
		return
	fi
	assertEquals "$1: seen + missed = oracle" "$2" "$(($3 + $4))"
	assertTrue "$1: missed $4 of $2 is <= 0.5%" "[ $(($4 * 200)) -le $(($2 + 200)) ]"
}

# bw_within A B PCT: true when |A - B| <= PCT% of |B|.
# bw_ftrace VAR DEV EVENT...: the block EVENTs of DEV recorded by an ftrace
# instance of the test's own (mono clock, 8 MiB a CPU); VAR gets its
# directory, whose trace file is the record.  bw_ftrace_stop DIR ends it.
bw_ftrace() {
	local _v=$1 _dev=$2 _t=/sys/kernel/tracing/instances/blkwise-test-$$-$RANDOM _d _e
	shift 2
	[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	mkdir "$_t" || return 1
	bw_on_cleanup "bw_ftrace_stop $_t; rmdir $_t"
	echo mono >"$_t"/trace_clock 2>/dev/null
	echo 8192 >"$_t"/buffer_size_kb
	_d=$(cat /sys/block/"$_dev"/dev)
	for _e; do
		echo "dev == $(((${_d%:*} << 20) | ${_d#*:}))" >"$_t"/events/block/"$_e"/filter || return 1
		echo 1 >"$_t"/events/block/"$_e"/enable || return 1
	done
	printf -v "$_v" '%s' "$_t"
}

bw_ftrace_stop() {
	local _e
	for _e in "$1"/events/block/*/enable; do
		[ "$(cat "$_e" 2>/dev/null)" = 0 ] || echo 0 >"$_e"
	done
}

bw_within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
		m = b < 0 ? -b : b; exit !(d <= m * p / 100) }'
}

# A float expression, e.g. bw_calc "$a / $b".
bw_calc() { awk "BEGIN { printf \"%.6f\", $* }"; }

# bw_unload_module MOD: a module a test loaded, away (its last user may
# still be exiting); says so when it stays.
bw_unload_module() {
	for _ in $(seq 50); do
		modprobe -r "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "cannot unload $1: $(lsmod | grep "^$1 ")" >&2
	return 1
}

# bw_dev_lines OUT DEV FROM TO: that device's objects in lines FROM..TO of
# blkwise's JSON Lines.
bw_dev_lines() {
	[ "$3" -le "$4" ] || return 0
	sed -n "$3,$4p" "$1" | jq -c --arg d "$2" '.devices[] | select(.device == $d)'
}

# Median of numbers on stdin; fails on none.
bw_median() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) exit 1
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bw_free_port: a free loopback TCP port, between BW_PORT_MIN and
# BW_PORT_MAX (default 20000..39999) where the machine is shared.
bw_free_port() {
	local p lo=${BW_PORT_MIN:-20000} hi=${BW_PORT_MAX:-39999}
	while :; do
		p=$((lo + RANDOM % (hi - lo + 1)))
		ss -Hltn "sport = :$p" | grep -q . || { echo $p; return; }
	done
}

# bw_require_bfq_fakedisk: what the BFQ tests on the emulated disk need (fio,
# FUSE, bfq, tools/fakedisk built); SKIPs, or fails a build, and returns 1.
bw_require_bfq_fakedisk() {
	bw_require fio jq losetup fusermount3 || return 1
	[ -c /dev/fuse ] || { bw_skip "/dev/fuse missing: no FUSE here"; return 1; }
	modprobe -q bfq 2>/dev/null
	grep -qw bfq /sys/block/loop*/queue/scheduler 2>/dev/null || { bw_no_bfq; return 1; }
	make -s -C "$BW_ROOT/tools/fakedisk" >&2 || { fail "cannot build tools/fakedisk"; return 1; }
}

# bw_wait_json OUT JQ SECS [N]: until OUT holds N (1) JSON lines matching
# JQ, for SECS seconds of wall time (each look is a jq run, which an
# emulated CPU makes slow: a count of looks would wait far longer).
bw_wait_json() {
	local end=$((SECONDS + $3))
	while :; do
		jq -e -s "[.[] | select($2)] | length >= ${4:-1}" "$1" >/dev/null 2>&1 && return 0
		[ $SECONDS -lt "$end" ] || return 1
		sleep 0.1
	done
}

# bw_tune_bg OUT ARGS...: blkwise tune --json in the background with this
# test's run and state directories, started (tuning) when this returns;
# its pid in BW_BG_PID.
bw_tune_bg() {
	local out=$1
	shift
	bw_bg_start "$out" "tuning" "$BW_BIN" tune --json --run-dir "$BW_TMP/run" \
		--state-dir "$BW_TMP/state" "$@"
}

# bw_units_verify ROOT UNIT...: systemd-analyze verify of the UNITs
# installed in ROOT (a template as an instance: blkwise-tune@sda.service),
# with ROOT as the file system root: ExecStart's binary and the man page of
# Documentation= are looked for there.  A root needs the targets a service
# is ordered against by default, so they are copied in from this system
# where it has none, for the time of the check.  Output in
# $BW_TMP/verify.out; exit status of verify.
bw_units_verify() {
	local root=$1 t src added=() rc
	shift
	for t in sysinit.target basic.target shutdown.target multi-user.target; do
		[ -f "$root/usr/lib/systemd/system/$t" ] && continue
		for src in /usr/lib/systemd/system /lib/systemd/system; do
			[ -f "$src/$t" ] || continue
			install -D -m 0644 "$src/$t" "$root/usr/lib/systemd/system/$t" && added+=("$root/usr/lib/systemd/system/$t")
			break
		done
	done
	MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" "$@" >"$BW_TMP/verify.out" 2>&1
	rc=$?
	rm -f "${added[@]}"
	return $rc
}

# ---- cgroups ----

# The cgroup v2 mount (/sys/fs/cgroup, or .../unified on a hybrid setup).
cg_mount() { awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts; }

# The mount of the hierarchy that holds the io controller, the one a
# request's blkg names: cgroup v2 where io is on it, else v1's blkio (a
# hybrid host); empty when neither.
cg_io_mount() {
	if cg_has io; then
		cg_mount
	else
		awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts
	fi
}

# cg_make VAR NAME [MOUNT]: a new cgroup under MOUNT (the v2 mount); its
# path below the mount (as blkwise prints it) goes into VAR.  NAME may
# name a child of one made before (A/inner).  Removed at cleanup.
cg_make() {
	local _mnt=${3:-$(cg_mount)} _dir
	case $2 in
	*/*) _dir=$_mnt$2 ;;
	*) _dir=$_mnt/blkwise-test-$2.$$ ;;
	esac
	mkdir "$_dir" || return 1
	bw_on_cleanup "rmdir $_dir 2>/dev/null"
	printf -v "$1" '%s' "${_dir#"$_mnt"}"
}

# cg_has CTRL: whether controller CTRL is on cgroup v2 here.
cg_has() { grep -qw "$1" "$(cg_mount)/cgroup.controllers" 2>/dev/null; }

# cg_enable CTRL...: the controllers on for the root's children (turned off
# again at cleanup where this turned them on), so that the kernel charges
# a child's I/O to the child itself rather than to the root.
cg_enable() {
	local c sc added=""
	sc=$(cg_mount)/cgroup.subtree_control
	for c in "$@"; do
		grep -qw "$c" "$sc" && continue
		echo "+$c" >"$sc" || return 1
		added="$added -$c"
	done
	[ -z "$added" ] || bw_on_cleanup "echo '${added# }' >$sc"
}

# cg_run CGROUP_PATH CMD...: CMD run inside the cgroup (of CG_MOUNT, the
# v2 mount by default).
cg_run() {
	local cg=${CG_MOUNT:-$(cg_mount)}$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# cg_wbytes CGROUP_PATH DEV: the bytes io.stat (v2) charges CGROUP_PATH for writes to DEV.
cg_wbytes() {
	local mm
	mm=$(cat /sys/block/"$2"/dev)
	awk -v mm="$mm" '$1 == mm { for (i = 2; i <= NF; i++) if ($i ~ /^wbytes=/) { sub(/^wbytes=/, "", $i); print $i; exit } }' \
		"$(cg_mount)$1/io.stat"
	true
}

# cg_metric FILE NAME CGROUP OP: a per-cgroup sample of a scraped page ("" when absent).
cg_metric() {
	awk -v n="$2" -v l="cgroup=\"$3\",op=\"$4\"" \
		'index($1, n "{") == 1 && index($1, l) { print $2; exit }' "$1"
}

# bw_doc_blocks PAGE HAVE: runs every ```sh block of PAGE (a page of docs/)
# as written, one after the other, with DEV set (the caller's) and blkwise
# on PATH, in a mount namespace of its own whose /var/lib, /run and
# /etc/default are empty tmpfs (what the blocks write or remove stays
# there).  A block whose first line is "# needs: X" runs only where X is a
# word of HAVE.  Sets BW_DOC_RAN (blocks run) and BW_DOC_NOT (the needs of
# those not run); prints each failed block with its output; 1 on a failure.
bw_doc_blocks() {
	local page=$1 have=$2 f need bin=$BW_TMP/docbin rc=0
	BW_DOC_RAN=0 BW_DOC_NOT=""
	mkdir -p "$bin" && ln -sf "$BW_BIN" "$bin/blkwise"
	rm -f "$BW_TMP"/docblock.*
	python3 - "$page" "$BW_TMP" <<'PY' || return 1
import re, sys
text = open(sys.argv[1]).read()
for i, b in enumerate(re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)):
	open("%s/docblock.%02d" % (sys.argv[2], i), "w").write(b)
PY
	for f in "$BW_TMP"/docblock.*; do
		[ -e "$f" ] || continue
		need=$(sed -n '1s/^# needs: //p' "$f")
		if [ -n "$need" ] && ! echo " $have " | grep -q " $need "; then
			BW_DOC_NOT="$BW_DOC_NOT $need"
			continue
		fi
		if ! DEV=$DEV PATH="$bin:$PATH" unshare -m --propagation private bash -c '
			for d in /var/lib /run /etc/default; do mount -t tmpfs bwdoc "$d" || exit 99; done
			cd "$0" && exec bash -eo pipefail "$1"' "$BW_TMP" "$f" >"$f.out" 2>&1; then
			echo "  block failed ($(basename "$f")):" && sed 's/^/    | /' "$f" && sed 's/^/    > /' "$f.out"
			rc=1
		fi
		BW_DOC_RAN=$((BW_DOC_RAN + 1))
	done
	return $rc
}
