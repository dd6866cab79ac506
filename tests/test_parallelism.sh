#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: blkwise's effective parallelism (P_eff), device class and
# per-process streams against an emulated disk that knows its own truth
# (tools/fakedisk: P servers at 2 ms; dispatch=any is a P-server queue,
# dispatch=stripe a RAID-0 of P spindles).  Every number is checked
# against the fixture's own counters, not against a constant we hope for.
#
# The truth: the fixture reports per-server busy time; mean busy servers
# over a window = sum(spindle_busy_ns) / busy_ns (busy_servers_avg in its
# stats), counters reset right before the run.
#
# How intervals are attributed: blkwise prints one line per interval and
# flushes it.  A run starts right after a line appears, so every line
# counted before that held no I/O of the run (they are the iodepth-1
# warm-up), and every line that appeared while fio ran held only that run
# (plus a few ms idle at its start, which neither busy time nor depth
# sees).  The line still open when fio exits is dropped.
#
# Noise (a shared 2-core VM, someone else's benchmark): blkwise learns S1
# from the warm-up as a mean, so a scheduling stall there moves every
# P_eff of the run by the same factor.  Medians over a run's intervals
# cannot remove that, so the P_eff checks take the median of up to three
# independent runs (new blkwise, new warm-up), stopping as soon as the
# third could not change the verdict.  Expected bias, from the model: the
# fixture's solo latency S1 is its service time plus the loop/FUSE path
# (~0.05-0.1 ms idle, 0.2-0.3 ms under load) that overlaps at depth, so
# P_eff = truth * S1 / service: 3-14% high in our runs, inside the 15%
# asked for, but a host loaded for a whole run can push it past.  The
# model itself (P_eff * service / S1 = truth) holds within 1% regardless,
# and is checked at 5%.
. "$(dirname "$0")/lib.sh"

FAKEDISK=$BW_ROOT/tools/fakedisk.sh
PL_PREFIX=/tmp/$BW_TAG-par.$$
PL_WARM=3	# s at iodepth 1 so blkwise learns S1
PL_DEEP=4	# s of the measured run: 3-4 whole 1 s intervals
PL_TOL=15	# % for P_eff against P and against the truth

# Catch-all after an interrupted run; each test tears down its own.
bw_suite_cleanup() {
	local d
	for d in "$PL_PREFIX".*; do
		case $d in *.fakedisk.*) continue ;; esac
		[ -d "$d" ] && "$FAKEDISK" down "$d" >/dev/null 2>&1
	done
	return 0
}

pl_require() {
	bw_require fio jq losetup fusermount3 || return 1
	[ -c /dev/fuse ] || { bw_skip "/dev/fuse missing: no FUSE here"; return 1; }
	[ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ] ||
		{ bw_skip "io_uring disabled (kernel.io_uring_disabled)"; return 1; }
	pkg-config --exists fuse3 2>/dev/null || [ -x "$BW_ROOT/tools/fakedisk/fakedisk" ] ||
		{ bw_skip "libfuse3 missing: apt-get install libfuse3-dev"; return 1; }
	# A build failure is a failure, not a skip.
	make -s -C "$BW_ROOT/tools/fakedisk" >&2 || { fail "cannot build tools/fakedisk"; return 1; }
}

# pl_up DEVVAR DIRVAR OPTS: a fakedisk under a loop device, torn down
# after the test.  Not in $(...): the cleanup must reach this shell.
pl_up() {
	local _pl_dir _pl_name	# not the caller's names: printf -v would hit these
	_pl_dir=$(mktemp -d "$PL_PREFIX.XXXXXX") || return 1
	bw_on_cleanup "$FAKEDISK down $_pl_dir"
	_pl_name=$("$FAKEDISK" up "$_pl_dir" "$3") || { fail "fakedisk.sh up $3"; return 1; }
	# One request per fio I/O: two random 4k reads can be adjacent.
	echo 2 >"/sys/block/$_pl_name/queue/nomerges"
	printf -v "$1" %s "$_pl_name"
	printf -v "$2" %s "$_pl_dir"
}

pl_lines() { wc -l <"$1"; }

# pl_next_line OUT: wait for blkwise's next line; print the line count.
pl_next_line() {
	local n0 n
	n0=$(pl_lines "$1")
	for _ in $(seq 60); do
		n=$(pl_lines "$1")
		[ "$n" -gt "$n0" ] && { echo "$n"; return 0; }
		sleep 0.05
	done
	echo "no blkwise interval within 3 s" >&2
	return 1
}

# pl_fio_args NAME DEV IODEPTH SECS [fio args]: PL_ARGS for randread 4k,
# direct, io_uring; --thread so the issuing process is fio's own pid.
pl_fio_args() {
	local name=$1 dev=$2 qd=$3 secs=$4
	shift 4
	PL_ARGS=(--name="$name" --filename="/dev/$dev" --direct=1 --ioengine=io_uring --thread
		--rw=randread --bs=4k --iodepth="$qd" --time_based --runtime="$secs"
		--output-format=json --output="$BW_TMP/$name.fio.json" "$@")
}

pl_fio() {
	pl_fio_args "$@"
	fio "${PL_ARGS[@]}" >/dev/null
}

# pl_fio_bg like pl_fio, in the background; PL_FIO_PID is fio's pid.
pl_fio_bg() {
	pl_fio_args "$@"
	fio "${PL_ARGS[@]}" >/dev/null &
	PL_FIO_PID=$!
	bw_on_cleanup "kill $PL_FIO_PID; wait $PL_FIO_PID"
}


# pl_measure DEV DIR QD: blkwise from scratch on DEV, PL_WARM s of
# iodepth 1, then PL_DEEP s at QD.  Sets PL_OUT (blkwise JSON), PL_N0
# (lines before the run), PL_N1 (last line written during it), PL_TRUTH
# (mean busy servers over the run).  Asserts P_eff was undetermined in
# every line before the run: the warm-up is depth 1, L = 1 < 1.5.
pl_measure() {
	local dev=$1 dir=$2 qd=$3 undet
	PL_OUT=$BW_TMP/stat.$dev.$RANDOM.json
	bw_stat_start "$PL_OUT" -d "$dev" -i 1 --exact || { fail "blkwise start"; return 1; }
	pl_fio warm "$dev" 1 "$PL_WARM" || { fail "fio warm-up"; return 1; }
	PL_N0=$(pl_next_line "$PL_OUT") || { fail "blkwise stopped reporting"; return 1; }
	echo 1 >"$dir/reset"
	pl_fio deep "$dev" "$qd" "$PL_DEEP" || { fail "fio iodepth $qd"; return 1; }
	jq -c . "$dir/stats" >"$BW_TMP/truth.json"
	PL_N1=$(pl_lines "$PL_OUT")
	bw_stat_stop INT
	assertEquals "blkwise exit status" 0 $?
	PL_TRUTH=$(jq .busy_servers_avg "$BW_TMP/truth.json")
	undet=$(bw_dev_lines "$PL_OUT" "$dev" 1 "$PL_N0" | jq -s '[.[] | select(.p_eff != null)] | length')
	assertEquals "P_eff undetermined in every iodepth-1 interval ($PL_N0 intervals)" 0 "$undet"
	return 0
}

# pl_peff_median DEV: median P_eff of the determined intervals of the run.
pl_peff_median() {
	bw_dev_lines "$PL_OUT" "$1" $((PL_N0 + 1)) "$PL_N1" | jq -r '.p_eff // empty' | bw_median
}

# pl_verdict LO HI V...: is the median of three runs in [LO, HI], given the
# runs so far?  "in" or "out" once the rest cannot change it, else "open".
# (Three runs, one low, one in, one high: the median is the one in.)
pl_verdict() {
	awk -v lo="$1" -v hi="$2" 'BEGIN { for (i = 3; i < ARGC; i++) {
			if (ARGV[i] < lo) b++; else if (ARGV[i] > hi) a++; else n++ }
		if (b >= 2 || a >= 2) print "out"; else if (n >= 2) print "in";
		else if (n + a + b == 3) print "in"; else print "open" }' "$@"
}

# check_peff P OPTS WANT_P: median of up to 3 runs, P_eff within PL_TOL% of
# the truth and, unless WANT_P is empty, of WANT_P (the configured P).
# Also the model itself, which the noise in S1 cannot move: with N/T_b =
# truth / service (the servers' throughput), P_eff * service / S1 must be
# the truth; 5% (seen: within 1%) catches a wrong N or T_b.
check_peff() {
	local p=$1 opts=$2 want_p=$3 dev dir run med ratio s1 model
	local peffs=() ratios=() models=() v1 v2 v3
	pl_require || return 0
	pl_up dev dir "$opts" || return
	for run in 1 2 3; do
		pl_measure "$dev" "$dir" 16 || return
		med=$(pl_peff_median "$dev") || { fail "run $run: no determined interval at iodepth 16"; return; }
		ratio=$(bw_calc "$med / $PL_TRUTH")
		s1=$(bw_dev_lines "$PL_OUT" "$dev" "$PL_N1" "$PL_N1" | jq -r .solo_svc_ms)
		model=$(bw_calc "$med * $(jq .service_us "$BW_TMP/truth.json") / 1000 / $s1 / $PL_TRUTH")
		peffs+=("$med")
		ratios+=("$ratio")
		models+=("$model")
		echo "  $opts run $run: P=$p truth $PL_TRUTH busy servers, P_eff median $med" \
			"(intervals: $(bw_dev_lines "$PL_OUT" "$dev" $((PL_N0 + 1)) "$PL_N1" |
				jq -r '.p_eff' | paste -sd' ')), S1 $(bw_dev_lines "$PL_OUT" "$dev" "$PL_N1" "$PL_N1" |
				jq -r .solo_svc_ms) ms, class $(bw_dev_lines "$PL_OUT" "$dev" "$PL_N1" "$PL_N1" | jq -r .class)"
		v1=$(pl_verdict "$(bw_calc "1 - $PL_TOL / 100")" "$(bw_calc "1 + $PL_TOL / 100")" "${ratios[@]}")
		v2=in
		[ -z "$want_p" ] ||
			v2=$(pl_verdict "$(bw_calc "$want_p * (1 - $PL_TOL / 100)")" \
				"$(bw_calc "$want_p * (1 + $PL_TOL / 100)")" "${peffs[@]}")
		v3=$(pl_verdict 0.95 1.05 "${models[@]}")
		[ "$v1" = out ] || [ "$v2" = out ] || [ "$v3" = out ] ||
			{ [ "$v1" = in ] && [ "$v2" = in ] && [ "$v3" = in ]; } && break
	done
	med=$(printf '%s\n' "${peffs[@]}" | bw_median)
	ratio=$(printf '%s\n' "${ratios[@]}" | bw_median)
	echo "  => P=$p: P_eff $med (median of ${#peffs[@]} runs), P_eff / truth $ratio," \
		"P_eff * service / S1 / truth $(printf '%s\n' "${models[@]}" | bw_median)"
	assertEquals "P_eff / truth within $PL_TOL% (runs: ${ratios[*]})" in "$v1"
	assertEquals "P_eff * service / S1 within 5% of the truth (runs: ${models[*]})" in "$v3"
	[ -z "$want_p" ] || assertEquals "P_eff within $PL_TOL% of P=$want_p (runs: ${peffs[*]})" in "$v2"
	PL_PEFF=$med
}

# dispatch=any: P servers, a request takes the first free one; at
# iodepth 16 >= P all P are busy, so the truth is P.
test_any_p1() { check_peff 1 dispatch=any,parallel=1,service_us=2000 1; }
test_any_p2() { check_peff 2 dispatch=any,parallel=2,service_us=2000 2; }
test_any_p4() { check_peff 4 dispatch=any,parallel=4,service_us=2000 4; }
test_any_p8() { check_peff 8 dispatch=any,parallel=8,service_us=2000 8; }

# RAID-0 of 4: random 4k requests collide on spindles, so fewer than 4 are
# busy on average (a simulation of this closed queue says 3.63); that is
# the truth P_eff must match, not 4.
test_stripe_p4() {
	check_peff 4 dispatch=stripe,parallel=4,service_us=2000 ""
	[ -n "${PL_PEFF:-}" ] && echo "  stripe P=4: P_eff $PL_PEFF next to P=4 (collisions keep it below)"
}

# pl_classes OUT DEV FROM TO: "evidence_s class p_eff" per line.
pl_classes() {
	bw_dev_lines "$1" "$2" "$3" "$4" | jq -r '"\(.class_reason.evidence_s) \(.class) \(.p_eff)"'
}

# One serial and one 4-way device side by side under 30 s of steady load:
# each gets its class once blkwise has its 3 s of evidence, by the 5th
# determined interval, and keeps it (no flapping).  P_eff sits far from
# the 1.4 / 2.0 thresholds (~1.1 and ~4.4), so no median is needed: any
# change at all is a failure.
test_class_settles_and_holds() {
	local d1 d4 out n0 n1 dev want f1 f4 first changes late secs=30 _r
	pl_require || return 0
	pl_up d1 _r dispatch=any,parallel=1,service_us=2000 || return
	pl_up d4 _r dispatch=any,parallel=4,service_us=2000 || return
	out=$BW_TMP/class.json
	bw_stat_start "$out" -d "$d1" -d "$d4" -i 1 --exact || { fail "blkwise start"; return; }
	pl_fio_bg warm1 "$d1" 1 "$PL_WARM"
	f1=$PL_FIO_PID
	pl_fio_bg warm4 "$d4" 1 "$PL_WARM"
	f4=$PL_FIO_PID
	wait "$f1" "$f4"
	n0=$(pl_next_line "$out") || { fail "blkwise stopped reporting"; return; }
	pl_fio_bg deep1 "$d1" 16 "$secs"
	f1=$PL_FIO_PID
	pl_fio_bg deep4 "$d4" 16 "$secs"
	f4=$PL_FIO_PID
	wait "$f1" "$f4"
	n1=$(pl_lines "$out")
	bw_stat_stop INT
	for dev in "$d1" "$d4"; do
		if [ "$dev" = "$d1" ]; then want=shallow; else want=deep; fi
		assertEquals "$dev: no class from the iodepth-1 warm-up" unknown \
			"$(bw_dev_lines "$out" "$dev" "$n0" "$n0" | jq -r .class)"
		pl_classes "$out" "$dev" $((n0 + 1)) "$n1" >"$BW_TMP/classes"
		first=$(awk '$2 != "unknown" { print NR; exit }' "$BW_TMP/classes")
		changes=$(awk 'NR > 1 && $2 != prev && prev != "unknown" { c++ } { prev = $2 } END { print c + 0 }' \
			"$BW_TMP/classes")
		late=$(awk -v f="${first:-0}" 'NR >= f && $2 != "'$want'"' "$BW_TMP/classes" | wc -l)
		echo "  $dev (want $want): class set at interval ${first:-never} of $(wc -l <"$BW_TMP/classes")" \
			"($(sed -n "${first:-1}p" "$BW_TMP/classes" | cut -d' ' -f1) s evidence), changes $changes," \
			"P_eff $(awk '{ print $3 }' "$BW_TMP/classes" | grep -v null | bw_median) (median)"
		assertNotNull "$dev: a class within the run" "$first"
		[ -n "$first" ] || continue
		assertTrue "$dev: class set by the 5th determined interval (at $first)" "[ $first -le 5 ]"
		assertEquals "$dev: class" "$want" "$(sed -n "${first}p" "$BW_TMP/classes" | cut -d' ' -f2)"
		assertEquals "$dev: intervals with another class after it was set" 0 "$late"
		assertEquals "$dev: class changes over ${secs} s" 0 "$changes"
	done
}

# A 4-way device driven at iodepth 2 can show at most 2-way parallelism:
# L <= 2 (two requests at most), and P_eff = L * S1 / mean service, with
# no queueing at depth 2 < 4, so mean service ~ S1.  The 10% allowed is
# S1's run-to-run spread on this shared VM (solo means 2.10-2.32 ms seen
# at 2 ms service): S1 is learned in the warm-up, the intervals come later.
test_p4_at_iodepth2_shows_at_most_2() {
	local dev dir vals n max
	pl_require || return 0
	pl_up dev dir dispatch=any,parallel=4,service_us=2000 || return
	PL_DEEP=5 pl_measure "$dev" "$dir" 2 || return
	vals=$(bw_dev_lines "$PL_OUT" "$dev" $((PL_N0 + 1)) "$PL_N1" | jq -r '.p_eff // empty')
	n=$(echo "$vals" | grep -c .)
	max=$(echo "$vals" | sort -g | tail -1)
	echo "  P=4 at iodepth 2: truth $PL_TRUTH busy servers, P_eff $(echo "$vals" | paste -sd' ') (max $max)," \
		"depth $(bw_dev_lines "$PL_OUT" "$dev" $((PL_N0 + 1)) "$PL_N1" | jq -r .depth_mean_busy | paste -sd' ')"
	assertTrue "determined in >= 3 intervals (got $n): L ~1.9 >= 1.5" "[ $n -ge 3 ]"
	assertTrue "every determined P_eff <= 2.2 (max $max)" \
		"awk 'BEGIN { exit !(\"$max\" + 0 <= 2.2) }'"
	assertTrue "the truth is <= 2 busy servers ($PL_TRUTH)" \
		"awk 'BEGIN { exit !($PL_TRUTH <= 2.0001) }'"
	return 0
}

# pl_stream OUT PID FROM TO FIELD: median of a stream's FIELD over lines.
pl_stream() {
	sed -n "$3,$4p" "$1" | jq -r --argjson p "$2" ".streams[]? | select(.pid == \$p and .ios > 0) | .$5 // empty" |
		bw_median
}

# pl_stream_class OUT PID FROM TO: the class it had most often.
pl_stream_class() {
	sed -n "$3,$4p" "$1" | jq -r --argjson p "$2" '.streams[]? | select(.pid == $p and .ios > 0) | .class' |
		sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'
}

# Three fio processes at once, each its own stream (--thread: the pid is
# fio's own, as $! gives it).  16 servers at 5 ms, so nobody queues and
# the load stays light.  Medians over the run's intervals.
test_streams_depth_think_class() {
	local dev dir out n0 n1 pa pb pc v pid name
	pl_require || return 0
	pl_up dev dir dispatch=any,parallel=16,service_us=5000 || return
	out=$BW_TMP/streams.json
	bw_stat_start "$out" -d "$dev" -i 1 --exact --streams || { fail "blkwise start"; return; }
	n0=$(pl_next_line "$out") || { fail "blkwise stopped reporting"; return; }
	pl_fio_bg qd4 "$dev" 4 5
	pa=$PL_FIO_PID
	pl_fio_bg think "$dev" 1 5 --thinktime=5000
	pb=$PL_FIO_PID
	pl_fio_bg qd8 "$dev" 8 5
	pc=$PL_FIO_PID
	wait "$pa" "$pb" "$pc"
	n1=$(pl_lines "$out")
	pl_next_line "$out" >/dev/null
	bw_stat_stop INT
	for v in "$pa qd4" "$pb think" "$pc qd8"; do
		read -r pid name <<<"$v"
		echo "  stream $name (pid $pid): depth_mean $(sed -n "$((n0 + 1)),${n1}p" "$out" |
			jq -r --argjson p "$pid" '.streams[]? | select(.pid == $p) | .depth_mean' | paste -sd' ')," \
			"depth_max $(pl_stream "$out" "$pid" $((n0 + 1)) "$n1" depth_max)," \
			"think $(pl_stream "$out" "$pid" $((n0 + 1)) "$n1" think_mean_ms) ms," \
			"class $(pl_stream_class "$out" "$pid" $((n0 + 1)) "$n1")"
	done
	v=$(pl_stream "$out" "$pa" $((n0 + 1)) "$n1" depth_mean)
	assertTrue "iodepth 4: depth_mean $v within 15% of 4" "bw_within '$v' 4 15"
	assertEquals "iodepth 4: depth_max" 4 "$(pl_stream "$out" "$pa" $((n0 + 1)) "$n1" depth_max)"
	v=$(pl_stream "$out" "$pb" $((n0 + 1)) "$n1" think_mean_ms)
	assertTrue "thinktime 5 ms: think_mean_ms $v within 20% of 5" "bw_within '$v' 5 20"
	assertEquals "thinktime 5 ms, iodepth 1: class" shallow \
		"$(pl_stream_class "$out" "$pb" $((n0 + 1)) "$n1")"
	assertEquals "iodepth 8: class" deep "$(pl_stream_class "$out" "$pc" $((n0 + 1)) "$n1")"
	return 0
}

# shellcheck disable=SC1091
# pl_last OUT DEV FIELD: FIELD of DEV's last line in OUT.
pl_last() { jq -rs --arg d "$2" "[.[].devices[] | select(.device == \$d)] | last | $3" "$1"; }

# The default (the light tier with the exact tier's slices) against the
# exact tier and the truth, on a serial disk and a 4-way one (8 ms, so the
# path through loop and FUSE stays small against the service).  S1 is
# learned by a default run at iodepth 1 (its first slice) and stored; then
# both tiers watch the same 30 s at iodepth 16, each with a copy of the
# store.  The default's P_eff, sampled by its slices, is within 10% of
# the fixture's busy servers, and its class is the exact tier's by the
# end of those 30 s; every line says its figures are sampled, and the
# exact tier ran for a small share of the time.
test_default_slices_peff_and_class() {
	local d1 d4 r1 r4 st=$BW_TMP/slices.state def=$BW_TMP/slices.def.json ex=$BW_TMP/slices.ex.json
	local dpid epid f1 f4 dev dir want truth pd pe share
	pl_require || return 0
	pl_up d1 r1 dispatch=any,parallel=1,service_us=8000 || return
	pl_up d4 r4 dispatch=any,parallel=4,service_us=8000 || return
	bw_stat_start "$BW_TMP/slices.learn.json" -d "$d1" -d "$d4" -i 1 --state-dir "$st" ||
		{ fail "blkwise start"; return; }
	pl_fio_bg warm1 "$d1" 1 "$PL_WARM"
	f1=$PL_FIO_PID
	pl_fio_bg warm4 "$d4" 1 "$PL_WARM"
	f4=$PL_FIO_PID
	wait "$f1" "$f4"
	bw_stat_stop INT
	assertEquals "the learning run stored S1 of both" 2 "$(grep -c '^s1	' "$st/s1")"
	cp -r "$st" "$st.ex"
	pl_fio_bg deep1 "$d1" 16 33
	f1=$PL_FIO_PID
	pl_fio_bg deep4 "$d4" 16 33
	f4=$PL_FIO_PID
	sleep 1
	echo 1 >"$r1/reset"
	echo 1 >"$r4/reset"
	bw_stat_start "$def" -d "$d1" -d "$d4" -i 1 --state-dir "$st" || { fail "blkwise start"; return; }
	dpid=$BW_STAT_PID
	bw_stat_start "$ex" -d "$d1" -d "$d4" -i 1 --state-dir "$st.ex" --exact ||
		{ fail "blkwise --exact start"; return; }
	epid=$BW_STAT_PID
	sleep 30
	kill -INT "$dpid" "$epid"
	wait "$dpid"
	assertEquals "default: exit status" 0 $?
	wait "$epid"
	wait "$f1" "$f4"
	for dev in "$d1" "$d4"; do
		if [ "$dev" = "$d1" ]; then want=shallow dir=$r1; else want=deep dir=$r4; fi
		truth=$(jq .busy_servers_avg "$dir/stats")
		pd=$(jq -r --arg d "$dev" '.devices[] | select(.device == $d) | .p_eff // empty' "$def" | bw_median)
		pe=$(jq -r --arg d "$dev" '.devices[] | select(.device == $d) | .p_eff // empty' "$ex" | bw_median)
		share=$(pl_last "$def" "$dev" .exact_share)
		echo "  $dev: truth $truth busy servers; P_eff default $pd (sampled), --exact $pe;" \
			"class default $(pl_last "$def" "$dev" .class), --exact $(pl_last "$ex" "$dev" .class);" \
			"exact share $share, lines $(jq -s length "$def")"
		assertNotNull "$dev: the default determined P_eff" "$pd"
		[ -n "$pd" ] || continue
		assertTrue "$dev: default P_eff $pd within 10% of the truth $truth" "bw_within $pd $truth 10"
		assertTrue "$dev: default P_eff $pd within 10% of --exact's $pe" "bw_within $pd ${pe:-0} 10"
		assertEquals "$dev: class, default" "$want" "$(pl_last "$def" "$dev" .class)"
		assertEquals "$dev: class, --exact" "$want" "$(pl_last "$ex" "$dev" .class)"
		assertEquals "$dev: every determined P_eff of the default is sampled or estimated" 0 \
			"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .p_eff != null and
				.p_eff_source != "sampled" and .p_eff_source != "estimated")] | length' "$def")"
		assertNotEquals "$dev: some from exact slices" 0 \
			"$(jq -s --arg d "$dev" '[.[].devices[] | select(.device == $d and .p_eff_source == "sampled")] | length' "$def")"
		assertEquals "$dev: the default's tier" light "$(pl_last "$def" "$dev" .tier)"
		assertTrue "$dev: exact share $share of the run is small, and not nothing" \
			"awk 'BEGIN { exit !($share > 0.02 && $share < 0.3) }'"
	done
}

# The default follows a workload that moves (docs/design.md, "Two tiers"):
# a 3-way device read at depth 1 for PL_MOVE_WARM s, then at depth 12,
# watched by `stat -i 4` from a fresh store.  From the first interval
# wholly after the change, P_eff is within PL_TOL % of the device's
# truth (its busy servers over that stretch, times S1 over service as the
# fixture's path adds to S1) in every interval: an estimate (requests x
# S1 over busy time) or an exact slice's, which the move set off at once.
# And on a one-way device the same run reads about 1.
PL_MOVE_WARM=3
PL_MOVE_DEEP=18
pl_moves() {	# DEV DIR P: PL_MV (stat's JSON), PL_MV_TRUTH
	local dev=$1 dir=$2 fio_pid
	PL_MV=$BW_TMP/move.$dev.json
	bw_stat_start "$PL_MV" -d "$dev" -i 4 -c 6 --state-dir "$BW_TMP/move.$dev.state" ||
		{ fail "blkwise start"; return 1; }
	(
		pl_fio move1 "$dev" 1 "$PL_MOVE_WARM"
		echo 1 >"$dir/reset"
		pl_fio move12 "$dev" 12 "$PL_MOVE_DEEP"
		jq -c . "$dir/stats" >"$BW_TMP/move.$dev.truth"
	) &
	fio_pid=$!
	wait "$fio_pid"
	wait "$BW_STAT_PID"
	PL_MV_TRUTH=$(jq .busy_servers_avg "$BW_TMP/move.$dev.truth")
}

# pl_after_move OUT DEV: the intervals (JSON lines) that began after the
# change to depth 12: the second line on (each 4 s; the change is at 3 s).
pl_after_move() {
	jq -c --arg d "$2" '.devices[]? | select(.device == $d)' "$1" | tail -n +2 | head -n 4
}

test_default_follows_depth_change() {
	local d3 r3 d1 r1 dev truth n bad
	pl_require || return 0
	pl_up d3 r3 dispatch=any,parallel=3,service_us=3000 || return
	pl_up d1 r1 dispatch=any,parallel=1,service_us=3000 || return
	for dev in "$d3" "$d1"; do
		if [ "$dev" = "$d3" ]; then pl_moves "$dev" "$r3"; else pl_moves "$dev" "$r1"; fi || return
		truth=$PL_MV_TRUTH
		echo "  $dev: truth $truth busy servers at depth 12; intervals after the change:"
		pl_after_move "$PL_MV" "$dev" | jq -r '"    P_eff \(.p_eff) (\(.p_eff_source // .p_eff_undetermined_why)), depth \(.depth_mean_busy) (\(.depth_source)), r/s \(.reads_per_s), svc \(.svc_mean_ms) ms, S1 \(.solo_svc_ms) ms, class \(.class)"'
		n=$(pl_after_move "$PL_MV" "$dev" | wc -l)
		assertEquals "$dev: four intervals after the change" 4 "$n"
		bad=$(pl_after_move "$PL_MV" "$dev" | jq -s --argjson t "$truth" --argjson tol "$PL_TOL" \
			'[.[] | select(.p_eff == null or ((.p_eff - $t) | fabs) > $t * $tol / 100)] | length')
		assertEquals "$dev: P_eff within $PL_TOL% of the truth $truth in every interval after the change" 0 "$bad"
		assertEquals "$dev: none shown from before the change" 0 \
			"$(pl_after_move "$PL_MV" "$dev" | jq -s '[.[] | select(.p_eff_source == "sampled" and .exact_sample_age_s > 4)] | length')"
	done
}

. shunit2
