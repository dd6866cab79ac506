#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the S1 store.  A device's solo service time S1, learned
# while it ran at depth 1, outlives the run; a new `blkwise stat` started
# on the device while it is already driven deep (so it never sees a solo
# request) knows its parallelism from its first interval.  The truth is
# the emulated disk's (tools/fakedisk): P servers, and its own count of
# busy servers.
. "$(dirname "$0")/lib.sh"

ST_TOL=15	# % for P_eff against the truth, as tests/test_parallelism.sh
# The disk's service time: long against the path of a request through
# loop and FUSE (0.3-0.8 ms here), which the S1 learned at depth 1 holds
# and the disk's count of busy servers does not (P_eff reads about
# (service + path) / service of the truth).
ST_SVC_US=8000

st_require() {
	bw_require fio jq losetup fusermount3 || return 1
	[ -c /dev/fuse ] || { bw_skip "/dev/fuse missing: no FUSE here"; return 1; }
	make -s -C "$BW_ROOT/tools/fakedisk" >&2 || { fail "cannot build tools/fakedisk"; return 1; }
}

# st_fio NAME DEV QD SECS: randread 4k, direct, io_uring.
st_fio() {
	fio --name="$1" --filename=/dev/"$2" --direct=1 --ioengine=io_uring --rw=randread --bs=4k \
		--iodepth="$3" --time_based --runtime="$4" --output-format=json \
		--output="$BW_TMP/$1.fio.json" >/dev/null
}

# st_learn DEV DIR: one stat run that sees DEV at iodepth 1 and saves S1 at exit.
st_learn() {
	local out=$BW_TMP/learn.$RANDOM.json
	bw_stat_start "$out" -d "$1" -i 1 --exact --state-dir "$2" || return 1
	st_fio learn "$1" 1 3 || return 1
	bw_stat_stop INT || return 1
	ST_LEARNED_S1=$(jq -rs --arg d "$1" '[.[].devices[] | select(.device == $d and .solo_svc_ms != null)]
		| last | .solo_svc_ms' "$out")
}

# st_first_interval DEV DIR FDDIR: fio at iodepth 16 first, then a new stat;
# ST_FIRST is stat's first interval of DEV (JSON), ST_TRUTH the fixture's
# busy servers over the same second.
st_first_interval() {
	local dev=$1 dir=$2 fd=$3 out=$BW_TMP/first.$RANDOM.json fio_pid
	st_fio deep "$dev" 16 6 &
	fio_pid=$!
	bw_on_cleanup "kill $fio_pid"
	sleep 1.5
	echo 1 >"$fd/reset"
	bw_stat_start "$out" -d "$dev" -i 1 --exact --state-dir "$dir" || return 1
	echo 1 >"$fd/reset"
	for _ in $(seq 40); do [ -s "$out" ] && break; sleep 0.05; done
	ST_TRUTH=$(jq .busy_servers_avg "$fd/stats")
	bw_stat_stop INT
	wait "$fio_pid"
	ST_FIRST=$(head -n 1 "$out" | jq -c --arg d "$dev" '.devices[] | select(.device == $d)')
}

# Learned at iodepth 1 in one run; a new stat, started while the device is
# already at iodepth 16, reads P_eff within 15% of the truth in its first
# full interval, from the stored S1.  Up to three tries (new learning run
# each), the median decides, as in tests/test_parallelism.sh: S1 is a mean
# over a 3 s warm-up on a shared machine.
test_stored_s1_first_interval() {
	local dev dir fd ratios=() peffs=() p src age med i
	st_require || return 0
	bw_fakedisk dev dispatch=any,parallel=4,service_us=$ST_SVC_US || { fail "fakedisk"; return; }
	fd=$BW_FAKEDISK_DIR
	echo 2 >/sys/block/"$dev"/queue/nomerges
	for i in 1 2 3; do
		dir=$BW_TMP/state.$i
		st_learn "$dev" "$dir" || { fail "learning run"; return; }
		assertTrue "run $i: the store has S1 of read class 0 for the backing file" \
			"grep -qP '^s1\tloop:$fd/disk#[0-9]+:[0-9]+:[0-9]+\tread\t0\t[0-9]+\t[0-9]+\t[0-9]+$' $dir/s1"
		st_first_interval "$dev" "$dir" "$fd" || { fail "deep run"; return; }
		p=$(echo "$ST_FIRST" | jq -r .p_eff)
		src=$(echo "$ST_FIRST" | jq -r .s1_source)
		age=$(echo "$ST_FIRST" | jq -r .s1_age_s)
		echo "  try $i: learned S1 $ST_LEARNED_S1 ms; first interval: P_eff $p, s1_source $src," \
			"age $age s, depth $(echo "$ST_FIRST" | jq -r .depth_mean_busy), truth $ST_TRUTH busy servers"
		assertEquals "try $i: s1_source of the first interval" stored "$src"
		assertTrue "try $i: age $age s is >= 0 and small" "[ '$age' != null ] && [ ${age%.*} -ge 0 ] && [ ${age%.*} -lt 60 ]"
		[ "$p" = null ] && { fail "try $i: P_eff undetermined in the first interval"; return; }
		peffs+=("$p")
		ratios+=("$(bw_calc "$p / $ST_TRUTH")")
		# Two tries that agree decide; a third only when they disagree.
		[ $i -eq 2 ] && [ "$(st_in "${ratios[0]}")" = "$(st_in "${ratios[1]}")" ] && break
	done
	med=$(printf '%s\n' "${ratios[@]}" | st_median)
	assertTrue "P_eff / truth ${ratios[*]} (median $med) within $ST_TOL%" "bw_within $med 1 $ST_TOL"
	med=$(printf '%s\n' "${peffs[@]}" | st_median)
	assertTrue "P_eff ${peffs[*]} (median $med) within $ST_TOL% of P=4" "bw_within $med 4 $ST_TOL"
}

st_in() { bw_within "$1" 1 "$ST_TOL" && echo in || echo out; }
st_median() {
	sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Without a store (--no-state), the same start never determines P_eff:
# the stored S1 is what makes the difference above.
test_without_store_undetermined() {
	local dev fd out fio_pid
	st_require || return 0
	bw_fakedisk dev dispatch=any,parallel=4,service_us=$ST_SVC_US || { fail "fakedisk"; return; }
	echo 2 >/sys/block/"$dev"/queue/nomerges
	st_fio deep "$dev" 16 4 &
	fio_pid=$!
	bw_on_cleanup "kill $fio_pid"
	sleep 1
	out=$BW_TMP/nostate.json
	bw_stat_start "$out" -d "$dev" -i 1 --exact --no-state || { fail "blkwise start"; return; }
	sleep 2.2
	bw_stat_stop INT
	wait "$fio_pid"
	assertEquals "first interval: S1 unknown" "solo service time unknown" \
		"$(head -n 1 "$out" | jq -r --arg d "$dev" '.devices[] | select(.device == $d) | .p_eff_undetermined_why')"
}

# st_run_qd1 DIR EXTRA...: a stat run of 2 s over a loop device at iodepth 1.
st_run_qd1() {
	local dir=$1 dev out
	shift
	bw_loop dev 32 shm --direct-io=on || return 1
	out=$BW_TMP/qd1.$RANDOM.json
	bw_stat_start "$out" -d "$dev" -i 0.5 --exact "$@" || return 1
	fio --name=q --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --size=16M \
		--time_based --runtime=1.5 --ioengine=psync >/dev/null
	bw_stat_stop INT
	ST_RC=$?
	ST_ERR=$out.err
	ST_DEV=$dev
}

# A damaged or foreign store is reported once and ignored: stat runs, and
# the file is moved aside (not lost) when the new one is written.
test_corrupt_store_ignored_once() {
	local dir=$BW_TMP/corrupt
	bw_require fio jq || return 0
	mkdir -p "$dir"
	printf 'blkwise-s1 2\ns1\tloop:/x\tread\tzero\n' >"$dir/s1"
	cp "$dir/s1" "$BW_TMP/corrupt.orig"
	st_run_qd1 "$dir" --state-dir "$dir" || { fail "stat run"; return; }
	assertEquals "exit status" 0 "$ST_RC"
	assertEquals "one warning" 1 "$(grep -c 'ignoring the S1 store' "$ST_ERR")"
	assertTrue "it names the file and the line: $(cat "$ST_ERR")" \
		"grep -q 'ignoring the S1 store $dir/s1: line 2' $ST_ERR"
	assertTrue "damaged file kept aside" "cmp -s $dir/s1.damaged $BW_TMP/corrupt.orig"
	assertTrue "a good store written" \
		"head -n 1 $dir/s1 | grep -qx 'blkwise-s1 4' && grep -q \"^s1	loop:.*	read	0	\" $dir/s1"
	assertEquals "no temporary file left" "" "$(ls -A "$dir" | grep tmp)"
	# A foreign file (not ours at all) and an unreadable store: the same.
	head -c 300 "$BW_BIN" >"$dir/s1"
	st_run_qd1 "$dir" --state-dir "$dir" || { fail "stat run"; return; }
	assertEquals "foreign: exit status" 0 "$ST_RC"
	assertTrue "foreign: says so" "grep -q 'not a blkwise S1 state file' $ST_ERR"
	st_run_qd1 "$dir" --state-dir "$BW_BIN" || { fail "stat run"; return; }
	assertEquals "store path is a file: exit status" 0 "$ST_RC"
	assertEquals "store path is a file: one warning" 1 "$(grep -c 'S1 store' "$ST_ERR")"
}

# --no-state reads and writes nothing.
test_no_state_writes_nothing() {
	local dir=$BW_TMP/none
	bw_require fio jq || return 0
	st_run_qd1 "$dir" --no-state --state-dir "$dir" || { fail "stat run"; return; }
	assertEquals "exit status" 0 "$ST_RC"
	assertFalse "no state directory made" "[ -e $dir ]"
	# The same run with a store writes one: the check above can fail.
	st_run_qd1 "$dir" --state-dir "$dir" || { fail "stat run"; return; }
	assertTrue "with a store: written" "[ -s $dir/s1 ]"
}

# shellcheck disable=SC1091
. shunit2
