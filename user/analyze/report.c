// SPDX-License-Identifier: GPL-2.0
/*
 * analyze's pictures and replays, fed as the replay goes: --perfetto
 * (Chrome trace-event JSON, streamed: per device a track of requests on
 * lanes that never overlap, and a counter track of depth), --html (the
 * page of user/analyze/html.c) and --what-if-tune (user/model/whatif.c:
 * tune's pure policy over the trace's intervals).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze.h"
#include "model/whatif.h"

#define HTML_DEVS 16
#define MAX_LANES 4096		/* Perfetto tracks per device; past it, the last one */

struct hdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	__u64 *lane_end;	/* Perfetto: when each lane's last slice ended (ns) */
	int nlanes;
};

struct bw_report {
	const struct bw_tsource *src;
	FILE *perf;
	const char *perf_path;
	__u64 perf_events;
	struct bw_html *html;
	const char *html_path;
	struct hdev devs[HTML_DEVS];
	int ndevs;
	struct bw_whatif *whatif;	/* with --what-if-tune, or NULL */
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
static void perf_req(struct bw_report *r, const struct bw_replay_req *q)
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

static void perf_tick(struct bw_report *r, const struct bw_replay_tick *t)
{
	fprintf(r->perf, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%.3f,\"name\":\"depth\","
		"\"args\":{\"depth_mean_busy\":%.3f,\"depth_max\":%llu}}", t->d->dev, t->t * 1e6,
		isnan(t->iv->depth_busy) ? 0 : t->iv->depth_busy,
		(unsigned long long)t->iv->depth_max);
	if (!isnan(t->iv->p_eff))
		fprintf(r->perf, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%.3f,\"name\":\"P_eff\","
			"\"args\":{\"p_eff\":%.3f}}", t->d->dev, t->t * 1e6, t->iv->p_eff);
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
	if (what_if && !(r->whatif = bw_whatif_new())) {
		bw_err("out of memory");
		goto fail;
	}
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

void bw_report_tick(struct bw_report *r, const struct bw_replay_tick *t)
{
	if (r->perf) {
		hdev_of(r, t->d->dev, t->d->name, true);
		perf_tick(r, t);
	}
	if (r->html)
		bw_html_tick(r->html, t);
}

void bw_report_req(struct bw_report *r, const struct bw_replay_req *q)
{
	if (r->perf)
		perf_req(r, q);
	if (r->html)
		bw_html_req(r->html, q);
}

struct bw_whatif *bw_report_whatif(const struct bw_report *r)
{
	return r ? r->whatif : NULL;
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
	if (bw_html_close(r->html, rp, r->whatif, r->src, r->html_path))
		err = -1;
	bw_whatif_free(r->whatif);
	for (i = 0; i < r->ndevs; i++)
		free(r->devs[i].lane_end);
	free(r);
	return err ? -1 : 0;
}
