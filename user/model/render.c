// SPDX-License-Identifier: GPL-2.0
/* The stat table and its JSON twin, named as iostat -x users read them. */
#include <math.h>
#include "model/model.h"

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

void bw_render_header(FILE *f)
{
	fprintf(f, "%-10s %8s %8s %7s %7s %7s %7s %7s %7s %6s %4s %6s %6s %-7s %6s %8s %8s %6s\n",
		"Device", "r/s", "w/s", "rMB/s", "wMB/s", "svc_ms", "p50_ms", "p99_ms", "q_ms",
		"depth", "max", "busy%", "P_eff", "class", "seg/rq", "merge/s", "requeue/s", "stall%");
}

void bw_render_row(FILE *f, const struct bw_interval *iv, const struct bw_class *cls)
{
	fprintf(f, "%-10s", iv->name);
	if (iv->gone) {
		fprintf(f, " (gone)\n");
		return;
	}
	cell(f, 8, 1, iv->r_per_s);
	cell(f, 8, 1, iv->w_per_s);
	cell(f, 7, 2, iv->r_mb_per_s);
	cell(f, 7, 2, iv->w_mb_per_s);
	cell(f, 7, 3, iv->svc_mean_ms);
	cell(f, 7, 3, iv->svc_p50_ms);
	cell(f, 7, 3, iv->svc_p99_ms);
	cell(f, 7, 3, iv->queue_mean_ms);
	cell(f, 6, 2, iv->depth_busy);
	if (iv->depth_max_unknown)
		fprintf(f, " %4s", "-");
	else
		fprintf(f, " %4llu", (unsigned long long)iv->depth_max);
	cell(f, 6, 1, iv->busy_pct);
	if (isnan(iv->p_eff))
		fprintf(f, " %6s", iv->p_eff_code ? iv->p_eff_code : "-");
	else if (iv->sampled)	/* the last exact slice's: ~ */
		fprintf(f, " %5.2f~", iv->p_eff);
	else
		cell(f, 6, 2, iv->p_eff);
	fprintf(f, " %-7s", bw_class_name(cls ? cls->cls : BW_CLASS_UNKNOWN));
	cell(f, 6, 2, iv->seg_per_rq);
	cell(f, 8, 1, iv->merges_per_s);
	cell(f, 8, 1, iv->requeues_per_s);
	cell(f, 6, 1, 100 * iv->stall_share);
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
static void json_seg_hist(struct bw_json *j, const struct bw_interval *iv)
{
	double lo, hi;
	unsigned int i;

	bw_json_arr(j, "seg_hist");
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

void bw_render_json_dev(struct bw_json *j, const struct bw_interval *iv,
			const struct bw_class *cls, __u64 inflight)
{
	bw_json_obj(j, NULL);
	bw_json_str(j, "device", iv->name);
	bw_json_str(j, "identity", iv->identity);
	bw_json_str(j, "identity_note", iv->identity_note);	/* null: none; one schema */
	bw_json_bool(j, "gone", iv->gone);
	bw_json_bool(j, "bio_based", iv->bio_based);
	json_names(j, "slaves", iv->slaves);
	json_names(j, "holders", iv->holders);
	bw_json_num(j, "reads_per_s", iv->r_per_s, 2);
	bw_json_num(j, "writes_per_s", iv->w_per_s, 2);
	bw_json_num(j, "discards_per_s", iv->d_per_s, 2);
	bw_json_num(j, "flushes_per_s", iv->f_per_s, 2);
	bw_json_num(j, "read_mb_per_s", iv->r_mb_per_s, 3);
	bw_json_num(j, "write_mb_per_s", iv->w_mb_per_s, 3);
	bw_json_num(j, "svc_mean_ms", iv->svc_mean_ms, 4);
	bw_json_num(j, "svc_p50_ms", iv->svc_p50_ms, 4);
	bw_json_num(j, "svc_p99_ms", iv->svc_p99_ms, 4);
	bw_json_num(j, "queue_mean_ms", iv->queue_mean_ms, 4);
	bw_json_num(j, "total_mean_ms", iv->total_mean_ms, 4);
	bw_json_str(j, "tier", iv->light ? "light" : "exact");
	bw_json_str(j, "timing_source", iv->timing_source);
	/* The light tier's exact slices: depth, stalls, S1 and P_eff are the last slice's. */
	bw_json_bool(j, "exact_sampled", iv->sampled);
	bw_json_num(j, "exact_sample_age_s", iv->sampled ? iv->sample_age_s : NAN, 3);
	bw_json_num(j, "exact_sample_s", iv->sampled ? iv->sample_s : NAN, 3);
	bw_json_num(j, "exact_share", iv->sampled ? iv->exact_share : NAN, 4);
	bw_json_num(j, "depth_mean_busy", iv->depth_busy, 3);
	if (iv->depth_max_unknown)
		bw_json_num(j, "depth_max", NAN, 0);
	else
		bw_json_u64(j, "depth_max", iv->depth_max);
	bw_json_u64(j, "inflight", inflight);
	bw_json_num(j, "busy_pct", iv->busy_pct, 2);
	bw_json_str(j, "busy_source", iv->busy_source);
	bw_json_num(j, "p_eff", iv->p_eff, 3);
	bw_json_str(j, "p_eff_undetermined_why", iv->p_eff_why);
	bw_json_num(j, "solo_svc_ms", iv->solo_ms, 4);
	bw_json_u64(j, "solo_samples", iv->solo_ios);
	bw_json_str(j, "s1_source", iv->s1_source);
	bw_json_num(j, "s1_age_s", iv->s1_age_s, 0);
	bw_json_num(j, "s1_coverage", iv->s1_coverage, 3);
	bw_json_str(j, "class", bw_class_name(cls ? cls->cls : BW_CLASS_UNKNOWN));
	bw_json_str(j, "class_source", !cls || cls->cls == BW_CLASS_UNKNOWN ? NULL :
		    cls->stored ? "stored" : "live");
	if (cls) {
		bw_json_obj(j, "class_reason");
		bw_json_num(j, "median_p_eff", cls->nwin ? cls->median : NAN, 3);
		bw_json_u64(j, "samples", cls->nwin);
		bw_json_num(j, "evidence_s", cls->evidence_s, 2);
		bw_json_str(j, "text", cls->nwin ? cls->reason : "no determined P_eff yet");
		bw_json_close(j, '}');
	}
	bw_json_num(j, "seg_per_rq", iv->seg_per_rq, 3);
	if (isnan(iv->seg_per_rq))	/* not carried (blktrace, bios), or no requests */
		bw_json_num(j, "segments", NAN, 0);
	else
		bw_json_u64(j, "segments", iv->segments);
	json_seg_hist(j, iv);
	bw_json_num(j, "kb_per_rq", iv->kb_per_rq, 2);
	bw_json_num(j, "merges_per_s", iv->merges_per_s, 2);
	bw_json_num(j, "requeues_per_s", iv->requeues_per_s, 2);
	bw_json_u64(j, "fsync_writes", iv->fsync_writes);
	bw_json_u64(j, "merges", iv->merges);
	if (iv->merges_diskstats >= 0)
		bw_json_u64(j, "merges_diskstats", iv->merges_diskstats);
	else
		bw_json_num(j, "merges_diskstats", NAN, 0);
	bw_json_u64(j, "requeues", iv->requeues);
	if (iv->virtio) {
		bw_json_num(j, "virtio_indirect", iv->vio_indirect < 0 ? NAN : iv->vio_indirect, 0);
		bw_json_num(j, "virtio_direct", iv->vio_direct < 0 ? NAN : iv->vio_direct, 0);
		bw_json_num(j, "virtio_descs", iv->vio_descs < 0 ? NAN : iv->vio_descs, 0);
		bw_json_num(j, "indirect_share", iv->indirect_share, 3);
	}
	bw_json_num(j, "dispatch_stall_s", iv->stall_s, 6);
	bw_json_num(j, "dispatch_stall_share", iv->stall_share, 4);
	if (iv->stall_unknown)
		bw_json_num(j, "dispatch_stalls", NAN, 0);
	else
		bw_json_u64(j, "dispatch_stalls", iv->stall_episodes);
	bw_json_u64(j, "errors", iv->errors);
	bw_json_u64(j, "q_ios", iv->q_ios);
	bw_json_u64(j, "unmatched_total", iv->unmatched);
	bw_json_u64(j, "untracked_total", iv->untracked);
	/* The light tier has no per-request entry a reissue could find: not measured. */
	if (iv->light) {
		bw_json_num(j, "lost_completions_total", NAN, 0);
		bw_json_num(j, "lost_completions", NAN, 0);
	} else {
		bw_json_u64(j, "lost_completions_total", iv->lost);
		bw_json_u64(j, "lost_completions", iv->lost_now);
	}
	bw_json_u64(j, "svc_hist_samples", iv->svc_hist_samples);
	bw_json_u64(j, "queue_hist_samples", iv->queue_hist_samples);
	json_ops(j, iv);
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
