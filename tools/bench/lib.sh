# SPDX-License-Identifier: GPL-2.0
# Sourced by tools/bench/ceiling.sh and tools/bench/timing.sh.

# stat_start BLKWISE OUT ERR [ARGS...]: `BLKWISE stat --json --no-state
# ARGS` in the background, its JSON to OUT and its messages to ERR; returns
# once its programs are attached ("Ctrl-C to stop"), with its pid in
# STAT_PID.  Exits the script when stat ends first, with what it said.
stat_start() {
	local bin=$1 out=$2 err=$3
	shift 3
	"$bin" stat --json --no-state "$@" >"$out" 2>"$err" &
	STAT_PID=$!
	for _ in $(seq 100); do
		grep -q 'Ctrl-C to stop' "$err" && return 0
		kill -0 "$STAT_PID" 2>/dev/null || { cat "$err" >&2; exit 1; }
		sleep 0.1
	done
}
