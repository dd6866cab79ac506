#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The layers of user/ (docs/design.md, "Source layout"), checked.

  tools/layers.py [--src DIR] [--objs DIR]

Each folder of user/ is a layer and may use only the folders below it:

  cmd      -> export analyze tune watch load sys model
  export   -> tune watch load sys model
  analyze  -> sys model
  tune     -> watch load sys model
  watch    -> load sys model
  load     -> sys model
  sys      -> model
  model    -> (nothing: pure)

Four checks, each failing with one line per offence:
  - includes: a file's #include "folder/x.h" names its own folder or one it
    may use; any other quoted include is a header of bpf/ (shared by BPF and
    user space) or a generated one (a BPF skeleton: load/ only; version.h,
    report_js.h);
  - include cycles between files;
  - calls (with --objs, the build folder): an object's undefined symbols
    resolved against the symbols the other objects define give who calls
    whom; a call must go to the caller's folder or one it may use, and no
    two objects may call each other, directly or around a longer cycle;
  - the watch session's insides: cmd/ and export/ read struct bw_watch
    (watch/watch.h) through its functions, never its fields (its options,
    o, are the caller's own).
Exit 0 when all hold, 1 otherwise.
"""
import os
import re
import subprocess
import sys

MAY_USE = {
    "cmd": {"export", "analyze", "tune", "watch", "load", "sys", "model"},
    "export": {"tune", "watch", "load", "sys", "model"},
    "analyze": {"sys", "model"},
    "tune": {"watch", "load", "sys", "model"},
    "watch": {"load", "sys", "model"},
    "load": {"sys", "model"},
    "sys": {"model"},
    "model": set(),
}
GENERATED = {"version.h", "report_js.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed(src, dst):
    return src == dst or dst in MAY_USE.get(src, set())


def sources(src):
    out = []
    for folder in sorted(os.listdir(src)):
        d = os.path.join(src, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out.append(folder + "/" + name)
    return out


def check_includes(src, bpf, errors):
    files = sources(src)
    known = set(files)
    folders = {f.split("/")[0] for f in files}
    for f in files:
        if f.split("/")[0] not in MAY_USE:
            errors.append("user/%s: folder %s is not a layer (tools/layers.py MAY_USE)"
                          % (f, f.split("/")[0]))
    bpf_headers = set(os.listdir(bpf)) if os.path.isdir(bpf) else set()
    graph = {}
    for f in files:
        folder = f.split("/")[0]
        text = open(os.path.join(src, f), errors="replace").read()
        graph[f] = []
        for inc in INCLUDE.findall(text):
            if "/" in inc:
                dst = inc.split("/")[0]
                if inc not in known and dst in folders:
                    errors.append("user/%s: includes \"%s\", which does not exist" % (f, inc))
                elif not allowed(folder, dst):
                    errors.append("user/%s: includes \"%s\": %s/ may not use %s/"
                                  % (f, inc, folder, dst))
                graph[f].append(inc)
            elif inc.endswith(".skel.h"):
                if folder != "load":
                    errors.append("user/%s: includes the skeleton \"%s\": only load/ may"
                                  % (f, inc))
            elif inc not in bpf_headers and inc not in GENERATED:
                errors.append("user/%s: includes \"%s\": give its folder (\"model/%s\"), "
                              "or it is no header of bpf/" % (f, inc, inc))
    for cyc in cycles(graph):
        errors.append("include cycle: " + " -> ".join("user/" + c for c in cyc + cyc[:1]))


SESSION = re.compile(r"struct bw_watch \{(.*?)\n\};", re.S)
FIELD = re.compile(r"[\s*(]\**(\w+)(?:\[[^]]*\])?;")


def check_session(src, errors):
    """cmd/ and export/ use no field of struct bw_watch but o."""
    header = os.path.join(src, "watch", "watch.h")
    if not os.path.exists(header):
        return
    body = SESSION.search(open(header).read())
    if not body:
        errors.append("user/watch/watch.h: struct bw_watch not found")
        return
    fields = set()
    for line in body.group(1).split("\n"):
        code = line.split("/*")[0]
        fields.update(FIELD.findall(code))
    fields.discard("o")
    # The session is w (stat) or x->w (export); a->w is a command's options.
    use = re.compile(r"(?:\bx->w|(?<![.>])\bw)(?:\.|->)(%s)\b" % "|".join(sorted(fields)))
    for f in sources(src):
        if f.split("/")[0] not in ("cmd", "export"):
            continue
        for n, line in enumerate(open(os.path.join(src, f), errors="replace"), 1):
            for m in use.finditer(line):
                errors.append("user/%s:%d: reads the watch session's field %s: use a "
                              "bw_watch_* function" % (f, n, m.group(1)))


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def nm(path):
    res = subprocess.run(["nm", path], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCGSV":
            defined.add(parts[2])
    return defined, undefined


def check_calls(objs, errors):
    units = {}
    for folder in sorted(MAY_USE):
        d = os.path.join(objs, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".o"):
                units[folder + "/" + name[:-2]] = nm(os.path.join(d, name))
    if not units:
        errors.append("%s: no objects under the layer folders (build first)" % objs)
        return
    owner = {}
    for u, (defined, _) in units.items():
        for sym in defined:
            owner.setdefault(sym, u)
    graph = {}
    for u, (_, undefined) in units.items():
        graph[u] = set()
        for sym in sorted(undefined):
            v = owner.get(sym)
            if not v or v == u:
                continue
            graph[u].add(v)
            if not allowed(u.split("/")[0], v.split("/")[0]):
                errors.append("user/%s.c calls %s of user/%s.c: %s/ may not use %s/"
                              % (u, sym, v, u.split("/")[0], v.split("/")[0]))
    for cyc in cycles({u: sorted(vs) for u, vs in graph.items()}):
        errors.append("call cycle: " + " <-> ".join("user/%s.c" % c for c in cyc))


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src, objs = os.path.join(root, "user"), None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--src" and args:
            src = args.pop(0)
        elif a == "--objs" and args:
            objs = args.pop(0)
        else:
            print("usage: tools/layers.py [--src DIR] [--objs DIR]", file=sys.stderr)
            return 2
    errors = []
    check_includes(src, os.path.join(root, "bpf"), errors)
    check_session(src, errors)
    if objs:
        check_calls(objs, errors)
    for e in errors:
        print(e)
    if not errors:
        print("layers: %d files, no offence%s" % (len(sources(src)),
                                                 ", calls checked" if objs else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
