// SPDX-License-Identifier: GPL-2.0
/* The stat table and its JSON twin, named as iostat -x users read them. */
#include <math.h>
#include <string.h>
#include "model/model.h"
#include "model/figures.h"

static double ratio_s(__s64 n, double secs)
{
	return secs > 0 ? (double)n / secs : NAN;
}

/* A number, or "-" when it is undefined (NAN). */
static void cell(FILE *f, int width, int prec, double v)
{
	if (isnan(v))
		fprintf(f, " %*s", width, "-");
	else
		fprintf(f, " %*.*f", width, prec, v);
}

/* A figure's value over the interval: a counter of every op shows its rate. */
static double fig_value(const struct bw_figure *r, const struct bw_interval *iv)
{
	if (r->op_off)
		return ratio_s((__s64)bw_fig_interval_count(r, iv), iv->secs);
	return r->get(iv);
}

void bw_render_header(FILE *f)
{
	size_t i;

	fprintf(f, "%-10s", "Device");
	for (i = 0; i < bw_nfigures; i++)
		if (bw_figures[i].cell != BW_CELL_NONE)
			fprintf(f, " %*s", bw_figures[i].width, bw_figures[i].col);
	fputc('\n', f);
}

static void row_cell(FILE *f, const struct bw_figure *r, const struct bw_interval *iv,
		     const struct bw_class *cls)
{
	double v;

	switch (r->cell) {
	case BW_CELL_TEXT:
		fprintf(f, " %*s", r->width, r->str(iv, cls));
		break;
	case BW_CELL_PEFF:
		if (isnan(iv->p_eff))
			fprintf(f, " %*s", r->width, iv->p_eff_code ? iv->p_eff_code : "-");
		else if (iv->p_eff_source && strcmp(iv->p_eff_source, "exact"))
			/* an exact slice's within the interval: ~; the light tier's estimate: * */
			fprintf(f, " %*.*f%c", r->width - 1, r->prec, iv->p_eff,
				strcmp(iv->p_eff_source, "sampled") ? '*' : '~');
		else
			cell(f, r->width, r->prec, iv->p_eff);
		break;
	case BW_CELL_TIMED:
		v = fig_value(r, iv);
		if (isnan(v) || !bw_timing_mark(iv))
			cell(f, r->width, r->prec, v);
		else
			fprintf(f, " %*.*f%c", r->width - 1, r->prec, v, bw_timing_mark(iv));
		break;
	case BW_CELL_NUM:
		v = fig_value(r, iv);
		cell(f, r->width, r->prec, r->scale ? v * r->scale : v);
		break;
	default:
		break;
	}
}

void bw_render_row(FILE *f, const struct bw_interval *iv, const struct bw_class *cls)
{
	size_t i;

	fprintf(f, "%-10s", iv->name);
	if (iv->gone) {
		fprintf(f, " (gone)\n");
		return;
	}
	for (i = 0; i < bw_nfigures; i++)
		row_cell(f, &bw_figures[i], iv, cls);
	fputc('\n', f);
}

static void json_ops(struct bw_json *j, const struct bw_interval *iv)
{
	int op;

	bw_json_obj(j, "ops");
	for (op = 0; op < BW_NR_OPS; op++) {
		bw_json_obj(j, bw_op_names[op]);
		bw_json_u64(j, "ios", iv->ios[op]);
		bw_json_u64(j, "bytes", iv->bytes[op]);
		bw_json_close(j, '}');
	}
	bw_json_close(j, '}');
}

/*
 * Requests by physical segment count: [lo, hi, requests] per non-empty
 * bucket, hi exclusive (null for the last bucket, which takes the rest).
 */
static void json_seg_hist(struct bw_json *j, const char *key, const struct bw_interval *iv)
{
	double lo, hi;
	unsigned int i;

	bw_json_arr(j, key);
	for (i = 0; i < BW_SEG_BUCKETS; i++) {
		if (!iv->hist_seg[i])
			continue;
		bw_bucket_bounds(i, &lo, &hi);
		bw_json_arr(j, NULL);
		bw_json_num(j, NULL, lo, 0);
		bw_json_num(j, NULL, i == BW_SEG_BUCKETS - 1 ? NAN : hi, 0);
		bw_json_u64(j, NULL, iv->hist_seg[i]);
		bw_json_close(j, ']');
	}
	bw_json_close(j, ']');
}

/* A space-separated list of names as a JSON array (empty when NULL). */
static void json_names(struct bw_json *j, const char *key, const char *names)
{
	char name[BW_NAME_LEN];
	int n;

	bw_json_arr(j, key);
	while (names && sscanf(names, " %31s%n", name, &n) == 1) {
		bw_json_str(j, NULL, name);
		names += n;
	}
	bw_json_close(j, ']');
}

static void json_class_reason(struct bw_json *j, const char *key, const struct bw_class *cls)
{
	if (!cls)
		return;
	bw_json_obj(j, key);
	bw_json_num(j, "median_p_eff", cls->nwin ? cls->median : NAN, 3);
	bw_json_u64(j, "samples", cls->nwin);
	bw_json_num(j, "evidence_s", cls->evidence_s, 2);
	bw_json_str(j, "text", cls->nwin ? cls->reason : "no determined P_eff yet");
	bw_json_close(j, '}');
}

/* A whole number, or null (NAN). */
static void json_int(struct bw_json *j, const char *key, double v)
{
	if (isnan(v))
		bw_json_num(j, key, NAN, 0);
	else
		bw_json_u64(j, key, (__u64)v);
}

static void json_special(struct bw_json *j, const struct bw_figure *r,
			 const struct bw_interval *iv, const struct bw_class *cls, __u64 inflight)
{
	switch (r->special) {
	case BW_SP_NAMES:
		json_names(j, r->json, r->str(iv, cls));
		break;
	case BW_SP_INFLIGHT:
		bw_json_u64(j, r->json, inflight);
		break;
	case BW_SP_CLASS_REASON:
		json_class_reason(j, r->json, cls);
		break;
	case BW_SP_SEG_HIST:
		json_seg_hist(j, r->json, iv);
		break;
	case BW_SP_OPS:
		json_ops(j, iv);
		break;
	default:
		break;
	}
}

static void json_figure(struct bw_json *j, const struct bw_figure *r,
			const struct bw_interval *iv, const struct bw_class *cls, __u64 inflight)
{
	if (r->virtio && !iv->virtio)
		return;
	if (r->json_rate)
		bw_json_num(j, r->json_rate, fig_value(r, iv), 2);
	switch (r->jtype) {
	case BW_J_NUM:
		bw_json_num(j, r->json, r->get(iv), r->jprec);
		break;
	case BW_J_INT:
		if (r->op_off)
			bw_json_u64(j, r->json, bw_fig_interval_count(r, iv));
		else
			json_int(j, r->json, r->get(iv));
		break;
	case BW_J_STR:
		bw_json_str(j, r->json, r->str(iv, cls));
		break;
	case BW_J_BOOL:
		bw_json_bool(j, r->json, r->get(iv) != 0);
		break;
	case BW_J_SPECIAL:
		json_special(j, r, iv, cls, inflight);
		break;
	default:
		break;
	}
}

void bw_render_json_dev(struct bw_json *j, const struct bw_interval *iv,
			const struct bw_class *cls, __u64 inflight)
{
	size_t i;

	bw_json_obj(j, NULL);
	for (i = 0; i < bw_nfigures; i++)
		json_figure(j, &bw_figures[i], iv, cls, inflight);
	bw_json_close(j, '}');
}

/* stat --virtio, below the table: a virtio disk's ring buffers. */
void bw_render_virtio_row(FILE *f, const struct bw_interval *iv)
{
	if (!iv->virtio || iv->vio_indirect < 0)
		return;
	fprintf(f, "virtio %-10s adds/s", iv->name);
	cell(f, 9, 1, ratio_s(iv->vio_indirect + iv->vio_direct, iv->secs));
	fprintf(f, "  indirect share");
	cell(f, 6, 3, iv->indirect_share);
	fprintf(f, "  descriptors/add");
	cell(f, 6, 2, iv->vio_indirect + iv->vio_direct > 0 ?
		(double)iv->vio_descs / (double)(iv->vio_indirect + iv->vio_direct) : NAN);
	fputc('\n', f);
}

void bw_render_stream_header(FILE *f, bool by_cgroup)
{
	if (by_cgroup)
		fprintf(f, "%-10s %-25s", "Device", "CGROUP");
	else
		fprintf(f, "%-10s %8s %-16s", "Device", "PID", "COMM");
	fprintf(f, " %8s %6s %4s %8s %6s %9s %6s %-7s\n", "ios/s", "depth", "max", "think_ms",
		"seq%", "seek_KiB", "sync%", "class");
}

void bw_render_stream_row(FILE *f, const char *dev, const struct bw_stream_interval *s)
{
	char gone[32];

	if (s->by_cgroup) {
		snprintf(gone, sizeof(gone), "(id %llu)", (unsigned long long)s->cgroup_id);
		fprintf(f, "%-10s %-25s", dev, s->cgroup ? s->cgroup : gone);
	} else {
		fprintf(f, "%-10s %8u %-16s", dev, s->tgid, s->comm);
	}
	cell(f, 8, 1, s->ios_per_s);
	cell(f, 6, 2, s->depth);
	fprintf(f, " %4llu", (unsigned long long)s->depth_max);
	cell(f, 8, 3, s->think_ms);
	cell(f, 6, 1, s->seq_pct);
	cell(f, 9, 1, s->seek_kb);
	cell(f, 6, 1, s->sync_pct);
	fprintf(f, " %-7s\n", isnan(s->depth) ? "-" : s->deep ? "deep" : "shallow");
}

void bw_render_json_stream(struct bw_json *j, const char *dev, const struct bw_stream_interval *s)
{
	bw_json_obj(j, NULL);
	bw_json_str(j, "device", dev);
	if (s->by_cgroup) {
		bw_json_u64(j, "cgroup_id", s->cgroup_id);
		bw_json_str(j, "cgroup", s->cgroup);
	} else {
		bw_json_u64(j, "pid", s->tgid);
		bw_json_str(j, "comm", s->comm);
	}
	bw_json_u64(j, "ios", s->ios);
	bw_json_u64(j, "bytes", s->bytes);
	bw_json_num(j, "ios_per_s", s->ios_per_s, 2);
	bw_json_num(j, "depth_mean", s->depth, 3);
	bw_json_u64(j, "depth_max", s->depth_max);
	bw_json_num(j, "think_mean_ms", s->think_ms, 4);
	bw_json_num(j, "think_p90_ms", s->think_p90_ms, 4);
	bw_json_num(j, "sequential_pct", s->seq_pct, 2);
	bw_json_num(j, "seek_mean_kb", s->seek_kb, 2);
	bw_json_num(j, "sync_pct", s->sync_pct, 2);
	bw_json_str(j, "class", isnan(s->depth) ? "unknown" : s->deep ? "deep" : "shallow");
	bw_json_close(j, '}');
}
