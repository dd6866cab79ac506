// SPDX-License-Identifier: GPL-2.0
/*
 * analyze --html: one self-contained page.  What the replay hands on is
 * gathered into bounded per-device series, written into the page as JSON,
 * and drawn by the page's own script (user/analyze/report.js) at the window's
 * width: axes with ticks and units, gridlines, a latency heatmap with its
 * p50 and p99, IOPS and requests in flight, P_eff and class per interval
 * with the undetermined spans shown, and the what-if decisions as markers.
 * The tables (latency per op, streams) are plain HTML.
 *
 * Series from requests have columns of a width that doubles (two columns
 * folded into one) whenever the trace outgrows MAX_COLS, so the page's size
 * does not grow with the trace; the stat intervals fold the same way.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "model/policy.h"
#include "report_js.h"

#define ROWS_PER_OCT 4		/* heatmap rows per doubling of latency */
#define HEAT_ROWS (1 + 34 * ROWS_PER_OCT)	/* row 0: under 1 us; then from 1 us to ~4.8 h */
#define MAX_COLS 1000
#define COL0_NS 100000ULL	/* the first column width: 100 us */
#define MAX_TICKS 4000
#define HTML_DEVS 16

struct rcol {
	double inflight_ns;	/* sum over requests of their time in flight in the column */
	double bytes;
	__u32 ios;
	__u32 heat[HEAT_ROWS];	/* completions by Q2C (D2C when Q unknown) */
};

struct tick {
	double t, secs, p_eff, depth_busy, iops;
	__u64 depth_max;
	const char *why;
	enum bw_class_id cls;
	int merged;		/* intervals in it */
};

struct hdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct rcol *cols;
	int ncols;
	__u64 width;		/* ns per column */
	struct tick *ticks;
	int nticks;
};

struct bw_html {
	FILE *f;
	char title[256];
	struct hdev devs[HTML_DEVS];
	int ndevs;
};

static struct hdev *hdev_of(struct bw_html *h, __u32 dev)
{
	struct hdev *d;
	int i;

	for (i = 0; i < h->ndevs; i++)
		if (h->devs[i].dev == dev)
			return &h->devs[i];
	if (h->ndevs == HTML_DEVS)
		return NULL;
	d = &h->devs[h->ndevs];
	memset(d, 0, sizeof(*d));
	d->cols = calloc(MAX_COLS, sizeof(*d->cols));
	d->ticks = calloc(MAX_TICKS, sizeof(*d->ticks));
	if (!d->cols || !d->ticks) {
		free(d->cols);
		free(d->ticks);
		return NULL;
	}
	d->dev = dev;
	d->width = COL0_NS;
	snprintf(d->name, sizeof(d->name), "%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
	h->ndevs++;
	return d;
}

static int heat_row(__u64 ns)
{
	int r;

	if (ns < 1000)
		return 0;
	r = 1 + (int)floor(ROWS_PER_OCT * log2((double)ns / 1000.0));
	return r < HEAT_ROWS ? r : HEAT_ROWS - 1;
}

/* Two columns into one, the width doubled. */
static void fold_cols(struct hdev *d)
{
	int i, k;

	for (i = 0; i < (d->ncols + 1) / 2; i++) {
		struct rcol *a = &d->cols[2 * i], m = *a;

		if (2 * i + 1 < d->ncols) {
			const struct rcol *b = &d->cols[2 * i + 1];

			m.inflight_ns += b->inflight_ns;
			m.bytes += b->bytes;
			m.ios += b->ios;
			for (k = 0; k < HEAT_ROWS; k++)
				m.heat[k] += b->heat[k];
		}
		d->cols[i] = m;
	}
	memset(&d->cols[(d->ncols + 1) / 2], 0,
	       (MAX_COLS - (d->ncols + 1) / 2) * sizeof(*d->cols));
	d->ncols = (d->ncols + 1) / 2;
	d->width *= 2;
}

/* A request: its completion, bytes and latency in its column, its time in flight in each. */
void bw_html_req(struct bw_html *h, const struct bw_replay_req *q)
{
	struct hdev *d = hdev_of(h, q->dev);
	__u64 start = q->q_ts ? q->q_ts : q->d_ts, a, b;
	struct rcol *c;
	int i;

	if (!d)
		return;
	while (q->c_ts / d->width >= MAX_COLS)
		fold_cols(d);
	i = (int)(q->c_ts / d->width);
	if (i >= d->ncols)
		d->ncols = i + 1;
	c = &d->cols[i];
	c->ios++;
	c->bytes += q->bytes;
	c->heat[heat_row(q->c_ts - start)]++;
	for (i = (int)(q->d_ts / d->width); i < d->ncols; i++) {
		a = (__u64)i * d->width;
		b = a + d->width;
		if (a >= q->c_ts)
			break;
		d->cols[i].inflight_ns += (double)((q->c_ts < b ? q->c_ts : b) -
						   (q->d_ts > a ? q->d_ts : a));
	}
}

static double nan0(double v)
{
	return isnan(v) ? 0 : v;
}

/* Two intervals into one: P_eff determined if either was, the later class. */
static void fold_ticks(struct hdev *d)
{
	int i;

	for (i = 0; i < d->nticks / 2; i++) {
		struct tick *a = &d->ticks[2 * i], *b = &d->ticks[2 * i + 1], m = *a;
		double s = a->secs + b->secs;

		m.secs = s;
		m.p_eff = isnan(a->p_eff) ? b->p_eff : isnan(b->p_eff) ? a->p_eff :
			  (a->p_eff * a->secs + b->p_eff * b->secs) / s;
		m.depth_busy = fmax(nan0(a->depth_busy), nan0(b->depth_busy));
		m.depth_max = a->depth_max > b->depth_max ? a->depth_max : b->depth_max;
		m.iops = (a->iops * a->secs + b->iops * b->secs) / s;
		m.why = a->why ? a->why : b->why;
		m.cls = b->cls;
		m.merged = a->merged + b->merged;
		d->ticks[i] = m;
	}
	if (d->nticks % 2)
		d->ticks[i++] = d->ticks[d->nticks - 1];
	d->nticks = i;
}

void bw_html_tick(struct bw_html *h, const struct bw_replay_tick *t)
{
	struct hdev *d = hdev_of(h, t->d->dev);
	struct tick *k;
	double ios = 0;
	int op;

	if (!d)
		return;
	snprintf(d->name, sizeof(d->name), "%s", t->d->name);
	if (d->nticks == MAX_TICKS)
		fold_ticks(d);
	for (op = 0; op < BW_NR_OPS; op++)
		ios += t->iv->ios[op];
	k = &d->ticks[d->nticks++];
	*k = (struct tick){
		.t = t->t, .secs = t->iv->secs, .p_eff = t->iv->p_eff,
		.depth_busy = t->iv->depth_busy, .depth_max = t->iv->depth_max,
		.iops = t->iv->secs > 0 ? ios / t->iv->secs : 0,
		.why = bw_interval_active(t->iv) ? t->iv->p_eff_why : "no I/O",
		.cls = t->cls->cls, .merged = 1,
	};
}

/* Text for HTML: what could open a tag or an entity is escaped. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
}

/* A string inside the page's JSON: '<' too is escaped, so no "</script>". */
static void js_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void js_num(FILE *f, double v, int prec)
{
	if (isfinite(v))
		fprintf(f, "%.*f", prec, v);
	else
		fputs("null", f);
}

static void data_cols(FILE *f, const struct hdev *d)
{
	int i, k;
	bool first;

	fprintf(f, ",\"col_s\":%.9f,\"rows_per_octave\":%d,\"ios\":[", d->width / 1e9,
		ROWS_PER_OCT);
	for (i = 0; i < d->ncols; i++)
		fprintf(f, "%s%u", i ? "," : "", d->cols[i].ios);
	fprintf(f, "],\"bytes\":[");
	for (i = 0; i < d->ncols; i++)
		fprintf(f, "%s%.0f", i ? "," : "", d->cols[i].bytes);
	fprintf(f, "],\"inflight\":[");
	for (i = 0; i < d->ncols; i++)
		fprintf(f, "%s%.4f", i ? "," : "", d->cols[i].inflight_ns / d->width);
	fprintf(f, "],\"heat\":[");
	for (i = 0; i < d->ncols; i++) {
		fprintf(f, "%s[", i ? "," : "");
		for (k = 0, first = true; k < HEAT_ROWS; k++) {
			if (!d->cols[i].heat[k])
				continue;
			fprintf(f, "%s%d,%u", first ? "" : ",", k, d->cols[i].heat[k]);
			first = false;
		}
		fputc(']', f);
	}
	fputc(']', f);
}

static void data_ticks(FILE *f, const struct hdev *d)
{
	int i;

	fprintf(f, ",\"ticks\":[");
	for (i = 0; i < d->nticks; i++) {
		const struct tick *k = &d->ticks[i];

		fprintf(f, "%s[%.6f,%.6f,", i ? "," : "", k->t, k->secs);
		js_num(f, k->p_eff, 3);
		fputc(',', f);
		js_str(f, isnan(k->p_eff) ? k->why : NULL);
		fputc(',', f);
		js_str(f, bw_class_name(k->cls));
		fputc(',', f);
		js_num(f, k->depth_busy, 3);
		fprintf(f, ",%llu,%.2f]", (unsigned long long)k->depth_max, k->iops);
	}
	fputc(']', f);
}

static void data_whatif(FILE *f, const struct hdev *d, const struct bw_whatif *rep)
{
	const struct bw_policy_decision *x;
	const char *dev;
	bool first = true;
	double t;
	int i;

	fprintf(f, ",\"decisions\":[");
	for (i = 0; i < bw_whatif_count(rep); i++) {
		x = bw_whatif_decision(rep, i, &t, &dev);
		if (strcmp(dev, d->name))
			continue;
		fprintf(f, "%s[%.6f,", first ? "" : ",", t);
		js_str(f, bw_policy_action_name(x->action));
		fprintf(f, ",%u,%u,", x->before, x->after);
		js_str(f, x->why);
		fputc(']', f);
		first = false;
	}
	fputc(']', f);
}

static void html_data(struct bw_html *h, const struct bw_replay *rp, const struct bw_whatif *rep)
{
	FILE *f = h->f;
	int i;

	fprintf(f, "<script id=\"bw-data\" type=\"application/json\">{\"span_s\":%.6f,"
		"\"what_if\":%s,\"devices\":[", bw_replay_span(rp), bw_whatif_on(rep) ? "true" :
		"false");
	for (i = 0; i < h->ndevs; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		js_str(f, h->devs[i].name);
		data_cols(f, &h->devs[i]);
		data_ticks(f, &h->devs[i]);
		data_whatif(f, &h->devs[i], rep);
		fputc('}', f);
	}
	fprintf(f, "]}</script>\n");
}

static void cell_ms(FILE *f, double ns, bool known)
{
	if (known)
		fprintf(f, "<td>%.4g</td>", ns / 1e6);
	else
		fprintf(f, "<td>-</td>");
}

/* Per op: n, mean and the percentiles of Q2D, D2C and Q2C, in ms. */
static void latency_table(FILE *f, const struct bw_replay_dev *d, bool exact)
{
	int op, l, p;

	fprintf(f, "<table class=\"summary\"><caption>Latency per op, ms (%s)</caption>"
		"<thead><tr><th>op</th><th>latency</th><th>n</th><th>mean</th><th>p50</th>"
		"<th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr></thead><tbody>\n",
		exact ? "exact" : "percentiles up to 0.4% below the exact values");
	for (op = 0; op < BW_NR_OPS; op++)
		for (l = 0; d->lat[op][BW_LAT_D2C].n && l < BW_NR_LAT; l++) {
			const struct bw_xdist *x = &d->lat[op][l];

			fprintf(f, "<tr><td>%s</td><td>%s</td><td>%llu</td>", bw_op_names[op],
				bw_lat_names[l], (unsigned long long)x->n);
			cell_ms(f, x->n ? x->sum / x->n : 0, x->n);
			for (p = 0; p < BW_NR_PCTL; p++)
				cell_ms(f, (double)x->pct[p], x->n);
			fprintf(f, "</tr>\n");
		}
	fprintf(f, "</tbody></table>\n");
}

static void streams_table(FILE *f, const struct bw_replay *rp, __u32 dev)
{
	const struct bw_replay_stream *s;
	int i, n = bw_replay_streams(rp, &s), shown = 0;

	for (i = 0; i < n; i++) {
		const struct bw_stream_interval *v = &s[i].iv;

		if (s[i].key.dev != dev || !v->ios)
			continue;
		if (!shown++)
			fprintf(f, "<table class=\"streams\"><caption>Streams (per process, over "
				"the whole trace)</caption><thead><tr><th>pid</th><th>comm</th>"
				"<th>requests</th><th>IOPS</th><th>mean depth</th><th>max</th>"
				"<th>think, ms</th><th>sequential %%</th><th>class</th></tr></thead>"
				"<tbody>\n");
		fprintf(f, "<tr><td>%u</td><td>", v->tgid);
		esc(f, v->comm);
		fprintf(f, "</td><td>%llu</td><td>%.1f</td><td>%.2f</td><td>%llu</td><td>%.3f"
			"</td><td>%.1f</td><td>%s</td></tr>\n", (unsigned long long)v->ios,
			v->ios_per_s, nan0(v->depth), (unsigned long long)v->depth_max,
			nan0(v->think_ms), nan0(v->seq_pct),
			isnan(v->depth) ? "unknown" : v->deep ? "deep" : "shallow");
	}
	if (shown)
		fprintf(f, "</tbody></table>\n");
}

static const char *const charts[] = { "heatmap", "iops", "depth", "peff" };

static void html_device(struct bw_html *h, int i, const struct bw_replay *rp)
{
	const struct bw_replay_dev *d = NULL, *all;
	int k, n = bw_replay_devs(rp, &all);
	FILE *f = h->f;

	for (k = 0; k < n; k++)
		if (all[k].dev == h->devs[i].dev)
			d = &all[k];
	fprintf(f, "<section class=\"device\" id=\"dev%d\"><h2>", i);
	esc(f, h->devs[i].name);
	if (d)
		fprintf(f, " <small>%llu requests, %.1f IOPS, class at the end: %s</small>",
			(unsigned long long)d->completed, d->completed / fmax(bw_replay_span(rp),
			1e-9), bw_class_name(d->cls.cls));
	fprintf(f, "</h2>\n");
	if (d)
		latency_table(f, d, bw_replay_exact(rp));
	for (k = 0; k < (int)(sizeof(charts) / sizeof(charts[0])); k++)
		fprintf(f, "<div class=\"chart\" data-kind=\"%s\" data-dev=\"%d\"></div>\n",
			charts[k], i);
	streams_table(f, rp, h->devs[i].dev);
	fprintf(f, "</section>\n");
}

static const char css[] =
	"*{box-sizing:border-box}"
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
	"padding:16px 24px;max-width:1800px;color:#1d2330;background:#fff}"
	"h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:1px solid #dde}h2 small{font-weight:normal;color:#556;font-size:14px}"
	"p.meta{color:#445;margin:4px 0 12px}"
	".chart{width:100%;margin:10px 0 18px}"
	".chart svg{display:block;width:100%;font-size:13px}"
	"table{border-collapse:collapse;margin:8px 0 14px;font-size:14px}"
	"caption{text-align:left;font-weight:600;padding:4px 0}"
	"th,td{padding:3px 10px;border-bottom:1px solid #e4e6ee;text-align:right}"
	"th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}"
	"thead th{background:#f3f4f8}"
	".tick text,.axis-label,.legend text{fill:#333}.grid line{stroke:#e3e5ec}"
	".note{fill:#a33}";

static void html_write(struct bw_html *h, const struct bw_replay *rp, const struct bw_whatif *rep,
		       const struct bw_tsource *src)
{
	FILE *f = h->f;
	int i;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<title>");
	esc(f, h->title);
	fprintf(f, " - blkwise analyze</title><style>%s</style></head><body>\n<h1>", css);
	esc(f, h->title);
	fprintf(f, "</h1>\n<p class=\"meta\">blkwise analyze of a trace from ");
	esc(f, src->info->source);
	fprintf(f, ", kernel ");
	esc(f, src->info->release[0] ? src->info->release : "unknown");
	fprintf(f, ", host ");
	esc(f, src->info->hostname[0] ? src->info->hostname : "unknown");
	fprintf(f, ": %.3f s, %llu events, %d device%s.</p>\n", bw_replay_span(rp),
		(unsigned long long)bw_replay_events(rp), h->ndevs, h->ndevs == 1 ? "" : "s");
	for (i = 0; i < h->ndevs; i++)
		html_device(h, i, rp);
	html_data(h, rp, rep);
	fprintf(f, "<script>\n%s</script>\n</body></html>\n", bw_report_js);
}

int bw_html_open(struct bw_html **out, const char *path, const char *trace)
{
	struct bw_html *h = calloc(1, sizeof(*h));
	const char *base = strrchr(trace, '/');

	*out = NULL;
	if (!h) {
		bw_err("out of memory");
		return -ENOMEM;
	}
	h->f = fopen(path, "w");
	if (!h->f) {
		bw_err("%s: cannot create: %s", path, strerror(errno));
		free(h);
		return -1;
	}
	snprintf(h->title, sizeof(h->title), "%s", base && base[1] ? base + 1 : trace);
	*out = h;
	return 0;
}

/* Writes the page (unless rp is NULL) and closes it; 0, or -1 when writing failed. */
int bw_html_close(struct bw_html *h, const struct bw_replay *rp, const struct bw_whatif *rep,
		  const struct bw_tsource *src, const char *path)
{
	int i, err = 0;

	if (!h)
		return 0;
	if (rp)
		html_write(h, rp, rep, src);
	if (ferror(h->f) | fclose(h->f)) {
		bw_err("%s: writing failed: %s", path, strerror(errno));
		err = -1;
	}
	for (i = 0; i < h->ndevs; i++) {
		free(h->devs[i].cols);
		free(h->devs[i].ticks);
	}
	free(h);
	return err;
}
