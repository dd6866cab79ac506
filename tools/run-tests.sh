#!/usr/bin/env bash
# Runs the C unit tests and every shunit2 suite, then prints one line:
# "N passed, N failed, N skipped".  Skipped checks are named and never
# counted as passed.  Exit status is non-zero when anything failed.
set -u
cd "$(dirname "$0")/.."

results=$(mktemp /tmp/blkwise-results.XXXXXX)
trap 'rm -f "$results"' EXIT

for t in build/unit/test_*; do
	[ -x "$t" ] || continue
	echo "== unit: $t"
	if ! "$t" >"$results.unit" 2>&1; then
		grep -q '^FAIL ' "$results.unit" ||
			echo "FAIL unit:$(basename "$t") (crashed)" >>"$results.unit"
	fi
	grep -E '^(PASS|FAIL|SKIP) ' "$results.unit" | tee -a "$results" | grep -v '^PASS' || true
	rm -f "$results.unit"
done

for s in tests/test_*.sh; do
	[ -n "${BW_SUITES:-}" ] && ! echo " $BW_SUITES " | grep -q " $(basename "$s" .sh) " && continue
	echo "== suite: $s"
	before=$(wc -l <"$results")
	BW_RESULTS=$results timeout 900 bash "$s"
	rc=$?
	if [ "$(wc -l <"$results")" -eq "$before" ] || { [ $rc -ne 0 ] && ! tail -n +"$((before + 1))" "$results" | grep -q '^FAIL'; }; then
		echo "FAIL $(basename "$s" .sh) (suite exited $rc)" >>"$results"
	fi
done

# Nothing a test made may outlive it.
# Programs are freed from a kernel work item: give them two seconds.
for _ in $(seq 20); do
	leaks=$(bpftool prog list 2>/dev/null | grep -cE ' name bw_' || true)
	[ "$leaks" -eq 0 ] && break
	sleep 0.1
done
[ "$leaks" -eq 0 ] && echo "PASS leaks:bpf-programs" >>"$results" ||
	echo "FAIL leaks:bpf-programs ($leaks blkwise programs still loaded)" >>"$results"
loops=$(losetup -l -n -O BACK-FILE 2>/dev/null | grep -c 'blkwise-test' || true)
[ "$loops" -eq 0 ] && echo "PASS leaks:loop-devices" >>"$results" ||
	echo "FAIL leaks:loop-devices ($loops left)" >>"$results"
mounts=$(grep -c 'blkwise-test' /proc/mounts || true)
[ "$mounts" -eq 0 ] && echo "PASS leaks:mounts" >>"$results" ||
	echo "FAIL leaks:mounts ($mounts left)" >>"$results"

pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
skip=$(grep -c '^SKIP ' "$results")
echo
if [ "$skip" -gt 0 ]; then
	echo "Skipped (not counted as passed):"
	grep '^SKIP ' "$results" | sed 's/^SKIP /  /'
fi
if [ "$fail" -gt 0 ]; then
	echo "Failed:"
	grep '^FAIL ' "$results" | sed 's/^FAIL /  /'
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
