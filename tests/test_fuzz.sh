#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A short libFuzzer run of each trace reader (ours, blktrace's) from the seed
# corpus in tests/fuzz/corpus: no crash, hang (10 s per input), leak, undefined
# behaviour or allocation past 1 GiB.  The long runs are in docs/record.md.
. "$(dirname "$0")/lib.sh"

FUZZ_SECS=${BW_FUZZ_SECS:-20}

# fuzz_run NAME CORPUS: the harness for FUZZ_SECS on a copy of the corpus.
fuzz_run() {
	local name=$1 bin=$BW_ROOT/build/fuzz/$1 dir=$BW_TMP/corpus-$1 log=$BW_TMP/$1.log rc
	command -v "${CLANG:-clang}" >/dev/null || { bw_skip "clang not installed"; return 0; }
	# Without clang's fuzzer runtime nothing can be built: a skip.  With it,
	# a harness that does not build is a failure, as any broken build.
	echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' >"$BW_TMP/probe.c"
	if ! "${CLANG:-clang}" -fsanitize=fuzzer "$BW_TMP/probe.c" -o "$BW_TMP/probe" 2>/dev/null; then
		bw_skip "no fuzzer runtime for clang (libclang-rt-14-dev)"
		return 0
	fi
	if ! make -s -C "$BW_ROOT" fuzz >"$BW_TMP/build.log" 2>&1; then
		fail "the fuzz harnesses do not build: $(grep -m 1 -E 'error|undefined' "$BW_TMP/build.log")"
		return
	fi
	mkdir -p "$dir"
	cp "$BW_ROOT/tests/fuzz/corpus/$2"/* "$dir"/
	(cd "$BW_TMP" && nice -n 10 "$bin" -max_total_time="$FUZZ_SECS" -timeout=10 \
		-rss_limit_mb=1024 -malloc_limit_mb=1024 -max_len=16384 "$dir" >"$log" 2>&1)
	rc=$?
	echo "  $name: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log")"
	assertEquals "$name: libFuzzer found nothing ($(grep -m1 -E 'ERROR|SUMMARY' "$log"))" 0 $rc
	assertTrue "$name: it ran" "grep -q 'Done [1-9][0-9]* runs' $log"
	assertEquals "$name: no crash, timeout or oom input left" "" \
		"$(ls "$BW_TMP" | grep -E '^(crash|timeout|oom|leak)-')"
}

test_fuzz_trace_reader() { fuzz_run fuzz_trace trace; }
test_fuzz_blktrace_reader() { fuzz_run fuzz_blktrace blktrace; }

. shunit2
