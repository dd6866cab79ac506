#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every PromQL expression of the Grafana dashboard and of the Prometheus
# rules, one JSON object a line:
#
#   {"source":"dashboard: <panel title>","expr":"..."}   a panel target's expr
#   {"source":"dashboard: variable <name>","expr":"..."} a query variable, as
#       a selector: label_values(SEL, LABEL) -> SEL, label_values(LABEL) ->
#       {LABEL!=""}, query_result(EXPR) -> EXPR
#   {"source":"rules: <record or alert name>","expr":"..."}
#
#   tools/promql-exprs.sh [DASHBOARD [RULES]]
#       (default dashboards/blkwise.json dashboards/blkwise-rules.yml)
#
# Grafana's variables are substituted: $device / ${device} by $DEVICE
# (default .*), $instance by $INSTANCE (default .*), $job by $JOB (default
# .*), $__rate_interval by
# $RATE (default 1m), $__interval by 30s, $__range by 5m.
# Needs jq, python3 and python3-yaml (tools/deps.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DASHBOARD=${1:-$ROOT/dashboards/blkwise.json}
RULES=${2:-$ROOT/dashboards/blkwise-rules.yml}

python3 -c 'import yaml' 2>/dev/null || {
	echo "promql-exprs: python3-yaml missing (tools/deps.sh installs it)" >&2
	exit 1
}

dashboard_exprs() {
	jq -c '
		def vquery: if (.query | type) == "object" then .query.query else .query end;
		def selector:
			if test("^\\s*label_values\\(.*,\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*\\)\\s*$") then
				capture("^\\s*label_values\\((?<sel>.*),\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*\\)\\s*$").sel
			elif test("^\\s*label_values\\(\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*\\)\\s*$") then
				capture("^\\s*label_values\\(\\s*(?<l>[a-zA-Z_][a-zA-Z0-9_]*)").l | "{\(.)!=\"\"}"
			elif test("^\\s*query_result\\(.*\\)\\s*$") then
				capture("^\\s*query_result\\((?<e>.*)\\)\\s*$").e
			else
				error("cannot turn variable query into PromQL: \(.)")
			end | sub("^\\s+"; "") | sub("\\s+$"; "");
		([.panels[]? | recurse(.panels[]?)] | .[] | .title as $t | .targets[]?
			| select((.expr // "") != "") | {source: "dashboard: \($t)", expr}),
		(.templating.list[]? | select(.type == "query") | .name as $n | vquery
			| select((. // "") != "") | {source: "dashboard: variable \($n)", expr: selector})
	' "$DASHBOARD"
}

rules_exprs() {
	python3 - "$RULES" <<'EOF'
import json, sys, yaml

with open(sys.argv[1]) as f:
	doc = yaml.safe_load(f) or {}
for group in doc.get("groups") or []:
	for rule in group.get("rules") or []:
		name = rule.get("record") or rule.get("alert")
		print(json.dumps({"source": "rules: " + str(name), "expr": str(rule["expr"]).strip()}))
EOF
}

{
	dashboard_exprs
	rules_exprs
} | jq -c --arg dev "${DEVICE:-.*}" --arg inst "${INSTANCE:-.*}" --arg job "${JOB:-.*}" --arg rate "${RATE:-1m}" '
	def var(name; value): gsub("\\$(\\{" + name + "(:[a-z]+)?\\}|" + name + "\\b)"; value);
	.expr |= (var("device"; $dev) | var("instance"; $inst) | var("job"; $job) | var("__rate_interval"; $rate)
		| var("__interval"; "30s") | var("__range"; "5m"))
'
