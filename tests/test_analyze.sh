#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# blkwise analyze's outputs on the blktrace captures of tests/data/blktrace
# (no root, no BPF): one-pass percentiles against the exact ones, unknowns
# said as unknown, the CSV tables against the JSON, the what-if decisions in
# every format, the Perfetto lanes, the HTML report in headless Chromium,
# and the one-line errors of bad input.
. "$(dirname "$0")/lib.sh"

DATA=$BW_ROOT/tests/data/blktrace
CAPS="seqread randread-qd8 mixed-merge"

# an_require CMD...: skip unless the captures, blkwise and CMD... are there.
an_require() {
	local c
	[ -f "$DATA/seqread.blktrace.0" ] || { bw_skip "no blktrace captures"; return 1; }
	[ -x "$BW_BIN" ] || { bw_skip "blkwise not built (make)"; return 1; }
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { bw_skip "$c not installed"; return 1; }
	done
}

# One pass: every percentile is its bucket's lower bound, at most 0.4% under
# the exact one and never 0 where the exact one is not, in JSON and CSV; the
# text heading says which.
test_one_pass_percentiles() {
	local n ex one bad
	an_require jq || return 0
	for n in $CAPS; do
		ex=$BW_TMP/$n.exact.json
		one=$BW_TMP/$n.one.json
		"$BW_BIN" analyze "$DATA/$n" --json >"$ex" || { fail "$n: exact"; continue; }
		"$BW_BIN" analyze "$DATA/$n" --json --no-exact >"$one" || { fail "$n: one pass"; continue; }
		assertEquals "$n: exact says so" true \
			"$(jq '[.devices[].latency[][].exact] | all' "$ex")"
		assertEquals "$n: one pass says so" false \
			"$(jq '[.devices[].latency[][].exact] | any' "$one")"
		bad=$(jq -n --slurpfile e "$ex" --slurpfile o "$one" '
			[$e[0].devices[0].latency | paths(type == "number") as $p
			 | select($p[-1] | test("^p|^max")) | {p: $p, e: getpath($p),
			   o: ($o[0].devices[0].latency | getpath($p))}
			 | select(.o > .e or .o < .e * 0.996 or (.e > 0 and .o <= 0))]')
		assertEquals "$n: one-pass percentiles within 0.4% under the exact: $bad" 0 \
			"$(echo "$bad" | jq length)"
		assertTrue "$n: compared some" "[ $(jq '[.devices[0].latency[][].p50_ms] | length' "$one") -ge 3 ]"
		"$BW_BIN" analyze "$DATA/$n" --no-exact >"$BW_TMP/$n.txt"
		assertTrue "$n: text heading says one pass" \
			"grep -q 'one pass: each percentile its histogram bucket' $BW_TMP/$n.txt"
		assertFalse "$n: text heading does not say exact" "grep -q 'exact, from the events' $BW_TMP/$n.txt"
		assertEquals "$n: CSV p50 = JSON p50" \
			"$(jq -r '.devices[0].latency.read.d2c.p50_ms' "$one" | awk '{ printf "%.6f", $1 }')" \
			"$("$BW_BIN" analyze "$DATA/$n" --no-exact --format csv --table latency |
				awk -F, '$2 == "read" && $3 == "d2c" { print $7 }')"
	done
}

# blktrace records no segment counts, and seqread never determines P_eff:
# both said unknown (text '-', JSON null, CSV empty), never 0.
test_blktrace_unknowns() {
	local n col
	an_require jq python3 || return 0
	for n in $CAPS; do
		assertEquals "$n: JSON seg_per_rq null (intervals and total)" "null null" \
			"$("$BW_BIN" analyze "$DATA/$n" --json |
				jq -r '[.intervals[0].devices[0].seg_per_rq, .devices[0].total[0].seg_per_rq] | map(tostring) | join(" ")')"
		col=$("$BW_BIN" analyze "$DATA/$n" | awk '/^Whole trace/ { w = 1; next }
			w && $1 == "Device" { for (i = 1; i <= NF; i++) if ($i == "seg/rq") c = i; next }
			w && c { print $(c); exit }')
		assertEquals "$n: text seg/rq" "-" "$col"
		assertEquals "$n: CSV seg_per_rq empty" "''" "$("$BW_BIN" analyze "$DATA/$n" --format csv |
			python3 -c 'import csv, sys; print(repr(next(csv.DictReader(sys.stdin))["seg_per_rq"]))')"
	done
	assertEquals "seqread: P_eff undetermined, null in JSON" null \
		"$("$BW_BIN" analyze "$DATA/seqread" --json | jq '.devices[0].total[0].p_eff')"
}

# The column names of a JSON object as the CSV writes them (nested keys
# joined by '.', an array one column), in order.
json_columns() { jq -r '[paths(type != "object") | select(all(.[]; type == "string")) | join(".")] | join(",")'; }

# Each CSV table: its header is the JSON's field names, every row as many
# cells as the header, the values the JSON's, empty for null, no 'nan'.
test_csv_tables() {
	local js=$BW_TMP/mm.json t out
	an_require jq python3 || return 0
	"$BW_BIN" analyze "$DATA/mixed-merge" -i 0.02 --json >"$js"
	for t in intervals totals latency streams outliers; do
		"$BW_BIN" analyze "$DATA/mixed-merge" -i 0.02 --format csv --table "$t" >"$BW_TMP/$t.csv"
		assertEquals "--table $t: exit" 0 $?
		assertFalse "$t: no nan" "grep -qi nan $BW_TMP/$t.csv"
	done
	assertEquals "intervals: header = the JSON interval's fields" \
		"$(jq '.intervals[0] as $i | {t: $i.t, interval_s: $i.interval_s} + $i.devices[0]' "$js" | json_columns)" \
		"$(head -1 "$BW_TMP/intervals.csv")"
	assertEquals "streams: header = the JSON stream's fields" \
		"$(jq '.streams[0]' "$js" | json_columns)" "$(head -1 "$BW_TMP/streams.csv")"
	assertEquals "outliers: header = device + the JSON outlier's fields" \
		"device,$(jq '.devices[0].outliers[0]' "$js" | json_columns)" "$(head -1 "$BW_TMP/outliers.csv")"
	assertEquals "latency: header = device, op, latency + the JSON distribution's fields" \
		"device,op,latency,$(jq '.devices[0].latency.read.d2c' "$js" | json_columns)" \
		"$(head -1 "$BW_TMP/latency.csv")"
	out=$(python3 - "$js" "$BW_TMP" <<'EOF'
import csv, json, sys
j = json.load(open(sys.argv[1]))
d = sys.argv[2]
def rows(t):
    r = list(csv.reader(open(f"{d}/{t}.csv", newline="")))
    assert all(len(x) == len(r[0]) for x in r), f"{t}: ragged rows"
    return [dict(zip(r[0], x)) for x in r[1:]]
def cell(v):
    return "" if v is None else v
iv = rows("intervals")
want = [(i["t"], dv) for i in j["intervals"] for dv in i["devices"]]
assert len(iv) == len(want), f"intervals: {len(iv)} rows, JSON {len(want)}"
nulls = 0
for r, (t, dv) in zip(iv, want):
    assert float(r["t"]) == t, (r["t"], t)
    for k in ("reads_per_s", "depth_mean_busy", "p_eff", "svc_p99_ms", "seg_per_rq"):
        if dv[k] is None:
            assert r[k] == "", (k, r[k]); nulls += 1
        else:
            assert abs(float(r[k]) - dv[k]) <= 1e-3 * max(1, abs(dv[k])), (k, r[k], dv[k])
    assert r["ops.read.ios"] == str(dv["ops"]["read"]["ios"])
assert nulls > 0, "some null compared"
lat = rows("latency")
n = sum(len(o) for dv in j["devices"] for o in dv["latency"].values())
assert len(lat) == n, f"latency rows {len(lat)} vs {n}"
for r in lat:
    x = j["devices"][0]["latency"][r["op"]][r["latency"]]
    assert int(r["n"]) == x["n"] and abs(float(r["p99_ms"]) - x["p99_ms"]) < 1e-6, r
st = rows("streams")
assert [r["comm"] for r in st] == [s["comm"] for s in j["streams"]]
to = rows("totals")
assert int(to[0]["requests"]) == j["devices"][0]["requests"]
assert int(to[0]["merges"]) == j["devices"][0]["total"][0]["merges"]
print(f"ok: {len(iv)} interval rows ({nulls} nulls), {len(lat)} latency rows")
EOF
)
	assertEquals "CSV rows = the JSON's: $out" ok "${out%%:*}"
	# One table per file, all of them; a table with no rows still has its header.
	"$BW_BIN" analyze "$DATA/seqread" --csv-dir "$BW_TMP/dir" --what-if-tune >/dev/null
	assertEquals "--csv-dir: exit" 0 $?
	assertEquals "--csv-dir: one file per table" \
		"intervals.csv latency.csv outliers.csv streams.csv totals.csv what_if.csv" \
		"$(cd "$BW_TMP/dir" && echo *.csv)"
	assertEquals "what_if.csv: the header alone when nothing was decided" \
		"t,device,action,slice_idle_us_before,slice_idle_us_after,strict_guarantees_before,strict_guarantees_after,why" \
		"$(cut -d, -f1-8 "$BW_TMP/dir/what_if.csv")"
	"$BW_BIN" analyze "$DATA/seqread" --csv-dir "$BW_TMP/dir2" >/dev/null
	assertFalse "no what_if.csv without --what-if-tune" "[ -e $BW_TMP/dir2/what_if.csv ]"
}

# --what-if-tune in every format: the decisions section in text, a what_if
# object in JSON, the what_if table in CSV (decisions themselves are
# checked on a recording, test_record.sh test_what_if_tune).
test_what_if_formats() {
	an_require jq || return 0
	assertTrue "text: the section" \
		"$BW_BIN analyze $DATA/randread-qd8 --what-if-tune | grep -q '^What if blkwise tune had run'"
	assertEquals "json: a what_if object with its decisions" '"throughput" 0' \
		"$("$BW_BIN" analyze "$DATA/randread-qd8" --what-if-tune --json |
			jq -r '"\(.what_if.policy | tojson) \(.what_if.decisions | length)"')"
	assertEquals "csv: the what_if table" "t,device,action" \
		"$("$BW_BIN" analyze "$DATA/randread-qd8" --what-if-tune --format csv --table what_if |
			head -1 | cut -d, -f1-3)"
}

# The shipped recording of the emulated spindle (tests/data/record/README.md),
# where BFQ stopped idling by itself at slice_idle_us 8000: --what-if-tune
# notices it and tries strict_guarantees, in text, JSON, CSV and the HTML
# report's data; the evidence is the recording's own intervals (depth ~1
# before, at least 1.35 in the window that decided).
test_what_if_spindle_repair() {
	local rec=$BW_ROOT/tests/data/record/spindle.bwt js t depth
	an_require jq || return 0
	[ -f "$rec" ] || { fail "no $rec"; return; }
	assertTrue "text: the repair, both levers and the collapse's evidence" \
		"$BW_BIN analyze $rec --what-if-tune | grep -qE '^  t= *[0-9.]+ s loop[0-9]+ repair: slice_idle_us 8000 -> 20000, strict_guarantees 0 -> 1: BFQ stopped idling at slice_idle_us 8000: depth 1\.[01][0-9] -> [0-9.]+, [0-9]+ -> [0-9]+ MB/s'"
	js=$BW_TMP/spindle.json
	"$BW_BIN" analyze "$rec" --what-if-tune --json >"$js" || { fail "analyze --json"; return; }
	assertEquals "json: one repair, strict_guarantees 0 -> 1" "1 0 1" \
		"$(jq -r '[.what_if.decisions[] | select(.action == "repair")] |
			"\(length) \(.[0].strict_guarantees_before) \(.[0].strict_guarantees_after)"' "$js")"
	t=$(jq '[.what_if.decisions[] | select(.action == "repair")][0].t' "$js")
	depth=$(jq --argjson t "$t" '.intervals[] | select(.t == $t - 1) | .devices[0].depth_mean_busy' "$js")
	assertTrue "the recording's own interval before t=$t: depth $depth >= 1.35" \
		"[ \"\$(jq -n --argjson d ${depth:-0} '\$d >= 1.35')\" = true ]"
	assertEquals "an interval before it where BFQ idled (depth <= 1.2)" true \
		"$(jq --argjson t "$t" '[.intervals[] | select(.t < $t - 1) | .devices[0].depth_mean_busy |
			select(. != null and . <= 1.2)] | length > 0' "$js")"
	assertEquals "csv: the same decisions, the same levers" \
		"$(jq -r '.what_if.decisions[] | "\(.action),\(.slice_idle_us_after),\(.strict_guarantees_after)"' "$js")" \
		"$("$BW_BIN" analyze "$rec" --what-if-tune --format csv --table what_if |
			tail -n +2 | cut -d, -f3,5,7)"
	"$BW_BIN" analyze "$rec" --what-if-tune --html "$BW_TMP/spindle.html" >/dev/null ||
		{ fail "analyze --html"; return; }
	assertTrue "html: the repair among the timeline's decisions" \
		"grep -qE '\\[$t[0-9.]*,\"repair\",8000,20000,\"BFQ stopped idling' $BW_TMP/spindle.html"
}

# --perfetto: one complete event per request, on lanes where no two slices
# overlap (a lane is free once its last slice ended), every lane named, the
# device's track named, a depth counter.
test_perfetto_lanes() {
	local n perf out
	an_require jq python3 || return 0
	for n in $CAPS; do
		perf=$BW_TMP/$n.perfetto.json
		"$BW_BIN" analyze "$DATA/$n" -i 0.01 --json --perfetto "$perf" >"$BW_TMP/$n.json"
		assertEquals "$n: exit" 0 $?
		out=$(python3 - "$perf" "$(jq '.devices[0].requests' "$BW_TMP/$n.json")" 2>&1 <<'EOF'
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
want = int(sys.argv[2])
lanes = collections.defaultdict(list)
names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] in ("thread_name", "process_name")}
for e in ev:
    if e["ph"] == "X":
        s = round(e["ts"] * 1000)
        lanes[(e["pid"], e["tid"])].append((s, s + round(e["dur"] * 1000)))
bad = 0
for v in lanes.values():
    v.sort()
    end = -1
    for s, t in v:
        if s < end:		# starts before the previous one ended: overlap
            bad += 1
        end = max(end, t)
slices = sum(map(len, lanes.values()))
unnamed = [k for k in lanes if k not in names]
devs = {p for p, _ in lanes}
assert slices == want, f"{slices} slices, {want} requests"
assert not bad, f"{bad} of {slices} slices overlap on their lane"
assert not unnamed, f"unnamed lanes {unnamed}"
assert all((p, None) in names for p in devs), "device track unnamed"
assert any(e["ph"] == "C" and e["name"] == "depth" for e in ev), "no depth counter"
print(f"ok: {slices} slices on {len(lanes)} lanes, none overlapping")
EOF
)
		out=$(echo "$out" | tail -1)	# the verdict, or the failed assertion
		echo "  $n: $out"
		assertEquals "$n: $out" ok "${out%%:*}"
	done
}

# an_chromium HTML WIDTH OUT: OUT.dom (the DOM after the page's script) and
# OUT.png (a screenshot) of HTML in a WIDTH-pixel-wide headless Chromium.
an_chromium() {
	local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars "--window-size=$2,2600")
	timeout 120 chromium "${flags[@]}" --dump-dom "file://$1" >"$3.dom" 2>/dev/null &&
		timeout 120 chromium "${flags[@]}" --screenshot="$3.png" "file://$1" >/dev/null 2>&1
}

# --html in headless Chromium at a narrow window's, a laptop's and a wide
# screen's width: every chart drawn with data, ticks, units and gridlines
# (tests/html_check.py, by DOM and by pixels), the heatmap's rows over the
# data's latencies with a colour legend and p50/p99, the title naming the
# trace, no type under 12 px, and no chart's title, legend item or axis
# label cut or overlapping another, as Chromium laid them out.
test_html_report() {
	local n w out html
	an_require jq python3 chromium || return 0
	for n in $CAPS; do
		html=$BW_TMP/$n.html
		"$BW_BIN" analyze "$DATA/$n" --json --html "$html" >"$BW_TMP/$n.json"
		assertEquals "$n: analyze --html exit" 0 $?
		assertFalse "$n: self-contained" "grep -qiE '(src|href)=\"?(https?:|//)' $html"
		for w in 600 1366 2560; do
			an_chromium "$html" "$w" "$BW_TMP/$n.$w" || { fail "$n: chromium at $w px"; continue; }
			out=$(python3 "$BW_ROOT/tests/html_check.py" "$BW_TMP/$n.$w.dom" \
				"$BW_TMP/$n.$w.png" "$w" "$BW_TMP/$n.json" 2>&1)
			echo "$out" | grep -v '^ok$'
			assertEquals "$n at $w px: $(echo "$out" | tail -1)" ok "$(echo "$out" | tail -1)"
		done
		assertTrue "$n: the latency table, exact" \
			"grep -q 'Latency per op, ms (exact)' $BW_TMP/$n.1366.dom"
		assertTrue "$n: the stream's row" "grep -q '<td>fio</td>' $BW_TMP/$n.1366.dom"
		# Never determined in these captures: said so, with no maximum claimed.
		assertTrue "$n: P_eff undetermined throughout, said in its title" \
			"grep -q 'P_eff and class, per stat interval (undetermined throughout)' $BW_TMP/$n.1366.dom"
		assertFalse "$n: no P_eff maximum claimed" "grep -q '(max [0-9.]*)' $BW_TMP/$n.1366.dom"
	done
}

# an_err CODE TEXT ARGS...: analyze exits CODE, prints nothing on stdout
# (with --json: the error object alone), and says TEXT in one line.
an_err() {
	local code=$1 text=$2 out err rc
	shift 2
	out=$("$BW_BIN" analyze "$@" 2>"$BW_TMP/err")
	rc=$?
	err=$(cat "$BW_TMP/err")
	assertEquals "analyze $*: exit ($err)" "$code" "$rc"
	case " $* " in
	*" --json "*) assertEquals "analyze $*: the error object alone on stdout" "$err" \
		"blkwise: error: $(echo "$out" | jq -r .error)" ;;
	*) assertEquals "analyze $*: nothing on stdout" "" "$out" ;;
	esac
	assertTrue "analyze $*: says '$text': $err" "grep -q -- \"$text\" $BW_TMP/err"
	assertEquals "analyze $*: one line" 1 "$(grep -c . "$BW_TMP/err")"
}

test_input_errors() {
	an_require || return 0
	mkdir -p "$BW_TMP/adir"
	an_err 1 "adir: is a directory" "$BW_TMP/adir"
	an_err 2 "--from 5 is past the trace's end (its last event is 0.9" "$DATA/seqread" --from 5
	an_err 2 "--from 5 is past the trace's end" "$DATA/seqread" --from 5 --json
	an_err 2 "--table is for --format csv" "$DATA/seqread" --table latency
	an_err 2 "bad --table 'x'" "$DATA/seqread" --format csv --table x
	an_err 2 "--table what_if needs --what-if-tune" "$DATA/seqread" --format csv --table what_if
	# Inside the trace, --from still works.
	assertTrue "--from inside the trace" \
		"$BW_BIN analyze $DATA/seqread --from 0.5 --json | jq -e '.devices[0].requests > 100' >/dev/null"
}

. shunit2
