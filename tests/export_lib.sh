# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers of the export suites (test_export.sh, test_export_tls.sh):
# blkwise export in the background, a real Prometheus scraping it, and
# PromQL queries against that Prometheus.  Sourced after lib.sh.

ex_require() {
	bw_require curl jq fio losetup "$@" || return 1
}

# The capabilities left after the drop: none from 6.5 (a held map fd is
# enough to read it), CAP_BPF (bit 39) before, where bpf() checks.
ex_caps_left() {
	local v
	v=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
	if [ "$v" -ge 6005 ]; then echo 0000000000000000; else echo 0000008000000000; fi
}

ex_port() { bw_free_port; }

# ex_start OUT ARGS...: blkwise export on a free loopback port, serving
# when this returns; EX_PID, EX_PORT, EX_URL (https:// when ARGS give a
# --web.config.file with TLS, as EX_SCHEME says).
ex_start() {
	local out=$1 rc
	shift
	EX_PORT=$(ex_port)
	bw_bg_start "$out" "serving" "$BW_BIN" export --listen 127.0.0.1:"$EX_PORT" \
		--state-dir "$BW_TMP/state" "$@"
	rc=$?
	# shellcheck disable=SC2034 # for the suites
	EX_PID=$BW_BG_PID
	# shellcheck disable=SC2034
	EX_URL=${EX_SCHEME:-http}://127.0.0.1:$EX_PORT
	return $rc
}

# shellcheck disable=SC2120 # JOB_YAML is optional
# ex_prom_start [JOB_YAML]: Prometheus scraping the exporter every second,
# with the rules of dashboards/; ready when this returns.  JOB_YAML: more
# keys of the scrape job (scheme, tls_config, basic_auth), indented by 4.
# EX_PROM.
ex_prom_start() {
	local dir port
	# A store of its own: series an earlier Prometheus of the suite left
	# would answer the queries below for their 5 minutes of lookback.
	dir=$(mktemp -d "$BW_TMP/prom.XXXXXX")
	mkdir -p "$dir/data"
	port=$(ex_port)
	cp "$BW_ROOT/dashboards/blkwise-rules.yml" "$dir/rules.yml"
	cat >"$dir/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  evaluation_interval: 1s
		rule_files: [rules.yml]
		scrape_configs:
		  - job_name: blkwise
		    static_configs:
		      - targets: ['127.0.0.1:$EX_PORT']
	EOF
	[ -n "${1:-}" ] && printf '%s\n' "$1" >>"$dir/prometheus.yml"
	prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
		--web.listen-address=127.0.0.1:"$port" >"$dir/log" 2>&1 &
	EX_PROM_PID=$!
	bw_on_cleanup "kill $EX_PROM_PID; wait $EX_PROM_PID"
	EX_PROM=http://127.0.0.1:$port
	for _ in $(seq 100); do
		curl -sf "$EX_PROM/-/ready" >/dev/null && break
		sleep 0.1
	done
	curl -sf "$EX_PROM/-/ready" >/dev/null || { cat "$dir/log" >&2; return 1; }
	# Until the first scrape is in.
	for _ in $(seq 100); do
		[ "$(ex_q 'up{job="blkwise"}')" = 1 ] && return 0
		sleep 0.1
	done
	echo "Prometheus never scraped the exporter: $(curl -s "$EX_PROM/api/v1/targets" | jq -c '[.data.activeTargets[] | {health, lastError}]')" >&2
	return 1
}

# ex_q EXPR [TIME]: an instant query; the first result's value, or "".
ex_q() {
	curl -s "$EX_PROM/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
		jq -r 'if .status == "success" then (.data.result[0].value[1] // "") else "error: \(.error)" end'
}

# ex_q_count EXPR: how many series an instant query returns (-1 on error).
ex_q_count() {
	curl -s "$EX_PROM/api/v1/query" --data-urlencode "query=$1" |
		jq -r 'if .status == "success" then (.data.result | length) else -1 end'
}

# ex_scraped_after T: waits until Prometheus holds a sample scraped after T.
ex_scraped_after() {
	for _ in $(seq 100); do
		awk -v a="$(ex_q 'timestamp(blkwise_exporter_last_sample_timestamp_seconds)')" \
			-v t="$1" 'BEGIN { exit !(a > t + 1.5) }' && return 0
		sleep 0.1
	done
	return 1
}

# diskstats reads, writes of a device (fields 4 and 8).
ex_diskstats() { awk -v d="$1" '$3 == d { print $4, $8 }' /proc/diskstats; }

# ex_counts_exact DEV FIO_ARGS...: fio on DEV while Prometheus scrapes;
# the counter delta Prometheus stored against /proc/diskstats exactly.
# Leaves fio's JSON in $BW_TMP/fio.json.
ex_counts_exact() {
	local dev=$1 t0 t1 d0 d1 r0 r1 l0 l1 i1 ds missed
	shift
	sleep 1.5
	d0=$(ex_diskstats "$dev")
	t0=$(date +%s.%N)
	ex_scraped_after "$t0" || { fail "no scrape after t0"; return 1; }
	fio --name=r --filename=/dev/"$dev" --direct=1 --output-format=json "$@" \
		>"$BW_TMP/fio.json" 2>/dev/null || { fail "fio"; return 1; }
	sleep 1.5
	d1=$(ex_diskstats "$dev")
	t1=$(date +%s.%N)
	ex_scraped_after "$t1" || { fail "no scrape after t1"; return 1; }
	# Before fio: the last sample at t0; after: the latest, all idle since.
	r0=$(ex_q "sum(blkwise_requests_total{device=\"$dev\"})" "$t0")
	l0=$(ex_q "blkwise_lost_completions_total{device=\"$dev\"}" "$t0")
	r1=$(ex_q "sum(blkwise_requests_total{device=\"$dev\"})")
	l1=$(ex_q "blkwise_lost_completions_total{device=\"$dev\"}")
	i1=$(ex_q "blkwise_inflight_requests{device=\"$dev\"}")
	ds=$(( ${d1% *} + ${d1#* } - ${d0% *} - ${d0#* } ))
	missed=$(( ${l1:-0} - ${l0:-0} + ${i1:-0} ))
	# The light tier serves no lost-completion count: losses not counted.
	[ -n "$l1" ] || missed="~${i1:-0}"
	echo "  requests: Prometheus ${r0:-0} -> $r1, $missed never completed as seen; diskstats delta $ds"
	assertTrue "fio did I/O" "[ $ds -gt 1000 ]"
	bw_expect_count "Prometheus counter delta vs diskstats" "$ds" $((r1 - ${r0:-0})) "$missed"
}

# ex_page_after URL T OUT: the exporter's page, into OUT, once it holds a
# sample taken after T (seconds since the epoch), within 20 s.
ex_page_after() {
	for _ in $(seq 100); do
		curl -sf "$1/metrics" >"$3" 2>/dev/null &&
			awk -v t="$2" '$1 == "blkwise_exporter_last_sample_timestamp_seconds" && $2 > t { f = 1 }
				END { exit !f }' "$3" && return 0
		sleep 0.2
	done
	return 1
}

# ex_dev_counts PAGE DEV: DEV's counts on a page, one "series value" a line,
# sorted: the counters (_total) and histograms' _count, but those of time
# (_seconds), which each exporter's programs clock for themselves.
ex_dev_counts() {
	awk -v d="device=\"$2\"" 'index($1, d) && $1 !~ /seconds/ &&
		($1 ~ /_total\{/ || $1 ~ /_count\{/) { print $1, $2 }' "$1" | sort
}

# ex_dev_requests PAGE DEV: DEV's requests, over every op.
ex_dev_requests() {
	awk -v d="device=\"$2\"" 'index($1, "blkwise_requests_total{") == 1 && index($1, d) { n += $2 }
		END { printf "%d\n", n }' "$1"
}
