// SPDX-License-Identifier: GPL-2.0
/*
 * analyze's pictures and replays, fed as the replay goes: --perfetto
 * (Chrome trace-event JSON, streamed: per device a track of requests on
 * lanes that never overlap, and a counter track of depth), --html (the
 * page of user/analyze/html.c) and --what-if-tune (tune's pure policy over the
 * trace's intervals).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "model/policy.h"

#define HTML_DEVS 16
#define MAX_LANES 4096		/* Perfetto tracks per device; past it, the last one */

struct hdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	__u64 *lane_end;	/* Perfetto: when each lane's last slice ended (ns) */
	int nlanes;
};

struct wdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct bw_tune_state st;
	bool started;
};

/* A decision the policy took, and when. */
struct wdecision {
	double t;
	const struct wdev *w;
	struct bw_tune_decision d;
};
#define MAX_DECISIONS 100000

struct bw_report {
	const struct bw_tsource *src;
	FILE *perf;
	const char *perf_path;
	__u64 perf_events;
	struct bw_html *html;
	const char *html_path;
	struct hdev devs[HTML_DEVS];
	int ndevs;
	bool what_if;
	struct wdev wd[HTML_DEVS];
	int nwd;
	struct bw_tune_cfg cfg;
	struct wdecision *dec;	/* what-if decisions, in time order */
	int ndec, dec_cap;
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
	return &r->devs[r->ndevs++];
}

/*
 * A lane for a slice from start on: the first whose last slice has ended.
 * Requests come in completion order, so every slice placed so far ended by
 * this one's end; one that ended by its start cannot overlap it.
 */
static int perf_lane(struct hdev *h, __u64 start, __u64 end)
{
	int i;

	if (!h->lane_end) {
		h->lane_end = calloc(MAX_LANES, sizeof(*h->lane_end));
		if (!h->lane_end)
			return 0;
	}
	for (i = 0; i < h->nlanes && h->lane_end[i] > start; i++)
		;
	if (i == h->nlanes) {
		if (h->nlanes == MAX_LANES)
			i = MAX_LANES - 1;
		else
			h->nlanes++;
	}
	h->lane_end[i] = end;
	return i;
}

/* One request: a complete event ("X") on a lane of its device's track. */
static void perf_req(struct bw_report *r, const struct bw_rp_req *q)
{
	struct hdev *h = hdev_of(r, q->dev, NULL, true);
	__u64 start = q->q_ts ? q->q_ts : q->d_ts;
	int lane = h ? perf_lane(h, start, q->c_ts) : 0;

	fprintf(r->perf, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
		"\"name\":\"%s %uK\",\"args\":{\"sector\":%llu,\"pid\":%u,\"q2d_us\":%.3f,"
		"\"d2c_us\":%.3f,\"depth\":%u}}", q->dev, lane + 1, start / 1e3,
		(q->c_ts - start) / 1e3, bw_op_names[q->op], q->bytes >> 10,
		(unsigned long long)q->sector, q->pid,
		q->q_ts ? (q->d_ts - q->q_ts) / 1e3 : 0.0, (q->c_ts - q->d_ts) / 1e3, q->depth);
	r->perf_events++;
}

/* Each device's name, and each of its lanes named and in order. */
static void perf_names(struct bw_report *r)
{
	int i, k;

	for (i = 0; i < r->ndevs; i++) {
		const struct hdev *h = &r->devs[i];

		perf_dev_meta(r, h->dev, h->name);
		for (k = 0; k < h->nlanes; k++)
			fprintf(r->perf, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%d,"
				"\"name\":\"thread_name\",\"args\":{\"name\":\"lane %d\"}},\n"
				"{\"ph\":\"M\",\"pid\":%u,\"tid\":%d,\"name\":\"thread_sort_index\","
				"\"args\":{\"sort_index\":%d}}", h->dev, k + 1, k + 1, h->dev, k + 1,
				k + 1);
	}
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
	struct wdecision *n;

	if (r->ndec == r->dec_cap) {
		if (r->dec_cap >= MAX_DECISIONS)
			return;
		n = realloc(r->dec, (r->dec_cap ? 2 * r->dec_cap : 16) * sizeof(*n));
		if (!n)
			return;
		r->dec = n;
		r->dec_cap = r->dec_cap ? 2 * r->dec_cap : 16;
	}
	r->dec[r->ndec++] = (struct wdecision){ .t = t, .w = w, .d = *d };
}

int bw_whatif_count(const struct bw_report *r)
{
	return bw_whatif_on(r) ? r->ndec : 0;
}

const struct bw_tune_decision *bw_whatif_decision(const struct bw_report *r, int i, double *t,
						  const char **dev)
{
	*t = r->dec[i].t;
	*dev = r->dec[i].w->name;
	return &r->dec[i].d;
}

void bw_whatif_decision_json(const struct bw_report *r, struct bw_json *j, int i)
{
	static const struct wdev none_dev;
	static const struct wdecision none = { .w = &none_dev };
	const struct wdecision *x = i >= 0 ? &r->dec[i] : &none;
	const struct bw_tune_win *e = &x->d.win;

	bw_json_obj(j, NULL);
	bw_json_num(j, "t", x->t, 3);
	bw_json_str(j, "device", x->w->name);
	bw_json_str(j, "action", bw_tune_action_name(x->d.action));
	bw_json_u64(j, "slice_idle_us_before", x->d.before);
	bw_json_u64(j, "slice_idle_us_after", x->d.after);
	bw_json_str(j, "why", x->d.why);
	bw_json_obj(j, "evidence");
	bw_json_num(j, "mb_per_s", bw_tune_win_mbps(e), 3);
	bw_json_num(j, "p_eff", bw_tune_win_peff(e), 3);
	bw_json_num(j, "depth", bw_tune_win_depth(e), 3);
	bw_json_num(j, "s1_ms", e->s1_ms, 4);
	bw_json_str(j, "class", bw_class_name(e->cls));
	bw_json_u64(j, "streams", e->streams);
	bw_json_u64(j, "sync_sequential_streams", e->sync_seq);
	bw_json_num(j, "think_p90_ms", e->think_p90_ms, 4);
	bw_json_close(j, '}');
	bw_json_close(j, '}');
}

static const char *policy_name(const struct bw_report *r)
{
	return r->cfg.policy == BW_POLICY_LATENCY ? "latency" : "throughput";
}

void bw_whatif_json(const struct bw_report *r, struct bw_json *j)
{
	int i;

	bw_json_obj(j, "what_if");
	bw_json_str(j, "policy", policy_name(r));
	bw_json_num(j, "window_s", r->cfg.window_s, 3);
	bw_json_arr(j, "decisions");
	for (i = 0; i < r->ndec; i++)
		bw_whatif_decision_json(r, j, i);
	bw_json_close(j, ']');
	bw_json_close(j, '}');
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

void bw_whatif_print(const struct bw_report *r, FILE *f)
{
	int i;

	fprintf(f, "\nWhat if blkwise tune had run (policy %s, window %.2f s, from the recorded "
		"slice_idle_us, or BFQ's default 8000 where the device was not on BFQ; a replay "
		"cannot show what the settings would have changed)\n", policy_name(r),
		r->cfg.window_s);
	if (!r->ndec)
		fprintf(f, "  no decision\n");
	for (i = 0; i < r->ndec; i++) {
		const struct wdecision *x = &r->dec[i];
		const struct bw_tune_win *e = &x->d.win;
		char ev[400];

		bw_tune_win_evidence(ev, sizeof(ev), e);
		fprintf(f, "  t=%8.2f s %s %s: slice_idle_us %u -> %u: %s\n      evidence: %s\n",
			x->t, x->w->name, bw_tune_action_name(x->d.action), x->d.before, x->d.after,
			x->d.why, ev);
	}
}

/* The entry points */

int bw_report_open(struct bw_report **out, const char *html, const char *perfetto,
		   bool what_if, const struct bw_tsource *src, const char *trace)
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
		if (bw_html_open(&r->html, html, trace))
			goto fail;
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
		bw_html_tick(r->html, t);
}

void bw_report_req(struct bw_report *r, const struct bw_rp_req *q)
{
	if (r->perf)
		perf_req(r, q);
	if (r->html)
		bw_html_req(r->html, q);
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
		perf_names(r);
		fprintf(r->perf, "\n]}\n");
		err |= finish(r->perf, r->perf_path);
	}
	if (bw_html_close(r->html, rp, r, r->src, r->html_path))
		err = -1;
	free(r->dec);
	for (i = 0; i < r->ndevs; i++)
		free(r->devs[i].lane_end);
	free(r);
	return err ? -1 : 0;
}
