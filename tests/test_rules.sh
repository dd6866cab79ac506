#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the Prometheus rules and the Grafana dashboard of
# `blkwise export` (dashboards/).  promtool checks and unit-tests the rules;
# every dashboard expression is parsed by promtool too (as a recording rule
# of a generated file: promtool 2.42 has no parse-only command).  Every
# metric they name is one of the contract's (dashboards/README.md) or a
# recording rule of dashboards/blkwise-rules.yml.  The expressions come from
# tools/promql-exprs.sh.
. "$(dirname "$0")/lib.sh"

RL_DIR=$BW_ROOT/dashboards
RL_RULES=$RL_DIR/blkwise-rules.yml
RL_TESTS=$RL_DIR/blkwise-rules.test.yml
RL_DASH=$RL_DIR/blkwise.json

rl_require() {
	bw_require promtool jq python3 || return 1
	python3 -c 'import yaml' 2>/dev/null || { bw_skip "python3-yaml not installed"; return 1; }
}

# The expressions, with sentinels for the variables: whatever Grafana puts
# in $device, $instance and $__rate_interval reaches every selector.
rl_exprs() { "$BW_ROOT"/tools/promql-exprs.sh; }
rl_sentinel_exprs() {
	DEVICE=__bw_device__ INSTANCE=__bw_instance__ JOB=__bw_job__ RATE=__bw_rate__ rl_exprs
}

# rl_selectors: the expressions (JSON lines on stdin) with their selectors
# and range durations: {"source", "expr", "selectors": [{"metric",
# "matchers": [[label, op, value]...]}...], "ranges": [...]}.  A small
# scanner, enough for what a dashboard holds: strings, [ranges], label
# lists of by/without/on/ignoring/group_*, functions and aggregations
# (a name followed by "("), keywords, numbers; any other name is a metric.
rl_selectors() {
	python3 -c "$(cat <<'EOF'
import json, re, sys

GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
WORDS = {"and", "or", "unless", "offset", "bool", "atan2", "inf", "nan", "sum", "min", "max",
	"avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group"}
IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
NUMBER = re.compile(r"[0-9.][0-9a-zA-Z.]*")
STR = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`'
MATCHER = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(" + STR + r")\s*(?:,|$)")

def string_end(s, i):
	q, i = s[i], i + 1
	while s[i] != q:
		i += 2 if s[i] == "\\" and q != "`" else 1
	return i + 1

def brace_end(s, i):
	i += 1
	while s[i] != "}":
		i = string_end(s, i) if s[i] in "\"'`" else i + 1
	return i

def matchers(body):
	out, pos = [], 0
	for m in MATCHER.finditer(body):
		if m.start() != pos:
			break
		out.append([m.group(1), m.group(2), m.group(3)[1:-1]])
		pos = m.end()
	if body[pos:].strip():
		raise SystemExit("cannot read the matchers {%s}" % body)
	return out

for line in sys.stdin:
	o = json.loads(line)
	e, i, sels, ranges = o["expr"], 0, [], []
	while i < len(e):
		c = e[i]
		if c in "\"'`":
			i = string_end(e, i)
		elif c == "[":
			j = e.index("]", i)
			ranges.append(e[i + 1:j])
			i = j + 1
		elif c == "{":
			j = brace_end(e, i)
			sels.append({"metric": None, "matchers": matchers(e[i + 1:j])})
			i = j + 1
		elif IDENT.match(e, i):
			word = IDENT.match(e, i).group(0)
			i = k = i + len(word)
			while k < len(e) and e[k].isspace():
				k += 1
			nxt = e[k] if k < len(e) else ""
			if word in GROUPING and nxt == "(":
				i = e.index(")", k) + 1
			elif nxt == "(" or word in WORDS:
				pass
			elif nxt == "{":
				j = brace_end(e, k)
				sels.append({"metric": word, "matchers": matchers(e[k + 1:j])})
				i = j + 1
			else:
				sels.append({"metric": word, "matchers": []})
		elif NUMBER.match(e, i):
			i = NUMBER.match(e, i).end()
		else:
			i += 1
	o.update(selectors=sels, ranges=ranges)
	print(json.dumps(o))
EOF
)"
}

# rl_documented: "NAME LABELS" for every series name the contract
# (dashboards/README.md) lists, histograms and summaries by their _bucket,
# _sum, _count, and for every recording rule; LABELS is "device" when the
# series has that label, "-" otherwise.
rl_documented() {
	python3 -c "$(cat <<'EOF'
import re, sys, yaml

for row in open(sys.argv[1]):
	cols = row.split("|")
	if len(cols) < 5 or not cols[1].strip().startswith("`"):
		continue
	kind = cols[2].strip()
	labels = "device" if "`device`" in cols[3] else "-"
	for name in re.findall(r"`([a-zA-Z_:][a-zA-Z0-9_:]*)`", cols[1]):
		if kind.startswith("histogram"):
			suffixes = ["_bucket", "_sum", "_count"]
		elif kind.startswith("summary"):
			suffixes = ["_sum", "_count"]
		else:
			suffixes = [""]
		for s in suffixes:
			print(name + s, labels)
for group in yaml.safe_load(open(sys.argv[2]))["groups"]:
	for rule in group["rules"]:
		if "record" in rule:
			print(rule["record"], "device" if rule["record"].startswith(("device:", "device_op:")) else "-")
print("up -")	# Prometheus's own, for BlkwiseExporterDown
EOF
)" "$RL_DIR/README.md" "$RL_RULES"
}

test_rules_check() {
	local out rc n
	rl_require || return 0
	out=$(promtool check rules "$RL_RULES" 2>&1)
	rc=$?
	assertEquals "promtool check rules: $out" 0 "$rc"
	n=$(rl_exprs | grep -c '"source":"rules: ')
	assertTrue "all $n rules found: $out" "echo '$out' | grep -q 'SUCCESS: $n rules found'"
	assertTrue "at least the recording rules and the three alerts" "[ $n -ge 9 ]"
}

test_rules_unit_tests_pass() {
	local out rc
	rl_require || return 0
	out=$(promtool test rules "$RL_TESTS" 2>&1)
	rc=$?
	assertEquals "promtool test rules: $out" 0 "$rc"
	assertTrue "SUCCESS: $out" "echo '$out' | grep -q SUCCESS"
}

# The unit tests evaluate every recording rule, and see every alert both
# firing and not firing.
test_rules_unit_tests_cover_every_rule() {
	local missing
	rl_require || return 0
	missing=$(python3 - "$RL_RULES" "$RL_TESTS" <<'EOF'
import sys, yaml

rules = [r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"]]
tests = yaml.safe_load(open(sys.argv[2]))["tests"]
exprs = [t["expr"] for g in tests for t in g.get("promql_expr_test") or []]
alerts = [t for g in tests for t in g.get("alert_rule_test") or []]
for r in rules:
	if "record" in r and not any(r["record"] in e for e in exprs):
		print("record %s: never evaluated" % r["record"])
	if "alert" in r:
		mine = [t for t in alerts if t["alertname"] == r["alert"]]
		if not any(t.get("exp_alerts") for t in mine):
			print("alert %s: never firing" % r["alert"])
		if not any(not t.get("exp_alerts") for t in mine):
			print("alert %s: never seen not firing" % r["alert"])
EOF
)
	assertEquals "rules the unit tests miss" "" "$missing"
}

test_dashboard_variables_and_datasource() {
	local bad
	rl_require || return 0
	assertTrue "valid JSON" "jq -e . $RL_DASH >/dev/null"
	assertEquals "uid" blkwise "$(jq -r .uid "$RL_DASH")"
	assertTrue "schemaVersion 36 to 39" "jq -e '.schemaVersion >= 36 and .schemaVersion <= 39' $RL_DASH >/dev/null"
	assertEquals "variable datasource" "datasource prometheus" \
		"$(jq -r '.templating.list[] | select(.name == "datasource") | "\(.type) \(.query)"' "$RL_DASH")"
	# shellcheck disable=SC2016 # $job is Grafana's, not the shell's
	assertEquals "variable job" 'query label_values(blkwise_build_info, job) true true' \
		"$(jq -r '.templating.list[] | select(.name == "job")
			| "\(.type) \(.query) \(.multi) \(.includeAll)"' "$RL_DASH")"
	# shellcheck disable=SC2016
	assertEquals "variable instance" 'query label_values(blkwise_build_info{job=~"$job"}, instance) true true' \
		"$(jq -r '.templating.list[] | select(.name == "instance")
			| "\(.type) \(.query) \(.multi) \(.includeAll)"' "$RL_DASH")"
	# shellcheck disable=SC2016 # $instance is Grafana's, not the shell's
	assertEquals "variable device" \
		'query label_values(blkwise_device_info{job=~"$job", instance=~"$instance"}, device) true true .*' \
		"$(jq -r '.templating.list[] | select(.name == "device")
			| "\(.type) \(.query) \(.multi) \(.includeAll) \(.allValue)"' "$RL_DASH")"
	# Every panel (rows aside), every variable query and every target that
	# names a data source: ${datasource}.
	bad=$(jq -r '
		[.panels[] | recurse(.panels[]?) | select(.type != "row")] as $p
		| ($p[] | select(.datasource.uid != "${datasource}") | "panel \(.title)"),
		  ($p[] | .title as $t | .targets[]? | select(has("datasource") and .datasource.uid != "${datasource}")
			| "target \($t) \(.refId)"),
		  (.templating.list[] | select(.type == "query" and .datasource.uid != "${datasource}")
			| "variable \(.name)")' "$RL_DASH" || echo "jq failed")
	assertEquals "not on \${datasource}" "" "$bad"
	assertTrue "10 to 20 panels" \
		"jq -e '[.panels[] | recurse(.panels[]?) | select(.type != \"row\")] | length | . >= 10 and . <= 20' $RL_DASH >/dev/null"
	assertEquals "panel ids unique" "" "$(jq -r '[.panels[] | recurse(.panels[]?) | .id] | group_by(.) | map(select(length > 1)) | .[][0]' "$RL_DASH")"
	assertEquals "every panel has a query" "" \
		"$(jq -r '.panels[] | recurse(.panels[]?) | select(.type != "row" and ([.targets[]? | .expr] | length) == 0) | .title' "$RL_DASH")"
	assertEquals "heatmap from the service-time buckets, format heatmap" "heatmap true" \
		"$(jq -r '.panels[] | select(.type == "heatmap") | .targets[0]
			| "\(.format) \(.expr | test("blkwise_service_seconds_bucket") and test("by \\(le\\)"))"' "$RL_DASH")"
	# It sums buckets by le alone, so it must show one device of one
	# instance: the panel repeats per device, its row per instance.
	assertEquals "heatmap: one device of one instance" "device instance" \
		"$(jq -r '[.panels[] | select(.type == "heatmap") | .repeat] + [.panels[] | select(.type == "row" and (.title | test("heatmap"))) | .repeat] | join(" ")' "$RL_DASH")"
	# Panels grouped in rows: the first panel is a row, and every row has panels.
	assertEquals "rows" "row" "$(jq -r '.panels[0].type' "$RL_DASH")"
	assertTrue "at least 4 rows" "[ $(jq '[.panels[] | select(.type == "row")] | length' "$RL_DASH") -ge 4 ]"
	# A rate is rate(): increase() over $__rate_interval is per interval, not per second.
	assertEquals "increase() in panels" "" \
		"$(jq -r '.panels[] | .title as $t | .targets[]? | select(.expr | test("increase\\(")) | $t' "$RL_DASH")"
	# Errors, requeues, merges, in flight, S1 and queue-time percentiles have panels.
	for m in blkwise_errors_total blkwise_requeues_total blkwise_merges_total blkwise_inflight_requests \
		blkwise_solo_service_seconds blkwise_queue_seconds_bucket; do
		assertTrue "a panel reads $m" "jq -e '[.panels[].targets[]?.expr] | any(test(\"$m\"))' $RL_DASH >/dev/null"
	done
}

# Every expression parses: promtool check rules on a file that records each
# one (as JSON, which is YAML).  The variable queries are in, as selectors.
test_dashboard_exprs_parse() {
	local f=$BW_TMP/exprs-rules.yml out rc n targets
	rl_require || return 0
	rl_exprs | jq -s '{groups: [{name: "dashboard-exprs", rules:
		[to_entries[] | {record: "blkwise_test:expr_\(.key)", expr: .value.expr}]}]}' >"$f"
	n=$(jq '.groups[0].rules | length' "$f")
	out=$(promtool check rules "$f" 2>&1)
	rc=$?
	assertEquals "promtool check rules on every expression: $out" 0 "$rc"
	assertTrue "$n expressions: $out" "echo '$out' | grep -q 'SUCCESS: $n rules found'"
	# promql-exprs.sh saw every target and both query variables.
	targets=$(jq '[.panels[] | recurse(.panels[]?) | .targets[]? | select((.expr // "") != "")] | length' "$RL_DASH")
	assertEquals "dashboard expressions" "$((targets + 3))" "$(rl_exprs | grep -c '"source":"dashboard: ')"
	assertEquals "no variable left unsubstituted" "" "$(rl_exprs | jq -r 'select(.expr | test("\\$")) | .source')"
}

# Every panel selector is filtered by $instance, and by $device when the
# series has a device label; every range is $__rate_interval.  The device
# variable lists the chosen instances' devices.
test_dashboard_selectors_filtered() {
	local sel doc bad
	rl_require || return 0
	sel=$BW_TMP/selectors.json
	doc=$BW_TMP/documented
	rl_sentinel_exprs | rl_selectors >"$sel" || { fail "cannot scan the expressions"; return; }
	rl_documented >"$doc"
	assertTrue "selectors found" "[ $(jq -s '[.[].selectors[]] | length' "$sel") -gt 20 ]"
	bad=$(jq -r --rawfile doc "$doc" '
		($doc | split("\n") | map(select(. != "") | split(" ") | {(.[0]): .[1]}) | add) as $labels
		| select(.source | startswith("dashboard: ") and (startswith("dashboard: variable ") | not))
		| .source as $s | .selectors[]
		| select((any(.matchers[]; . == ["instance", "=~", "__bw_instance__"]) | not)
			or (any(.matchers[]; . == ["job", "=~", "__bw_job__"]) | not)
			or ($labels[.metric // ""] == "device"
				and (any(.matchers[]; . == ["device", "=~", "__bw_device__"]) | not)))
		| "\($s): \(.metric) \(.matchers)"' "$sel" || echo "jq failed")
	assertEquals "selectors without \$job / \$instance / \$device" "" "$bad"
	bad=$(jq -r 'select(.source | startswith("dashboard: ")) | .source as $s
		| .ranges[] | select(. != "__bw_rate__") | "\($s): [\(.)]"' "$sel" || echo "jq failed")
	assertEquals "ranges other than \$__rate_interval" "" "$bad"
	assertEquals "variable device" 'blkwise_device_info [["job","=~","__bw_job__"],["instance","=~","__bw_instance__"]]' \
		"$(jq -r 'select(.source == "dashboard: variable device") | .selectors[] | "\(.metric) \(.matchers | tojson)"' "$sel")"
	assertEquals "variable instance" 'blkwise_build_info [["job","=~","__bw_job__"]]' \
		"$(jq -r 'select(.source == "dashboard: variable instance") | .selectors[] | "\(.metric) \(.matchers | tojson)"' "$sel")"
}

# Every series the dashboard and the rules read is in the contract, or is
# recorded by the rules.
test_metric_names_documented() {
	local sel doc bad
	rl_require || return 0
	sel=$BW_TMP/selectors.json
	doc=$BW_TMP/documented
	rl_exprs | rl_selectors >"$sel" || { fail "cannot scan the expressions"; return; }
	rl_documented >"$doc"
	assertTrue "the contract lists the histograms' buckets" "grep -qx 'blkwise_service_seconds_bucket device' $doc"
	assertTrue "and the recording rules" "grep -qx 'device:blkwise_service_seconds:p99_rate5m device' $doc"
	bad=$(jq -r --rawfile doc "$doc" '
		($doc | split("\n") | map(select(. != "") | split(" ")[0])) as $names
		| .source as $s | .selectors[] | .metric as $m | select($m == null or (any($names[]; . == $m) | not))
		| "\($s): \($m // "selector without a name")"' "$sel" || echo "jq failed")
	assertEquals "series not in dashboards/README.md" "" "$bad"
	assertTrue "every rule reads something" \
		"[ $(jq -s '[.[] | select(.source | startswith("rules: ")) | select(.selectors | length == 0)] | length' "$sel") -eq 0 ]"
}

# shellcheck disable=SC1091
. shunit2
