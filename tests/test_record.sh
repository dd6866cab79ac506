#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# blkwise record + analyze against independent oracles: fio's counts,
# /proc/diskstats, blkwise stat on the same run, and a separate reader of
# the trace format (tests/trace_oracle.py); interrupted recordings and every
# kind of bad file.
. "$(dirname "$0")/lib.sh"

ORACLE=$BW_ROOT/tests/trace_oracle.py

# What analyze saw of a device: completions, and the ones it could not see
# (issued again while in flight, or in flight at the end), as "seen missed".
an_counts() {
	jq -r --arg d "$2" '.devices[] | select(.device == $d)
		| "\(.requests) \(.total[0].lost_completions_total + .total[0].inflight)"' "$1"
}

# rc_near_mean A B: two means in ms within 5% of B, or 1 us.
rc_near_mean() {
	bw_within "$1" "$2" 5 || awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 0.001 && -d <= 0.001) }'
}

# The acceptance run: fio's request count = diskstats' = the trace's, and the
# trace's percentiles agree with blkwise stat's over the same run.
test_counts_and_percentiles_vs_stat() {
	local dev trace out an s0 s1 fio_ios ds_ios seen missed op p key a b
	bw_require fio jq python3 || return 0
	# Memory-backed: completions run in the loop worker, where BPF misses
	# almost none (docs/design.md, "Lost completions"); over a real disk it can miss
	# more than the 0.5% the count check allows.
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	trace=$BW_TMP/run.bwt
	out=$BW_TMP/stat.json
	# One stat interval covering the whole run: the signal reports it.
	bw_stat_start "$out" -d "$dev" -i 600 --no-state || { fail "stat start"; return; }
	bw_rec_start "$trace" -d "$dev" || { fail "record start"; return; }
	s0=$(bw_diskstats "$dev")
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=4 --ioengine=io_uring --size=48M --io_size=24M
	s1=$(bw_diskstats "$dev")
	bw_rec_stop INT
	assertEquals "record exit status" 0 $?
	bw_stat_stop INT
	an=$BW_TMP/an.json
	"$BW_BIN" analyze "$trace" --json >"$an" 2>"$an.err"
	assertEquals "analyze exit status" 0 $?
	assertFalse "no truncation warning: $(cat "$an.err")" "grep -q truncated $an.err"
	fio_ios=$(jq ".jobs[0].read.total_ios" "$BW_TMP/fio.json")
	ds_ios=$(bw_diskstat_delta "$s0" "$s1" 1)
	read -r seen missed < <(an_counts "$an" "$dev")
	echo "  fio $fio_ios, diskstats $ds_ios, trace $seen completions + $missed unseen;" \
		"$(jq .dropped_events "$an") dropped"
	assertTrue "fio did I/O" "[ $fio_ios -gt 1000 ]"
	assertEquals "fio and diskstats agree" "$fio_ios" "$ds_ios"
	assertEquals "no ring-buffer drops" 0 "$(jq .dropped_events "$an")"
	bw_expect_count "trace vs fio" "$fio_ios" "$seen" "$missed"
	bw_expect_count "trace vs diskstats" "$ds_ios" "$seen" "$missed"
	# stat's figures over the same run, from its histograms: within a bucket,
	# 6.25% above 16 us (bpf/hist.h), one 1.024 us bucket below (a memory-backed
	# device's p50 is a few us).
	for p in p50 p99; do
		a=$(jq ".devices[0].latency.read.d2c.${p}_ms" "$an")
		b=$(jq -s --arg d "$dev" "[.[].devices[] | select(.device == \$d and .ops.read.ios > 0)][0].svc_${p}_ms" "$out")
		echo "  D2C $p: trace (exact) $a ms, stat $b ms"
		assertTrue "D2C $p: trace $a within a bucket of stat $b (7%, or 1.024 us below 16 us)" \
			"bw_within $a $b 7 || awk 'BEGIN { d = $a - $b; exit !(d <= 0.001024 && -d <= 0.001024 && $b < 0.016) }'"
	done
	a=$(jq ".devices[0].latency.read.d2c.mean_ms" "$an")
	b=$(jq -s --arg d "$dev" "[.[].devices[] | select(.device == \$d and .ops.read.ios > 0)][0].svc_mean_ms" "$out")
	echo "  D2C mean: trace $a ms, stat $b ms"
	# Means: within 5%, or 1 us.  stat and record read their own clocks in two
	# programs on the same event, one after the other (tests/agree.py, TIMES),
	# and a memory-backed device's mean is a few us.
	assertTrue "D2C mean: trace $a within 5% (or 1 us) of stat $b" "rc_near_mean $a $b"
	a=$(jq ".devices[0].latency.read.q2c.mean_ms" "$an")
	b=$(jq -s --arg d "$dev" "[.[].devices[] | select(.device == \$d and .ops.read.ios > 0)][0].total_mean_ms" "$out")
	echo "  Q2C mean: trace $a ms, stat $b ms"
	assertTrue "Q2C mean: trace $a within 5% (or 1 us) of stat $b" "rc_near_mean $a $b"
	# The same trace through an independent reader: exact means exactly.
	python3 "$ORACLE" "$trace" >"$BW_TMP/oracle.json"
	for key in d2c_p50_ms d2c_p90_ms d2c_p99_ms q2c_p50_ms q2c_p99_ms; do
		a=$(jq ".devices[0].latency.read.${key%_p*}.${key#*_}" "$an")
		b=$(jq ".read.$key" "$BW_TMP/oracle.json")
		assertEquals "$key: analyze = the oracle reader" "$b" "$a"
	done
	assertEquals "requests: analyze = the oracle reader" "$(jq .read.n "$BW_TMP/oracle.json")" "$seen"
}

# ag_bad FILE: agree.py's disagreeing lines, joined, for a failure's message.
ag_bad() { grep -E 'DISAGREE|not in analyze|not classed' "$1" | sed 's/^ *//' | paste -sd';'; }

# Post-mortem equals live: ext4 over a memory-backed loop device under
# mq-deadline (fsync's empty flush writes, flushes, merges, dispatch
# stalls, discards from fstrim), watched by `stat --exact`, by the light
# tier's `stat` and recorded at once; `analyze --no-exact` of the trace
# gives every figure the exact tier gives, and the light tier's counts
# (tests/agree.py says how each figure is compared and why).  Nothing
# reaches the device between the three starts or the three stops
# (diskstats unchanged), so all saw the same requests.
test_stat_and_analyze_agree() {
	local dev mnt trace ex li an pre post s0 ds_w rc
	bw_require fio jq python3 mkfs.ext4 fstrim || return 0
	bw_loop dev 256 shm --direct-io=on || { fail "loop device"; return; }
	echo mq-deadline >/sys/block/"$dev"/queue/scheduler
	mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0,nodiscard /dev/"$dev" ||
		{ fail "mkfs"; return; }
	mnt=$BW_TMP/mnt
	mkdir -p "$mnt"
	mount /dev/"$dev" "$mnt" || { fail "mount"; return; }
	bw_on_cleanup "umount $mnt 2>/dev/null"
	trace=$BW_TMP/agree.bwt
	ex=$BW_TMP/agree.exact.json
	li=$BW_TMP/agree.light.json
	# udev's probe of the new filesystem can come late: started again
	# (up to three times) until no request came in while they started.
	local try ex_pid li_pid
	for try in 1 2 3; do
		bw_settle "$dev" || { fail "the device never settled"; return; }
		rm -f "$trace" "$ex" "$li"
		pre=$(bw_diskstats "$dev")
		bw_stat_start "$ex" -d "$dev" -i 600 --exact --no-state || { fail "stat start"; return; }
		ex_pid=$BW_STAT_PID
		bw_stat_start "$li" -d "$dev" -i 600 --no-state --exact-period 0 || { fail "stat start (light)"; return; }
		li_pid=$BW_STAT_PID
		bw_rec_start "$trace" -d "$dev" || { fail "record start"; return; }
		post=$(bw_diskstats "$dev")
		[ "$pre" = "$post" ] && break
		echo "  try $try: requests came in while the watchers started; again"
		bw_rec_stop INT
		kill -INT "$li_pid" "$ex_pid"
		wait "$li_pid" "$ex_pid"
	done
	s0=$post
	fio --name=w --directory="$mnt" --rw=randwrite --bs=4k --size=16M --fsync=4 \
		--ioengine=psync --time_based --runtime=3 >/dev/null
	fio --name=s --directory="$mnt" --rw=write --bs=64k --size=32M --ioengine=psync \
		--end_fsync=1 >/dev/null
	rm -f "$mnt"/w.* "$mnt"/s.*
	sync
	fstrim "$mnt"
	assertEquals "nothing reached the device while the watchers started" "$pre" "$post"
	bw_settle "$dev"
	pre=$(bw_diskstats "$dev")
	bw_rec_stop INT
	assertEquals "record exit status" 0 $?
	kill -INT "$li_pid" "$ex_pid"
	wait "$li_pid" "$ex_pid"
	post=$(bw_diskstats "$dev")
	assertEquals "nothing reached the device while the watchers stopped" "$pre" "$post"
	an=$BW_TMP/agree.an.json
	"$BW_BIN" analyze "$trace" --json --no-exact >"$an" 2>"$an.err"
	assertEquals "analyze exit status: $(cat "$an.err")" 0 $?
	assertEquals "no ring-buffer drops" 0 "$(jq .dropped_events "$an")"
	jq -c --arg d "$dev" '.devices[] | select(.device == $d)' "$ex" >"$ex.dev"
	jq -c --arg d "$dev" '.devices[] | select(.device == $d)' "$li" >"$li.dev"
	ds_w=$(bw_diskstat_delta "$s0" "$pre" 5)
	echo "  exact tier vs analyze of the recording:"
	python3 "$BW_ROOT/tests/agree.py" "$ex.dev" "$(jq .interval_s "$ex")" "$an" "$dev" >"$an.ex"
	rc=$?
	assertEquals "every figure of the exact tier as analyze gives it ($(ag_bad "$an.ex"))" 0 "$rc"
	cat "$an.ex"
	echo "  light tier's counts vs analyze:"
	python3 "$BW_ROOT/tests/agree.py" "$li.dev" "$(jq .interval_s "$li")" "$an" "$dev" --counts-only >"$an.li"
	rc=$?
	assertEquals "every count of the light tier as analyze gives it ($(ag_bad "$an.li"))" 0 "$rc"
	cat "$an.li"
	# The figures compared carry the workload, as the kernel counted it.
	# (diskstats may count a few more: completions BPF never ran for, which
	# neither watcher nor the recording saw, at their rate: bw_expect_count.)
	local st_w
	st_w=$(jq .ops.write.ios "$ex.dev")
	assertTrue "writes: diskstats $ds_w, stat $st_w" \
		"[ $st_w -le $ds_w ] && [ $(((ds_w - st_w) * 200)) -le $((ds_w + 200)) ]"
	assertTrue "empty flush writes: $(jq .fsync_writes "$ex.dev")" "[ $(jq .fsync_writes "$ex.dev") -gt 100 ]"
	assertTrue "merges: $(jq .merges "$ex.dev")" "[ $(jq .merges "$ex.dev") -gt 10 ]"
	assertTrue "discards: $(jq .ops.discard.ios "$ex.dev")" "[ $(jq .ops.discard.ios "$ex.dev") -gt 0 ]"
	assertTrue "flushes: $(jq .ops.flush.ios "$ex.dev")" "[ $(jq .ops.flush.ios "$ex.dev") -gt 100 ]"
	assertTrue "dispatch stalls: $(jq .dispatch_stalls "$ex.dev")" "[ $(jq .dispatch_stalls "$ex.dev") -gt 0 ]"
	assertTrue "solo requests: $(jq .solo_samples "$ex.dev")" "[ $(jq .solo_samples "$ex.dev") -gt 10 ]"
}

# The raw_tp programs record the same requests.
test_raw_tp_counts() {
	local dev trace fio_ios seen missed
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	trace=$BW_TMP/raw.bwt
	bw_rec_start "$trace" -d "$dev" --force-raw-tp || { fail "record start"; return; }
	assertTrue "raw_tp chosen" "grep -q raw_tp $trace.log.err"
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randwrite \
		--bs=16k --iodepth=8 --ioengine=io_uring --size=48M --io_size=16M
	bw_rec_stop TERM
	assertEquals "record exit status on SIGTERM" 0 $?
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json"
	fio_ios=$(jq ".jobs[0].write.total_ios" "$BW_TMP/fio.json")
	read -r seen missed < <(an_counts "$BW_TMP/an.json" "$dev")
	bw_expect_count "raw_tp trace vs fio" "$fio_ios" "$seen" "$missed"
	assertEquals "all writes" "$seen" "$(jq '.devices[0].latency.write.d2c.n' "$BW_TMP/an.json")"
}

# interrupted SIGNAL: record stopped by SIGNAL while fio runs.
interrupted() {
	local sig=$1 dev trace fio_pid rc n oracle_n
	bw_require fio jq python3 || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	trace=$BW_TMP/int.bwt
	bw_rec_start "$trace" -d "$dev" || { fail "record start"; return; }
	# fio itself in the background (not bw_fio's subshell), so $! is fio.
	fio --output-format=json --output="$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" \
		--direct=1 --rw=randread --bs=4k --iodepth=4 --ioengine=io_uring --time_based \
		--runtime=4 >/dev/null &
	fio_pid=$!
	bw_on_cleanup "kill $fio_pid"
	sleep 2.5
	kill -"$sig" "$BW_REC_PID"
	wait "$BW_REC_PID"
	rc=$?
	wait $fio_pid
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json" 2>"$BW_TMP/an.err"
	assertEquals "analyze of a $sig-ed recording exits 0: $(cat "$BW_TMP/an.err")" 0 $?
	n=$(jq '.devices[0].requests' "$BW_TMP/an.json")
	oracle_n=$(python3 "$ORACLE" "$trace" | jq .read.n)
	echo "  $sig: record exit $rc, $(stat -c %s "$trace") bytes, $n requests (oracle $oracle_n);" \
		"$(cat "$BW_TMP/an.err")"
	assertTrue "requests were recorded before the $sig ($n)" "[ ${n:-0} -gt 1000 ]"
	assertEquals "every whole record read: as the oracle" "$oracle_n" "$n"
	if [ "$sig" = KILL ]; then
		assertTrue "cut short: a warning naming the offset" \
			"grep -q 'truncated at offset [0-9]' $BW_TMP/an.err"
		assertEquals "json says truncated" true "$(jq .truncated "$BW_TMP/an.json")"
	else
		assertEquals "record exit status on $sig" 0 "$rc"
		assertEquals "closed cleanly" false "$(jq .truncated "$BW_TMP/an.json")"
		assertEquals "no warning" "" "$(cat "$BW_TMP/an.err")"
	fi
}

test_interrupted_sigint() { interrupted INT; }
test_interrupted_sigkill() { interrupted KILL; }

# --duration and --max-size stop the recording by themselves, file closed.
test_duration_and_max_size() {
	local dev trace t0 t1 size fio_pid
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	fio --output-format=json --output="$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" \
		--direct=1 --rw=randread --bs=4k --iodepth=4 --ioengine=io_uring --time_based \
		--runtime=6 >/dev/null &
	fio_pid=$!
	bw_on_cleanup "kill $fio_pid"
	trace=$BW_TMP/dur.bwt
	t0=$(date +%s%N)
	"$BW_BIN" record -d "$dev" -o "$trace" --duration 1.5 2>"$BW_TMP/dur.err"
	assertEquals "record --duration exit status" 0 $?
	t1=$(date +%s%N)
	assertTrue "stopped after about 1.5 s ($(((t1 - t0) / 1000000)) ms)" \
		"[ $(((t1 - t0) / 1000000)) -ge 1400 ] && [ $(((t1 - t0) / 1000000)) -le 4000 ]"
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json" 2>"$BW_TMP/an.err"
	assertEquals "analyze exit" 0 $?
	assertEquals "closed cleanly" false "$(jq .truncated "$BW_TMP/an.json")"
	trace=$BW_TMP/max.bwt
	"$BW_BIN" record -d "$dev" -o "$trace" --max-size 256K 2>"$BW_TMP/max.err"
	assertEquals "record --max-size exit status" 0 $?
	size=$(stat -c %s "$trace")
	assertTrue "said why it stopped" "grep -q 'stopped at --max-size' $BW_TMP/max.err"
	assertTrue "file $size bytes within 256K plus one block" \
		"[ $size -ge 200000 ] && [ $size -le $((262144 + 65600 + 4096)) ]"
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json" 2>/dev/null
	assertEquals "max-size file closed cleanly" false "$(jq .truncated "$BW_TMP/an.json")"
	wait $fio_pid
}

# A ring buffer too small to keep up: drops are counted, per CPU, in the
# file and on stderr, the same number.
test_drops_counted() {
	local dev trace said infile
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	trace=$BW_TMP/drop.bwt
	bw_rec_start "$trace" -d "$dev" --buffer 64K || { fail "record start"; return; }
	# A stopped reader: nothing drains the buffer while fio runs.
	kill -STOP "$BW_REC_PID"
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=8 --ioengine=io_uring --size=32M --io_size=8M
	kill -CONT "$BW_REC_PID"
	sleep 0.3
	bw_rec_stop INT
	said=$(sed -n 's/.*ring buffer full: \([0-9]*\) events dropped.*/\1/p' "$trace.log.err")
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json" 2>/dev/null
	infile=$(jq .dropped_events "$BW_TMP/an.json")
	echo "  stderr says ${said:-none} dropped, the file $infile ($(jq -c .dropped_per_cpu "$BW_TMP/an.json"))"
	assertTrue "drops happened with a stopped reader" "[ ${infile:-0} -gt 1000 ]"
	assertEquals "stderr and file agree" "$infile" "$said"
	assertEquals "per-CPU counts add up" "$infile" "$(jq '.dropped_per_cpu | add' "$BW_TMP/an.json")"
	assertTrue "text output says so" \
		"$BW_BIN analyze $trace | grep -q '[1-9][0-9]* dropped while recording'"
}

# analyze needs no privileges: it runs as nobody on a readable file.
test_analyze_unprivileged() {
	local dev dir
	bw_require fio jq setpriv || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	dir=$(mktemp -d /tmp/blkwise-rec.XXXXXX)
	bw_on_cleanup "rm -rf $dir"
	chmod 755 "$dir"
	bw_rec_start "$dir/t.bwt" -d "$dev" || { fail "record start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=2 --ioengine=io_uring --size=16M --io_size=4M
	bw_rec_stop INT
	chmod 644 "$dir/t.bwt"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$BW_BIN" analyze "$dir/t.bwt" --json >"$BW_TMP/an.json"
	assertEquals "analyze as nobody" 0 $?
	assertEquals "as nobody: every request" "$(jq .jobs[0].read.total_ios "$BW_TMP/fio.json")" \
		"$(jq '.devices[0].requests + .devices[0].total[0].lost_completions_total' "$BW_TMP/an.json")"
}

# expect_an CODE TEXT FILE ARGS...: analyze exits CODE, and its one-line error says TEXT.
expect_an() {
	local code=$1 text=$2 out rc lines
	shift 2
	out=$("$BW_BIN" analyze "$@" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	assertEquals "analyze $*: exit status ($out)" "$code" "$rc"
	assertTrue "analyze $*: says '$text': $out" "printf '%s' \"\$out\" | grep -q -- \"$text\""
	[ "$code" = 2 ] || assertEquals "analyze $*: one line" 1 "$lines"
}

# Every kind of bad file: its own message, naming the offset, and exit status.
test_bad_files() {
	local dev good b len
	bw_require fio jq python3 || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	good=$BW_TMP/good.bwt
	bw_rec_start "$good" -d "$dev" || { fail "record start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=2 --ioengine=io_uring --size=16M --io_size=8M
	bw_rec_stop INT
	len=$(stat -c %s "$good")
	b=$BW_TMP/bad.bwt
	: >"$b"
	expect_an 1 "empty file, not a blkwise trace at offset 0" "$b"
	expect_an 1 "cannot open" "$BW_TMP/nonexistent.bwt"
	head -c 4096 /dev/urandom >"$b"
	expect_an 1 "not a blkwise trace (no BWTRACE magic) at offset 0" "$b"
	cp "$good" "$b" && printf '\x03' | dd of="$b" bs=1 seek=8 conv=notrunc status=none
	expect_an 1 "format version 3, this blkwise reads versions 1 to 2 at offset 8" "$b"
	# A version 1 header over version 2's events: its record size is refused.
	cp "$good" "$b" && printf '\x01' | dd of="$b" bs=1 seek=8 conv=notrunc status=none
	expect_an 1 "records of 72 bytes, this blkwise reads 64 in a version 1 trace" "$b"
	# The type byte of the 11th event of the first event block that has one
	# (a drop-count block can come first on a slow machine).
	python3 - "$good" "$b" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off = 16
t, l = struct.unpack_from("<II", d, off)
off += l                                  # past the header block
while True:
    t, l = struct.unpack_from("<II", d, off)
    if t == 2 and l >= 8 + 11 * 72:
        break
    assert l > 0, (t, l)
    off += l
d[off + 8 + 10 * 72 + 60] = 0xee          # struct bw_trec.type
open(sys.argv[2], "wb").write(d)
print(off + 8 + 10 * 72, file=open(sys.argv[2] + ".off", "w"))
EOF
	expect_an 1 "corrupt event (type 238) at offset $(cat "$b.off")" "$b"
	head -c 40 "$good" >"$b"
	expect_an 1 "truncated before the header block ended" "$b"
	# Cut mid-file: analyzed up to the last whole record, exit 0, a warning.
	head -c $((len / 2 + 13)) "$good" >"$b"
	out=$("$BW_BIN" analyze "$b" --json 2>&1 >"$BW_TMP/cut.json")
	assertEquals "cut file: exit 0" 0 $?
	assertTrue "cut file: warning with offset: $out" "printf '%s' '$out' | grep -q 'truncated at offset [0-9]'"
	assertEquals "cut file: as many requests as the oracle reads" \
		"$(python3 "$ORACLE" "$b" | jq .read.n)" "$(jq '.devices[0].requests' "$BW_TMP/cut.json")"
	# Usage errors: exit 2.
	expect_an 2 "no trace file given" 
	expect_an 2 "bad --format 'xml'" "$good" --format xml
	expect_an 2 "not in the trace's device table" "$good" -d nosuchdev
	expect_an 2 "is not after --from" "$good" --from 5 --to 2
	# --device and --from/--to select.
	assertEquals "--to before the first I/O: no device" 0 \
		"$("$BW_BIN" analyze "$good" --json --to 0.000001 | jq '.devices | length')"
	assertTrue "-d by name" "$BW_BIN analyze $good -d $dev --json | jq -e '.devices[0].requests > 0' >/dev/null"
}

# The per-op tables see every op: a mixed read/write run.
test_mixed_ops_and_csv() {
	local dev trace r w seen missed
	bw_require fio jq || return 0
	bw_loop dev 64 shm --direct-io=on || { fail "loop device"; return; }
	trace=$BW_TMP/mix.bwt
	bw_rec_start "$trace" -d "$dev" || { fail "record start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=c --filename=/dev/"$dev" --direct=1 --rw=randrw \
		--bs=4k --iodepth=4 --ioengine=io_uring --size=32M --io_size=8M
	bw_rec_stop INT
	"$BW_BIN" analyze "$trace" --json >"$BW_TMP/an.json"
	r=$(jq '.devices[0].latency.read.d2c.n' "$BW_TMP/an.json")
	w=$(jq '.devices[0].latency.write.d2c.n' "$BW_TMP/an.json")
	read -r seen missed < <(an_counts "$BW_TMP/an.json" "$dev")
	bw_expect_count "reads + writes vs fio" \
		"$(jq '.jobs[0].read.total_ios + .jobs[0].write.total_ios' "$BW_TMP/fio.json")" \
		"$((r + w))" "$missed"
	assertTrue "reads seen ($r)" "[ $r -gt 500 ]"
	assertTrue "writes seen ($w)" "[ $w -gt 500 ]"
	assertEquals "csv: one latency row per (op, metric)" 6 \
		"$("$BW_BIN" analyze "$trace" --format csv --table latency | grep -c "^$dev,\(read\|write\),")"
}

# btt_row FILE ROW: "MIN AVG MAX N" of btt's All Devices row (seconds).
btt_row() { awk -v r="$2" '$1 == r { print $2, $3, $4, $5; exit }' "$1"; }

# Real blktrace captures (tests/data/blktrace, from the VM tier): D2C and Q2C
# equal btt's to the nanosecond where every request is one bio; with merges,
# the request and merge counts equal btt's #D and #Q - #D.
test_blktrace_vs_btt() {
	local dir=$BW_ROOT/tests/data/blktrace n an row l f a b want
	bw_require_data() { [ -f "$dir/seqread.blktrace.0" ] || { bw_skip "no blktrace captures"; return 1; }; }
	command -v jq >/dev/null || { bw_skip "jq not installed"; return 0; }
	bw_require_data || return 0
	for n in seqread randread-qd8; do
		an=$BW_TMP/$n.json
		"$BW_BIN" analyze "$dir/$n" --json >"$an" 2>"$an.err"
		assertEquals "$n: analyze exit ($(cat "$an.err"))" 0 $?
		for l in D2C Q2C; do
			row=$(btt_row "$dir/$n.btt.txt" $l)
			f=$(echo "$l" | tr A-Z a-z)
			a=$(jq -r ".devices[0].latency.read.$f | \"\\(.min_ms) \\(.mean_ms) \\(.max_ms) \\(.n)\"" "$an")
			want=$(echo "$row" | awk '{ printf "%.6f %.6f %.6f %d", $1 * 1000, $2 * 1000, $3 * 1000, $4 }')
			b=$(echo "$a" | awk '{ printf "%.6f %.6f %.6f %d", $1, $2, $3, $4 }')
			echo "  $n $l: btt $want, blkwise $b (ms: min mean max n)"
			assertEquals "$n $l min/mean/max/n = btt's" "$want" "$b"
		done
		assertEquals "$n: requests = fio's" "$(jq '.jobs[0].read.total_ios' "$dir/$n.fio.json")" \
			"$(jq '.devices[0].requests' "$an")"
	done
	an=$BW_TMP/mixed.json
	"$BW_BIN" analyze "$dir/mixed-merge" --json >"$an"
	row=$(awk '/Merge Information/ { m = 1 } m && $1 == "(" { print $5, $6; exit }' \
		"$dir/mixed-merge.btt.txt")
	echo "  mixed-merge: btt #Q #D $row; blkwise requests $(jq '.devices[0].requests' "$an")," \
		"merges $(jq '.devices[0].total[0].merges' "$an")"
	assertEquals "mixed-merge: requests = btt's #D" "${row#* }" "$(jq '.devices[0].requests' "$an")"
	assertEquals "mixed-merge: merges = #Q - #D" "$((${row% *} - ${row#* }))" \
		"$(jq '.devices[0].total[0].merges' "$an")"
	assertEquals "mixed-merge: D2C max = btt's" \
		"$(btt_row "$dir/mixed-merge.btt.txt" D2C | awk '{ printf "%.6f", $3 * 1000 }')" \
		"$(jq -r '[.devices[0].latency[].d2c.max_ms] | max' "$an" | awk '{ printf "%.6f", $1 }')"
	# A capture named by one of its files reads the same.
	assertEquals "named by its file" "$(jq -c .devices "$BW_TMP/seqread.json")" \
		"$("$BW_BIN" analyze "$dir/seqread.blktrace.1" --json | jq -c .devices)"
}

# --what-if-tune replays tune's policy over a recording of a 4-way emulated
# disk (solo first, then deep): the policy, seeing P_eff at or above the
# deep mark (2) and at most the disk's 4 servers, turns idling off.
test_what_if_tune() {
	local dev trace out
	bw_require fio jq fusermount3 || return 0
	bw_fakedisk dev service_us=1000,parallel=4 || { fail "fakedisk"; return; }
	trace=$BW_TMP/wi.bwt
	bw_rec_start "$trace" -d "$dev" || { fail "record start"; return; }
	bw_fio "$BW_TMP/fio.json" --name=solo --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=1 --ioengine=psync --time_based --runtime=2 \
		--name=deep --stonewall --filename=/dev/"$dev" --direct=1 --rw=randread \
		--bs=4k --iodepth=8 --ioengine=io_uring --time_based --runtime=8
	bw_rec_stop INT
	out=$("$BW_BIN" analyze "$trace" --what-if-tune)
	assertEquals "analyze --what-if-tune exit" 0 $?
	echo "$out" | sed -n '/^What if/,/^Latency/p' | head -8
	assertTrue "a what-if section" "echo \"\$out\" | grep -q '^What if blkwise tune had run'"
	assertTrue "idling turned off, with its time and evidence" \
		"echo \"\$out\" | grep -A1 't=.*slice_idle_us [0-9]* -> 0' | grep -qE 'evidence:.*P_eff ([2-3]\.[0-9]+|4\.00)'"
	assertTrue "the class it saw was deep" "echo \"\$out\" | grep -q 'evidence:.*class deep'"
	# The same decisions in JSON and CSV.
	"$BW_BIN" analyze "$trace" --what-if-tune --json >"$BW_TMP/wi.json"
	assertEquals "json: as many decisions as the text" \
		"$(echo "$out" | grep -c '^  t=')" "$(jq '.what_if.decisions | length' "$BW_TMP/wi.json")"
	# Time and setting equal; P_eff as the text rounds it (2 places) from
	# the JSON's 3: within half a unit of the last place.
	echo "$out" | awk '/^  t=/ { sub(/^  t= */, ""); t = $1; match($0, /-> [0-9]+/)
		v = substr($0, RSTART + 3, RLENGTH - 3) }
		/evidence:/ { match($0, /P_eff [0-9.]+/); printf "%.2f %d %s\n", t, v,
		substr($0, RSTART + 6, RLENGTH - 6) }' >"$BW_TMP/wi.text"
	jq -r '.what_if.decisions[] | "\(.t) \(.slice_idle_us_after) \(.evidence.p_eff)"' \
		"$BW_TMP/wi.json" | awk '{ printf "%.2f %d %s\n", $1, $2, $3 }' >"$BW_TMP/wi.jtext"
	assertEquals "json: the text's decisions (time, setting, P_eff): $(paste -d'|' "$BW_TMP/wi.text" "$BW_TMP/wi.jtext" | tr '\n' ';')" \
		"$(wc -l <"$BW_TMP/wi.text") 0" \
		"$(paste -d' ' "$BW_TMP/wi.text" "$BW_TMP/wi.jtext" | awk '{ d = $3 - $6; if (d < 0) d = -d }
			$1 != $4 || $2 != $5 || d > 0.0051 { bad++ } END { print NR, bad + 0 }')"
	assertEquals "csv: one row per decision" \
		"$(jq '.what_if.decisions | length' "$BW_TMP/wi.json")" \
		"$("$BW_BIN" analyze "$trace" --what-if-tune --format csv --table what_if |
			python3 -c 'import csv, sys; print(sum(1 for r in csv.DictReader(sys.stdin) if r["action"]))')"
	# The report draws P_eff where it was determined, and each decision as a marker.
	command -v chromium >/dev/null || { bw_skip "chromium not installed (tools/deps.sh --test)"; return 0; }
	"$BW_BIN" analyze "$trace" --what-if-tune -i 0.25 --json --html "$BW_TMP/wi.html" >"$BW_TMP/wi2.json"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1366,2600 --dump-dom "file://$BW_TMP/wi.html" >"$BW_TMP/wi.dom" 2>/dev/null
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1366,2600 --screenshot="$BW_TMP/wi.png" "file://$BW_TMP/wi.html" >/dev/null 2>&1
	out=$(python3 "$BW_ROOT/tests/html_check.py" "$BW_TMP/wi.dom" "$BW_TMP/wi.png" 1366 \
		"$BW_TMP/wi2.json" --determined --decisions "$(jq '.what_if.decisions | length' "$BW_TMP/wi2.json")" 2>&1)
	assertEquals "html: $(echo "$out" | tail -1)" ok "$(echo "$out" | tail -1)"
}

. shunit2
