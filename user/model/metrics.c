// SPDX-License-Identifier: GPL-2.0
/*
 * From two cumulative snapshots of a device to the figures of an interval.
 * Pure: no BPF, no system calls.
 */
#include <math.h>
#include <string.h>
#include "model/model.h"

const char *const bw_op_names[BW_NR_OPS] = { "read", "write", "discard", "flush", "passthrough" };

/*
 * P_eff is defined only when the device was driven at depth: L >= 1.5, not
 * the 2.0 one might expect.  A client at iodepth 2 keeps L just under 2 (its
 * resubmit gap), and an exact 2.0 cut would call that "not driven at depth"
 * (measured: L = 1.9x at iodepth 2 on the emulated disk).  At iodepth 1 L
 * is 1.0 and P_eff stays undetermined.
 */
const struct bw_peff_params bw_peff_default = {
	.min_depth = 1.5,
	.min_solo = 20,
	.min_coverage = 0.9,
	.min_ios = 20,
};

#define NWORDS (sizeof(struct bw_op_stats) / sizeof(__u64))

void bw_op_stats_add(struct bw_op_stats *dst, const struct bw_op_stats *src)
{
	__u64 *d = (__u64 *)dst;
	const __u64 *s = (const __u64 *)src;
	size_t i;

	for (i = 0; i < NWORDS; i++)
		d[i] += s[i];
}

void bw_op_stats_sub(struct bw_op_stats *dst, const struct bw_op_stats *a,
		     const struct bw_op_stats *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 *d = (__u64 *)dst;
	size_t i;

	/* A counter that went backwards belongs to a re-created device: start over. */
	for (i = 0; i < NWORDS; i++)
		d[i] = x[i] >= y[i] ? x[i] - y[i] : x[i];
}

static double ratio(double num, double den)
{
	return den > 0 ? num / den : NAN;
}

/*
 * The in-flight area of an interval (ns): the integral over it of the
 * requests in flight.  Service time is known whole only at completion, so
 * the interval a request completes in takes its d2c, less the part spent
 * before the interval began (its open time in the snapshot at the start),
 * and an interval that ends with requests in flight takes their open time
 * so far.  Each request's time lands in the intervals it was in flight in,
 * as busy time does: area / busy never exceeds the interval's max depth.
 */
__u64 bw_flight_area(__u64 d2c, __u64 open_start, __u64 open_end)
{
	__u64 a = d2c + open_end;

	return a > open_start ? a - open_start : 0;
}

static __u64 delta(__u64 cur, __u64 prev)
{
	return cur >= prev ? cur - prev : cur;	/* backwards: a re-created device */
}

/* Why P_eff is undetermined: the JSON's words and the table's short code. */
static const struct peff_why {
	const char *text, *code, *legend;
} why_idle = { "no completions", "-", "no I/O" },
  why_few = { "too few completions", "-n<20", "under 20 completions" },
  why_shallow = { "not driven at depth", "-L<1.5", "mean depth under 1.5" },
  why_no_s1 = { "solo service time unknown", "-nS1",
		"solo service time not learned yet (needs I/O at depth 1 once)" },
  why_light = { "light tier: needs the exact tier (--exact, or an exact slice)", "-lt",
		"light tier, no exact slice yet (--exact-period)" },
  why_nofetch = { BW_NO_FETCH_WHY, "-nF", "this kernel has no BPF fetch-and-add (before 5.12)" };

/* The legend of the codes, one line, printed once above the first table. */
void bw_render_legend(FILE *f)
{
	const struct peff_why *w[] = { &why_idle, &why_few, &why_shallow, &why_no_s1, &why_light,
				       &why_nofetch };
	size_t i;

	fprintf(f, "P_eff undetermined:");
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		fprintf(f, "%s %s %s", i ? ";" : "", w[i]->code, w[i]->legend);
	fputc('\n', f);
}

/*
 * S1 of one (op, size class): fresh solo samples of this run when there
 * are enough, else the stored value, which they replace once they are.
 */
static bool pick_s1(const struct bw_op_stats *live, const struct bw_s1 *stored, int c,
		    const struct bw_peff_params *pp, double *s1, __u64 *samples, bool *is_live)
{
	if (live->solo_ios[c] >= pp->min_solo) {
		*s1 = (double)live->solo_ns[c] / (double)live->solo_ios[c];
		*samples = live->solo_ios[c];
		*is_live = true;
		return true;
	}
	if (stored && stored->samples >= pp->min_solo && stored->mean_ns) {
		*s1 = (double)stored->mean_ns;
		*samples = stored->samples;
		*is_live = false;
		return true;
	}
	return false;
}

static void compute_peff(const struct bw_snap_dev *cur, const struct bw_op_stats *delta,
			 __u64 dbusy, double depth, const struct bw_peff_params *pp,
			 const struct bw_s1_dev *stored, __s64 now_unix, struct bw_interval *o)
{
	const struct peff_why *why = NULL;
	__u64 n = 0, known = 0, best = 0, samples;
	double work = 0, s1;
	bool is_live;
	int op, c;

	o->p_eff = NAN;
	o->solo_ms = NAN;
	o->s1_age_s = NAN;
	o->solo_ios = 0;
	o->s1_source = NULL;
	for (op = 0; op < BW_NR_OPS; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			__u64 dn = delta[op].class_ios[c];
			const struct bw_s1 *st = stored ? &stored->s[op][c] : NULL;

			n += dn;
			if (!dn || !pick_s1(&cur->op[op], st, c, pp, &s1, &samples, &is_live))
				continue;
			known += dn;
			work += (double)dn * s1;
			if (dn <= best)
				continue;
			best = dn;
			o->solo_ms = s1 / 1e6;
			o->solo_ios = samples;
			o->s1_source = is_live ? "live" : "stored";
			o->s1_age_s = is_live ? NAN : (double)(now_unix - st->learned);
		}
	}
	o->s1_coverage = n ? (double)known / (double)n : 0;
	o->solo_work_ns = work;
	o->solo_known = known;
	if (cur->busy_unknown)
		why = &why_nofetch;
	else if (cur->light)
		why = &why_light;
	else if (!n || !dbusy)
		why = &why_idle;
	else if (n < pp->min_ios)
		why = &why_few;
	else if (!(depth >= pp->min_depth))
		why = &why_shallow;
	else if (o->s1_coverage < pp->min_coverage)
		why = &why_no_s1;
	else
		o->p_eff = work / (double)known * (double)n / (double)dbusy;
	o->p_eff_why = why ? why->text : NULL;
	o->p_eff_code = why ? why->code : NULL;
}

/*
 * The light tier's busy time, and the exact tier's before 5.12: diskstats' io_ticks, the time the disk had a
 * request in flight, kept in whole jiffies (at each request's start and
 * end the kernel adds the jiffies since its last update if a request was
 * in flight: docs/metrics.md says how close it comes to the exact tier's).
 * Known between two reads of the same appearance of the device.
 */
static void busy_from_ticks(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			    double secs, struct bw_interval *o)
{
	if (!prev || !prev->io_ticks_known || !cur->io_ticks_known || secs <= 0 ||
	    prev->appearance != cur->appearance || cur->io_ticks_ms < prev->io_ticks_ms)
		return;
	o->busy_pct = (cur->io_ticks_ms - prev->io_ticks_ms) / (10 * secs);
	if (o->busy_pct > 100)
		o->busy_pct = 100;
	o->busy_source = "io_ticks";
}

/*
 * Dispatch stalls over the interval: seconds, episodes opened, and the
 * share of busy time.  Requests can wait with nothing in flight (a device
 * held idle), so stall time may exceed busy time: the share stops at 1.
 */
static void compute_stall(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			  __u64 dbusy, struct bw_interval *o)
{
	__u64 ns = delta(cur->stall_ns, prev->stall_ns);

	o->stall_unknown = cur->stall_unknown || cur->busy_unknown || cur->light;
	if (o->stall_unknown) {
		o->stall_s = NAN;
		o->stall_share = NAN;
		return;
	}
	o->stall_s = ns / 1e9;
	o->stall_episodes = delta(cur->stalls, prev->stalls);
	o->stall_share = dbusy ? (double)ns / (double)dbusy : (ns ? 1.0 : 0.0);
	if (o->stall_share > 1)
		o->stall_share = 1;
}

void bw_interval_compute(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			 double secs, const struct bw_peff_params *pp, const struct bw_s1_dev *stored,
			 __s64 now_unix, struct bw_interval *o)
{
	static const struct bw_snap_dev zero;
	struct bw_op_stats d[BW_NR_OPS], all;
	__u64 dbusy, n, d2c, q2d, q2c, seg, bytes, area;
	int op;

	if (!prev)
		prev = &zero;
	memset(o, 0, sizeof(*o));
	memset(&all, 0, sizeof(all));
	o->dev = cur->dev;
	memcpy(o->name, cur->name, sizeof(o->name));
	o->secs = secs;
	/* Passthrough requests keep out of the figures of data requests (all). */
	for (op = 0; op < BW_NR_OPS; op++) {
		bw_op_stats_sub(&d[op], &cur->op[op], &prev->op[op]);
		if (op != BW_OP_PASSTHROUGH)
			bw_op_stats_add(&all, &d[op]);
		bw_op_stats_add(&o->sum, &d[op]);
		o->ios[op] = d[op].ios;
		o->bytes[op] = d[op].bytes;
	}
	/* Empty flush writes: writes to diskstats (and iostat), with no service time. */
	o->fsync_writes = delta(cur->fsync_writes, prev->fsync_writes);
	o->ios[BW_OP_WRITE] += o->fsync_writes;
	area = bw_flight_area(all.d2c_ns + d[BW_OP_PASSTHROUGH].d2c_ns, prev->open_area_ns,
			      cur->open_area_ns);
	n = all.ios;
	d2c = all.d2c_ns;
	q2d = all.q2d_ns;
	q2c = all.q2c_ns;
	seg = all.segments;
	bytes = all.bytes;
	o->merges_diskstats = -1;
	o->q_ios = all.q_ios;
	o->unmatched = cur->unmatched;
	o->untracked = cur->untracked;
	o->lost = cur->lost;
	o->lost_now = delta(cur->lost, prev->lost);
	o->svc_hist_samples = bw_hist_total(all.hist_d2c, BW_LAT_BUCKETS);
	o->queue_hist_samples = bw_hist_total(all.hist_q2d, BW_LAT_BUCKETS);
	dbusy = delta(cur->busy_ns, prev->busy_ns);

	o->r_per_s = ratio(d[BW_OP_READ].ios, secs);
	o->w_per_s = ratio(o->ios[BW_OP_WRITE], secs);
	o->d_per_s = ratio(d[BW_OP_DISCARD].ios, secs);
	o->f_per_s = ratio(d[BW_OP_FLUSH].ios, secs);
	o->r_mb_per_s = ratio(d[BW_OP_READ].bytes / 1048576.0, secs);
	o->w_mb_per_s = ratio(d[BW_OP_WRITE].bytes / 1048576.0, secs);
	o->svc_mean_ms = ratio(d2c / 1e6, n);
	o->svc_p50_ms = bw_hist_percentile(all.hist_d2c, BW_LAT_BUCKETS, 0.50) * 1024 / 1e6;
	o->svc_p99_ms = bw_hist_percentile(all.hist_d2c, BW_LAT_BUCKETS, 0.99) * 1024 / 1e6;
	o->queue_mean_ms = ratio(q2d / 1e6, all.q_ios);
	o->total_mean_ms = ratio(q2c / 1e6, all.q_ios);
	o->depth_busy = ratio(area, dbusy);
	/* The max is set at each D; what was in flight as the interval began counts too. */
	o->depth_max = cur->max_depth > prev->inflight ? cur->max_depth : prev->inflight;
	o->busy_pct = ratio(dbusy / 1e7, secs);
	if (o->busy_pct > 100)
		o->busy_pct = 100;
	o->busy_source = "exact";
	o->light = cur->light;
	o->timing_source = !cur->light ? "issue" : cur->fallback == 1 ? "issue_fallback" : "stamp";
	/* Before 5.12 (docs/design.md, "The hot path"), or the light tier: not measured. */
	if (cur->busy_unknown || cur->light) {
		o->busy_pct = NAN;
		o->busy_source = NULL;
		o->depth_busy = NAN;
		o->depth_max_unknown = true;
	}
	if (cur->light || cur->busy_unknown)
		busy_from_ticks(prev, cur, secs, o);
	o->seg_per_rq = ratio(seg, n);
	o->segments = seg;
	memcpy(o->hist_seg, all.hist_seg, sizeof(o->hist_seg));
	o->kb_per_rq = ratio(bytes / 1024.0, n);
	compute_stall(prev, cur, dbusy, o);
	compute_peff(cur, d, dbusy, o->depth_busy, pp, stored, now_unix, o);
}

void bw_interval_sampled(struct bw_interval *o, const struct bw_interval *x, double age_s,
			 double share)
{
	o->sampled = true;
	o->sample_age_s = age_s;
	o->sample_s = x->secs;
	o->exact_share = share;
	o->depth_busy = x->depth_busy;
	o->depth_max = x->depth_max;
	o->depth_max_unknown = x->depth_max_unknown;
	o->stall_s = x->stall_s;
	o->stall_share = x->stall_share;
	o->stall_episodes = x->stall_episodes;
	o->stall_unknown = x->stall_unknown;
	o->solo_ms = x->solo_ms;
	o->solo_ios = x->solo_ios;
	o->s1_source = x->s1_source;
	o->s1_age_s = x->s1_age_s;
	o->s1_coverage = x->s1_coverage;
	o->p_eff = x->p_eff;
	o->p_eff_why = x->p_eff_why;
	o->p_eff_code = x->p_eff_code;
}

/* p90 of the interval's think times; +inf when it is past the histogram's end. */
static double think_p90(const struct bw_stream *prev, const struct bw_stream *cur)
{
	__u64 d[BW_THINK_BUCKETS], total;
	int i;

	for (i = 0; i < BW_THINK_BUCKETS; i++)
		d[i] = cur->think_hist[i] >= prev->think_hist[i] ?
		       cur->think_hist[i] - prev->think_hist[i] : cur->think_hist[i];
	total = bw_hist_total(d, BW_THINK_BUCKETS);
	if (!total)
		return NAN;
	if (d[BW_THINK_BUCKETS - 1] * 10 > total)
		return INFINITY;
	return bw_hist_percentile(d, BW_THINK_BUCKETS, 0.9) * (1u << BW_THINK_SHIFT) / 1e6;
}

/* A stream is deep when it keeps >= 2 requests outstanding while active (CFQ used 4). */
void bw_stream_compute(const struct bw_stream *prev, const struct bw_stream *cur, double secs,
		       struct bw_stream_interval *o)
{
	static const struct bw_stream zero;
	__u64 ios, busy, area, queued;

	if (!prev)
		prev = &zero;
	memset(o, 0, sizeof(*o));
	memcpy(o->comm, cur->comm, sizeof(o->comm));
	o->comm[sizeof(o->comm) - 1] = '\0';
	ios = cur->ios - prev->ios;
	busy = cur->busy_ns - prev->busy_ns;
	queued = cur->queued - prev->queued;
	area = cur->area_ns - prev->area_ns;
	o->ios = ios;
	o->bytes = cur->bytes - prev->bytes;
	o->ios_per_s = ratio(ios, secs);
	o->depth = ratio(area, busy);
	o->depth_max = cur->max_depth;
	o->think_ms = ratio((cur->think_ns - prev->think_ns) / 1e6, cur->thinks - prev->thinks);
	o->think_p90_ms = think_p90(prev, cur);
	o->seq_pct = ratio(100.0 * (cur->seq_ios - prev->seq_ios), queued);
	o->seek_kb = ratio((cur->seek_sectors - prev->seek_sectors) / 2.0, queued);
	o->sync_pct = ratio(100.0 * (cur->sync_ios - prev->sync_ios), queued);
	o->deep = o->depth >= 2.0;
}

/* Did the device do anything in the interval (iostat -z's test)? */
bool bw_interval_active(const struct bw_interval *iv)
{
	int op;

	for (op = 0; op < BW_NR_OPS; op++)
		if (iv->ios[op] || iv->bytes[op])
			return true;
	return iv->busy_pct > 0 || iv->sum.requeues || iv->sum.merges;
}

void bw_vio_interval(const struct bw_vio_stats *prev, const struct bw_vio_stats *cur,
		     struct bw_interval *o)
{
	__u64 ind, dir, descs;

	o->virtio = true;
	o->vio_indirect = o->vio_direct = o->vio_descs = -1;
	o->indirect_share = NAN;
	if (!cur)
		return;
	ind = delta(cur->v[BW_VIO_INDIRECT], prev->v[BW_VIO_INDIRECT]);
	dir = delta(cur->v[BW_VIO_DIRECT], prev->v[BW_VIO_DIRECT]);
	descs = delta(cur->v[BW_VIO_INDIRECT_DESCS], prev->v[BW_VIO_INDIRECT_DESCS]) +
		delta(cur->v[BW_VIO_DIRECT_DESCS], prev->v[BW_VIO_DIRECT_DESCS]);
	o->vio_indirect = (__s64)ind;
	o->vio_direct = (__s64)dir;
	o->vio_descs = (__s64)descs;
	o->indirect_share = ratio(ind, ind + dir);
}
