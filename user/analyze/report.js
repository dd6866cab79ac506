// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise analyze --html: draws the charts of the page from its data
 * (the JSON in #bw-data, written by user/analyze/html.c), as SVG at the width of
 * the window, again when it changes.  No library, nothing fetched.
 */
'use strict';
(function () {
	var D = JSON.parse(document.getElementById('bw-data').textContent);
	var NS = 'http://www.w3.org/2000/svg';
	var M = { l: 74, r: 18, t: 30, b: 46 };
	var LEGEND_ROW = 20;	/* the legend's row, between the title and the plot */
	var CLS = { deep: '#2e8b57', shallow: '#e08a1e', unknown: '#b8bcc8' };

	function el(p, tag, a, text) {
		var e = document.createElementNS(NS, tag);
		for (var k in a)
			e.setAttribute(k, a[k]);
		if (text !== undefined)
			e.textContent = text;
		if (p)
			p.appendChild(e);
		return e;
	}

	/* Ticks at 1, 2 or 5 times a power of ten, about n of them over [a, b]. */
	function ticks(a, b, n) {
		var span = b - a, step, m, out = [], v;
		if (!(span > 0))
			return [a];
		step = Math.pow(10, Math.floor(Math.log10(span / n)));
		m = span / n / step;
		step *= m >= 5 ? 5 : m >= 2 ? 2 : 1;
		for (v = Math.ceil(a / step - 1e-9) * step; v <= b + step * 1e-9; v += step)
			out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
		return out;
	}

	function fmt(v) {
		var a = Math.abs(v);
		if (a >= 1e6)
			return (v / 1e6).toPrecision(3).replace(/\.?0+$/, '') + 'M';
		if (a >= 1e4)
			return (v / 1e3).toPrecision(3).replace(/\.?0+$/, '') + 'k';
		return String(+v.toPrecision(4));
	}

	/* A latency in ns, with its unit. */
	function fmtNs(ns) {
		if (ns < 1e3)
			return +ns.toPrecision(3) + ' ns';
		if (ns < 1e6)
			return +(ns / 1e3).toPrecision(3) + ' µs';
		if (ns < 1e9)
			return +(ns / 1e6).toPrecision(3) + ' ms';
		return +(ns / 1e9).toPrecision(3) + ' s';
	}

	/* The time axis: seconds, or milliseconds for a trace under 2 s. */
	function timeUnit(span) {
		return span < 2 ? { k: 1e3, name: 'ms' } : { k: 1, name: 's' };
	}

	/*
	 * A chart's frame: its title, wrapped at words to the chart's width as
	 * drawn (one line per 18 px), then a row of its own for the legend
	 * (legend()), then the plot: nothing of the three can meet another at
	 * any width, and the svg grows by what the title's extra lines take.
	 */
	function frame(div, title, h) {
		var w = Math.max(320, div.clientWidth);
		div.innerHTML = '';
		var svg = el(div, 'svg', { width: w, height: h, role: 'img', 'aria-label': title });
		el(svg, 'title', {}, title);
		var t = el(svg, 'text', { x: 4, y: 18, 'font-size': 15, 'font-weight': 600,
					  class: 'chart-title' }), lines = 1;
		var words = title.split(' '), span = el(t, 'tspan', { x: 4 }, words[0]);
		for (var i = 1; i < words.length; i++) {
			var was = span.textContent;
			span.textContent = was + ' ' + words[i];
			if (span.getComputedTextLength() > w - 8) {
				span.textContent = was;
				span = el(t, 'tspan', { x: 4, dy: 18 }, words[i]);
				lines++;
			}
		}
		var extra = (lines - 1) * 18 + LEGEND_ROW;
		h += extra;
		svg.setAttribute('height', h);
		svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
		return { svg: svg, w: w, h: h, x0: M.l, x1: w - M.r, y0: h - M.b, y1: M.t + extra,
			 legendY: 18 * lines + 16 };
	}

	/* Title, legend and axis labels as drawn: [kind, x, y, width, height] each. */
	function layout(svg) {
		var out = [];
		[['chart-title', 'title'], ['legend', 'legend'], ['axis-label', 'axis']].forEach(function (c) {
			var ns = svg.querySelectorAll('.' + c[0] + (c[0] === 'legend' ? ' text' : ''));
			for (var i = 0; i < ns.length; i++) {
				var b = ns[i].getBoundingClientRect(), o = svg.getBoundingClientRect();
				out.push([c[1], b.left - o.left, b.top - o.top, b.width, b.height].map(function (v) {
					return typeof v === 'number' ? Math.round(v * 10) / 10 : v;
				}));
			}
		});
		return out;
	}

	/* Axes, ticks, gridlines and labels; sx, sy map data to pixels. */
	function axes(f, xt, sx, xfmt, xlabel, yt, sy, yfmt, ylabel) {
		var g = el(f.svg, 'g', { class: 'grid' });
		var ax = el(f.svg, 'g', { class: 'axis x' });
		var ay = el(f.svg, 'g', { class: 'axis y' });
		xt.forEach(function (v) {
			var x = sx(v);
			if (x < f.x0 - 0.5 || x > f.x1 + 0.5)
				return;
			el(g, 'line', { x1: x, x2: x, y1: f.y1, y2: f.y0 });
			var t = el(ax, 'g', { class: 'tick' });
			el(t, 'line', { x1: x, x2: x, y1: f.y0, y2: f.y0 + 5, stroke: '#333' });
			el(t, 'text', { x: x, y: f.y0 + 19, 'text-anchor': 'middle' }, xfmt(v));
		});
		yt.forEach(function (v) {
			var y = sy(v);
			if (y < f.y1 - 0.5 || y > f.y0 + 0.5)
				return;
			el(g, 'line', { x1: f.x0, x2: f.x1, y1: y, y2: y });
			var t = el(ay, 'g', { class: 'tick' });
			el(t, 'line', { x1: f.x0 - 5, x2: f.x0, y1: y, y2: y, stroke: '#333' });
			el(t, 'text', { x: f.x0 - 8, y: y + 4, 'text-anchor': 'end' }, yfmt(v));
		});
		el(f.svg, 'line', { x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, stroke: '#333' });
		el(f.svg, 'line', { x1: f.x0, x2: f.x0, y1: f.y1, y2: f.y0, stroke: '#333' });
		el(f.svg, 'text', { x: (f.x0 + f.x1) / 2, y: f.h - 6, 'text-anchor': 'middle',
				    class: 'axis-label' }, xlabel);
		el(f.svg, 'text', { x: 14, y: (f.y0 + f.y1) / 2, 'text-anchor': 'middle',
				    class: 'axis-label',
				    transform: 'rotate(-90 14 ' + (f.y0 + f.y1) / 2 + ')' }, ylabel);
	}

	/* The time domain of a device: its requests' columns and its intervals. */
	function domain(d) {
		var a = Infinity, b = 0, i;
		for (i = 0; i < d.ios.length; i++)
			if (d.ios[i] || d.inflight[i] > 0) {
				a = Math.min(a, i * d.col_s);
				b = Math.max(b, (i + 1) * d.col_s);
			}
		d.ticks.forEach(function (k) {
			a = Math.min(a, k[0]);
			b = Math.max(b, k[0] + k[1]);
		});
		if (!isFinite(a))
			a = 0;
		return [a, Math.max(b, a + 1e-6)];
	}

	function timeScale(f, dom) {
		var u = timeUnit(dom[1] - dom[0]);
		var sx = function (t) {
			return f.x0 + (t - dom[0]) / (dom[1] - dom[0]) * (f.x1 - f.x0);
		};
		var n = Math.max(3, Math.floor((f.x1 - f.x0) / 110));
		var xt = ticks(dom[0] * u.k, dom[1] * u.k, n).map(function (v) { return v / u.k; });
		return { sx: sx, xt: xt, fmt: function (t) { return fmt(t * u.k); },
			 label: 'time from the trace\'s start (' + u.name + ')' };
	}

	/*
	 * Request columns merged k at a time: each at least px pixels wide and,
	 * where that leaves more than lo of them, holding per completions on
	 * average (a rate of 1 or 2 completions is noise).
	 */
	function bins(d, dom, f, px, per, lo) {
		var first = Math.floor(dom[0] / d.col_s), last = Math.ceil(dom[1] / d.col_s);
		var n = Math.max(1, last - first), ios = 0, want, i;
		for (i = first; i < last && i < d.ios.length; i++)
			ios += d.ios[i];
		want = Math.min(Math.floor((f.x1 - f.x0) / px), Math.max(lo, Math.floor(ios / per)));
		var k = Math.max(1, Math.ceil(n / Math.max(1, want)));
		var out = [], j;
		for (i = first; i < last; i += k) {
			var b = { t: i * d.col_s, s: Math.min(k * d.col_s, dom[1] - i * d.col_s), ios: 0,
				  bytes: 0, inflight: 0, heat: {} };
			for (j = i; j < i + k && j < d.ios.length; j++) {
				b.ios += d.ios[j];
				b.bytes += d.bytes[j];
				b.inflight += d.inflight[j] * d.col_s / b.s;
				for (var h = 0; h < d.heat[j].length; h += 2)
					b.heat[d.heat[j][h]] = (b.heat[d.heat[j][h]] || 0) + d.heat[j][h + 1];
			}
			out.push(b);
		}
		/* A last bin under half the others' width goes into the one before it. */
		var z = out[out.length - 1], y = out[out.length - 2];
		if (y && z.s < y.s / 2) {
			y.inflight = (y.inflight * y.s + z.inflight * z.s) / (y.s + z.s);
			y.ios += z.ios;
			y.bytes += z.bytes;
			y.s += z.s;
			for (var r in z.heat)
				y.heat[r] = (y.heat[r] || 0) + z.heat[r];
			out.pop();
		}
		return out;
	}

	/* What-if decisions: a dashed line and its label at each. */
	function markers(f, d, sx) {
		var g = el(f.svg, 'g', { class: 'decisions' });
		d.decisions.forEach(function (x) {
			var px = sx(x[0]);
			if (px < f.x0 || px > f.x1)
				return;
			var m = el(g, 'g', { class: 'decision' });
			el(m, 'line', { x1: px, x2: px, y1: f.y1, y2: f.y0, stroke: '#7a2bb5',
					'stroke-dasharray': '5 3', 'stroke-width': 1.5 });
			el(m, 'text', { x: px + 4, y: f.y1 + 12, fill: '#7a2bb5', 'font-size': 12 },
			   x[1] + ' slice_idle ' + x[2] + '→' + x[3] + ' µs');
			el(m, 'title', {}, 'what-if at ' + x[0].toFixed(2) + ' s: ' + x[4]);
		});
	}

	function line(f, pts, color, cls, width) {
		var s = '', pen = false;
		pts.forEach(function (p) {
			if (p === null || !isFinite(p[1])) {
				pen = false;
				return;
			}
			s += (pen ? 'L' : 'M') + p[0].toFixed(1) + ' ' + p[1].toFixed(1) + ' ';
			pen = true;
		});
		return el(f.svg, 'path', { d: s, fill: 'none', stroke: color, class: 'data ' + cls,
					   'stroke-width': width || 2 });
	}

	/* The legend, right-aligned on its row (frame()), each item as wide as its text is drawn. */
	function legend(f, items) {
		var g = el(f.svg, 'g', { class: 'legend' }), x = f.x1;
		items.slice().reverse().forEach(function (it) {
			var t = el(g, 'text', { y: f.legendY, 'font-size': 13 }, it[1]);
			x -= 21 + t.getComputedTextLength() + 12;
			t.setAttribute('x', x + 21);
			el(g, 'rect', { x: x, y: f.legendY - 7, width: 16, height: 4, fill: it[0] });
		});
	}

	/* A step line over the columns (each value held over its column). */
	function steps(bs, sx, sy, get) {
		var pts = [];
		bs.forEach(function (b) {
			var v = get(b);
			pts.push([sx(b.t), sy(v)], [sx(b.t + b.s), sy(v)]);
		});
		return pts;
	}

	function chartIops(div, d) {
		var f = frame(div, 'Completions per second (IOPS) and throughput', 260);
		var dom = domain(d), ts = timeScale(f, dom), bs = bins(d, dom, f, 4, 8, 40);
		var max = 0;
		bs.forEach(function (b) { max = Math.max(max, b.ios / b.s); });
		max = max > 0 ? max * 1.1 : 1;
		var sy = function (v) { return f.y0 - v / max * (f.y0 - f.y1); };
		axes(f, ts.xt, ts.sx, ts.fmt, ts.label, ticks(0, max, 5), sy, fmt, 'IOPS');
		line(f, steps(bs, ts.sx, sy, function (b) { return b.ios / b.s; }), '#2f6fd6', 'iops');
		var mb = 0;
		bs.forEach(function (b) { mb = Math.max(mb, b.bytes / b.s / 1e6); });
		legend(f, [['#2f6fd6', 'IOPS (peak ' + fmt(max / 1.1) + '/s, ' +
				(mb ? fmt(mb) + ' MB/s peak' : 'no bytes') + '; per ' +
				fmtNs(bs[0].s * 1e9) + ')']]);
		markers(f, d, ts.sx);
	}

	function chartDepth(div, d) {
		var f = frame(div, 'Requests in flight on the device (D to C)', 260);
		var dom = domain(d), ts = timeScale(f, dom), bs = bins(d, dom, f, 4, 8, 40);
		var max = 1;
		bs.forEach(function (b) { max = Math.max(max, b.inflight); });
		d.ticks.forEach(function (k) { max = Math.max(max, k[6]); });
		max *= 1.1;
		var sy = function (v) { return f.y0 - v / max * (f.y0 - f.y1); };
		axes(f, ts.xt, ts.sx, ts.fmt, ts.label, ticks(0, max, 5), sy, fmt, 'requests');
		line(f, steps(bs, ts.sx, sy, function (b) { return b.inflight; }), '#c2372e', 'inflight');
		var mx = [];
		d.ticks.forEach(function (k) {
			mx.push([ts.sx(k[0]), sy(k[6])], [ts.sx(k[0] + k[1]), sy(k[6])]);
		});
		line(f, mx, '#888', 'depth-max', 1.5).setAttribute('stroke-dasharray', '4 3');
		legend(f, [['#c2372e', 'mean in flight (per ' + fmtNs(bs[0].s * 1e9) + ')'],
			   ['#888', 'max depth per stat interval']]);
		markers(f, d, ts.sx);
	}

	/* Latency of a heatmap row's lower edge, ns (row 0: under 1 us). */
	function rowNs(d, r) {
		return r <= 0 ? 0 : 1e3 * Math.pow(2, (r - 1) / d.rows_per_octave);
	}

	/* White to yellow to red to black, by log of the count. */
	function heatColor(v, max) {
		var x = Math.log(1 + v) / Math.log(1 + max), r, g, b;
		if (x < 0.5) {
			r = 255; g = 245 - 70 * x * 2; b = 170 - 150 * x * 2;
		} else {
			r = 255 - 120 * (x - 0.5) * 2; g = 175 - 175 * (x - 0.5) * 2; b = 20;
		}
		return 'rgb(' + Math.round(r) + ',' + Math.round(g) + ',' + Math.round(b) + ')';
	}

	/* The row holding the rank q of a column's completions. */
	function pctRow(b, q) {
		var rows = Object.keys(b.heat).map(Number).sort(function (x, y) { return x - y; });
		var n = 0, c = 0, i;
		rows.forEach(function (r) { n += b.heat[r]; });
		if (!n)
			return null;
		for (i = 0; i < rows.length; i++) {
			c += b.heat[rows[i]];
			if (c >= Math.ceil(q * n))
				return rows[i];
		}
		return rows[rows.length - 1];
	}

	function chartHeat(div, d) {
		var f = frame(div, 'Latency heatmap (Q2C, D2C where Q is unknown): completions ' +
			      'by time and latency', 340);
		f.x1 -= 70;	/* room for the colour legend */
		var dom = domain(d), ts = timeScale(f, dom), bs = bins(d, dom, f, 8, 20, 30);
		var lo = Infinity, hi = -Infinity, max = 0;
		bs.forEach(function (b) {
			Object.keys(b.heat).forEach(function (r) {
				lo = Math.min(lo, +r);
				hi = Math.max(hi, +r);
				max = Math.max(max, b.heat[r]);
			});
		});
		if (!isFinite(lo)) {
			lo = 1; hi = 40;
		}
		/* The rows of the data, with a doubling of room on either side. */
		lo = Math.max(0, lo - d.rows_per_octave);
		hi = hi + d.rows_per_octave + 1;
		var rh = (f.y0 - f.y1) / (hi - lo);
		var yOfRow = function (r) { return f.y0 - (r - lo) * rh; };
		var yOfNs = function (ns) {
			var r = ns < 1e3 ? 0 : 1 + Math.log2(ns / 1e3) * d.rows_per_octave;
			return yOfRow(r);
		};
		var yt = [], p, m;
		for (p = -9; p <= 4; p++)
			[1, 2, 5].forEach(function (k) { yt.push(k * Math.pow(10, p) * 1e9); });
		yt = yt.filter(function (ns) { return yOfNs(ns) <= f.y0 && yOfNs(ns) >= f.y1; });
		if (yt.length > 8)
			yt = yt.filter(function (ns) { return /^1/.test(ns.toExponential()); });
		axes(f, ts.xt, ts.sx, ts.fmt, ts.label, yt, yOfNs, fmtNs, 'latency (log scale)');
		var g = el(f.svg, 'g', { class: 'data cells' });
		bs.forEach(function (b) {
			var x = ts.sx(b.t), w = Math.max(1, ts.sx(b.t + b.s) - x);
			Object.keys(b.heat).forEach(function (r) {
				var c = el(g, 'rect', { x: x.toFixed(1), y: (yOfRow(+r + 1)).toFixed(1),
						      width: (w + 0.4).toFixed(1), height: (rh + 0.4).toFixed(1),
						      fill: heatColor(b.heat[r], max) });
				el(c, 'title', {}, b.heat[r] + ' completions of ' + fmtNs(rowNs(d, +r)) +
				   ' to ' + fmtNs(rowNs(d, +r + 1)) + ' at ' + b.t.toFixed(3) + ' s');
			});
		});
		[[0.5, '#00a6ff', 'p50'], [0.99, '#111', 'p99']].forEach(function (q) {
			var pts = [];
			bs.forEach(function (b) {
				var r = pctRow(b, q[0]);
				if (r === null) {
					pts.push(null);
					return;
				}
				var y = yOfRow(r + 0.5);
				pts.push([ts.sx(b.t), y], [ts.sx(b.t + b.s), y]);
			});
			line(f, pts, q[1], 'pct ' + q[2], 2);
		});
		legend(f, [['#00a6ff', 'p50 per column'], ['#111', 'p99 per column']]);
		/* The colour legend: counts per cell. */
		var lg = el(f.svg, 'g', { class: 'legend colour' });
		var lx = f.x1 + 22, n = 40;
		for (m = 0; m < n; m++)
			el(lg, 'rect', { x: lx, y: f.y0 - (m + 1) * (f.y0 - f.y1) / n, width: 14,
					 height: (f.y0 - f.y1) / n + 0.5, fill: heatColor(
					 Math.exp(m / (n - 1) * Math.log(1 + max)) - 1, max) });
		[1, Math.round(Math.sqrt(max)), max].filter(function (v, i, a) {
			return v >= 1 && a.indexOf(v) === i;
		}).forEach(function (v) {
			var y = f.y0 - Math.log(1 + v) / Math.log(1 + max) * (f.y0 - f.y1);
			el(lg, 'text', { x: lx + 18, y: y + 4, 'font-size': 12 }, fmt(v));
		});
		el(lg, 'text', { x: lx - 8, y: f.y1 - 14, 'font-size': 12 }, 'per cell');
		markers(f, d, ts.sx);
	}

	function chartPeff(div, d) {
		var det = d.ticks.filter(function (k) { return k[2] !== null; });
		var top = 2.5, why = {};
		det.forEach(function (k) { top = Math.max(top, k[2] * 1.1); });
		var f = frame(div, 'Effective parallelism P_eff and class, per stat interval' +
			      (det.length ? '' : ' (undetermined throughout)'), 280);
		f.y0 -= 22;	/* the class strip below */
		var dom = domain(d), ts = timeScale(f, dom);
		var sy = function (v) { return f.y0 - v / top * (f.y0 - f.y1); };
		axes(f, ts.xt, ts.sx, ts.fmt, ts.label, ticks(0, top, 5), sy, fmt, 'P_eff');
		var u = el(f.svg, 'g', { class: 'undetermined' });
		d.ticks.forEach(function (k) {
			if (k[2] !== null)
				return;
			why[k[3]] = 1;
			var r = el(u, 'rect', { x: ts.sx(k[0]), y: f.y1, width: Math.max(1,
				   ts.sx(k[0] + k[1]) - ts.sx(k[0])), height: f.y0 - f.y1,
				   fill: '#eceef3' });
			el(r, 'title', {}, 'undetermined: ' + k[3]);
		});
		[[2.0, 'deep ≥ 2.0'], [1.4, 'shallow ≤ 1.4']].forEach(function (th) {
			el(f.svg, 'line', { x1: f.x0, x2: f.x1, y1: sy(th[0]), y2: sy(th[0]),
					    stroke: '#999', 'stroke-dasharray': '6 4' });
			el(f.svg, 'text', { x: f.x1 - 4, y: sy(th[0]) - 4, 'text-anchor': 'end',
					    'font-size': 12, fill: '#666' }, th[1]);
		});
		var pts = [];
		d.ticks.forEach(function (k) {
			if (k[2] === null) {
				pts.push(null);
				return;
			}
			pts.push([ts.sx(k[0]), sy(k[2])], [ts.sx(k[0] + k[1]), sy(k[2])]);
		});
		line(f, pts, '#1f4e9c', 'peff', 2.5);
		var cs = el(f.svg, 'g', { class: 'class-strip' });
		d.ticks.forEach(function (k) {
			var r = el(cs, 'rect', { x: ts.sx(k[0]), y: f.y0 + 26, height: 10,
				   width: Math.max(1, ts.sx(k[0] + k[1]) - ts.sx(k[0])), fill: CLS[k[4]] });
			el(r, 'title', {}, 'class ' + k[4]);
		});
		var ws = Object.keys(why);
		if (ws.length)
			el(f.svg, 'text', { x: f.x0 + 8, y: f.y1 + 16, class: 'note',
					    'font-size': 13 }, 'grey: undetermined (' + ws.join('; ') + ')');
		el(cs, 'text', { x: f.x0 - 8, y: f.y0 + 35, 'text-anchor': 'end', 'font-size': 12 },
		   'class');
		legend(f, [['#1f4e9c', 'P_eff'], [CLS.deep, 'deep'], [CLS.shallow, 'shallow'],
			   [CLS.unknown, 'class unknown']]);
		markers(f, d, ts.sx);
	}

	var draw = { heatmap: chartHeat, iops: chartIops, depth: chartDepth, peff: chartPeff };

	function drawAll() {
		var cs = document.querySelectorAll('div.chart');
		for (var i = 0; i < cs.length; i++) {
			var d = D.devices[+cs[i].getAttribute('data-dev')];
			draw[cs[i].getAttribute('data-kind')](cs[i], d);
			cs[i].setAttribute('data-layout', JSON.stringify(layout(cs[i].querySelector('svg'))));
			var r = cs[i].getBoundingClientRect();
			cs[i].setAttribute('data-box', [r.left + window.scrollX, r.top + window.scrollY,
						       r.width, r.height].map(Math.round).join(','));
		}
	}

	var pending = 0;
	window.addEventListener('resize', function () {
		clearTimeout(pending);
		pending = setTimeout(drawAll, 100);
	});
	drawAll();
})();
