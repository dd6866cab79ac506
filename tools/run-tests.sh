#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the C unit tests and every shunit2 suite, checks that nothing the
# tests made outlived them (tests/leaks.sh), runs the suites that need
# kernel modules in a QEMU guest (the VM tier, tools/vmtest.sh), then
# prints one line, the last: "N passed, N failed, N skipped".  Skipped
# checks are named and never counted as passed.  Exit status is non-zero
# when anything failed.
#
# Environment:
#   BW_SUITES     only these suites (e.g. "test_stat test_tune"); the VM tier
#                 then runs only if BW_VM=1, on those of them it runs
#   BW_UNITS=0    no unit tests
#   BW_VM=0       no VM tier (its suites are listed as one SKIP); BW_VM=1
#                 runs it even with BW_SUITES
#   BW_VM_KERNEL  the guest's kernel (6.1: tools/vmtest.sh KVER)
#   BW_VM_SUITES  the VM tier's suites: those whose checks SKIP on a kernel
#                 without null_blk, scsi_debug, dm or md modules, and the
#                 package installed where it was not built (test_package_install)
#   BW_VM_MATRIX  the other kernels of the matrix, a guest each after the
#                 first ("5.10 6.12"; "" for none)
#   BW_VM_MATRIX_SUITES  what those guests run: what differs by kernel
#   BW_VM_MATRIX_ACCEL   their -accel (tcg,thread=single: one host thread for
#                 the guest's CPUs, which 6.12's text patching needs under
#                 TCG, docs/kernels.md)
#   BW_DEADLINE   a time (seconds since the epoch) by which the closing line
#                 must be out (.ci/run sets it from CI's limit): each guest
#                 boots only within it (VM_DEADLINE), the first leaving
#                 BW_VM_MATRIX_RESERVE seconds (720) for each matrix guest
#   BW_TESTS      "SUITE:TEST ...": of a suite named here, only these tests
#                 (the host hands the guest the tests it moved there)
#
# On a kernel without BFQ, the tests that need it are MOVED (tests/lib.sh,
# bw_no_bfq): not counted here, run in the guest (whose kernel has BFQ as a
# module) with the VM tier's suites, also with BW_SUITES, unless BW_VM=0
# (then they SKIP).  A moved test that SKIPs in the guest, or does not run
# there, is a FAIL.
#   BW_RESULTS_OUT  keep the PASS/FAIL/SKIP lines in this file (the guest's
#                 run hands them to the host's so)
#   BW_VM_TIER    set by tools/vmtest.sh in the guest: this run is the VM tier
#   VM_TIMEOUT, VM_SMP, ...  passed to tools/vmtest.sh
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/leaks.sh

BW_VM_KERNEL=${BW_VM_KERNEL:-6.1}
BW_VM_SUITES=${BW_VM_SUITES:-test_truth test_biocache test_bio test_streams test_stalls test_seeds test_package_install}
BW_VM_MATRIX=${BW_VM_MATRIX-5.10 6.12}
BW_VM_MATRIX_SUITES=${BW_VM_MATRIX_SUITES:-test_truth test_counts test_biocache}
BW_VM_MATRIX_ACCEL=${BW_VM_MATRIX_ACCEL:-tcg,thread=single}
BW_VM_MATRIX_RESERVE=${BW_VM_MATRIX_RESERVE:-720}
BW_DEADLINE=${BW_DEADLINE:-0}

run_id=r$$
# A suite's time limit: 15 minutes, 30 in a guest (TCG runs the tuner's
# suites at about half the host's pace).
suite_limit=900
[ -z "${BW_VM_TIER:-}" ] || suite_limit=1800
state=$(mktemp -d /tmp/blkwise-run.XXXXXX)
results=${BW_RESULTS_OUT:-$state/results}
: >"$results"
trap 'rm -rf "$state"' EXIT

# selected SUITE: true when BW_SUITES leaves SUITE in.
selected() { [ -z "${BW_SUITES:-}" ] || echo " $BW_SUITES " | grep -q " $1 "; }

# tests_of SUITE: the tests BW_TESTS names of SUITE (none: all of them).
tests_of() {
	local t
	for t in ${BW_TESTS:-}; do
		[ "${t%%:*}" = "$1" ] && echo "${t#*:}"
	done
}

# bfq_here: whether this kernel offers BFQ (loading its module if need be).
bfq_here() {
	modprobe -q bfq 2>/dev/null
	grep -qw bfq /sys/block/*/queue/scheduler 2>/dev/null
}

# The tier that takes the tests needing BFQ this kernel cannot give.
if [ -z "${BW_VM_TIER:-}" ] && [ "${BW_VM:-}" != 0 ] && ! bfq_here; then
	export BW_BFQ_ELSEWHERE=vm-$BW_VM_KERNEL
fi

run_units() {
	local t
	for t in build/unit/test_*; do
		[ -x "$t" ] || continue
		echo "== unit: $t"
		if ! "$t" >"$state/unit" 2>&1; then
			grep -q '^FAIL ' "$state/unit" ||
				echo "FAIL unit:$(basename "$t") (crashed)" >>"$state/unit"
		fi
		grep -E '^(PASS|FAIL|SKIP) ' "$state/unit" | tee -a "$results" | grep -v '^PASS' || true
	done
}

# Each suite gets BW_RUN_ID: what it starts carries it, what it names
# carries it (tests/lib.sh's BW_TAG), and leak_check finds both.
run_suites() {
	local s before rc
	for s in tests/test_*.sh; do
		selected "$(basename "$s" .sh)" || continue
		echo "== suite: $s"
		before=$(wc -l <"$results")
		# shellcheck disable=SC2046
		BW_RUN_ID=$run_id BW_RESULTS=$results timeout "$suite_limit" bash "$s" \
			$(t=$(tests_of "$(basename "$s" .sh)"); [ -z "$t" ] || echo -- $t)
		rc=$?
		if [ "$(wc -l <"$results")" -eq "$before" ] ||
			{ [ $rc -ne 0 ] && ! tail -n +"$((before + 1))" "$results" | grep -q '^FAIL'; }; then
			echo "FAIL $(basename "$s" .sh) (suite exited $rc)" >>"$results"
		fi
		[ $rc -eq 0 ] || not_run "$s" "$before" "$rc"
	done
}

# not_run SUITE BEFORE RC: after a suite stopped early (a test timed out, the
# suite's own limit), each of its tests that left no line is a FAIL by name.
not_run() {
	local name t list
	name=$(basename "$1" .sh)
	list=$(tests_of "$name")
	[ -n "$list" ] || list=$(sed -n 's/^\(test_[A-Za-z0-9_]*\)() *{.*/\1/p' "$1")
	for t in $list; do
		tail -n +"$(($2 + 1))" "$results" | grep -qE "^[A-Z]+ $name:$t( |\$)" ||
			echo "FAIL $name:$t (not run: the suite stopped, exit status $3)" >>"$results"
	done
}

# vm_suites SUITES: those this run selects.
vm_suites() {
	local s out=""
	for s in $1; do
		selected "$s" && out="$out${out:+ }$s"
	done
	echo "$out"
}

# moved: the tests this run moved to the guest, as SUITE:TEST.
moved() { awk '$1 == "MOVED" { print $2 }' "$results"; }

# check_moved TIER OUT: each moved test passed in the guest; a SKIP there, or
# no line at all, is a FAIL.
check_moved() {
	local t line
	for t in $(moved); do
		line=$(grep -E "^(PASS|FAIL|SKIP) ${t}( |\$)" "$2" | tail -n 1)
		case $line in
		PASS* | FAIL*) ;;
		SKIP*) echo "FAIL $1/$t (moved to the guest for BFQ, and skipped there: ${line#* (}" >>"$results" ;;
		*) echo "FAIL $1/$t (moved to the guest for BFQ, and not run there)" >>"$results" ;;
		esac
	done
	awk -v m="$(moved | paste -sd' ')" 'BEGIN { n = split(m, a, " "); for (i = 1; i <= n; i++) mv[a[i]] = 1 }
		!($1 == "SKIP" && ($2 in mv))' "$2" >"$2.kept"
	mv "$2.kept" "$2"
}

# run_guest KVER SUITES MOVED ACCEL RESERVE: SUITES in a guest on KVER, with
# the tests MOVED there, ending RESERVE seconds before BW_DEADLINE if set.  Its checks join this run's lines as vm-KVER/NAME; a kernel
# that cannot be fetched is one SKIP, a guest that does not boot or finish
# one FAIL, with the reason.
run_guest() {
	local k=$1 suites=$2 mv=$3 tier=vm-$1 out line rc got s accel=$4 dl=0
	[ "$BW_DEADLINE" = 0 ] || dl=$((BW_DEADLINE - $5))
	echo "== vm: $suites on $k (tools/vmtest.sh; BW_VM=0 skips it)"
	[ -z "$mv" ] || echo "   moved here for BFQ: $mv"
	out=build/vm/out/$k/results
	rm -f "$out"
	BW_TESTS=$mv VM_MODULES="${VM_MODULES:-}${mv:+ bfq}" BW_UNITS=0 VM_TIMEOUT=${VM_TIMEOUT:-3600} \
		VM_DEADLINE=$dl VM_ACCEL=$accel tools/vmtest.sh -s "$suites" "$k" 2>&1 | tee "$state/vm"
	rc=${PIPESTATUS[0]}
	line=$(grep -E "^$k: " "$state/vm" | tail -n 1)
	line=${line#"$k: "}
	case $line in
	SKIPPED*)
		line=${line#SKIPPED (}
		echo "SKIP $tier (kernel $k not fetched: ${line%)})" >>"$results"
		for s in $mv; do
			echo "SKIP $s (moved to $tier for BFQ; kernel $k not fetched)" >>"$results"
		done
		return 0
		;;
	esac
	if [ -f "$out" ]; then
		cp "$out" "$state/vm.results"
		[ -z "$mv" ] || check_moved "$tier" "$state/vm.results"
		sed -E "s,^(PASS|FAIL|SKIP) ,\1 $tier/," "$state/vm.results" >>"$results"
	fi
	case $line in
	"")
		echo "FAIL $tier (tools/vmtest.sh exited $rc: $(grep -m 1 'vmtest: error' "$state/vm" || echo 'no result line'))" >>"$results" ;;
	[0-9]*" passed, "*)
		# The guest's own count must be the lines that came back.
		got=$(awk '{ n[$1]++ } END { printf "%d passed, %d failed, %d skipped", n["PASS"], n["FAIL"], n["SKIP"] }' "$out" 2>/dev/null)
		case $line in "$got"*) ;; *)
			echo "FAIL $tier (the guest counted ${line%% (*}, its results file holds ${got:-nothing})" >>"$results" ;;
		esac ;;
	*)
		echo "FAIL $tier ($line)" >>"$results" ;;	# no boot, a timeout
	esac
}

# run_vm: the VM tier: its suites on BW_VM_KERNEL, with the tests moved
# there; then BW_VM_MATRIX_SUITES on each kernel of BW_VM_MATRIX.
run_vm() {
	local suites msuites mv mvsuites s k all=1 matrix=$BW_VM_MATRIX reserve
	[ -z "${BW_VM_TIER:-}" ] || return 0	# this is the guest
	suites=$(vm_suites "$BW_VM_SUITES")
	mv=$(moved | paste -sd' ')
	mvsuites=$(moved | cut -d: -f1 | sort -u | paste -sd' ')
	[ -n "$suites$mv" ] || [ -n "$(vm_suites "$BW_VM_MATRIX_SUITES")" ] || return 0
	if [ "${BW_VM:-}" = 0 ]; then
		for k in $BW_VM_KERNEL $BW_VM_MATRIX; do
			echo "SKIP vm-$k (not run, BW_VM=0)" >>"$results"
		done
		return 0
	fi
	# With BW_SUITES, only the moved tests, unless BW_VM=1.
	[ -z "${BW_SUITES:-}" ] || [ "${BW_VM:-}" = 1 ] || { suites=""; all=0; }
	for s in $mvsuites; do
		echo " $suites " | grep -q " $s " || suites="$suites${suites:+ }$s"
	done
	msuites=$(vm_suites "$BW_VM_MATRIX_SUITES")
	[ $all = 1 ] && [ -n "$msuites" ] || matrix=""
	reserve=$(($(echo $matrix | wc -w) * BW_VM_MATRIX_RESERVE))
	[ -z "$suites" ] || run_guest "$BW_VM_KERNEL" "$suites" "$mv" "${VM_ACCEL:-tcg}" "$reserve"
	for k in $matrix; do
		reserve=$((reserve - BW_VM_MATRIX_RESERVE))
		run_guest "$k" "$msuites" "" "$BW_VM_MATRIX_ACCEL" "$reserve"
	done
}

summary() {
	local pass fail skip
	pass=$(grep -c '^PASS ' "$results")
	fail=$(grep -c '^FAIL ' "$results")
	skip=$(grep -c '^SKIP ' "$results")
	echo
	if grep -q '^MOVED ' "$results"; then
		echo "Moved to the guest (not counted here; counted there as vm-*/...):"
		grep '^MOVED ' "$results" | sed 's/^MOVED /  /'
	fi
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
}

leak_snapshot "$state"
[ "${BW_UNITS:-1}" = 0 ] || run_units
run_suites
leak_check "$state" "$run_id" >>"$results"
grep '^FAIL leaks:' "$results" || true
run_vm
summary
