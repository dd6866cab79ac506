#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks a page of `blkwise analyze --html` as headless Chromium drew it.

usage: html_check.py DOM PNG WIDTH ANALYZE_JSON [--determined] [--decisions N]

DOM is Chromium's --dump-dom of the page (after its script ran), PNG its
--screenshot at the same window size, ANALYZE_JSON `analyze --json` of the
same trace.  Every chart must have drawn data, ticks on both axes with
labels and units, and pixels of its data's colour where the DOM says the
chart is; the heatmap's rows must cover the data's latencies (not 1 us to
minutes), with a colour legend and its p50/p99 lines; no title, legend item
or axis label may be cut or overlap another (check_layout).  Prints one line per
chart; exit 1 on the first failed check.
"""
import json
import re
import struct
import sys
import zlib
from html.parser import HTMLParser


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.kids, self.text = [], ""

    def cls(self):
        return self.attrs.get("class", "").split()

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()

    def find(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag)
                and (cls is None or cls in n.cls())]

    def all_text(self):
        return self.text + "".join(k.all_text() for k in self.kids)


class Tree(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self):
        super().__init__()
        self.root = Node("root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in self.VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text += data


def png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB(A) PNG."""
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    off, idat, w = 8, b"", 0
    while off < len(d):
        n, t = struct.unpack(">I4s", d[off:off + 8])
        body = d[off + 8:off + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif t == b"IDAT":
            idat += body
        off += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def count(img, box, pred):
    w, h, bpp, rows = img
    x0, y0, bw, bh = box
    n = 0
    for y in range(max(0, y0), min(h, y0 + bh)):
        r = rows[y]
        for x in range(max(0, x0), min(w, x0 + bw)):
            p = r[x * bpp:x * bpp + 3]
            n += pred(p[0], p[1], p[2])
    return n


def near(rgb, tol=40):
    return lambda r, g, b: abs(r - rgb[0]) + abs(g - rgb[1]) + abs(b - rgb[2]) <= tol


def ns_of(label):
    m = re.match(r"([0-9.]+) (ns|µs|ms|s)$", label)
    if not m:
        fail(f"heatmap y label without a unit: {label!r}")
    return float(m.group(1)) * {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def points(path):
    return len(re.findall(r"[ML]", path.attrs.get("d", "")))


def check_layout(kind, chart, w, h):
    """The title, the legend's items and the axis labels, as Chromium drew
    them (the page's data-layout: [kind, x, y, width, height] each): all
    inside the chart, and no two overlapping."""
    boxes = json.loads(chart.attrs.get("data-layout", "[]"))
    kinds = {b[0] for b in boxes}
    if not {"title", "legend", "axis"} <= kinds:
        fail(f"{kind}: layout has {sorted(kinds)}, not a title, a legend and axis labels")
    for b in boxes:
        x, y, bw, bh = b[1:]
        if bw <= 0 or x < -0.5 or y < -0.5 or x + bw > w + 0.5 or y + bh > h + 0.5:
            fail(f"{kind}: {b[0]} at {b[1:]} is cut by the {w:g}x{h:g} chart")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if (a[1] < b[1] + b[3] - 0.5 and b[1] < a[1] + a[3] - 0.5 and
                    a[2] < b[2] + b[4] - 0.5 and b[2] < a[2] + a[4] - 0.5):
                fail(f"{kind}: {a[0]} at {a[1:]} overlaps {b[0]} at {b[1:]}")


def main():
    dom_path, png_path, width, an_path = sys.argv[1:5]
    determined = "--determined" in sys.argv
    decisions = None
    if "--decisions" in sys.argv:
        decisions = int(sys.argv[sys.argv.index("--decisions") + 1])
    width = int(width)
    t = Tree()
    t.feed(open(dom_path, encoding="utf-8").read())
    an = json.load(open(an_path))
    img = png(png_path)
    title = t.root.find("title")[0].all_text()
    trace = an["trace"]["file"].rstrip("/").split("/")[-1]
    if trace not in title:
        fail(f"the title {title!r} does not name the trace {trace!r}")
    for n in t.root.walk():
        fs = n.attrs.get("font-size")
        if fs and float(fs) < 12:
            fail(f"{fs} px type in <{n.tag}>")
    css = "".join(s.all_text() for s in t.root.find("style"))
    for fs in re.findall(r"font(?:-size)?:[^;}]*?([0-9.]+)px", css):
        if float(fs) < 12:
            fail(f"{fs} px type in the style sheet")
    if re.search(r"width:\s*960px", css):
        fail("a fixed 960 px width")
    charts = t.root.find("div", "chart")
    if len(charts) < 4 * len(an["devices"]):
        fail(f"{len(charts)} charts for {len(an['devices'])} devices")
    marks = 0
    for c in charts:
        kind = c.attrs["data-kind"]
        svg = c.find("svg")
        if not svg:
            fail(f"{kind}: no svg drawn")
        svg = svg[0]
        sw = float(svg.attrs["width"])
        if not (0.5 * min(width, 1800) < sw <= width):
            fail(f"{kind}: {sw} px wide in a {width} px window")
        for ax in ("x", "y"):
            ticks = [g for g in svg.find("g", "axis") if ax in g.cls()][0].find("g", "tick")
            labels = [g.all_text().strip() for g in ticks]
            if len(ticks) < 3 or not all(labels):
                fail(f"{kind}: {len(ticks)} {ax} ticks, labels {labels}")
        units = [n.all_text() for n in svg.find("text", "axis-label")]
        if len(units) != 2 or not re.search(r"\((s|ms)\)", units[0]) or not units[1]:
            fail(f"{kind}: axis labels {units}")
        if len(svg.find(cls="grid")[0].find("line")) < 4:
            fail(f"{kind}: no gridlines")
        check_layout(kind, c, sw, float(svg.attrs["height"]))
        box = [int(v) for v in c.attrs["data-box"].split(",")]
        if kind == "heatmap":
            cells = svg.find("g", "cells")[0].find("rect")
            if len(cells) < 10:
                fail(f"heatmap: {len(cells)} cells")
            ys = [ns_of(g.all_text().strip()) for g in
                  [g for g in svg.find("g", "axis") if "y" in g.cls()][0].find("g", "tick")]
            lat = [x for d in an["devices"] for o in d["latency"].values()
                   for k, x in o.items() if k == "q2c" or (k == "d2c" and "q2c" not in o)]
            lo = min(x["min_ms"] for x in lat) * 1e6
            hi = max(x["max_ms"] for x in lat) * 1e6
            if not (min(ys) <= lo * 2 and max(ys) >= hi / 2 and max(ys) / min(ys) <= 1e3 * hi / lo):
                fail(f"heatmap rows {min(ys)}..{max(ys)} ns for data {lo}..{hi} ns")
            leg = svg.find("g", "colour")
            if not leg or len(leg[0].find("rect")) < 10 or len(leg[0].find("text")) < 2:
                fail("heatmap: no colour legend")
            for q in ("p50", "p99"):
                p = [x for x in svg.find("path", q)]
                if not p or points(p[0]) < 2:
                    fail(f"heatmap: no {q} line")
            px = count(img, box, lambda r, g, b: r > 120 and b < 120 and r - b > 80)
            need = 200
        elif kind == "peff":
            path = svg.find("path", "peff")[0]
            grey = len(svg.find("g", "undetermined")[0].find("rect"))
            strip = len(svg.find("g", "class-strip")[0].find("rect"))
            if determined and points(path) < 2:
                fail("peff: P_eff determined but no line")
            if not determined and grey < 1:
                fail("peff: undetermined but no span shown")
            if strip < 1:
                fail("peff: no class strip")
            px = count(img, box, near((0x1f, 0x4e, 0x9c))) if determined else \
                count(img, box, near((0xec, 0xee, 0xf3), 6))
            need = 100 if determined else 5000
        else:
            path = svg.find("path", "data")[0]
            if points(path) < 4:
                fail(f"{kind}: {points(path)} points drawn")
            rgb = (0x2f, 0x6f, 0xd6) if kind == "iops" else (0xc2, 0x37, 0x2e)
            px = count(img, box, near(rgb))
            need = 200
        if px < need:
            fail(f"{kind}: {px} pixels of its data in the screenshot at {box}")
        if decisions is not None:
            marks += len(svg.find("g", "decision"))
        print(f"  {width} px: {kind}: {sw:.0f} px wide, {px} data pixels")
    if decisions is not None and marks != decisions * len(charts) // len(an["devices"]):
        fail(f"{marks} decision markers over {len(charts)} charts for {decisions} decisions")
    print("ok")


main()
