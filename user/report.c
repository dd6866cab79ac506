// SPDX-License-Identifier: GPL-2.0
/*
 * analyze's pictures and replays, fed as the replay goes: --perfetto
 * (Chrome trace-event JSON, streamed: per device a track of requests and a
 * counter track of depth), --html (a self-contained page of SVG charts,
 * from per-interval aggregates only, so its size does not grow with the
 * number of requests) and --what-if-tune (tune's pure policy over the
 * trace's intervals).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"
#include "policy.h"

#define HEAT_ROWS 32		/* latency buckets of the heatmap: log2 from 1 us */
#define MAX_COLS 2000		/* intervals kept for the charts; coarsened past it */
#define HTML_DEVS 16
#define HTML_STREAMS 24

struct col {
	double t, secs;
	double depth, p_eff, iops, mbps;
	enum bw_class_id cls;
	__u32 heat[HEAT_ROWS];
};

struct hdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct col *cols;
	int ncols;
	double merge;		/* intervals folded into one column */
	int folded;
	__u32 pending[HEAT_ROWS];	/* the open interval's completions */
	const char *why;	/* the last reason P_eff was undetermined */
};

struct hstream {
	__u32 dev, pid;
	char comm[BW_COMM_LEN];
	double first, last;
	__u64 ios;
	__u32 *per_col;		/* completions per column of its device */
	__u32 pending;		/* in the open interval */
};

struct wdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct bw_tune_state st;
	bool started;
};

struct bw_report {
	const struct bw_tsource *src;
	FILE *perf;
	const char *perf_path;
	__u64 perf_events;
	FILE *html;
	const char *html_path;
	struct hdev devs[HTML_DEVS];
	int ndevs;
	struct hstream streams[HTML_STREAMS];
	int nstreams;
	bool what_if;
	struct wdev wd[HTML_DEVS];
	int nwd;
	struct bw_tune_cfg cfg;
	char *log;		/* what-if decisions, text */
	size_t loglen;
	FILE *logf;
	int decisions;
};

/* Perfetto */

static void perf_open(struct bw_report *r)
{
	fprintf(r->perf, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
	fprintf(r->perf, "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\","
		"\"args\":{\"name\":\"blkwise analyze\"}}");
}

static void perf_dev_meta(struct bw_report *r, __u32 dev, const char *name)
{
	fprintf(r->perf, ",\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\","
		"\"args\":{\"name\":\"%s (requests)\"}}", dev, name);
}

static struct hdev *hdev_of(struct bw_report *r, __u32 dev, const char *name, bool make)
{
	int i;

	for (i = 0; i < r->ndevs; i++) {
		if (r->devs[i].dev != dev)
			continue;
		if (name)
			snprintf(r->devs[i].name, sizeof(r->devs[0].name), "%s", name);
		return &r->devs[i];
	}
	if (!make || r->ndevs >= HTML_DEVS)
		return NULL;
	memset(&r->devs[r->ndevs], 0, sizeof(r->devs[0]));
	r->devs[r->ndevs].dev = dev;
	snprintf(r->devs[r->ndevs].name, sizeof(r->devs[0].name), "%s", name ? name : "?");
	r->devs[r->ndevs].merge = 1;
	return &r->devs[r->ndevs++];
}

/* One request: a complete event ("X") on its device's track, per hw-queue-free lane. */
static void perf_req(struct bw_report *r, const struct bw_rp_req *q)
{
	double start = (q->q_ts ? q->q_ts : q->d_ts) / 1e3;

	fprintf(r->perf, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
		"\"name\":\"%s %uK\",\"args\":{\"sector\":%llu,\"pid\":%u,\"q2d_us\":%.3f,"
		"\"d2c_us\":%.3f,\"depth\":%u}}", q->dev, q->depth, start,
		q->c_ts / 1e3 - start, bw_op_names[q->op], q->bytes >> 10,
		(unsigned long long)q->sector, q->pid,
		q->q_ts ? (q->d_ts - q->q_ts) / 1e3 : 0.0, (q->c_ts - q->d_ts) / 1e3, q->depth);
	r->perf_events++;
}

static void perf_tick(struct bw_report *r, const struct bw_rp_tick *t)
{
	fprintf(r->perf, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%.3f,\"name\":\"depth\","
		"\"args\":{\"depth_mean_busy\":%.3f,\"depth_max\":%llu}}", t->d->dev, t->t * 1e6,
		isnan(t->iv->depth_busy) ? 0 : t->iv->depth_busy,
		(unsigned long long)t->iv->depth_max);
	if (!isnan(t->iv->p_eff))
		fprintf(r->perf, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%.3f,\"name\":\"P_eff\","
			"\"args\":{\"p_eff\":%.3f}}", t->d->dev, t->t * 1e6, t->iv->p_eff);
}

/* HTML: per-interval columns */

static int heat_row(__u64 ns)
{
	int b = ns < 1000 ? 0 : (int)log2((double)ns / 1000.0) + 1;

	return b < HEAT_ROWS ? b : HEAT_ROWS - 1;
}

/* Past MAX_COLS, fold every two columns into one: memory stays bounded. */
static void fold(struct hdev *h, struct bw_report *r)
{
	int i, k, s;

	for (i = 0; i < h->ncols / 2; i++) {
		struct col *a = &h->cols[2 * i], *b = &h->cols[2 * i + 1], m = *a;

		m.secs = a->secs + b->secs;
		m.depth = fmax(isnan(a->depth) ? 0 : a->depth, isnan(b->depth) ? 0 : b->depth);
		m.p_eff = isnan(a->p_eff) ? b->p_eff : isnan(b->p_eff) ? a->p_eff :
			  (a->p_eff + b->p_eff) / 2;
		m.iops = (a->iops * a->secs + b->iops * b->secs) / m.secs;
		m.mbps = (a->mbps * a->secs + b->mbps * b->secs) / m.secs;
		m.cls = b->cls;
		for (k = 0; k < HEAT_ROWS; k++)
			m.heat[k] = a->heat[k] + b->heat[k];
		h->cols[i] = m;
	}
	for (s = 0; s < r->nstreams; s++) {
		struct hstream *st = &r->streams[s];

		if (st->dev != h->dev)
			continue;
		for (i = 0; i < h->ncols / 2; i++)
			st->per_col[i] = st->per_col[2 * i] + st->per_col[2 * i + 1];
		if (h->ncols % 2)
			st->per_col[i] = st->per_col[h->ncols - 1];
		for (i = (h->ncols + 1) / 2; i < MAX_COLS; i++)
			st->per_col[i] = 0;
	}
	if (h->ncols % 2)
		h->cols[h->ncols / 2] = h->cols[h->ncols - 1];
	h->ncols = (h->ncols + 1) / 2;
	h->merge *= 2;
}

static void html_tick(struct bw_report *r, const struct bw_rp_tick *t)
{
	struct hdev *h = hdev_of(r, t->d->dev, t->d->name, true);
	struct col *c;
	double ios = 0;
	int op, k;

	if (!h)
		return;
	if (!h->cols) {
		h->cols = calloc(MAX_COLS + 1, sizeof(*h->cols));
		if (!h->cols)
			return;
	}
	if (h->folded) {	/* the open column takes more intervals */
		c = &h->cols[h->ncols - 1];
		h->folded--;
	} else {
		if (h->ncols == MAX_COLS)
			fold(h, r);
		c = &h->cols[h->ncols++];
		memset(c->heat, 0, sizeof(c->heat));
		c->t = t->t;
		c->secs = 0;
		c->iops = c->mbps = 0;
		c->depth = NAN;
		c->p_eff = NAN;
		h->folded = (int)h->merge - 1;
	}
	for (op = 0; op < BW_NR_OPS; op++)
		ios += t->iv->ios[op];
	c->iops = (c->iops * c->secs + ios) / (c->secs + t->iv->secs);
	c->mbps = (c->mbps * c->secs + t->iv->secs * ((isnan(t->iv->r_mb_per_s) ? 0 :
		   t->iv->r_mb_per_s) + (isnan(t->iv->w_mb_per_s) ? 0 : t->iv->w_mb_per_s))) /
		  (c->secs + t->iv->secs);
	c->secs += t->iv->secs;
	if (!isnan(t->iv->depth_busy) && !(t->iv->depth_busy <= c->depth))
		c->depth = t->iv->depth_busy;
	if (!isnan(t->iv->p_eff))
		c->p_eff = t->iv->p_eff;
	else if (t->iv->p_eff_why && bw_interval_active(t->iv))
		h->why = t->iv->p_eff_why;
	c->cls = t->cls->cls;
	/* What completed in the interval just closed goes into its column. */
	for (k = 0; k < HEAT_ROWS; k++) {
		c->heat[k] += h->pending[k];
		h->pending[k] = 0;
	}
	for (k = 0; k < r->nstreams; k++) {
		struct hstream *st = &r->streams[k];

		if (st->dev == h->dev && st->per_col) {
			st->per_col[c - h->cols] += st->pending;
			st->pending = 0;
		}
	}
}

static void html_req(struct bw_report *r, const struct bw_rp_req *q)
{
	struct hdev *h = hdev_of(r, q->dev, NULL, true);
	struct hstream *s = NULL;
	int i;

	if (!h)
		return;
	h->pending[heat_row(q->c_ts - (q->q_ts ? q->q_ts : q->d_ts))]++;
	for (i = 0; i < r->nstreams; i++)
		if (r->streams[i].dev == q->dev && r->streams[i].pid == q->pid)
			s = &r->streams[i];
	if (!s && r->nstreams < HTML_STREAMS) {
		s = &r->streams[r->nstreams++];
		memset(s, 0, sizeof(*s));
		s->per_col = calloc(MAX_COLS + 1, sizeof(*s->per_col));
		s->dev = q->dev;
		s->pid = q->pid;
		s->first = q->c_ts / 1e9;
		snprintf(s->comm, sizeof(s->comm), "%s", q->comm);
	}
	if (!s)
		return;
	s->ios++;
	s->last = q->c_ts / 1e9;
	s->pending++;
}

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
}

#define W 960
#define PADL 60

/* First column of h whose t is in the first interval; the x of a column. */
static double col_x(const struct hdev *h, int i)
{
	return PADL + (double)i * (W - PADL - 10) / (h->ncols ? h->ncols : 1);
}

static void svg_line(FILE *f, const struct hdev *h, double (*get)(const struct col *), double max,
		     int height, const char *color, const char *title, const char *note)
{
	double cw = (double)(W - PADL - 10) / (h->ncols ? h->ncols : 1);
	bool pen = false, drawn = false;
	int i;

	fprintf(f, "<svg class=\"chart\" width=\"%d\" height=\"%d\"><title>", W, height + 30);
	esc(f, title);
	fprintf(f, "</title><text x=\"4\" y=\"14\" font-size=\"12\">");
	esc(f, title);
	fprintf(f, " (max %.2f)</text>", max);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>", PADL,
		height + 20, W - 10, height + 20);
	fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"", color);
	for (i = 0; i < h->ncols; i++) {
		double v = get(&h->cols[i]);

		if (isnan(v)) {
			pen = false;
			continue;
		}
		fprintf(f, "%c%.1f %.1f ", pen ? 'L' : 'M', col_x(h, i) + cw / 2,
			height + 20 - (max > 0 ? v / max : 0) * height);
		pen = drawn = true;
	}
	pen = drawn;
	fprintf(f, "\"/>");
	if (h->ncols)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\">%.2f s</text><text x=\"%d\" "
			"y=\"%d\" font-size=\"9\" text-anchor=\"end\">%.2f s</text>", PADL,
			height + 30, h->cols[0].t, W - 10, height + 30,
			h->cols[h->ncols - 1].t + h->cols[h->ncols - 1].secs);
	if (!pen && note)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#a00\">"
			"undetermined throughout: %s</text>", PADL + 10, height / 2 + 20, note);
	fprintf(f, "</svg>\n");
}

static double get_depth(const struct col *c)
{
	return c->depth;
}

static double get_peff(const struct col *c)
{
	return c->p_eff;
}

static double get_iops(const struct col *c)
{
	return c->iops;
}

static double col_max(const struct hdev *h, double (*get)(const struct col *))
{
	double m = 0;
	int i;

	for (i = 0; i < h->ncols; i++)
		if (!isnan(get(&h->cols[i])) && get(&h->cols[i]) > m)
			m = get(&h->cols[i]);
	return m;
}

static void svg_heatmap(FILE *f, const struct hdev *h)
{
	double cw = (double)(W - PADL - 10) / (h->ncols ? h->ncols : 1), rh = 8;
	__u32 max = 0;
	int i, k;

	for (i = 0; i < h->ncols; i++)
		for (k = 0; k < HEAT_ROWS; k++)
			if (h->cols[i].heat[k] > max)
				max = h->cols[i].heat[k];
	fprintf(f, "<svg class=\"chart heatmap\" width=\"%d\" height=\"%d\"><title>Q2C latency "
		"heatmap</title><text x=\"4\" y=\"14\" font-size=\"12\">Q2C latency over time "
		"(rows: powers of two; darker: more requests, max %u per cell)</text>",
		W, (int)(HEAT_ROWS * rh + 30), max);
	for (k = 0; k < HEAT_ROWS; k += 4) {
		double us = k ? ldexp(1.0, k - 1) : 0;

		fprintf(f, "<text x=\"2\" y=\"%.1f\" font-size=\"9\">", 20 + (HEAT_ROWS - k) * rh);
		if (!k)
			fprintf(f, "&lt;1 us");
		else if (us < 1000)
			fprintf(f, "%.0f us", us);
		else if (us < 1e6)
			fprintf(f, "%.3g ms", us / 1e3);
		else
			fprintf(f, "%.3g s", us / 1e6);
		fprintf(f, "</text>");
	}
	for (i = 0; i < h->ncols; i++)
		for (k = 0; k < HEAT_ROWS; k++) {
			double v = h->cols[i].heat[k];

			if (!v)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
				"fill=\"rgb(%d,%d,255)\"/>", col_x(h, i),
				20 + (HEAT_ROWS - 1 - k) * rh, cw + 0.3, rh,
				(int)(220 - 200 * log1p(v) / log1p(max)),
				(int)(230 - 200 * log1p(v) / log1p(max)));
		}
	fprintf(f, "</svg>\n");
}

static void svg_streams(FILE *f, struct bw_report *r, const struct hdev *h)
{
	double cw = (double)(W - PADL - 10) / (h->ncols ? h->ncols : 1);
	int s, i, n = 0;
	__u32 max = 1;

	for (s = 0; s < r->nstreams; s++)
		if (r->streams[s].dev == h->dev) {
			n++;
			for (i = 0; i < h->ncols; i++)
				if (r->streams[s].per_col[i] > max)
					max = r->streams[s].per_col[i];
		}
	fprintf(f, "<svg class=\"chart streams\" width=\"%d\" height=\"%d\"><title>Streams"
		"</title><text x=\"4\" y=\"14\" font-size=\"12\">Per-stream timeline (completions "
		"per interval; darker: more)</text>", W, 30 + n * 16);
	n = 0;
	for (s = 0; s < r->nstreams; s++) {
		const struct hstream *st = &r->streams[s];

		if (st->dev != h->dev)
			continue;
		fprintf(f, "<text x=\"2\" y=\"%d\" font-size=\"9\">%u ", 32 + n * 16, st->pid);
		esc(f, st->comm);
		fprintf(f, "</text>");
		for (i = 0; i < h->ncols; i++) {
			double v = st->per_col[i];

			if (!v)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"12\" "
				"fill=\"rgb(255,%d,60)\"/>", col_x(h, i), 22 + n * 16, cw + 0.3,
				(int)(220 - 180 * v / max));
		}
		n++;
	}
	fprintf(f, "</svg>\n");
}

static void html_write(struct bw_report *r, const struct bw_replay *rp)
{
	FILE *f = r->html;
	int i;

	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>blkwise analyze"
		"</title><style>body{font-family:sans-serif;margin:16px}svg.chart{display:block;"
		"margin:6px 0;background:#fafafa;border:1px solid #ddd}h2{font-size:16px}"
		"</style></head><body>\n<h1>blkwise analyze</h1>\n<p>Trace from ");
	esc(f, r->src->info->source);
	fprintf(f, ", kernel ");
	esc(f, r->src->info->release[0] ? r->src->info->release : "?");
	fprintf(f, "; %.3f s, %llu events.</p>\n", bw_replay_span(rp),
		(unsigned long long)bw_replay_events(rp));
	for (i = 0; i < r->ndevs; i++) {
		const struct hdev *h = &r->devs[i];

		fprintf(f, "<h2 class=\"device\">");
		esc(f, h->name);
		fprintf(f, " (%d columns of %.3g s)</h2>\n", h->ncols,
			h->ncols ? h->cols[0].secs : 0.0);
		svg_heatmap(f, h);
		svg_line(f, h, get_depth, col_max(h, get_depth), 100, "#c33",
			 "Mean depth while busy", "no I/O");
		svg_line(f, h, get_peff, fmax(col_max(h, get_peff), 2.5), 100, "#393",
			 "Effective parallelism P_eff (deep >= 2.0, shallow <= 1.4)",
			 h->why ? h->why : "no I/O");
		svg_line(f, h, get_iops, col_max(h, get_iops), 100, "#36c", "IOPS", "no I/O");
		svg_streams(f, r, h);
	}
	fprintf(f, "</body></html>\n");
}

/* What-if: tune's policy over the intervals */

static struct wdev *wdev_of(struct bw_report *r, const struct bw_rp_dev *d)
{
	int i;

	for (i = 0; i < r->nwd; i++)
		if (r->wd[i].dev == d->dev)
			return &r->wd[i];
	if (r->nwd >= HTML_DEVS)
		return NULL;
	memset(&r->wd[r->nwd], 0, sizeof(r->wd[0]));
	r->wd[r->nwd].dev = d->dev;
	snprintf(r->wd[r->nwd].name, sizeof(r->wd[0].name), "%s", d->name);
	return &r->wd[r->nwd++];
}

bool bw_whatif_on(const struct bw_report *r)
{
	return r && r->what_if;
}

static void whatif_log(struct bw_report *r, const struct wdev *w, double t,
		       const struct bw_tune_decision *d)
{
	const struct bw_tune_win *e = &d->win;

	fprintf(r->logf, "  t=%8.2f s %s %s: slice_idle_us %u -> %u: %s\n      evidence: %.1f "
		"MB/s, P_eff %.2f, depth %.2f, S1 %.3f ms, class %s, streams %d (%d sync "
		"sequential), think p90 %.3f ms\n", t, w->name, bw_tune_action_name(d->action),
		d->before, d->after, d->why, bw_tune_win_mbps(e), bw_tune_win_peff(e),
		bw_tune_win_depth(e), e->s1_ms, bw_class_name(e->cls), e->streams, e->sync_seq,
		e->think_p90_ms);
	r->decisions++;
}

void bw_whatif_tick(struct bw_report *r, const struct bw_rp_tick *t)
{
	struct wdev *w = wdev_of(r, t->d);
	struct bw_tune_decision d;
	struct bw_tune_obs o;
	double end = t->t + t->iv->secs;
	__u32 idle;

	if (!w)
		return;
	if (!w->started) {
		idle = t->d->info && t->d->info->slice_idle_us >= 0 ?
		       (__u32)t->d->info->slice_idle_us : 8000;
		bw_tune_init(&w->st, idle);
		w->started = true;
		if (bw_tune_start(&r->cfg, &w->st, BW_CLASS_UNKNOWN, false, &d))
			whatif_log(r, w, t->t, &d);
	}
	bw_tune_observe(t->iv, t->cls, t->streams, t->nstreams, w->st.setting, &o);
	if (!bw_tune_step(&r->cfg, &w->st, &o, end, &d))
		return;
	whatif_log(r, w, end, &d);
	/* A replay cannot change what the device did: the setting is believed set. */
	bw_tune_applied(&r->cfg, &w->st, d.after, d.strict_after, end);
}

void bw_whatif_print(struct bw_report *r, FILE *f)
{
	fflush(r->logf);
	fprintf(f, "\nWhat if blkwise tune had run (policy %s, window %.2f s, from the recorded "
		"slice_idle_us, or BFQ's default 8000 where the device was not on BFQ; a replay "
		"cannot show what the settings would have changed)\n",
		r->cfg.policy == BW_POLICY_LATENCY ? "latency" : "throughput", r->cfg.window_s);
	if (!r->decisions)
		fprintf(f, "  no decision\n");
	else
		fwrite(r->log, 1, r->loglen, f);
}

/* The entry points */

int bw_report_open(struct bw_report **out, const char *html, const char *perfetto,
		   bool what_if, const struct bw_tsource *src)
{
	struct bw_report *r;

	*out = NULL;
	if (!html && !perfetto && !what_if)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		bw_err("out of memory");
		return -ENOMEM;
	}
	r->src = src;
	r->what_if = what_if;
	r->cfg = bw_tune_cfg_default;
	r->cfg.dry_run = true;
	if (what_if && !(r->logf = open_memstream(&r->log, &r->loglen)))
		goto fail;
	if (perfetto) {
		r->perf_path = perfetto;
		r->perf = fopen(perfetto, "w");
		if (!r->perf) {
			bw_err("%s: cannot create: %s", perfetto, strerror(errno));
			goto fail;
		}
		perf_open(r);
	}
	if (html) {
		r->html_path = html;
		r->html = fopen(html, "w");
		if (!r->html) {
			bw_err("%s: cannot create: %s", html, strerror(errno));
			goto fail;
		}
	}
	*out = r;
	return 0;
fail:
	bw_report_close(r, NULL);
	return -1;
}

void bw_report_tick(struct bw_report *r, const struct bw_rp_tick *t)
{
	if (r->perf) {
		hdev_of(r, t->d->dev, t->d->name, true);
		perf_tick(r, t);
	}
	if (r->html)
		html_tick(r, t);
}

void bw_report_req(struct bw_report *r, const struct bw_rp_req *q)
{
	if (r->perf) {
		hdev_of(r, q->dev, NULL, true);
		perf_req(r, q);
	}
	if (r->html)
		html_req(r, q);
}

static int finish(FILE *f, const char *path)
{
	if (!ferror(f) && !fclose(f))
		return 0;
	bw_err("%s: writing failed: %s", path, strerror(errno));
	return -1;
}

int bw_report_close(struct bw_report *r, const struct bw_replay *rp)
{
	int i, err = 0;

	if (!r)
		return 0;
	if (r->perf) {
		/* Track names last: a device's name is known once its first interval closed. */
		for (i = 0; i < r->ndevs; i++)
			perf_dev_meta(r, r->devs[i].dev, r->devs[i].name);
		fprintf(r->perf, "\n]}\n");
		err |= finish(r->perf, r->perf_path);
	}
	if (r->html) {
		if (rp)
			html_write(r, rp);
		err |= finish(r->html, r->html_path);
	}
	if (r->logf)
		fclose(r->logf);
	free(r->log);
	for (i = 0; i < r->ndevs; i++)
		free(r->devs[i].cols);
	for (i = 0; i < r->nstreams; i++)
		free(r->streams[i].per_col);
	free(r);
	return err ? -1 : 0;
}
