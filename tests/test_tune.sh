#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: `blkwise tune`.  Decisions against the emulated disk's
# known parallelism (tools/fakedisk: one spindle with a seek model,
# BW_SPINDLE, and a RAID-0 of four); safety (dry run, every restore path,
# external changes, refusals) on the same devices and on loop devices, checked by reading
# sysfs back.  Every tuner here uses its own --run-dir and --state-dir.
. "$(dirname "$0")/lib.sh"

TN_DISK=$(bw_disk_scaled "service_us=500,xfer_us_per_mib=4000,seek_us_per_gib=8000,size_mb=1024")

tn_require() { bw_require_bfq_fakedisk; }

# tn_bfq_disk VAR OPTS: an emulated disk (OPTS whole) on bfq, rotational,
# low_latency 0, slice_idle_us 8000, with BFQ's queueing detection done (3 s
# of readers at idle 0: BFQ decides hw_tag once, and idles for nobody
# before that).
tn_bfq_disk() {
	local _d
	bw_fakedisk _d "$2" || return 1
	echo bfq >/sys/block/"$_d"/queue/scheduler || return 1
	echo 1 >/sys/block/"$_d"/queue/rotational
	echo 0 >/sys/block/"$_d"/queue/iosched/low_latency
	echo 0 >/sys/block/"$_d"/queue/iosched/slice_idle_us
	tn_seq "$_d" 3 >/dev/null
	echo 8000 >/sys/block/"$_d"/queue/iosched/slice_idle_us
	printf -v "$1" %s "$_d"
}

# tn_disk VAR OPTS: TN_DISK with OPTS (the RAID-0s); tn_spindle VAR: the spindle.
tn_disk() { tn_bfq_disk "$1" "$TN_DISK,$2"; }
tn_spindle() { tn_bfq_disk "$1" "$BW_SPINDLE"; }

# tn_fio DEV SECS [fio options]: 4 sequential 256 KiB direct readers.
tn_fio() {
	local dev=$1 secs=$2
	shift 2
	fio --name=tn --filename=/dev/"$dev" --direct=1 --rw=read --bs=256k --ioengine=psync \
		--numjobs=4 --size=256m --offset_increment=256m --time_based --runtime="$secs" \
		--group_reporting --output-format=json "$@" 2>/dev/null
}

# tn_seq DEV SECS: the readers; prints MB/s.
tn_seq() {
	tn_fio "$1" "$2" | jq '.jobs[0].read.bw_bytes / 1048576 | floor'
}

# tn_seq_bg DEV SECS: the readers in the background, fio itself in TN_FIO
# (so that a kill reaches it), stopped at cleanup.
tn_seq_bg() {
	tn_fio "$1" "$2" --output="$BW_TMP/seq.json" &
	TN_FIO=$!
	bw_on_cleanup "kill $TN_FIO; wait $TN_FIO"
}

# tn_start OUT ARGS...: blkwise tune --json in the background, started
# (tuning) when this returns; TN_PID.
tn_start() {
	local rc
	bw_tune_bg "$@"
	rc=$?
	TN_PID=$BW_BG_PID
	return $rc
}

# tn_wait_for OUT JQ SECS: until a JSON line matches.
tn_wait_for() { bw_wait_json "$@"; }

tn_idle() { cat /sys/block/"$1"/queue/iosched/slice_idle_us; }
tn_sched() { sed 's/.*\[\(.*\)\].*/\1/' /sys/block/"$1"/queue/scheduler; }
tn_values() {	# scheduler, slice_idle_us, low_latency
	local s
	s=$(tn_sched "$1")
	if [ "$s" = bfq ]; then
		echo "$s $(tn_idle "$1") $(cat /sys/block/"$1"/queue/iosched/low_latency)"
	else
		echo "$s"
	fi
}

# tn_dump OUT: after a failure (or always, with BW_TN_DUMP=1), every
# decision with its evidence, for the log.
tn_dump() {
	[ "${__shunit_testSuccess}" = "${SHUNIT_TRUE}" ] && [ "${BW_TN_DUMP:-0}" != 1 ] && return 0
	echo "  decisions:"
	jq -c '{action, why, evidence, compared_with}' "$1" | sed 's/^/    /'
}

# tn_probe_evidence OUT: the first probe's end, its why and what the
# windows measured (depth and P_eff of the window before and of the probe).
tn_probe_evidence() {
	jq -r 'def w: "depth \(.depth_mean_busy // "-" | tostring | .[:4]) p_eff \(.p_eff // "-" | tostring | .[:4]) class \(.class // "-")";
		select(.action == "keep" or .action == "revert" or .action == "repair")
		| "\(.why) [before: \(.compared_with | w); probe: \(.evidence | w)]"' "$1" | head -n 1
}

tn_actions() { jq -r '"\(.action) \(.slice_idle_us_before)->\(.slice_idle_us_after)"' "$1" | paste -sd' '; }

# The RAID-0 of 4 started with idling on (BFQ's 8 ms): the probe finds
# idling off faster and P_eff deep, and keeps 0; throughput rises.  A
# restarted tuner knows the class from the store (or, where no request was
# ever alone to give P_eff, the probe's stored verdict): 0 at once, no probe.
test_striped_device_gets_zero() {
	local dev out by
	tn_require || return 0
	tn_disk dev parallel=4,dispatch=stripe,chunk_kb=256 || { fail "fakedisk"; return; }
	out=$BW_TMP/stripe.json
	# Long enough however slowly the tuner starts; stopped when decided.
	tn_seq_bg "$dev" 15
	tn_start "$out" -d "$dev" || { fail "tune start"; return; }
	tn_wait_for "$out" '.action == "keep" or .action == "revert"' 5
	sleep 1
	echo "  striped: $(tn_actions "$out"); slice_idle_us now $(tn_idle "$dev")"
	# BFQ idles for the readers at first (depth 1, P_eff undetermined): a
	# probe of 0, kept, P_eff deep.  On a CPU-starved host BFQ may not idle
	# from the start: then live P_eff is measured at depth and the class
	# (deep, live) decides 0 at once.  Either way 0, from deep evidence.
	# With no request ever alone (BFQ not idling from the start, on a loaded
	# host), S1 is unknown and so is the probe's P_eff: it decides on
	# throughput, stores that verdict and no class.
	by=class
	if jq -e -s 'map(select(.action == "probe")) | length > 0' "$out" >/dev/null; then
		assertEquals "first a probe of 0" "probe 8000->0" "$(jq -r 'select(.action == "probe") | "probe \(.slice_idle_us_before)->\(.slice_idle_us_after)"' "$out" | head -1)"
		assertEquals "kept" "keep" "$(jq -r 'select(.action == "keep" or .action == "revert") | .action' "$out" | head -1)"
		if jq -e -s '[.[] | select(.action == "keep")][0].evidence.p_eff == null' "$out" >/dev/null; then
			by=verdict
			assertTrue "no P_eff: kept for being faster" \
				"jq -r 'select(.action == \"keep\") | .why' $out | head -1 | grep -q 'faster): keeping it'"
		else
			# Deep by bw_deep_mark (the guest's P_eff reads low: 1.39
			# unscaled, 1.97 at 2x).
			assertTrue "the probe measured P_eff deep (>= $(bw_deep_mark)): $(jq -c 'select(.action == "keep") | .evidence.p_eff' "$out")" \
				"jq -e -s '[.[] | select(.action == \"keep\")][0].evidence.p_eff >= $(bw_deep_mark)' $out >/dev/null"
		fi
	else
		assertEquals "no probe: the live class decided 0" "set 8000->0 deep live" \
			"$(jq -r 'select(.action == "set") | "set \(.slice_idle_us_before)->\(.slice_idle_us_after) \(.evidence.class) \(.evidence.class_source)"' "$out" | head -1)"
	fi
	assertEquals "in force" 0 "$(tn_idle "$dev")"
	# Four psync readers: never more than 4 in flight, whatever BFQ holds queued.
	assertEquals "windows whose depth while busy is over the 4 readers" 0 \
		"$(jq -s '[.[] | .evidence, .compared_with | select(. != null and .depth_mean_busy > 4.01)] | length' "$out")"
	kill -INT "$TN_PID"
	wait "$TN_PID"
	assertEquals "exit status" 0 $?
	assertEquals "put back" 8000 "$(tn_idle "$dev")"
	if [ $by = class ]; then
		assertTrue "class stored" "grep -qP '^class\tloop:.*\tdeep\t' $BW_TMP/state/s1"
	else
		assertTrue "verdict 0 stored" "grep -qP '^idle\tloop:.*\t0\t' $BW_TMP/state/s1"
	fi
	tn_dump "$out"
	kill "$TN_FIO"
	wait "$TN_FIO"
	# Restarted: the stored class decides at once.  The emulated disk's
	# identity has no birth time (FUSE), so the store may be another
	# disk's: the belief is checked once, by a probe of idling, which loses.
	out=$BW_TMP/stripe2.json
	tn_seq_bg "$dev" 12
	tn_start "$out" -d "$dev" || { fail "tune start"; return; }
	# (Or the live evidence settles it: this disk's own S1 gives P_eff deep.)
	tn_wait_for "$out" '.action == "revert" or .action == "keep"' 10
	echo "  restarted: $(tn_actions "$out")"
	case $(tn_actions "$out") in
	"set 8000->0") ;;
	*)
		assertTrue "restarted: 0 at once, the store checked once, 0 stays: $(tn_actions "$out")" \
			"tn_actions $out | grep -qxE 'set 8000->0 probe 0->[0-9]+ revert 0->0'"
		assertTrue "the probe is the check" "jq -r 'select(.action == \"probe\") | .why' $out |
			grep -q '^checking what the store holds for this device (its backing file has no birth time'"
		;;
	esac
	assertEquals "0 in force" 0 "$(tn_idle "$dev")"
	if [ $by = class ]; then
		assertEquals "from the stored class" stored "$(jq -r 'select(.action == "set") | .evidence.class_source' "$out")"
	else
		assertTrue "from the stored verdict" "jq -r 'select(.action == \"set\") | .why' $out |
			grep -q '^the stored verdict for this device: 0 us won by'"
	fi
	kill -INT "$TN_PID"
	wait "$TN_PID"
}

# One spindle: the probe finds idling off much slower and P_eff shallow,
# and goes back to idling.
test_spindle_keeps_idling() {
	local dev out
	tn_require || return 0
	tn_spindle dev || { fail "fakedisk"; return; }
	out=$BW_TMP/spindle.json
	# S1 known first, from one reader alone (always solo): whether BFQ
	# idles enough at 8 ms to leave requests alone depends on the host's
	# speed (seen not to in a slow VM: depth 1.7 at 8 ms, S1 never
	# learned, the probe's P_eff undetermined).  The tuner is judged on
	# its decision given the evidence.
	bw_stat_start "$BW_TMP/spindle.stat" -d "$dev" -i 0.5 --exact || { fail "stat start"; return; }
	tn_fio "$dev" 2 --numjobs=1 >/dev/null
	bw_stat_stop INT
	tn_seq_bg "$dev" 35
	tn_start "$out" -d "$dev" || { fail "tune start"; return; }
	tn_wait_for "$out" '(.action == "keep" or .action == "revert") and .slice_idle_us_before != 0' 28
	sleep 1
	echo "  spindle: $(tn_actions "$out"); slice_idle_us now $(tn_idle "$dev")"
	echo "  its probe: $(jq -r 'select(.action == "keep" or .action == "revert" or .action == "repair") | .why' "$out" | head -n 1)"
	# Where BFQ idles at the start, a probe of 0, which goes back to idling
	# with strict_guarantees on a spindle (or plain idling where the probe
	# could not show P_eff shallow); where it does not idle, the class shows
	# shallow and the tuner repairs idling with strict_guarantees
	# (tests/test_idling.sh).  Either way idling stays on, and at most one probe.
	# The failure's line is all a CI summary keeps: the probe's verdict
	# and its evidence go in it.
	assertTrue "a probe goes back, or a repair: $(tn_actions "$out"); $(tn_probe_evidence "$out")" \
		"tn_actions $out | grep -qE '^(probe 8000->0 (revert 8000->8000|repair 8000->20000)|repair 8000->20000)'"
	assertTrue "at most one probe" "[ \$(jq -s '[.[] | select(.action == \"probe\")] | length' $out) -le 1 ]"
	assertTrue "a probe measured P_eff shallow: $(jq -c 'select(.action == "revert" or .action == "repair") | .evidence.p_eff' "$out")" \
		"jq -e -s '[.[] | select((.action == \"revert\" or .action == \"repair\") and .slice_idle_us_before == 8000)][0].evidence.p_eff // 0 | . <= 1.4' $out >/dev/null"
	assertTrue "idling on" "[ $(tn_idle "$dev") -ge 4000 ]"
	kill -INT "$TN_PID"
	wait "$TN_PID"
	assertTrue "class stored: $(grep -v '^s1' $BW_TMP/state/s1 | paste -sd' ')" "grep -qP '^class\tloop:.*\tshallow\t' $BW_TMP/state/s1"
	tn_dump "$out"
}

# --dry-run decides and says so, and writes nothing: not sysfs, not the run
# dir.  Twice: once where it would probe, once where a stored class makes it
# decide at once (a would-set).
test_dry_run_writes_nothing() {
	local dev out before msg
	tn_require || return 0
	tn_disk dev parallel=4,dispatch=stripe,chunk_kb=256 || { fail "fakedisk"; return; }
	before=$(tn_values "$dev")
	# A trial (a probe, or the live class's set where BFQ does not idle on a
	# CPU-starved host), then a set from a stored class.
	for what in trial set; do
		out=$BW_TMP/dry.$what.json
		if [ $what = set ]; then
			bw_store "$BW_TMP/drystate" "$(bw_loop_identity "$dev")" deep
		fi
		# Long enough for two steady windows however slowly the tuner starts.
		tn_seq_bg "$dev" 10
		tn_start "$out" -d "$dev" --dry-run --low-latency 1 --run-dir "$BW_TMP/dry" \
			--state-dir "$BW_TMP/drystate" || { fail "tune start"; return; }
		local want="would-$what"
		[ $what = trial ] && want="would-(probe|set)"
		tn_wait_for "$out" ".action | test(\"^$want\$\")" 8
		sleep 1
		echo "  dry run ($what): $(tn_actions "$out")"
		assertTrue "$what: the decision was announced" "grep -qE '\"$want\"' $out"
		assertEquals "$what: nothing changed while running" "$before" "$(tn_values "$dev")"
		kill -INT "$TN_PID"
		wait "$TN_PID"
		assertEquals "$what: exit status" 0 $?
		assertEquals "$what: nothing changed" "$before" "$(tn_values "$dev")"
		assertFalse "$what: no run dir, no state file, no lock" "[ -e $BW_TMP/dry ]"
		kill "$TN_FIO" 2>/dev/null
		wait "$TN_FIO"
	done
	# --once in a dry run says what it found, and writes nothing.
	msg=$("$BW_BIN" tune -d "$dev" --once --dry-run -i 0.2 --run-dir "$BW_TMP/dry" \
		--state-dir "$BW_TMP/drystate" 2>&1)
	assertEquals "--once --dry-run: exit status" 0 $?
	assertTrue "--once --dry-run says what it left: $msg" \
		"echo \"\$msg\" | grep -q 'slice_idle_us [0-9]* as found; dry run, nothing written'"
	assertEquals "--once --dry-run: nothing changed" "$before" "$(tn_values "$dev")"
}

# tn_changed_then SIGNAL: a tuner that switched the scheduler to bfq, set
# low_latency and changed slice_idle_us, then stops by SIGNAL; every value
# must come back exactly.  KILL: only `tune --restore` can.
tn_restore_path() {
	local sig=$1 dev out
	tn_require || return 0
	tn_disk dev parallel=4,dispatch=stripe,chunk_kb=256 || { fail "fakedisk"; return; }
	echo 7777 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	echo 1 >/sys/block/"$dev"/queue/iosched/low_latency
	out=$BW_TMP/restore.$sig.json
	# The store knows the stripe deep, so the tuner sets 0 at start (as
	# the dry run's "would-set"), a write the test can wait for; no I/O, so
	# no window, and no probe to check that belief (in the guest one had
	# begun, 8000 in force, by the time of the KILL).  Not a probe of 0
	# either: it lasts 0.5 to 2 s (one had ended, 7777 again, before the
	# values were read) and where BFQ does not idle at 7777 it ties and
	# goes back (seen in the guest: -1%, depth 3.66 before it).
	bw_store "$BW_TMP/state" "$(bw_loop_identity "$dev")" deep
	tn_start "$out" -d "$dev" --low-latency 0 || { fail "tune start"; return; }
	tn_wait_for "$out" '.action == "set" and .slice_idle_us_after == 0' 20 ||
		{ fail "$sig: 0 not set in 20 s: $(tn_actions "$out")"; tn_dump "$out"; return; }
	assertEquals "$sig: changed while running" "bfq 0 0" "$(tn_values "$dev")"
	assertTrue "$sig: state saved before" "[ -s $BW_TMP/run/tune-$dev ]"
	kill -"$sig" "$TN_PID"
	wait "$TN_PID" 2>/dev/null
	if [ "$sig" = KILL ]; then
		assertEquals "KILL: left changed" "bfq 0 0" "$(tn_values "$dev")"
		"$BW_BIN" tune --restore --run-dir "$BW_TMP/run" 2>"$out.restore"
		assertEquals "--restore: exit status" 0 $?
		cat "$out.restore" | sed 's/^/    /'
	fi
	assertEquals "$sig: every value back" "bfq 7777 1" "$(tn_values "$dev")"
	assertFalse "$sig: state file gone" "[ -e $BW_TMP/run/tune-$dev ]"
	"$BW_BIN" tune --restore --run-dir "$BW_TMP/run" 2>"$out.again"
	assertEquals "$sig: a second --restore: nothing to do, exit 0" 0 $?
	assertTrue "$sig: says so" "grep -q 'nothing to restore' $out.again"
}

test_restore_on_sigint() { tn_restore_path INT; }
test_restore_on_sigterm() { tn_restore_path TERM; }
test_restore_after_sigkill() { tn_restore_path KILL; }

# An empty state file is what a tuner leaves where it cannot remove its own
# (an exporter that dropped root): nothing to put back.  --restore removes
# it, quietly; so does a tuner starting on that device.
test_restore_empty_state_file() {
	local dev run=$BW_TMP/emptyrun out before
	tn_require || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	echo bfq >/sys/block/"$dev"/queue/scheduler
	echo 6000 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	before=$(tn_values "$dev")
	mkdir -p "$run"
	: >"$run/tune-$dev"
	"$BW_BIN" tune --restore --run-dir "$run" 2>"$BW_TMP/empty.err"
	assertEquals "--restore: exit status" 0 $?
	assertTrue "--restore: nothing to restore: $(cat "$BW_TMP/empty.err")" \
		"grep -q 'nothing to restore' $BW_TMP/empty.err"
	assertFalse "--restore: no complaint" "grep -qE 'error|not a tune state' $BW_TMP/empty.err"
	assertFalse "--restore: removed" "[ -e $run/tune-$dev ]"
	assertEquals "--restore: untouched" "$before" "$(tn_values "$dev")"
	: >"$run/tune-$dev"
	out=$BW_TMP/empty.json
	tn_start "$out" -d "$dev" --run-dir "$run" || { fail "tune start"; return; }
	assertFalse "tuner: no word of it: $(cat "$out.err")" "grep -qE 'ignoring|did not exit' $out.err"
	assertTrue "tuner: its own state file" "[ -s $run/tune-$dev ]"
	kill -INT "$TN_PID"
	wait "$TN_PID"
	assertEquals "tuner: exit status" 0 $?
	assertEquals "tuner: put back" "$before" "$(tn_values "$dev")"
	assertFalse "tuner: state file gone" "[ -e $run/tune-$dev ]"
}

# The scheduler itself: switched to bfq with --set-scheduler, put back.
test_restore_scheduler() {
	local dev out
	tn_require || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	out=$BW_TMP/sched.json
	tn_start "$out" -d "$dev" --set-scheduler bfq --low-latency 0 || { fail "tune start"; return; }
	assertEquals "switched" "bfq" "$(tn_sched "$dev")"
	kill -TERM "$TN_PID"
	wait "$TN_PID"
	assertEquals "exit status" 0 $?
	assertEquals "put back" "mq-deadline" "$(tn_sched "$dev")"
	# --once leaves its decision in place; --restore puts back.
	tn_start "$out" -d "$dev" --set-scheduler bfq --once -i 0.3 || { fail "tune start"; return; }
	wait "$TN_PID"
	assertEquals "--once: exit status" 0 $?
	assertEquals "--once: left as decided" "bfq" "$(tn_sched "$dev")"
	"$BW_BIN" tune --restore --run-dir "$BW_TMP/run" 2>/dev/null
	assertEquals "--once then --restore" "mq-deadline" "$(tn_sched "$dev")"
}

# A value changed behind the tuner's back is logged and respected: the
# device is left alone, and that value is not "put back" at exit.  The
# tuner's own change comes from the store (a class deep, on a loop device
# whose identity names its file), so no timing decides it.
test_external_change_respected() {
	local dev out
	tn_require || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	echo bfq >/sys/block/"$dev"/queue/scheduler
	echo 8000 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	mkdir -p "$BW_TMP/state"
	printf 'blkwise-s1 4\nclass\t%s\tdeep\t3.000\t%s\n' "$(bw_loop_identity "$dev")" "$(date +%s)" \
		>"$BW_TMP/state/s1"
	out=$BW_TMP/ext.json
	tn_start "$out" -d "$dev" || { fail "tune start"; return; }
	tn_wait_for "$out" '.action == "set"' 10 || { fail "no set decision: $(tn_actions "$out")"; return; }
	assertEquals "the store's deep: 0 at once" "set 8000->0" "$(tn_actions "$out")"
	echo 5555 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	sleep 1.5
	assertTrue "logged: $(grep behind "$out.err")" "grep -q 'changed behind our back (now 5555, we set 0)' $out.err"
	assertEquals "not fought" 5555 "$(tn_idle "$dev")"
	kill -INT "$TN_PID"
	wait "$TN_PID"
	assertEquals "not put back over it" 5555 "$(tn_idle "$dev")"
}

# Refusals: a clear line, the right exit code, and nothing changed.
tn_expect() {
	local code=$1 pattern=$2 rc
	shift 2
	# A refusal is immediate: a tuner still running after 20 s did not refuse.
	timeout -s KILL 20 "$@" >"$BW_TMP/err.out" 2>"$BW_TMP/err.txt"
	rc=$?
	assertEquals "exit code of: $*" "$code" "$rc"
	grep -qE -- "$pattern" "$BW_TMP/err.txt"
	assertTrue "message /$pattern/ for: $* (got: $(head -c 300 "$BW_TMP/err.txt"))" $?
}

test_refusals_change_nothing() {
	local dev out before
	tn_require || return 0
	bw_require setpriv unshare || return 0
	# A run directory of its own: a tuner an earlier test had to kill
	# leaves its state file, under a loop device name this one may reuse.
	rm -rf "$BW_TMP/run"
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	tn_expect 1 "$dev: scheduler is mq-deadline; idling needs bfq \(--set-scheduler bfq\)" \
		"$BW_BIN" tune -d "$dev" --run-dir "$BW_TMP/run"
	assertEquals "not-bfq: untouched" mq-deadline "$(tn_sched "$dev")"
	tn_expect 2 "unknown device 'nosuchdev'" "$BW_BIN" tune -d nosuchdev
	tn_expect 2 "bad --policy 'fast'" "$BW_BIN" tune --policy fast
	tn_expect 2 "bad --set-scheduler 'kyber'" "$BW_BIN" tune --set-scheduler kyber
	tn_expect 2 "bad --low-latency '2'" "$BW_BIN" tune --low-latency 2
	tn_expect 2 "bad --max-idle-us '999': give 1000..1000000" "$BW_BIN" tune --max-idle-us 999
	tn_expect 2 "bad --strict-idle-us '20ms': give 1000..1000000" \
		"$BW_BIN" tune --strict-idle-us 20ms
	echo bfq >/sys/block/"$dev"/queue/scheduler
	echo 6000 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	before=$(tn_values "$dev")
	tn_expect 1 "not privileged" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$BW_BIN" tune -d "$dev" --run-dir "$BW_TMP/run"
	# Read-only sysfs in a mount namespace of its own.  remount,bind,ro changes
	# this mount only; a plain remount,ro would make the host's sysfs read-only.
	tn_expect 1 "$dev: cannot write /sys/block/$dev/queue/iosched/slice_idle_us: Read-only file system" \
		unshare -m --propagation private sh -c \
		"mount -o remount,bind,ro /sys && exec $BW_BIN tune -d $dev --low-latency 0 --run-dir $BW_TMP/run"
	assertTrue "the host's sysfs is still writable" "grep -q ' /sys sysfs rw' /proc/mounts"
	assertEquals "read-only sysfs: untouched" "$before" "$(tn_values "$dev")"
	assertFalse "read-only sysfs: no state file" "[ -e $BW_TMP/run/tune-$dev ]"
	# A second tuner on the same device.
	out=$BW_TMP/first.json
	tn_start "$out" -d "$dev" || { fail "tune start"; return; }
	tn_expect 1 "$dev: another blkwise tune \(pid $TN_PID\) is tuning it" \
		"$BW_BIN" tune -d "$dev" --low-latency 0 --run-dir "$BW_TMP/run"
	assertEquals "second tuner: untouched" "$before" "$(tn_values "$dev")"
	tn_expect 1 "$dev: blkwise tune \(pid $TN_PID\) is still running" \
		"$BW_BIN" tune --restore --run-dir "$BW_TMP/run"
	kill -INT "$TN_PID"
	wait "$TN_PID"
	assertEquals "first tuner: exit status" 0 $?
	assertEquals "put back" "$before" "$(tn_values "$dev")"
}

# tn_kernel_bfq: whether this kernel offers BFQ, by asking the kernel
# itself (modprobe, then the schedulers a disk lists).
tn_kernel_bfq() {
	modprobe -q bfq 2>/dev/null
	grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null
}

# A kernel without BFQ: tune names the kernel option in one line, exits 1
# and never suggests --set-scheduler; stat and export say so once.  On a
# kernel with BFQ none of them says it, and tune's advice stands.
test_no_bfq_said_plainly() {
	local dev port pid n o
	# Usage before anything else, BFQ or not: --restore takes nothing it
	# would ignore.
	for o in --once --dry-run "-i 2" "--state-dir $BW_TMP/s" "--low-latency 0"; do
		tn_expect 2 "^blkwise: --restore takes only -d, --run-dir and --verbose" \
			"$BW_BIN" tune --restore --run-dir "$BW_TMP/run" $o
	done
	bw_loop dev 64 shm --direct-io=on || { fail "loop"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	"$BW_BIN" stat -d "$dev" -i 0.2 -c 1 >/dev/null 2>"$BW_TMP/stat.err"
	port=$(bw_free_port)
	"$BW_BIN" export -d "$dev" -l 127.0.0.1:"$port" --no-state 2>"$BW_TMP/export.err" &
	pid=$!
	for n in $(seq 100); do grep -q serving "$BW_TMP/export.err" && break; sleep 0.1; done
	kill -TERM $pid
	wait $pid
	if tn_kernel_bfq; then
		echo "  this kernel offers BFQ: the advice stands"
		tn_expect 1 "$dev: scheduler is mq-deadline; idling needs bfq \(--set-scheduler bfq\)" \
			"$BW_BIN" tune -d "$dev" --run-dir "$BW_TMP/run"
		assertFalse "stat: no word of a missing BFQ" "grep -q CONFIG_IOSCHED_BFQ $BW_TMP/stat.err"
		assertFalse "export: no word of a missing BFQ" "grep -q CONFIG_IOSCHED_BFQ $BW_TMP/export.err"
		return
	fi
	echo "  this kernel offers no BFQ"
	for args in "" "--set-scheduler bfq" "--set-scheduler bfq --dry-run"; do
		# shellcheck disable=SC2086
		tn_expect 1 "^blkwise: error: $dev: this kernel has no BFQ \(CONFIG_IOSCHED_BFQ is not set" \
			"$BW_BIN" tune -d "$dev" --run-dir "$BW_TMP/run" $args
		assertEquals "one line ($args)" 1 "$(grep -c . "$BW_TMP/err.txt")"
		assertFalse "no --set-scheduler advice ($args)" "grep -q -- --set-scheduler $BW_TMP/err.txt"
		assertEquals "untouched ($args)" mq-deadline "$(tn_sched "$dev")"
	done
	tn_expect 1 "^blkwise: error: no device to tune: this kernel has no BFQ \(CONFIG_IOSCHED_BFQ" \
		"$BW_BIN" tune --run-dir "$BW_TMP/run"
	assertFalse "no --set-scheduler advice (every device)" "grep -q -- --set-scheduler $BW_TMP/err.txt"
	assertEquals "no state file" "" "$(ls "$BW_TMP/run" 2>/dev/null | grep -v lock)"
	assertEquals "stat says it once: $(cat "$BW_TMP/stat.err")" 1 "$(grep -c CONFIG_IOSCHED_BFQ "$BW_TMP/stat.err")"
	assertEquals "export says it once: $(cat "$BW_TMP/export.err")" 1 "$(grep -c CONFIG_IOSCHED_BFQ "$BW_TMP/export.err")"
}

# A tuned device that goes away is dropped cleanly; the last one ends the run.
test_device_vanishes() {
	local a b out
	tn_require || return 0
	bw_loop a 64 shm --direct-io=on || { fail "loop"; return; }
	bw_loop b 64 shm --direct-io=on || { fail "loop"; return; }
	echo bfq >/sys/block/"$a"/queue/scheduler
	echo bfq >/sys/block/"$b"/queue/scheduler
	out=$BW_TMP/vanish.json
	tn_start "$out" -d "$a" -d "$b" -i 0.3 || { fail "tune start"; return; }
	losetup -d /dev/"$a"
	sleep 1
	assertTrue "still running" "kill -0 $TN_PID"
	assertTrue "says so" "grep -q '$a: gone; no longer tuned' $out.err"
	losetup -d /dev/"$b"
	sleep 1
	wait "$TN_PID"
	assertEquals "the last one gone: exit 1" 1 $?
	assertTrue "says so" "grep -q 'every tuned device is gone' $out.err"
	assertEquals "no state left" "" "$(ls "$BW_TMP/run" | grep -v lock)"
}

# docs/tune-production.md's commands run as written, on the spindle on bfq
# under four sequential readers (a production disk at work), and leave it
# as they found it: every block but those that need systemd, which run in
# test_production_page_unit_commands where systemd does.
test_production_page_commands() {
	local DEV before out
	tn_require || return 0
	tn_spindle DEV || { fail "fakedisk"; return; }
	before=$(tn_values "$DEV")
	tn_seq_bg "$DEV" 60
	bw_doc_blocks "$BW_ROOT/docs/tune-production.md" "" >"$BW_TMP/doc.out"
	cat "$BW_TMP/doc.out"
	assertEquals "blocks of docs/tune-production.md that fail as written" "" "$(cat "$BW_TMP/doc.out")"
	assertTrue "blocks run: $BW_DOC_RAN" "[ $BW_DOC_RAN -ge 2 ]"
	assertEquals "only systemd's blocks left out" "systemd systemd" "$(echo $BW_DOC_NOT)"
	kill "$TN_FIO" 2>/dev/null
	wait "$TN_FIO"
	assertEquals "the device as found" "$before" "$(tn_values "$DEV")"
}

# Its blocks that need systemd, where systemd runs and blkwise-tune@.service
# is installed (a host, not the VM tier's busybox guest).
test_production_page_unit_commands() {
	local DEV state
	# systemd first: a host without it skips here rather than moving the
	# test to the guest, which has no systemd either.
	state=$(systemctl is-system-running 2>/dev/null)
	case $state in
	running | degraded) ;;
	*) bw_skip "systemd is not running here (${state:-no systemctl})"; return 0 ;;
	esac
	tn_require || return 0
	systemctl cat blkwise-tune@.service >/dev/null 2>&1 ||
		{ bw_skip "blkwise-tune@.service is not installed"; return 0; }
	tn_spindle DEV || { fail "fakedisk"; return; }
	bw_doc_blocks "$BW_ROOT/docs/tune-production.md" "systemd" >"$BW_TMP/doc.out"
	cat "$BW_TMP/doc.out"
	assertEquals "blocks of docs/tune-production.md that fail as written" "" "$(cat "$BW_TMP/doc.out")"
}

# shellcheck disable=SC1091
. shunit2
