#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The parts of the manual that have one source, written from it or held to it.

usage: tools/docgen.py write [--measured-only]
       tools/docgen.py check [blocks|ratios]
       tools/docgen.py render NAME[.TABLE]
       tools/docgen.py put NAME FILE

Blocks, each between two marker lines, rewritten whole by `write` and
compared by `check` (tests/test_docs.sh):

  docs/COMMAND.md  <!-- options: COMMAND --> ... <!-- end options -->
                   the options `blkwise COMMAND --help` prints, as a table
                   (user/cmd/optdocs.c, build/optdoc md)
  man/blkwise.8    .\\" options: common|COMMAND ... .\\" end options
                   the same text as roff (build/optdoc)
  docs/, dashboards/README.md
                   <!-- figures: stat|json|export --> ... <!-- end figures -->
  man/blkwise.8    .\\" figures: man ... .\\" end figures
                   the figure table's lists (user/model/figures.c, build/figdoc)
  README.md, docs/ <!-- measured:NAME[.TABLE] --> ... <!-- /measured -->
                   a measured table: the line that says what command made it
                   on what machine and kernel, then the table, from
                   docs/results/NAME.json, which the script that measured it
                   wrote (tools/bench.sh, tools/idling-table.sh, ...)

and the values quoted in prose: a link [TEXT](.../results/NAME.json#KEY)
whose TEXT must be the result file's values[KEY] (write puts it there).
`check` also fails on a ratio typed in prose without such a link (5.38x,
"three times the cost"): a figure of a run is quoted from its result.

A result file (docs/results/NAME.json):
  {"command": "...", "on": "machine, kernel",
   "tables": {"TABLE": {"columns": [...], "rows": [[...], ...]}},
   "values": {"KEY": "TEXT", ...}}
The first table is NAME's; NAME.TABLE names another, and NAME[.TABLE]:A;B
shows only its columns A and B (a view of the same result, as the
README's summary of a page's table).  A script writes its result with

  tools/docgen.py put NAME FILE [--table T] [--command CMD] [--on TEXT]
                  [--merge] [--value KEY=TEXT]... [--source TEXT]

FILE is a result (.json) or a markdown file whose first table is taken
(.md: the table a script prints); --on defaults to this machine and
kernel, --merge keeps the rows of T that FILE does not hold (rows are
named by their first cell).  It then rewrites the blocks and citations of
every result.
"""
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BW_BIN", os.path.join(ROOT, "blkwise"))
BUILD = os.path.join(ROOT, "build")
RESULTS = os.path.join(ROOT, "docs", "results")
PAGES = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) + ["dashboards/README.md"]
MAN = "man/blkwise.8"


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def result(name):
    path = os.path.join(RESULTS, name + ".json")
    with open(path) as f:
        return json.load(f)


def md_cell(v):
    return str(v).replace("|", "\\|")


def render_measured(word):
    """The block of a result's table: its command, machine and kernel, the table."""
    word, _, view = word.partition(":")
    name, _, table = word.partition(".")
    r = result(name)
    tables = r["tables"]
    t = tables[table] if table else tables[next(iter(tables))]
    cols = list(range(len(t["columns"])))
    if view:
        cols = [t["columns"].index(c) for c in view.split(";")]
    lines = ["`%s` on %s:" % (t.get("command") or r["command"], t.get("on") or r["on"]), ""]
    lines.append("| " + " | ".join(md_cell(t["columns"][c]) for c in cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for row in t["rows"]:
        if len(row) != len(t["columns"]):
            raise ValueError("%s: a row of %d cells under %d columns" %
                             (word, len(row), len(t["columns"])))
        lines.append("| " + " | ".join(md_cell(row[c]) for c in cols) + " |")
    for note in t.get("notes", []):
        lines += ["", note]
    return "\n".join(lines) + "\n"


def render_options(word):
    return run(os.path.join(BUILD, "optdoc"), "md", word)


BLOCKS = [
    # (pages, start marker, end marker, the text between them)
    ("md", re.compile(r"^<!-- options: ([a-z]+) -->$"), "<!-- end options -->", render_options),
    ("md+dash", re.compile(r"^<!-- figures: ([a-z]+) -->$"), "<!-- end figures -->",
     lambda w: run(os.path.join(BUILD, "figdoc"), w)),
    ("man", re.compile(r'^\.\\" options: ([a-z]+)$'), '.\\" end options',
     lambda w: run(os.path.join(BUILD, "optdoc"), w)),
    ("man", re.compile(r'^\.\\" figures: ([a-z]+)$'), '.\\" end figures',
     lambda w: run(os.path.join(BUILD, "figdoc"), w)),
    ("md", re.compile(r"^<!-- measured:([A-Za-z0-9_.-]+(?::[^>]+)?) -->$"), "<!-- /measured -->",
     render_measured),
]

CITE = re.compile(r"\[([^\]]*)\]\(((?:\.\./|docs/)?results/([A-Za-z0-9_-]+)\.json)#([A-Za-z0-9_.-]+)\)")


def pages_of(kind):
    if kind == "man":
        return [MAN]
    return [p for p in PAGES if kind == "md+dash" or p != "dashboards/README.md"]


def blocks_of(text, start, end):
    """(index of the start line, of the end line, the word) of each block."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = start.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and lines[j] != end and not start.match(lines[j]):
                j += 1
            if j == len(lines) or lines[j] != end:
                raise ValueError("line %d: %s without its %s" % (i + 1, lines[i], end))
            out.append((i, j, m.group(1)))
            i = j
        i += 1
    return out


def regenerate(path, text, only_measured, problems):
    """text with every block and citation rewritten; problems gets what cannot be."""
    lines = text.split("\n")
    for kind, start, end, gen in BLOCKS:
        if only_measured and gen is not render_measured:
            continue
        if path not in pages_of(kind):
            continue
        for i, j, word in reversed(blocks_of("\n".join(lines), start, end)):
            try:
                body = gen(word)
            except (OSError, ValueError, KeyError, StopIteration,
                    subprocess.CalledProcessError) as e:
                problems.append("%s:%d: %s: %s" % (path, i + 1, lines[i], e))
                continue
            lines[i + 1:j] = body.rstrip("\n").split("\n")

    def cite(m):
        try:
            v = result(m.group(3))["values"][m.group(4)]
        except (OSError, KeyError, ValueError) as e:
            problems.append("%s: [%s](%s#%s): no such result (%s)" %
                            (path, m.group(1), m.group(2), m.group(4), e))
            return m.group(0)
        return "[%s](%s#%s)" % (v, m.group(2), m.group(4))
    return CITE.sub(cite, "\n".join(lines))


# A ratio typed in prose: "5.38x", "2.4 times the", "three times as".
RATIO = re.compile(r"(?<![\w.≤≥<>=])(\d+(?:\.\d+)?x)(?!\w)|"
                   r"\b((?:\d+(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten) times "
                   r"(?:the|as|that|its|what|higher|lower|faster|slower|more|less|cheaper|dearer))\b",
                   re.I)


def typed_ratios(path, text):
    """Ratios in prose that cite no result: outside code, tables, blocks and links."""
    out, fence, skip, para = [], False, False, []

    def flush():
        prose = CITE.sub("", re.sub(r"`[^`]*`", "", " ".join(l for _, l in para)))
        for m in RATIO.finditer(prose):
            before = prose[:m.start()].rstrip()
            after = prose[m.end():].lstrip()
            if before.endswith(("≤", "≥", "<=", ">=", "at most", "at least", "within",
                                "up to", "under", "over")) or \
                    after.startswith(("bound", "target")):
                continue
            out.append("%s:%d: %s" % (path, para[0][0], m.group(1) or m.group(2)))
        para.clear()
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            flush()
            continue
        if re.match(r"^<!-- (measured:|figures:|options:|tour:)", line):
            skip = True
        if re.match(r"^<!-- (/measured|end figures|end options|/tour) -->", line):
            skip = False
            continue
        if fence or skip or not line.strip() or line.lstrip().startswith("|") or \
                line.startswith("    ") or line.startswith("#"):
            flush()
            continue
        para.append((n, line))
    flush()
    return out


def this_machine():
    """What the manual says a run ran on: CPUs, kernel, distribution."""
    model, n = "", 0
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model, n = line.split(":", 1)[1].strip(), n + 1
    model = re.sub(r"\s+\d+-Core Processor$|\s+Processor$", "", model)
    dist = ""
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release") as f:
            kv = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
        dist = kv.get("PRETTY_NAME", "").strip('"')
        dist = re.sub(r" GNU/Linux| \(.*\)", "", dist)
    return "%d vCPUs (%s), Linux %s%s" % (n, model, os.uname().release, ", " + dist if dist else "")


def md_table(path):
    """The first markdown table of a file: (columns, rows)."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("|"):
                cells = [c.strip().replace("\\|", "|") for c in
                         re.split(r"(?<!\\)\|", line.strip("|"))]
                if all(re.fullmatch(r":?-+:?", c) for c in cells):
                    continue
                rows.append(cells)
            elif rows:
                break
    if not rows:
        raise ValueError("%s: no table" % path)
    return rows[0], rows[1:]


def dumps(r):
    """A result as JSON, a table's row on one line (diffs of a rerun show rows)."""
    text = json.dumps(r, indent=1, ensure_ascii=False)
    flat = re.compile(r'\[\n\s*((?:(?:"(?:[^"\\]|\\.)*"|[-\d.eE+]+|null|true|false),?\n\s*)+)\]')
    return flat.sub(lambda m: "[" + ", ".join(x.strip().rstrip(",") for x in
                                             m.group(1).strip().split("\n")) + "]", text) + "\n"


def put(argv):
    """put NAME FILE [options]: the result of a run into docs/results/NAME.json."""
    import argparse
    ap = argparse.ArgumentParser(prog="docgen.py put")
    ap.add_argument("name")
    ap.add_argument("file")
    ap.add_argument("--table")
    ap.add_argument("--command")
    ap.add_argument("--on")
    ap.add_argument("--source")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--value", action="append", default=[])
    a = ap.parse_args(argv)
    path = os.path.join(RESULTS, a.name + ".json")
    old = result(a.name) if os.path.exists(path) else {}
    if a.file.endswith(".json"):
        with open(a.file) as f:
            new = json.load(f)
    else:
        cols, rows = md_table(a.file)
        new = {"tables": {a.table or "main": {"columns": cols, "rows": rows}}}
    new.setdefault("command", a.command or old.get("command", ""))
    new["on"] = a.on or new.get("on") or this_machine()
    new.pop("date", None)	# when it ran is git's to say
    if a.source:
        new["source"] = a.source
    elif a.merge and old.get("source") and "measured again" not in old["source"]:
        new["source"] = old["source"] + "; the rows measured again since replace theirs"
    elif a.merge and old.get("source"):
        new["source"] = old["source"]
    values = dict(old.get("values", {}) if a.merge else {}, **new.get("values", {}))
    values.update(v.split("=", 1) for v in a.value)
    new["values"] = values
    if a.merge:
        tables = old.get("tables", {})
        for tname, t in new["tables"].items():
            o = tables.get(tname)
            if o:
                cols = o["columns"] + [c for c in t["columns"] if c not in o["columns"]]
                def widen(row, have):
                    return [row[have.index(c)] if c in have else "-" for c in cols]
                byname = {r[0]: widen(r, o["columns"]) for r in o["rows"]}
                for r in t["rows"]:
                    byname[r[0]] = widen(r, t["columns"])
                t = {"columns": cols, "rows": list(byname.values())}
            tables[tname] = t
        new["tables"] = tables
    for k in ("command", "on", "tables"):
        if not new.get(k):
            raise ValueError("%s: no %s" % (a.file, k))
    order = ["command", "on", "source"]
    new = {k: new[k] for k in order + sorted(new) if k in new}
    os.makedirs(RESULTS, exist_ok=True)
    with open(path, "w") as f:
        f.write(dumps(new))


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("write", "check", "render", "put"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "render":
        sys.stdout.write(render_measured(argv[1]))
        return 0
    only = False
    if argv[0] == "put":
        try:
            put(argv[1:])
        except (OSError, ValueError) as e:
            print("docgen: put: %s" % e, file=sys.stderr)
            return 1
        only = True
    only = only or "--measured-only" in argv
    problems, bad = [], []
    for path in PAGES + [MAN]:
        full = os.path.join(ROOT, path)
        if not os.path.exists(full):
            continue
        with open(full) as f:
            text = f.read()
        try:
            new = regenerate(path, text, only, problems)
        except ValueError as e:
            problems.append("%s: %s" % (path, e))
            continue
        what = argv[1] if argv[0] == "check" and len(argv) > 1 else "all"
        if path != MAN and argv[0] == "check" and what in ("all", "ratios"):
            problems += typed_ratios(path, new)
        if new == text or what == "ratios":
            continue
        if argv[0] == "check":
            bad.append(path)
            old_l, new_l = text.split("\n"), new.split("\n")
            k = next(i for i in range(max(len(old_l), len(new_l)))
                     if i >= len(old_l) or i >= len(new_l) or old_l[i] != new_l[i])
            problems.append("%s:%d: differs from its source: %r, the source gives %r" %
                            (path, k + 1, old_l[k] if k < len(old_l) else "",
                             new_l[k] if k < len(new_l) else ""))
        else:
            with open(full, "w") as f:
                f.write(new)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
