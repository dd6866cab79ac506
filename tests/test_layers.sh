#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: user/ keeps its layers (docs/design.md, "Source layout").
# tools/layers.py reads every #include of user/ and, from the built objects'
# symbols (nm), who calls whom: commands over the exporter, analyze's
# outputs and the watch session, over the loaders, over system access and
# the pure model; no include cycle, no two files calling each other.  Each
# check is also shown to fail, on a copy of the tree with one bad include
# and on an object that calls upward.  Needs no root.
. "$(dirname "$0")/lib.sh"

LY=$BW_ROOT/tools/layers.py

# The tree as it is: includes and the calls between build/'s objects.
test_tree_keeps_its_layers() {
	local out=$BW_TMP/layers.out
	[ -d "$BW_ROOT/build/model" ] || { bw_skip "not built (make)"; return 0; }
	local rc
	python3 "$LY" --objs "$BW_ROOT/build" >"$out" 2>&1
	rc=$?
	assertEquals "tools/layers.py exit: $(cat "$out")" 0 "$rc"
	assertTrue "it read the tree: $(cat "$out")" \
		"grep -qE '^layers: [0-9]{2,} files, no offence, calls checked$' $out"
}

# A copy of user/ with one edit (sed EXPR on FILE); the checker's output.
ly_broken_copy() {
	rm -rf "$BW_TMP/src"
	cp -r "$BW_ROOT/user" "$BW_TMP/src"
	sed -i "$2" "$BW_TMP/src/$1"
	python3 "$LY" --src "$BW_TMP/src" >"$BW_TMP/bad.out" 2>&1
	echo "rc=$?" >>"$BW_TMP/bad.out"
}

# The pure model including a loader: refused, naming the file and the rule.
test_model_including_a_loader_fails() {
	ly_broken_copy model/hist.c 's|#include "model/model.h"|&\n#include "load/loader.h"|'
	assertTrue "refused: $(cat "$BW_TMP/bad.out")" "grep -q '^rc=1$' $BW_TMP/bad.out"
	assertTrue "names it" "grep -q 'user/model/hist.c: includes \"load/loader.h\": model/ may not use load/' $BW_TMP/bad.out"
	assertEquals "and only it" 2 "$(wc -l <"$BW_TMP/bad.out")"
}

# A loader including a command, and a bare include of a user header.
test_upward_and_bare_includes_fail() {
	ly_broken_copy load/bio.c 's|#include "load/loader.h"|&\n#include "cmd/options.h"\n#include "watch.h"|'
	assertTrue "refused" "grep -q '^rc=1$' $BW_TMP/bad.out"
	assertTrue "load/ may not use cmd/" "grep -q 'user/load/bio.c: includes \"cmd/options.h\": load/ may not use cmd/' $BW_TMP/bad.out"
	assertTrue "a bare include is named" "grep -q 'user/load/bio.c: includes \"watch.h\": give its folder' $BW_TMP/bad.out"
}

# Two headers including each other.
test_include_cycle_fails() {
	ly_broken_copy model/policy.h 's|#include "model/model.h"|&\n#include "model/replay.h"|'
	sed -i 's|#include "model/model.h"|&\n#include "model/policy.h"|' "$BW_TMP/src/model/replay.h"
	python3 "$LY" --src "$BW_TMP/src" >"$BW_TMP/bad.out" 2>&1
	echo "rc=$?" >>"$BW_TMP/bad.out"
	assertTrue "refused: $(cat "$BW_TMP/bad.out")" "grep -q '^rc=1$' $BW_TMP/bad.out"
	assertTrue "the cycle is named" "grep -q '^include cycle: user/model/policy.h -> user/model/replay.h -> user/model/policy.h$' $BW_TMP/bad.out"
}

# Objects: a loader calling a command, and two loaders calling each other.
test_upward_and_mutual_calls_fail() {
	local o=$BW_TMP/objs
	command -v gcc >/dev/null && command -v nm >/dev/null || { bw_skip "no gcc or nm"; return 0; }
	mkdir -p "$o/cmd" "$o/load"
	printf 'int cmd_x(void) { return 0; }\n' >"$BW_TMP/x.c"
	printf 'int cmd_x(void);\nint load_b(void);\nint load_a(void) { return cmd_x() + load_b(); }\n' >"$BW_TMP/a.c"
	printf 'int load_a(void);\nint load_b(void) { return load_a(); }\n' >"$BW_TMP/b.c"
	gcc -c "$BW_TMP/x.c" -o "$o/cmd/x.o" && gcc -c "$BW_TMP/a.c" -o "$o/load/a.o" &&
		gcc -c "$BW_TMP/b.c" -o "$o/load/b.o" || { fail "gcc failed"; return; }
	python3 "$LY" --objs "$o" >"$BW_TMP/bad.out" 2>&1
	echo "rc=$?" >>"$BW_TMP/bad.out"
	assertTrue "refused: $(cat "$BW_TMP/bad.out")" "grep -q '^rc=1$' $BW_TMP/bad.out"
	assertTrue "upward call named" "grep -q '^user/load/a.c calls cmd_x of user/cmd/x.c: load/ may not use cmd/$' $BW_TMP/bad.out"
	assertTrue "mutual calls named" "grep -q '^call cycle: user/load/a.c <-> user/load/b.c$' $BW_TMP/bad.out"
}

. shunit2
