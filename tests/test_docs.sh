#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the documentation agrees with the program.  The option
# text lives once, in user/cmd/options.c: each command's --help prints it; the
# man page's options, the options getopt really accepts and the options
# block of docs/COMMAND.md (written by tools/sync-docs.sh) are held to it.
# Links between the pages resolve, and nothing in the tree reads as a
# development log or points outside the repository.  Needs no root, but
# for the examples' check (a loop device).
. "$(dirname "$0")/lib.sh"

DOC_CMDS="stat tune export record analyze"
DOC_MAN=$BW_ROOT/man/blkwise.8

# The options --help lists: "--long" per entry, or "-x" for a short-only one.
doc_help_opts() {
	"$BW_BIN" "$1" --help | sed -nE \
		-e 's/^  -[a-zA-Z], --([a-z.-]+).*/--\1/p' \
		-e 's/^      --([a-z.-]+).*/--\1/p' \
		-e 's/^  (-[a-zA-Z]) .*/\1/p' | sort -u
}

# The options the man page lists for a command: the .TP entries of its
# section, COMMON OPTIONS for the commands that load BPF, -h for every one.
doc_man_opts() {
	python3 - "$DOC_MAN" "$1" <<'PY'
import re, sys
path, cmd = sys.argv[1], sys.argv[2]
common = cmd in ("stat", "tune", "export", "record")
lines = open(path).read().split("\n")
sect, out = None, set()
for i, l in enumerate(lines):
	if l.startswith(".SH"):
		sect = "common" if l == ".SH COMMON OPTIONS" else None
	elif l.startswith(".SS"):
		sect = l[4:].strip()
	elif l == ".TP" and i + 1 < len(lines):
		head = lines[i + 1]
		if not re.match(r"\\fB\\-", head):
			continue
		if sect == "blkwise " + cmd or (sect == "common" and (common or "help" in head)):
			longs = re.findall(r"\\-\\-((?:[a-z.]|\\-)+)", head)
			if longs:
				out |= {"--" + x.replace("\\-", "-") for x in longs}
			else:
				out |= {"-" + x for x in re.findall(r"\\-([a-zA-Z])\b", head)}
print("\n".join(sorted(out)))
PY
}

test_help_and_man_list_the_same_options() {
	local c diff
	command -v python3 >/dev/null || { bw_skip "python3 not installed"; return 0; }
	for c in $DOC_CMDS; do
		diff=$(diff <(doc_help_opts "$c") <(doc_man_opts "$c"))
		assertEquals "$c: --help (<) and man page (>) list the same options" "" "$diff"
		assertTrue "$c: --help lists options" "[ $(doc_help_opts "$c" | wc -l) -ge 3 ]"
	done
}

# What getopt accepts, probed without running anything: "--opt=1" then an
# unknown option.  An option getopt does not know is named in its
# "unrecognized option" message; a known one fails on the value, or on the
# unknown option after it (the whole command line is parsed before anything
# runs); a short one likewise with "-x1".
doc_accepted() {
	local c=$1 o err
	for o in $(for x in $DOC_CMDS; do doc_help_opts "$x"; doc_man_opts "$x"; done | sort -u) \
		--state-dir --no-state --bio-cache --force-raw-tp --btf --tune-window; do
		case $o in
		--*) err=$("$BW_BIN" "$c" "$o=1" --zz-not-an-option 2>&1 >/dev/null)
		     echo "$err" | grep -q "unrecognized option '$o" || echo "$o" ;;
		*)   err=$("$BW_BIN" "$c" "${o}1" --zz-not-an-option 2>&1 >/dev/null)
		     echo "$err" | grep -q "invalid option -- '${o#-}'" || echo "$o" ;;
		esac
	done | sort -u
}

test_help_lists_what_getopt_accepts() {
	local c diff
	command -v python3 >/dev/null || { bw_skip "python3 not installed"; return 0; }
	for c in $DOC_CMDS; do
		diff=$(diff <(doc_help_opts "$c") <(doc_accepted "$c"))
		assertEquals "$c: --help (<) and getopt (>) take the same options" "" "$diff"
	done
	timeout 10 "$BW_BIN" record --state-dir "$BW_TMP" -t 0.2 -o "$BW_TMP/t" 2>/dev/null
	assertEquals "record --state-dir: a usage error" 2 $?
	assertFalse "record --state-dir: nothing written" "[ -e '$BW_TMP/t' ]"
}

# Every part of the manual that has one source is what that source gives
# (tools/docgen.py check; tools/sync-docs.sh writes them): the options of
# docs/COMMAND.md and of the man page (user/cmd/optdocs.c), the lists of
# figures in docs/, dashboards/README.md and the man page (the figure
# table, user/model/figures.c), and each measured table and each value
# quoted in prose from its result file (docs/results/NAME.json, which the
# script that measured it wrote).  A block edited by hand, an option or a
# figure missing from the man page, or a quoted figure that is not its
# result's, is a failure naming the line.
test_generated_parts_match_their_sources() {
	local out
	make -s -C "$BW_ROOT" build/figdoc build/optdoc >/dev/null || { fail "cannot build figdoc, optdoc"; return; }
	out=$(BW_BIN="$BW_BIN" python3 "$BW_ROOT/tools/docgen.py" check blocks 2>&1)
	assertEquals "parts of the manual that differ from their source (tools/sync-docs.sh)" "" "$out"
	# Each kind is there to be checked: the man page's options of every
	# command and its columns, three figure lists, five help blocks.
	for w in common stat tune export record analyze; do
		grep -q "^\.\\\\\" options: $w\$" "$DOC_MAN"
		assertTrue "the man page's options of $w come from the option table" $?
	done
	for w in man manjson; do
		grep -q "^\.\\\\\" figures: $w\$" "$DOC_MAN"
		assertTrue "the man page's $w list comes from the figure table" $?
	done
	assertEquals "figure lists in the docs (stat's columns, export's families)" 2 \
		"$(cat "$BW_ROOT"/docs/*.md "$BW_ROOT"/dashboards/README.md | grep -c '^<!-- figures: ')"
	assertEquals "option tables in the docs" 5 \
		"$(cat "$BW_ROOT"/docs/*.md | grep -c '^<!-- options: [a-z]* -->$')"
}

# The man page's SYNOPSIS names every option of each command (by its long
# or its short name), --help and --version aside.
test_synopsis_names_every_option() {
	local c missing=""
	for c in $DOC_CMDS; do
		"$BW_BIN" "$c" --help >"$BW_TMP/help.$c"
	done
	missing=$(python3 - "$DOC_MAN" "$BW_TMP" $DOC_CMDS <<'PY'
import re, sys
man, tmp, cmds = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(man).read()
syn = text[text.index(".SH SYNOPSIS"):text.index(".SH DESCRIPTION")]
named = {}
for block in syn.split(".SY blkwise")[1:]:
	m = re.search(r"^\.B ([a-z]+)$", block, re.M)
	if m:
		opts = {x.replace("\\-", "-") for x in re.findall(r"\\-\\-((?:[a-z.]|\\-)+)", block)}
		opts |= {x for x in re.findall(r"(?<!\\-)\\-([a-zA-Z])\b", block)}
		named.setdefault(m.group(1), set()).update(opts)
out = []
for c in cmds:
	for l in open("%s/help.%s" % (tmp, c)):
		m = re.match(r"^  (?:-([a-zA-Z])(?:, |\s))?\s*(?:--([a-z][a-z.-]*))?", l)
		if not m or not (m.group(1) or m.group(2)) or m.group(2) in ("help", "version"):
			continue
		if m.group(2) not in named.get(c, ()) and m.group(1) not in named.get(c, ()):
			out.append("%s %s" % (c, "--" + m.group(2) if m.group(2) else "-" + m.group(1)))
print(" ".join(out))
PY
)
	assertEquals "options the man page's SYNOPSIS does not name" "" "$missing"
}

# tests/agree.py, which compares stat and analyze figure by figure, classes
# every key of the figure table (a figure no run prints is classed too).
test_agree_classes_every_figure() {
	local diff
	diff=$(diff <("$BW_ROOT/build/figdoc" keys | sort -u) <(python3 "$BW_ROOT/tests/agree.py" --classes))
	assertEquals "figure table's keys (<) and tests/agree.py's classes (>)" "" "$diff"
}

# A figure of a run is quoted from its result (a link to docs/results/NAME.json
# whose text is the value), never typed: a ratio in prose without such a
# link ("5.38x", "three times the cost") fails, as does a result no page shows.
test_prose_quotes_its_results() {
	local out name missing=""
	out=$(python3 "$BW_ROOT/tools/docgen.py" check ratios 2>&1)
	assertEquals "ratios typed in prose, not quoted from a result in docs/results/" "" "$out"
	for name in "$BW_ROOT"/docs/results/*.json; do
		name=$(basename "$name" .json)
		cat "$BW_ROOT"/README.md "$BW_ROOT"/docs/*.md | grep -q "^<!-- measured:$name[.:]\\|^<!-- measured:$name -->" ||
			missing="$missing $name"
		python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["command"] and r["on"] and r["tables"] and "date" not in r' \
			"$BW_ROOT/docs/results/$name.json" || missing="$missing $name(command, on or tables missing, or a date: history is git's)"
	done
	assertEquals "results no page shows" "" "$missing"
}

# README and docs/ are a manual, not a log: at most 3,000 lines together.
test_manual_is_short() {
	local n
	n=$(cat "$BW_ROOT"/README.md "$BW_ROOT"/docs/*.md | wc -l)
	echo "  README.md and docs/: $n lines"
	assertTrue "README.md and docs/ are $n lines: at most 3000" "[ $n -le 3000 ]"
}

# Every source file says its licence (the README says so): C, headers, BPF,
# shell, Python, JavaScript, makefiles, the unit, the man page, and every
# executable the tree holds.
test_spdx_on_every_source_file() {
	local bad
	command -v git >/dev/null && git -C "$BW_ROOT" rev-parse 2>/dev/null ||
		{ bw_skip "not a git checkout: the tree's files are git's list"; return 0; }
	bad=$(cd "$BW_ROOT" && git ls-files -s | awk '$1 == "100755" { print $4 }' |
		cat - <(git ls-files '*.c' '*.h' '*.sh' '*.py' '*.js' '*.mk' '*.in' '*.8' '**/Makefile' Makefile) |
		grep -v '^vmlinux/' | sort -u | while read -r f; do
			head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0' || echo "$f"
		done)
	assertEquals "source files without an SPDX line in their first three" "" "$bad"
	assertTrue "the check saw the tree's sources" \
		"[ $(cd "$BW_ROOT" && git ls-files '*.c' '*.sh' '*.py' | wc -l) -gt 100 ]"
}

# The operator pages' commands run as written: every ```sh block of
# docs/troubleshooting.md, on a loop device (tune-production.md's, which
# need BFQ, run in tests/test_tune.sh).
test_troubleshooting_commands_run() {
	local out
	[ "$(id -u)" = 0 ] || { bw_skip "needs root: the commands are root's"; return 0; }
	bw_loop DEV 16 tmp || { fail "loop device"; return; }
	bw_doc_blocks "$BW_ROOT/docs/troubleshooting.md" "" >"$BW_TMP/doc.out"
	cat "$BW_TMP/doc.out"
	assertEquals "blocks of docs/troubleshooting.md that fail as written" "" "$(cat "$BW_TMP/doc.out")"
	assertTrue "blocks run: $BW_DOC_RAN" "[ $BW_DOC_RAN -ge 5 ]"
	assertEquals "blocks not run (needs)" "" "$BW_DOC_NOT"
}

# What docs/troubleshooting.md says a container needs from the host (its
# table between <!-- container-needs --> markers, from the code: the
# capabilities, the host paths, no host PID namespace) is what the
# DaemonSet in dist/ gives it.
test_container_needs_match_the_daemonset() {
	local out ds=$BW_ROOT/dist/blkwise-daemonset.yaml
	[ -f "$ds" ] || { bw_skip "no DaemonSet in this tree (dist/blkwise-daemonset.yaml)"; return 0; }
	python3 -c 'import yaml' 2>/dev/null || { bw_skip "python3-yaml not installed"; return 0; }
	out=$(python3 - "$BW_ROOT/docs/troubleshooting.md" "$ds" <<'PY'
import re, sys, yaml
page, ds = open(sys.argv[1]).read(), list(yaml.safe_load_all(open(sys.argv[2])))
table = page.split("<!-- container-needs -->")[1].split("<!-- /container-needs -->")[0]
caps, paths, bad = set(), set(), []
for row in table.split("\n"):
	cells = row.split("|")
	if len(cells) < 3 or "--tune" in cells[2]:
		continue
	if cells[1].strip().startswith("capability"):
		caps |= set(re.findall(r"CAP_([A-Z_]+)", cells[1]))
	if cells[1].strip().startswith("host path"):
		paths |= set(re.findall(r"`(/[^`]+)`", cells[1]))
d = next(x for x in ds if x and x.get("kind") == "DaemonSet")
spec = d["spec"]["template"]["spec"]
c = spec["containers"][0]
have = set(c.get("securityContext", {}).get("capabilities", {}).get("add", []))
have = {x.replace("CAP_", "") for x in have}
hostpaths = {v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}
for x in sorted(caps - have):
	bad.append("capability %s not added" % x)
for x in sorted(paths - hostpaths):
	bad.append("host path %s not mounted" % x)
if "the host's PID namespace" in table and "not needed" in table and spec.get("hostPID"):
	bad.append("hostPID set, which the page says is not needed")
if not caps or not paths:
	bad.append("the page's table names no capability or host path")
print("\n".join(bad))
PY
)
	assertEquals "what the page says export needs, and the DaemonSet does not give" "" "$out"
}

# Every relative link of README.md and docs/ names a file of the tree.
test_links_resolve() {
	local f l bad=""
	for f in "$BW_ROOT"/README.md "$BW_ROOT"/docs/*.md "$BW_ROOT"/dashboards/README.md; do
		for l in $(grep -oE '\]\([^)#]+' "$f" | sed 's/^](//' | grep -vE '^[a-z]+:'); do
			[ -e "$(dirname "$f")/$l" ] || bad="$bad ${f#"$BW_ROOT"/}->$l"
		done
	done
	assertEquals "dead links" "" "$bad"
	grep -q 'docs/stat.md' "$BW_ROOT/README.md"
	assertTrue "README links the pages" $?
}

# Every path of the tree the manual cites exists (a blktrace capture's
# NAME, or a pattern such as tests/test_*.sh, by the files it names).
test_cited_paths_exist() {
	local p bad=""
	for p in $(cd "$BW_ROOT" && grep -ohE '(user|bpf|tools|tests|dashboards|dist|mk)/[A-Za-z0-9_/.-]*[A-Za-z0-9_]' \
		README.md docs/*.md dashboards/README.md man/blkwise.8 | sort -u); do
		compgen -G "$BW_ROOT/$p*" >/dev/null || bad="$bad $p"
	done
	assertEquals "paths cited that are not in the tree" "" "$bad"
}

# The examples against this build (the README's tour blocks are written by
# tools/tour.sh --write): every stat table header shown in README.md and
# docs/ is the one stat prints (analyze's, with its t_s column, too); a
# device object of a "stat --json" example has the keys stat prints; every
# option a "$ blkwise CMD ..." line uses is one CMD's --help lists.
test_examples_match_the_build() {
	local dev bad
	[ "$(id -u)" = 0 ] || { bw_skip "needs root: the build's own table and JSON, from a loop device"; return 0; }
	bw_loop dev 16 tmp || { fail "loop device"; return; }
	"$BW_BIN" stat -d "$dev" -c 1 -i 0.2 >"$BW_TMP/ex.txt" 2>/dev/null
	"$BW_BIN" stat -d "$dev" -c 1 -i 0.2 --json >"$BW_TMP/ex.json" 2>/dev/null
	for c in $DOC_CMDS; do
		"$BW_BIN" "$c" --help >"$BW_TMP/opts.$c"
	done
	bad=$(cd "$BW_ROOT" && python3 - "$BW_TMP" README.md docs/*.md <<'PY'
import json, re, sys
tmp, files = sys.argv[1], sys.argv[2:]
header = next(l for l in open(tmp + "/ex.txt").read().split("\n") if l.startswith("Device "))
dev0 = json.loads(open(tmp + "/ex.json").read().split("\n")[0])["devices"][0]
keys, opkeys = set(dev0), set(dev0["ops"])
opts = {}
for c in ("stat", "tune", "export", "record", "analyze"):
	h = open("%s/opts.%s" % (tmp, c)).read()
	opts[c] = set(re.findall(r"(?m)^  (-[a-zA-Z])\b", h)) | set(re.findall(r"(?m)^  (?:-[a-zA-Z], )?(--[a-z][a-z.-]*)", h)) | set(re.findall(r"(?m)^      (--[a-z][a-z.-]*)", h))
bad, n = [], {"header": 0, "json": 0, "cmd": 0}
for f in files:
	for i, l in enumerate(open(f).read().split("\n"), 1):
		where = "%s:%d" % (f, i)
		h = re.sub(r"^ +t_s ", "", l)
		if h.startswith("Device ") and " r/s " in h and " svc_ms " in h:
			n["header"] += 1
			if h.rstrip() != header.rstrip():
				bad.append("%s: header %r, the build prints %r" % (where, h.strip(), header.strip()))
		if l.startswith('{"timestamp"') and '"devices"' in l:
			n["json"] += 1
			d = json.loads(l)["devices"][0]
			for want, got, what in ((keys, set(d), "keys"), (opkeys, set(d.get("ops", {})), "ops")):
				if got != want:
					bad.append("%s: JSON %s %s missing, %s not printed" %
						   (where, what, sorted(want - got), sorted(got - want)))
		m = re.match(r"\$ (?:timeout [^ ]+ [0-9]+ )?blkwise ([a-z]+)(.*)", l)
		if m and m.group(1) in opts:
			n["cmd"] += 1
			for o in re.findall(r"(?:^| )(--[a-z][a-z.-]*|-[a-zA-Z])(?=[ =]|$)", m.group(2)):
				if o not in opts[m.group(1)]:
					bad.append("%s: blkwise %s has no %s" % (where, m.group(1), o))
if not all(n.values()):
	bad.append("nothing of a kind to check: %s" % n)
print("\n".join(bad))
PY
)
	assertEquals "examples that differ from the build" "" "$bad"
}

# No development-log wording and nothing outside the repository.
test_no_log_wording() {
	local hits where
	where="README.md docs man dist dashboards tools tests user bpf Makefile mk"
	hits=$(cd "$BW_ROOT" && {
		git grep -nIiE 'this session|this round|this host|I could not|I have not|we could not|seed 0[0-9][0-9]|[(]issue [0-9]+|issue [0-9]+[)]|(fixed|added|removed|since|until|in|see|by|per|what) issue [0-9]+' -- $where
		git grep -nIE '\.\./shared|DESIGN\.md' -- $where
		# A manual's figures say their command, build and machine, not
		# their day or the host they ran on (the build's own --version
		# line, "blkwise 0.4.0 (commit ...)", is how a build is named).
		git grep -nIP '(busier|quieter|another|same) day\b|build before|<this build>|/work/|(?<!\d \()\bcommit [0-9a-f]{7,}\b' -- README.md docs man dashboards
		# Nor "this machine", an earlier run or build, one run's CI counts.
		git grep -nIiP '\bthis (machine|host|VM)\b|\ban earlier (run|build)\b|\b\d+ passed, \d+ failed\b' -- README.md docs
	} 2>/dev/null | grep -v '^tests/test_docs.sh:' | head -20)
	assertEquals "development-log wording" "" "$hits"
}

# The package that owns command $1 (installed), and its -minimal's parent.
doc_owner() {
	dpkg -S "bin/$1" 2>/dev/null | grep -E "/s?bin/$1\$" | cut -d: -f1 | tr ',' '\n' |
		sed 's/ //g; p; s/-minimal$//' | sort -u
}

# Every command a suite requires (bw_require, command -v), and those the
# benchmark and the VM tier run, comes from a package of the right set of
# tools/deps.sh.
test_deps_cover_the_commands() {
	local set cmds c owners missing="" unknown=""
	command -v dpkg >/dev/null || { bw_skip "not Debian"; return 0; }
	for set in test bench vm; do
		case $set in
		test) cmds="$(grep -rhoE 'bw_require [a-z0-9 ._-]+|command -v [a-z0-9._-]+' \
			"$BW_ROOT"/tests/*.sh | sed -E 's/bw_require |command -v //' | tr ' ' '\n' |
			grep -vx dpkg | sort -u) losetup mkfs.ext4 prometheus ab" ;;
		bench) cmds="biolatency bpftrace btt blkparse iostat fio taskset" ;;
		vm) cmds="qemu-system-x86_64 busybox cpio xz zstd mkfs.ext4 apt-get dpkg-deb blktrace" ;;
		esac
		for c in $cmds; do
			owners=$(doc_owner "$c")
			[ -n "$owners" ] || { unknown="$unknown $c"; continue; }
			echo "$owners" | grep -qxF -f <("$BW_ROOT"/tools/deps.sh --"$set" --list |
				tr ' ' '\n' | grep .) || missing="$missing $c($set: $(echo $owners))"
		done
	done
	assertEquals "commands whose package tools/deps.sh does not install" "" "$missing"
	[ -z "$unknown" ] || bw_skip "not installed here, package unknown:$unknown"
}

. shunit2
