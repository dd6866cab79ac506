#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: `blkwise export` against a real Prometheus (Debian's,
# started here on loopback with its own config and data dir) while fio
# runs on loop devices: rates against fio's, counter deltas against
# /proc/diskstats exactly, every PromQL expression of the dashboard and
# the rules returning data; HTTP safety, privileges, load, errors.
. "$(dirname "$0")/lib.sh"

# ex_* helpers (exporter, Prometheus, queries): tests/export_lib.sh.
. "$(dirname "$0")/export_lib.sh"

test_usage_and_runtime_errors() {
	local port rc
	ex_require || return 0
	"$BW_BIN" export --listen nonsense >/dev/null 2>"$BW_TMP/e"
	assertEquals "bad --listen: usage error" 2 $?
	assertTrue "says how: $(cat "$BW_TMP/e")" "grep -q 'ADDR\]:PORT' $BW_TMP/e"
	"$BW_BIN" export --listen 127.0.0.1:99999 >/dev/null 2>&1
	assertEquals "port out of range" 2 $?
	"$BW_BIN" export -d nosuchdev >/dev/null 2>"$BW_TMP/e"
	assertEquals "a device filter matching nothing" 2 $?
	assertTrue "names it: $(cat "$BW_TMP/e")" "grep -q nosuchdev $BW_TMP/e"
	"$BW_BIN" export --user nosuchuser >/dev/null 2>&1
	assertEquals "unknown user" 2 $?
	"$BW_BIN" export --policy latency >/dev/null 2>&1
	assertEquals "tuner options without --tune" 2 $?
	"$BW_BIN" export --cgroups-max 5 >/dev/null 2>&1
	assertEquals "cgroup options without --cgroups" 2 $?
	"$BW_BIN" export --cgroups=0 >/dev/null 2>"$BW_TMP/e"
	assertEquals "--cgroups=0: usage error" 2 $?
	assertEquals "one line saying what to give" "1 1" \
		"$(wc -l <"$BW_TMP/e") $(grep -c 'give 1..64' "$BW_TMP/e")"
	"$BW_BIN" export --cgroups --cgroup-path relative >/dev/null 2>&1
	assertEquals "a relative --cgroup-path" 2 $?
	ex_start "$BW_TMP/a.out" || { fail "export start"; return; }
	port=$EX_PORT
	"$BW_BIN" export --listen 127.0.0.1:"$port" >/dev/null 2>"$BW_TMP/e"
	rc=$?
	assertEquals "port in use: runtime error" 1 $rc
	assertTrue "says so: $(cat "$BW_TMP/e")" "grep -q 'in use' $BW_TMP/e"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# Read-only over HTTP, nobody without capabilities, both formats valid.
test_http_and_privileges() {
	local st
	ex_require promtool || return 0
	ex_start "$BW_TMP/h.out" || { fail "export start"; return; }
	st=/proc/$EX_PID/status
	assertEquals "CapEff after the drop ($(uname -r))" "$(ex_caps_left)" "$(awk '/^CapEff/ { print $2 }' "$st")"
	assertEquals "CapPrm after the drop" "$(ex_caps_left)" "$(awk '/^CapPrm/ { print $2 }' "$st")"
	assertEquals "runs as nobody" "$(id -u nobody)" "$(awk '/^Uid/ { print $2 }' "$st")"
	for m in POST PUT DELETE; do
		assertEquals "$m answered 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X $m "$EX_URL/metrics")"
	done
	assertTrue "405 says what is allowed" "curl -s -D - -o /dev/null -X POST $EX_URL/metrics | grep -qi '^allow: GET, HEAD'"
	assertEquals "unknown path 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$EX_URL/nope")"
	assertTrue "/ links /metrics" "curl -s $EX_URL/ | grep -q 'href=\"/metrics\"'"
	curl -s "$EX_URL/metrics" >"$BW_TMP/m.txt"
	promtool check metrics <"$BW_TMP/m.txt" >"$BW_TMP/lint" 2>&1
	assertEquals "promtool check metrics: nothing to report: $(head -5 "$BW_TMP/lint")" 0 $?
	assertEquals "promtool printed nothing" "" "$(cat "$BW_TMP/lint")"
	assertFalse "no counter in exponent notation" \
		"grep -E '^blkwise_[a-z_]*_total(\{[^}]*\})? [0-9.]+e' $BW_TMP/m.txt | grep -v _seconds_total"
	assertTrue "text format content type" \
		"curl -s -D - -o /dev/null $EX_URL/metrics | grep -qi '^content-type: text/plain; version=0.0.4'"
	curl -s -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' -D "$BW_TMP/om.h" \
		"$EX_URL/metrics" >"$BW_TMP/om.txt"
	assertTrue "OpenMetrics when asked" "grep -qi '^content-type: application/openmetrics-text; version=1.0.0' $BW_TMP/om.h"
	assertEquals "OpenMetrics ends with # EOF" "# EOF" "$(tail -1 "$BW_TMP/om.txt")"
	assertTrue "OpenMetrics counter family named without _total" \
		"grep -qx '# TYPE blkwise_requests counter' $BW_TMP/om.txt"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# A scrape gets a sample taken at its own time, not one up to -i old.
test_scrape_samples_fresh() {
	local age
	ex_require || return 0
	ex_start "$BW_TMP/f.out" -i 5 || { fail "export start"; return; }
	sleep 2.5
	age=$(curl -s "$EX_URL/metrics" | awk -v now="$(date +%s.%N)" \
		'/^blkwise_exporter_last_sample_timestamp_seconds / { printf "%.3f", now - $2 }')
	echo "  sample age at a scrape 2.5 s into a 5 s interval: $age s"
	assertTrue "sampled for the scrape ($age s old)" "awk -v a='$age' 'BEGIN { exit !(a != \"\" && a < 0.5) }'"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
}

# fio at a fixed rate: Prometheus's rate() against fio's IOPS within 5%,
# and counter deltas from Prometheus against /proc/diskstats exactly.
test_prometheus_rates_and_counts() {
	local dev fio_iops prom_rate
	ex_require prometheus || return 0
	bw_loop dev 256 shm || { fail "loop"; return; }
	ex_start "$BW_TMP/r.out" -d "$dev" || { fail "export start"; return; }
	ex_prom_start || { fail "prometheus start"; return; }
	ex_counts_exact "$dev" --rw=randrw --rwmixread=70 --bs=4k --ioengine=psync \
		--rate_iops=700 --time_based --runtime=10 || return
	fio_iops=$(jq '.jobs[0].read.iops + .jobs[0].write.iops' "$BW_TMP/fio.json")
	# A window inside fio's run, which ended when it wrote its report:
	# fio can take seconds to start on a slow machine (the TCG guests).
	prom_rate=$(ex_q "sum(rate(blkwise_requests_total{device=\"$dev\"}[6s]))" \
		"$(jq -r '.timestamp_ms / 1000 - 1.5' "$BW_TMP/fio.json")")
	echo "  rate: fio $fio_iops IOPS, Prometheus rate() $prom_rate"
	assertTrue "rate within 5% of fio's ($prom_rate vs $fio_iops)" \
		"awk -v a='$prom_rate' -v b='$fio_iops' 'BEGIN { exit !(b > 0 && a / b > 0.95 && a / b < 1.05) }'"
}

# Every expression of the dashboard and the rules returns data, with the
# exporter tuning a bfq device (and counting BPF run time) while fio
# drives it alone, then deep.
test_every_expression_returns_data() {
	local dev line src expr n try missing=0 total=0
	ex_require prometheus promtool || return 0
	[ -x "$BW_ROOT/tools/promql-exprs.sh" ] || { fail "tools/promql-exprs.sh missing"; return; }
	bw_require_fetch "every expression (busy time, P_eff)" || return 0
	bw_loop dev 256 shm --direct-io=on || { fail "loop"; return; }
	bw_use_bfq "$dev" || return 0
	ex_start "$BW_TMP/e.out" -d "$dev" --bpf-stats --cgroups --tune --tune-window 0.5 --run-dir "$BW_TMP/run.e" ||
		{ fail "export start"; return; }
	ex_prom_start || { fail "prometheus start"; return; }
	# Alone first (S1 learned), then deep (P_eff determined) until the
	# cleanup kills it: the queries below can take seconds on a busy host,
	# and the interval gauges are absent once the device is idle.
	fio --name=s --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=psync \
		--time_based --runtime=3 >/dev/null 2>&1
	fio --name=d --filename=/dev/"$dev" --direct=1 --rw=randrw --bs=4k --ioengine=libaio \
		--iodepth=8 --numjobs=2 --time_based --runtime=300 >/dev/null 2>&1 &
	bw_on_cleanup "kill $!"
	sleep 20
	# Source and expression a line, tab apart: one jq, not two an
	# expression (an emulated CPU takes a second over each process).
	DEVICE="$dev" RATE=5s "$BW_ROOT/tools/promql-exprs.sh" |
		jq -r '[.source, .expr] | join("\t")' >"$BW_TMP/exprs"
	total=$(grep -c . "$BW_TMP/exprs")
	# Each expression must return data; one that has none yet is asked
	# again every 5 s for up to 60 s (an emulated CPU can take that long to
	# show a figure that needs the device deep, such as P_eff).
	for try in $(seq 13); do
		missing=0
		: >"$BW_TMP/exprs.missing"
		while IFS=$'\t' read -r src expr; do
			line="$src	$expr"
			# An alert that does not fire returns nothing by design: its
			# thresholds (> N, < N) are dropped; what it compares must be there.
			case $src in
			"rules: Blkwise"*) expr=$(sed -E 's/ *(>=|<=|>|<) *[0-9][0-9.e+-]*//g' <<<"$expr") ;;
			esac
			n=$(ex_q_count "$expr")
			if [ "$n" -le 0 ]; then
				echo "  no data ($n, ask $try): $src: $expr"
				echo "$line" >>"$BW_TMP/exprs.missing"
				missing=$((missing + 1))
			fi
		done <"$BW_TMP/exprs"
		[ "$missing" -gt 0 ] || break
		mv "$BW_TMP/exprs.missing" "$BW_TMP/exprs"
		sleep 5
	done
	echo "  $((total - missing)) of $total expressions returned data"
	[ "$missing" -eq 0 ] || curl -s "$EX_URL/metrics" |
		grep -E "^blkwise_(depth_mean|effective_parallelism|solo_service|busy|reads_completed)[a-z_]*\{device=\"$dev\"" |
		sed 's/^/    /'
	assertTrue "expressions found" "[ $total -gt 10 ]"
	assertEquals "expressions without data" 0 $missing
	# Prometheus itself evaluated every rule without an error.
	curl -s "$EX_PROM/api/v1/rules" >"$BW_TMP/rules.json"
	echo "  rules: $(jq -r '[.data.groups[].rules[]] | "\(length) evaluated, \([.[] | select(.health != "ok")] | length) unhealthy"' "$BW_TMP/rules.json")"
	assertEquals "every rule healthy: $(jq -c '[.data.groups[].rules[] | select(.health != "ok") | {name, lastError}]' "$BW_TMP/rules.json")" \
		0 "$(jq '[.data.groups[].rules[] | select(.health != "ok")] | length' "$BW_TMP/rules.json")"
	assertTrue "rules loaded" "[ $(jq '[.data.groups[].rules[]] | length' "$BW_TMP/rules.json") -gt 5 ]"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# export --cgroups: per cgroup, requests, bytes and a service-time
# histogram, charged to the cgroup of each request's blkg, in the
# hierarchy of the io controller (v2, or v1's blkio on a hybrid host).
# Direct I/O from two cgroups, one of them nested: requests and bytes
# equal fio's exactly, the histogram counts every request and its median
# is a service time, a real Prometheus scrapes the series and
# histogram_quantile() answers on them, promtool finds nothing to report;
# a second exporter with --cgroups=1 --cgroup-path counts the nested
# cgroup in its parent and shows nothing else; the nested cgroup's series
# go when it does, the other's stay.
test_cgroups_by_owner() {
	local dev mnt a inner b m fa fb n q p50 second
	ex_require prometheus promtool || return 0
	mnt=$(cg_io_mount)
	[ -n "$mnt" ] || { bw_skip "no hierarchy with the io controller (cgroup v2 io, or v1 blkio)"; return 0; }
	[ "$mnt" != "$(cg_mount)" ] || cg_enable io || { fail "enabling io for the root's children"; return; }
	bw_loop dev 128 shm --direct-io=on || { fail "loop"; return; }
	cg_make a cga "$mnt" || { fail "mkdir cgroup"; return; }
	# On v2 the kernel charges a cgroup's I/O to itself only where io is on
	# for it (else to the nearest ancestor that has it): on for a's children.
	[ "$mnt" != "$(cg_mount)" ] || echo +io >"$mnt$a/cgroup.subtree_control" ||
		{ fail "enabling io for $a's children"; return; }
	cg_make inner "$a/inner" "$mnt" && cg_make b cgb "$mnt" || { fail "mkdir cgroup"; return; }
	ex_start "$BW_TMP/c.out" -d "$dev" --cgroups || { fail "export start"; return; }
	ex_prom_start || { fail "prometheus start"; return; }
	second=$(ex_port)
	bw_bg_start "$BW_TMP/c2.out" "serving" "$BW_BIN" export --listen 127.0.0.1:"$second" \
		--no-state -d "$dev" --cgroups=1 --cgroup-path "$a" || { fail "second exporter"; return; }
	CG_MOUNT=$mnt cg_run "$inner" fio --output-format=json --output="$BW_TMP/fa.json" --name=a \
		--filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=psync --size=64M \
		--io_size=8M >/dev/null
	CG_MOUNT=$mnt cg_run "$b" fio --output-format=json --output="$BW_TMP/fb.json" --name=b \
		--filename=/dev/"$dev" --direct=1 --rw=write --bs=64k --ioengine=libaio --iodepth=4 \
		--size=64M --io_size=16M >/dev/null
	fa=$(jq '.jobs[0].read.total_ios' "$BW_TMP/fa.json")
	fb=$(jq '.jobs[0].write.total_ios' "$BW_TMP/fb.json")
	m=$BW_TMP/cg.txt
	curl -s "$EX_URL/metrics" >"$m"
	echo "  hierarchy $(grep -o 'hierarchy="[a-z0-9]*"' "$m"); $inner: fio $fa reads," \
		"exported $(cg_metric "$m" blkwise_cgroup_requests_total "$inner" read);" \
		"$b: fio $fb writes, exported $(cg_metric "$m" blkwise_cgroup_requests_total "$b" write)"
	assertEquals "$inner: requests = fio's" "$fa" "$(cg_metric "$m" blkwise_cgroup_requests_total "$inner" read)"
	assertEquals "$inner: bytes = fio's" $((fa * 4096)) "$(cg_metric "$m" blkwise_cgroup_bytes_total "$inner" read)"
	assertEquals "$b: requests = fio's" "$fb" "$(cg_metric "$m" blkwise_cgroup_requests_total "$b" write)"
	assertEquals "$b: bytes = fio's" $((fb * 65536)) "$(cg_metric "$m" blkwise_cgroup_bytes_total "$b" write)"
	assertEquals "$inner: every request in the histogram" "$fa" \
		"$(cg_metric "$m" blkwise_cgroup_service_seconds_count "$inner" read)"
	assertEquals "$inner: and under +Inf" "$fa" \
		"$(awk -v l="cgroup=\"$inner\",op=\"read\",le=\"+Inf\"" 'index($0, l) { print $2 }' "$m")"
	assertEquals "no other cgroup wrote (fio's only)" "" \
		"$(grep '^blkwise_cgroup_requests_total' "$m" | grep -v -e "cgroup=\"$inner\"" -e "cgroup=\"$b\"" -e 'cgroup="/"')"
	promtool check metrics <"$m" >"$BW_TMP/lint" 2>&1
	assertEquals "promtool check metrics: nothing to report: $(head -3 "$BW_TMP/lint")" "" "$(cat "$BW_TMP/lint")"
	ex_scraped_after "$(date +%s)" || { fail "no new scrape"; return; }
	q="sum(blkwise_cgroup_requests_total{device=\"$dev\",cgroup=\"$inner\"})"
	assertEquals "Prometheus holds $inner's requests" "$fa" "$(ex_q "$q")"
	p50=$(ex_q "histogram_quantile(0.5, sum by (le) (blkwise_cgroup_service_seconds_bucket{device=\"$dev\",cgroup=\"$inner\"}))")
	echo "  $inner: median service time from Prometheus ${p50:-none} s"
	assertTrue "median a service time (${p50:-none} s: above 0, under 10 ms)" \
		"awk -v v='${p50:-0}' 'BEGIN { exit !(v > 0 && v < 0.01) }'"
	curl -s "http://127.0.0.1:$second/metrics" >"$BW_TMP/cg1.txt"
	n=$(grep -c '^blkwise_cgroup_requests_total' "$BW_TMP/cg1.txt")
	assertEquals "--cgroups=1 --cgroup-path $a: one series, $a's" "1 $fa" \
		"$n $(cg_metric "$BW_TMP/cg1.txt" blkwise_cgroup_requests_total "$a" read)"
	rmdir "$mnt$inner" || { fail "rmdir $inner"; return; }
	for _ in $(seq 30); do
		curl -s "$EX_URL/metrics" >"$m"
		[ -z "$(cg_metric "$m" blkwise_cgroup_requests_total "$inner" read)" ] && break
		sleep 0.2
	done
	assertEquals "$inner's series gone with it" "" "$(cg_metric "$m" blkwise_cgroup_requests_total "$inner" read)"
	assertEquals "$b's stay" "$fb" "$(cg_metric "$m" blkwise_cgroup_requests_total "$b" write)"
}

# The page and the contract (dashboards/README.md) name the same series:
# every family the exporter serves, with --cgroups and --bio-cache, is
# listed there, and every listed one is served (those of --tune, which
# needs BFQ, by the families' table in user/model/promfmt.c alone).
test_every_family_documented() {
	local dev bad
	ex_require || return 0
	bw_loop dev 16 shm || { fail "loop"; return; }
	ex_start "$BW_TMP/f.out" -d "$dev" --cgroups --bio-cache --exact || { fail "export start"; return; }
	dd if=/dev/"$dev" of=/dev/null bs=4k count=64 iflag=direct status=none
	curl -s "$EX_URL/metrics" >"$BW_TMP/f.txt"
	bad=$(python3 - "$BW_TMP/f.txt" "$BW_ROOT/dashboards/README.md" "$BW_ROOT/user/model/promfmt.c" <<'PY'
import re, sys
page, readme, src = (open(f).read() for f in sys.argv[1:])
suffix = {"counter": [""], "histogram": ["_bucket", "_sum", "_count"],
	  "summary": ["_sum", "_count"], "gauge": [""]}
served = set()
for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", page, re.M):
	served.update(name + s for s in suffix.get(kind, [""]))
listed = set()
for row in readme.split("\n"):
	cols = row.split("|")
	if len(cols) < 5 or not cols[1].strip().startswith("`"):
		continue
	kind = (cols[2].split() or [""])[0]
	for name in re.findall(r"`((?:blkwise|process)_[a-z0-9_]*)`", cols[1]):
		if kind in ("histogram", "summary"):
			listed.update(name + s for s in suffix[kind])
		else:
			listed.add(name)
tune = set(n + s for n in re.findall(r'"(blkwise_tune_[a-z_]+)"', src) for s in ("", "_total"))
for n in sorted(served - listed):
	print("served, not in dashboards/README.md:", n)
for n in sorted(listed - served - tune):
	print("in dashboards/README.md, not served:", n)
PY
) || bad="$bad (the check failed: $?)"
	echo "  $(grep -c '^# TYPE' "$BW_TMP/f.txt") families served"
	assertEquals "the page and the contract agree" "" "$bad"
}

# 50 concurrent scrapers for 30 s: no errors, bounded RSS; the latency.
test_load() {
	local rss0 rss1
	ex_require ab || return 0
	ex_start "$BW_TMP/l.out" || { fail "export start"; return; }
	sleep 1.5
	rss0=$(awk '/^VmRSS/ { print $2 }' /proc/"$EX_PID"/status)
	ab -q -l -c 50 -t 30 -n 10000000 "$EX_URL/metrics" >"$BW_TMP/ab" 2>&1
	rss1=$(awk '/^VmRSS/ { print $2 }' /proc/"$EX_PID"/status)
	echo "  $(grep -E '^(Complete requests|Failed requests|Requests per second|Time per request)' "$BW_TMP/ab" | head -3 | tr -s ' ' | paste -sd';')"
	echo "  latency: $(grep -E '^ +(50|99|100)%' "$BW_TMP/ab" | tr -s ' ' | paste -sd';'); RSS ${rss0} kB -> ${rss1} kB"
	assertEquals "no failed requests" 0 "$(awk '/^Failed requests/ { print $3 }' "$BW_TMP/ab")"
	assertFalse "no non-2xx answers" "grep -q '^Non-2xx' $BW_TMP/ab"
	assertTrue "some thousands of scrapes served" "[ $(awk '/^Complete requests/ { print $3 }' "$BW_TMP/ab") -gt 1000 ]"
	assertTrue "RSS bounded: ${rss1} kB < 64 MiB" "[ ${rss1:-999999} -lt 65536 ]"
	assertTrue "RSS grew < 16 MiB under load (${rss0} -> ${rss1} kB)" "[ $((rss1 - rss0)) -lt 16384 ]"
	assertTrue "still sampling after the load" \
		"awk -v a=\"\$(curl -s $EX_URL/metrics | awk '/^blkwise_exporter_last_sample_timestamp_seconds/ { print \$2 }')\" -v t=$(date +%s) 'BEGIN { exit !(a > t - 3) }'"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# --tune in the same process, as nobody: it decides (from a stored class),
# writes through the files it opened as root, and puts back what it found
# on SIGTERM.
test_tune_in_process() {
	local dev n
	ex_require || return 0
	bw_loop dev 256 shm || { fail "loop"; return; }
	bw_use_bfq "$dev" || return 0
	echo 7777 >/sys/block/"$dev"/queue/iosched/slice_idle_us
	# Known deep from before (the store): the tuner sets 0 in its first window.
	mkdir -p "$BW_TMP/state"
	printf 'blkwise-s1 2\nclass\t%s\tdeep\t3.000\t%s\n' \
		"$(bw_loop_identity "$dev")" "$(date +%s)" >"$BW_TMP/state/s1"
	fio --name=d --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=libaio \
		--iodepth=8 --time_based --runtime=20 >/dev/null 2>&1 &
	bw_on_cleanup "kill $!"
	ex_start "$BW_TMP/t.out" -d "$dev" --tune --tune-window 0.5 --json --run-dir "$BW_TMP/run.t" ||
		{ fail "export start"; return; }
	assertEquals "tuning as nobody: CapEff" "$(ex_caps_left)" "$(awk '/^CapEff/ { print $2 }' /proc/"$EX_PID"/status)"
	for _ in $(seq 100); do
		grep -q '"action"' "$BW_TMP/t.out" && break
		sleep 0.1
	done
	sleep 1.5
	echo "  decisions: $(jq -r '"\(.action) \(.slice_idle_us_before)->\(.slice_idle_us_after)"' "$BW_TMP/t.out" | paste -sd' ')"
	n=$(curl -s "$EX_URL/metrics" | awk -v d="$dev" '$1 ~ "^blkwise_tune_decisions_total\\{device=\"" d "\"" { s += $2 } END { print s + 0 }')
	assertTrue "decisions counted in the metrics ($n)" "[ $n -ge 1 ]"
	assertEquals "decisions logged = counted" "$(grep -c '"action"' "$BW_TMP/t.out")" "$n"
	assertEquals "the setting the tuner chose is in force" \
		"$(jq -r .slice_idle_us_after "$BW_TMP/t.out" | tail -1)" "$(cat /sys/block/"$dev"/queue/iosched/slice_idle_us)"
	assertTrue "the idling gauge shows it" \
		"curl -s $EX_URL/metrics | grep -q '^blkwise_bfq_slice_idle_seconds{device=\"$dev\"}'"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
	assertEquals "put back" 7777 "$(cat /sys/block/"$dev"/queue/iosched/slice_idle_us)"
	assertFalse "nothing left to restore" "[ -s $BW_TMP/run.t/tune-$dev ]"
}

# The default (the light tier, with the exact tier's slices attached and
# detached as nobody, after the drop) serves P_eff and the class: slices of
# 1 s every 2 s here, so that an 8 s deep run holds four of them.  S1 from
# a lone reader in the first slice (3 s), then P_eff within 15% of the
# emulated disk's 4 servers and the class deep, both from the slices.
test_default_slices_served_as_nobody() {
	local dev p
	ex_require || return 0
	bw_require_fetch "the exact tier's slices" || return 0
	bw_require fio fusermount3 || return 0
	bw_fakedisk dev service_us=2000,parallel=4 || { fail "fakedisk"; return; }
	echo 2 >/sys/block/"$dev"/queue/nomerges
	ex_start "$BW_TMP/d.out" -d "$dev" --exact-period 2 --exact-slice 1 --no-state ||
		{ fail "export start"; return; }
	assertEquals "runs as nobody" "$(id -u nobody)" "$(awk '/^Uid/ { print $2 }' /proc/"$EX_PID"/status)"
	fio --name=s --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=psync \
		--time_based --runtime=2.5 >/dev/null 2>&1
	fio --name=d --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
		--iodepth=16 --time_based --runtime=8 >/dev/null 2>&1
	curl -s "$EX_URL/metrics" >"$BW_TMP/dm"
	p=$(awk -v d="$dev" '$1 == "blkwise_effective_parallelism{device=\"" d "\"}" { print $2 }' "$BW_TMP/dm")
	echo "  P_eff ${p:-absent}; $(grep "^blkwise_device_class{device=\"$dev\".* 1$" "$BW_TMP/dm");" \
		"$(grep "^blkwise_device_state_info{device=\"$dev\"" "$BW_TMP/dm")"
	assertNotNull "effective parallelism served" "$p"
	assertTrue "P_eff $p within 15% of 4" "bw_within ${p:-0} 4 15"
	assertTrue "class deep" "grep -q '^blkwise_device_class{device=\"$dev\",class=\"deep\"} 1$' $BW_TMP/dm"
	assertTrue "S1 learned live" "grep -q '^blkwise_device_state_info{device=\"$dev\",s1_source=\"live\"' $BW_TMP/dm"
	assertFalse "no error: $(grep -i 'slice\|error' "$BW_TMP/d.out.err")" \
		"grep -qi 'slice\|error' $BW_TMP/d.out.err"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# Run as root, the exporter drops to nobody, and still keeps what it
# learned (S1 from a lone reader, the class from a deep run) in a state
# directory that is root's: restarted, it serves both as stored.
test_store_kept_after_the_drop() {
	local dev st=$BW_TMP/state-root
	ex_require || return 0
	bw_require_fetch "S1 and the class" || return 0
	bw_require fio fusermount3 || return 0
	# A 4-server emulated disk: P_eff near 4 at depth, deep on any CPU (a
	# memory-backed loop device's P_eff is the CPU count's, between the marks
	# on two cores).
	bw_fakedisk dev service_us=1000,parallel=4 || { fail "fakedisk"; return; }
	mkdir -m 0755 "$st"
	ex_start "$BW_TMP/s.out" -d "$dev" --exact --state-dir "$st" || { fail "export start"; return; }
	assertEquals "runs as nobody" "$(id -u nobody)" "$(awk '/^Uid/ { print $2 }' /proc/"$EX_PID"/status)"
	fio --name=s --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=psync \
		--time_based --runtime=3 >/dev/null 2>&1
	fio --name=d --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=libaio \
		--iodepth=16 --numjobs=2 --time_based --runtime=8 >/dev/null 2>&1
	curl -s "$EX_URL/metrics" | grep '^blkwise_device_state_info' >"$BW_TMP/live"
	echo "  first run: $(cat "$BW_TMP/live")"
	assertTrue "S1 learned live" "grep -q 's1_source=\"live\"' $BW_TMP/live"
	assertTrue "class learned live" "grep -q 'class_source=\"live\"' $BW_TMP/live"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
	assertFalse "no complaint about the store: $(grep -i store "$BW_TMP/s.out.err")" \
		"grep -qi 'S1 store' $BW_TMP/s.out.err"
	assertTrue "S1 saved: $(tail -3 "$st/s1" 2>&1 | paste -sd'|')" \
		"grep -q \"^s1	loop:\" $st/s1"
	assertTrue "class saved" "grep -q \"^class	loop:\" $st/s1"
	assertEquals "the store stays root's" "0 0" "$(stat -c '%u %g' "$st/s1")"
	ex_start "$BW_TMP/s2.out" -d "$dev" --exact --state-dir "$st" || { fail "export restart"; return; }
	curl -s "$EX_URL/metrics" >"$BW_TMP/m2"
	echo "  restarted: $(grep '^blkwise_device_state_info' "$BW_TMP/m2")"
	assertTrue "S1 from the store" \
		"grep -q '^blkwise_device_state_info{device=\"$dev\",s1_source=\"stored\"' $BW_TMP/m2"
	assertTrue "class from the store" \
		"grep -q '^blkwise_device_state_info{device=\"$dev\",.*class_source=\"stored\"' $BW_TMP/m2"
	assertTrue "its S1 served" "grep -q '^blkwise_solo_service_seconds{device=\"$dev\",op=\"read\"' $BW_TMP/m2"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
}

# gb_wait EXPR VALUE: until Prometheus's instant query of EXPR gives VALUE
# (10 s at most); what it gave last.
gb_wait() {
	local v
	for _ in $(seq 100); do
		v=$(ex_q "$1")
		[ "$v" = "$2" ] && break
		sleep 0.1
	done
	echo "$v"
}

# A named loop device detached under fio, then bound again at the same
# name, to another file: the exporter serves on (Prometheus's up stays 1),
# says the device went (blkwise_device_present 0, its series gone), reads
# the identity of the one that came back, and counts it exactly as
# /proc/diskstats does.  The device number is chosen high, out of the way
# of losetup --find, which could otherwise take it while it is free.
test_device_gone_and_back() {
	local dir img img2 n dev t0 span
	ex_require prometheus || return 0
	dir=$(bw_mem_dir) || { fail "no directory takes O_DIRECT"; return; }
	img=$(mktemp "$dir/$BW_TAG".XXXXXX)
	img2=$(mktemp "$dir/$BW_TAG".XXXXXX)
	bw_on_cleanup "rm -f $img $img2"
	truncate -s 256M "$img" "$img2"
	for n in $(seq $((100 + RANDOM % 100)) 255); do
		[ -e /sys/block/loop"$n"/loop/backing_file ] && continue
		losetup /dev/loop"$n" "$img" 2>/dev/null && break
		n=""
	done
	[ -n "$n" ] || { fail "no free loop device number"; return; }
	dev=loop$n
	bw_on_cleanup "losetup -n -O BACK-FILE /dev/$dev 2>/dev/null | grep -qE '$img|$img2' && losetup -d /dev/$dev"
	echo none >/sys/block/"$dev"/queue/scheduler
	ex_start "$BW_TMP/g.out" -d "$dev" || { fail "export start"; return; }
	ex_prom_start || { fail "prometheus start"; return; }
	t0=$(date +%s)
	assertEquals "present at the start" 1 "$(gb_wait "blkwise_device_present{device=\"$dev\"}" 1)"
	# Detached under I/O: the kernel unbinds it as fio closes it.
	fio --name=g --filename=/dev/"$dev" --direct=1 --rw=randread --bs=4k --ioengine=psync \
		--time_based --runtime=4 >/dev/null 2>&1 &
	sleep 2
	losetup -d /dev/"$dev" || { fail "losetup -d"; return; }
	wait $!
	assertEquals "present 0 once gone" 0 "$(gb_wait "blkwise_device_present{device=\"$dev\"}" 0)"
	sleep 3
	assertTrue "still serving while the device is gone" "kill -0 $EX_PID"
	assertTrue "says it went: $(cat "$BW_TMP/g.out.err")" "grep -q '$dev: device gone' $BW_TMP/g.out.err"
	assertEquals "its series left out while gone" 0 \
		"$(ex_q_count "blkwise_requests_total{device=\"$dev\"}")"
	assertEquals "still present 0" 0 "$(ex_q "blkwise_device_present{device=\"$dev\"}")"
	# Bound again at the same name, to another file: back, identified
	# afresh, and counted exactly.
	losetup /dev/"$dev" "$img2" || { fail "$dev taken meanwhile: cannot bind it again"; return; }
	echo none >/sys/block/"$dev"/queue/scheduler
	ex_counts_exact "$dev" --rw=randrw --rwmixread=70 --bs=4k --ioengine=psync \
		--rate_iops=500 --time_based --runtime=4 || return
	assertEquals "present 1 again" 1 "$(ex_q "blkwise_device_present{device=\"$dev\"}")"
	assertTrue "says it is back: $(cat "$BW_TMP/g.out.err")" "grep -q '$dev: device back' $BW_TMP/g.out.err"
	assertEquals "the identity of the file it is bound to now" "$(bw_loop_identity "$dev")" \
		"$(curl -s "$EX_PROM/api/v1/query" --data-urlencode "query=blkwise_device_info{device=\"$dev\"}" |
			jq -r '.data.result[0].metric.identity')"
	span=$(( $(date +%s) - t0 + 1 ))
	echo "  over ${span} s: up min $(ex_q "min_over_time(up{job=\"blkwise\"}[${span}s])"), present min $(ex_q "min_over_time(blkwise_device_present{device=\"$dev\"}[${span}s])")"
	assertEquals "up stayed 1 throughout" 1 "$(ex_q "min_over_time(up{job=\"blkwise\"}[${span}s])")"
	assertEquals "present was 0 while gone" 0 \
		"$(ex_q "min_over_time(blkwise_device_present{device=\"$dev\"}[${span}s])")"
	kill -TERM "$EX_PID"
	wait "$EX_PID"
	assertEquals "SIGTERM: clean exit" 0 $?
}

# shellcheck disable=SC1091
. shunit2
