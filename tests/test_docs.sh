#!/usr/bin/env bash
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
		if not re.match(r"\.B[IR]? ", head) or "\\-" not in head:
			continue
		if sect == "blkwise " + cmd or (sect == "common" and (common or "help" in head)):
			longs = re.findall(r"\\-\\-([a-z][a-z.\\-]*)", head)
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

# docs/COMMAND.md carries the command's --help between two markers.
test_docs_pages_show_the_help() {
	local c page want got missing=""
	for c in $DOC_CMDS; do
		page=$BW_ROOT/docs/$c.md
		[ -f "$page" ] || { missing="$missing $c.md"; continue; }
		want=$("$BW_BIN" "$c" --help)
		got=$(sed -n "/^<!-- options: blkwise $c --help -->/,/^<!-- end options -->/p" "$page" |
			sed '1,2d;$d' | sed '$d')
		assertEquals "docs/$c.md shows blkwise $c --help (tools/sync-docs.sh)" "$want" "$got"
	done
	[ -z "$missing" ] || bw_skip "not in this tree:$missing"
}

# The lists of figures (stat's columns, the JSON keys, export's per-device
# families) are the figure table's (user/model/figures.c), as
# tools/sync-docs.sh writes them; three lists, each on its page.
test_figure_lists_match_the_table() {
	local fig="$BW_ROOT/build/figdoc" page which want got n=0
	[ -x "$fig" ] || make -s -C "$BW_ROOT" build/figdoc >/dev/null
	for page in "$BW_ROOT"/docs/*.md "$BW_ROOT"/dashboards/README.md; do
		for which in $(sed -n 's/^<!-- figures: \([a-z]*\) -->$/\1/p' "$page"); do
			want=$("$fig" "$which")
			got=$(sed -n "/^<!-- figures: $which -->/,/^<!-- end figures -->/p" "$page" |
				sed '1d;$d')
			assertEquals "${page#"$BW_ROOT"/} lists the $which figures (tools/sync-docs.sh)" \
				"$want" "$got"
			n=$((n + 1))
		done
	done
	assertEquals "lists of figures in the docs" 3 "$n"
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
