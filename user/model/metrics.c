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

/*
 * Why P_eff is undetermined: the JSON's words, the table's short code and
 * the legend's; the one list of them (the legend, the docs' column lists
 * and the man page are written from it).
 */
const struct bw_peff_why bw_peff_whys[BW_WHY_N] = {
	[BW_WHY_IDLE] = { "no completions", "-", "no I/O" },
	[BW_WHY_FEW] = { "too few completions", "-n<20", "under 20 completions" },
	[BW_WHY_SHALLOW] = { "not driven at depth", "-L<1.5", "mean depth under 1.5" },
	[BW_WHY_NO_S1] = { "solo service time unknown", "-nS1",
			   "solo service time not learned yet (needs I/O at depth 1 once)" },
	[BW_WHY_LIGHT] = { "light tier: busy time (io_ticks) not read yet, and no exact slice", "-lt",
			   "light tier, busy time not read yet (the first interval)" },
	[BW_WHY_NOFETCH] = { BW_NO_FETCH_WHY, "-nF",
			     "this kernel has no BPF fetch-and-add (before 5.12)" },
};

/* The legend of the codes, one line, printed once above the first table. */
void bw_render_legend(FILE *f)
{
	int i;

	fprintf(f, "P_eff undetermined:");
	for (i = 0; i < BW_WHY_N; i++)
		fprintf(f, "%s %s %s", i ? ";" : "", bw_peff_whys[i].code, bw_peff_whys[i].legend);
	fputc('\n', f);
}

/*
 * S1 of one (op, size class): fresh solo samples of this run when there
 * are enough, else the stored value, which they replace once they are.
 */
static bool live_solo(const struct bw_op_stats *live, int c, const struct bw_peff_params *pp)
{
	return live->solo_ios[c] >= pp->min_solo;
}

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
		*is_live = stored->estimated;
		return true;
	}
	return false;
}

/*
 * The completions an interval's P_eff counts: n, what the light tier saw,
 * or where it ran for a share of the time (counts_ds) diskstats' count of
 * the same ops, with the mix of sizes it saw.
 */
static double count_scale(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur, __u64 n)
{
	__u64 ds = 0, light = delta(cur->light_ios, prev->light_ios);
	int op;

	if (!cur->counts_ds || !light)
		return (double)n;
	for (op = 0; op < BW_NR_OPS; op++)
		if (op != BW_OP_PASSTHROUGH)
			ds += delta(cur->op[op].ios, prev->op[op].ios);
	return (double)n * (double)ds / (double)light;
}

static void compute_peff(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			 const struct bw_op_stats *delta, __u64 dbusy, double depth,
			 const struct bw_peff_params *pp, const struct bw_s1_dev *stored,
			 __s64 now_unix, struct bw_interval *o)
{
	const struct bw_peff_why *why = NULL;
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
			o->s1_source = !is_live ? "stored" : live_solo(&cur->op[op], c, pp) ? "live" :
											      "estimated";
			o->s1_age_s = is_live ? NAN : (double)(now_unix - st->learned);
		}
	}
	o->s1_coverage = n ? (double)known / (double)n : 0;
	o->solo_work_ns = work;
	o->solo_known = known;
	/* The light tier and before 5.12: an estimate where io_ticks gave busy time. */
	if ((cur->busy_unknown || cur->light) && isnan(o->busy_pct))
		why = &bw_peff_whys[cur->busy_unknown ? BW_WHY_NOFETCH : BW_WHY_LIGHT];
	else if (!n || !dbusy)
		why = &bw_peff_whys[BW_WHY_IDLE];
	else if (n < pp->min_ios)
		why = &bw_peff_whys[BW_WHY_FEW];
	else if (!(depth >= pp->min_depth))
		why = &bw_peff_whys[BW_WHY_SHALLOW];
	else if (o->s1_coverage < pp->min_coverage)
		why = &bw_peff_whys[BW_WHY_NO_S1];
	else
		o->p_eff = work / (double)known * count_scale(prev, cur, n) / (double)dbusy;
	o->p_eff_why = why ? why->text : NULL;
	o->p_eff_code = why ? why->code : NULL;
	o->p_eff_source = isnan(o->p_eff) ? NULL : (cur->busy_unknown || cur->light) ? "estimated" :
							       "exact";
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

/* Service, queue and total time of the requests of ops (passthrough apart) into o. */
static void timing_of(const struct bw_op_stats *ops, struct bw_interval *o)
{
	struct bw_op_stats all;
	int op;

	memset(&all, 0, sizeof(all));
	for (op = 0; op < BW_NR_OPS; op++)
		if (op != BW_OP_PASSTHROUGH)
			bw_op_stats_add(&all, &ops[op]);
	o->q_ios = all.q_ios;
	o->svc_hist_samples = bw_hist_total(all.hist_d2c, BW_LAT_BUCKETS);
	o->queue_hist_samples = bw_hist_total(all.hist_q2d, BW_LAT_BUCKETS);
	/* Over the requests timed: every completion counted, or (counts_ds) those the light tier saw. */
	o->svc_mean_ms = ratio(all.d2c_ns / 1e6, o->svc_hist_samples ?: all.ios);
	o->svc_p50_ms = bw_hist_percentile(all.hist_d2c, BW_LAT_BUCKETS, 0.50) * 1024 / 1e6;
	o->svc_p99_ms = bw_hist_percentile(all.hist_d2c, BW_LAT_BUCKETS, 0.99) * 1024 / 1e6;
	o->queue_mean_ms = ratio(all.q2d_ns / 1e6, all.q_ios);
	o->total_mean_ms = ratio(all.q2c_ns / 1e6, all.q_ios);
}

/*
 * The light tier where the kernel's stamps are a plug's cached clock
 * (bpf/complete.h, bw_stamp_plugged): timing from the exact slices'
 * requests of the interval, where a slice ran; else the stamps' stay,
 * with the share of them that was cached (stamp_plugged_share).
 */
static void sampled_timing(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			   __u64 n, struct bw_interval *o)
{
	struct bw_op_stats x[BW_NR_OPS];
	__u64 xn = 0;
	int op;

	if (!cur->light || !cur->plug_clock || !cur->x_timed)
		return;
	for (op = 0; op < BW_NR_OPS; op++) {
		bw_op_stats_sub(&x[op], &cur->xop[op], &prev->xop[op]);
		if (op != BW_OP_PASSTHROUGH)
			xn += x[op].ios;
	}
	if (!xn)
		return;
	timing_of(x, o);
	o->timing_source = "sampled";
	o->timing_share = n ? (double)xn / (double)n : 1;
	if (o->timing_share > 1)	/* a slice's requests issued before the interval */
		o->timing_share = 1;
}

char bw_timing_mark(const struct bw_interval *iv)
{
	if (iv->timing_source && !strcmp(iv->timing_source, "sampled"))
		return '~';
	if (iv->stamp_plugged_share > BW_PLUGGED_TRUST)
		return '!';
	return 0;
}

void bw_interval_compute(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			 double secs, const struct bw_peff_params *pp, const struct bw_s1_dev *stored,
			 __s64 now_unix, struct bw_interval *o)
{
	static const struct bw_snap_dev zero;
	struct bw_op_stats d[BW_NR_OPS], all;
	__u64 dbusy, n, seg, bytes, area;
	int op;

	if (!prev)
		prev = &zero;
	memset(o, 0, sizeof(*o));
	memset(&all, 0, sizeof(all));
	o->dev = cur->dev;
	memcpy(o->name, cur->name, sizeof(o->name));
	o->secs = secs;
	o->exact_share = NAN;	/* the light tier's run with slices sets it */
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
	if (!cur->counts_ds)	/* diskstats' writes hold them already */
		o->ios[BW_OP_WRITE] += o->fsync_writes;
	area = bw_flight_area(all.d2c_ns + d[BW_OP_PASSTHROUGH].d2c_ns, prev->open_area_ns,
			      cur->open_area_ns);
	n = all.ios;
	seg = all.segments;
	bytes = all.bytes;
	o->merges_diskstats = -1;
	o->unmatched = cur->unmatched;
	o->untracked = cur->untracked;
	o->lost = cur->lost;
	o->lost_now = delta(cur->lost, prev->lost);
	dbusy = delta(cur->busy_ns, prev->busy_ns);

	o->r_per_s = ratio(d[BW_OP_READ].ios, secs);
	o->w_per_s = ratio(o->ios[BW_OP_WRITE], secs);
	o->d_per_s = ratio(d[BW_OP_DISCARD].ios, secs);
	o->f_per_s = ratio(d[BW_OP_FLUSH].ios, secs);
	o->r_mb_per_s = ratio(d[BW_OP_READ].bytes / 1048576.0, secs);
	o->w_mb_per_s = ratio(d[BW_OP_WRITE].bytes / 1048576.0, secs);
	timing_of(d, o);
	o->depth_busy = ratio(area, dbusy);
	/* The max is set at each D; what was in flight as the interval began counts too. */
	o->depth_max = cur->max_depth > prev->inflight ? cur->max_depth : prev->inflight;
	o->busy_pct = ratio(dbusy / 1e7, secs);
	if (o->busy_pct > 100)
		o->busy_pct = 100;
	o->busy_source = "exact";
	o->light = cur->light;
	o->timing_source = !cur->light ? "issue" : cur->fallback == 1 ? "issue_fallback" : "stamp";
	o->timing_share = 1;
	o->stamp_plugged_share = cur->light ? ratio(all.plugged, n) : NAN;
	sampled_timing(prev, cur, n, o);
	/* Before 5.12 (docs/design.md, "The hot path"), or the light tier: not measured. */
	if (cur->busy_unknown || cur->light) {
		o->busy_pct = NAN;
		o->busy_source = NULL;
		o->depth_busy = NAN;
		o->depth_max_unknown = true;
	}
	if (cur->light || cur->busy_unknown)
		busy_from_ticks(prev, cur, secs, o);
	o->depth_source = isnan(o->depth_busy) ? NULL : "exact";
	/*
	 * Little's law where busy time is io_ticks': requests x service time
	 * over it, at least 1 (busy, so one in flight: io_ticks' jiffies count
	 * a device idle between requests for less than one as busy).
	 */
	if ((cur->light || cur->busy_unknown) && o->busy_pct > 0 && !isnan(o->svc_mean_ms) && n) {
		dbusy = (__u64)(o->busy_pct * secs * 1e7);
		o->depth_busy = fmax(1, o->svc_mean_ms * 1e6 * (double)n / (double)dbusy);
		o->depth_source = "estimated";
	}
	o->seg_per_rq = ratio(seg, n);
	o->segments = seg;
	memcpy(o->hist_seg, all.hist_seg, sizeof(o->hist_seg));
	o->kb_per_rq = ratio(bytes / 1024.0, n);
	compute_stall(prev, cur, dbusy, o);
	compute_peff(prev, cur, d, dbusy, o->depth_busy, pp, stored, now_unix, o);
}

void bw_interval_sampled(struct bw_interval *o, const struct bw_interval *x, double age_s,
			 double share)
{
	o->sampled = true;
	o->depth_source = isnan(x->depth_busy) ? NULL : "sampled";
	o->p_eff_source = isnan(x->p_eff) ? NULL : "sampled";
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
void bw_stream_compute(const struct bw_stream *prev, const struct bw_stream *cur, __u64 closed,
		       double secs, struct bw_stream_interval *o)
{
	static const struct bw_stream zero;
	__u64 ios, busy, area, queued, was;

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
	/* As a device's: the epoch's max, or what was in flight as the interval began. */
	o->depth_max = bw_epoch_max_of(&cur->max, closed);
	was = prev->word & BW_INFLIGHT_MASK;
	if (was > o->depth_max)
		o->depth_max = was;
	o->think_ms = ratio((cur->think_ns - prev->think_ns) / 1e6, cur->thinks - prev->thinks);
	o->think_p90_ms = think_p90(prev, cur);
	o->seq_pct = ratio(100.0 * (cur->seq_ios - prev->seq_ios), queued);
	o->seek_kb = ratio((cur->seek_sectors - prev->seek_sectors) / 2.0, queued);
	o->sync_pct = ratio(100.0 * (cur->sync_ios - prev->sync_ios), queued);
	o->deep = o->depth >= 2.0;
}

/* Little's depth of an interval: rate x service time over busy time; NAN when not known. */
static double little_depth(const struct bw_interval *iv)
{
	double n = bw_interval_rate(iv);

	return iv->busy_pct > 0 ? n * iv->svc_mean_ms / (iv->busy_pct * 10) : NAN;
}

double bw_interval_rate(const struct bw_interval *iv)
{
	double r = 0;
	int op;

	for (op = 0; op < BW_NR_OPS; op++)
		r += iv->ios[op];
	return iv->secs > 0 ? r / iv->secs : 0;
}

/* a and b a factor of BW_MOVED or more apart (both known and positive). */
static bool factor_apart(double a, double b)
{
	if (!(a > 0) || !(b > 0))
		return false;
	return a >= b * BW_MOVED || b >= a * BW_MOVED;
}

bool bw_workload_moved(const struct bw_interval *a, const struct bw_interval *b)
{
	bool idle_a = bw_interval_rate(a) * a->secs < BW_MOVED_MIN_IOS;
	bool idle_b = bw_interval_rate(b) * b->secs < BW_MOVED_MIN_IOS;

	if (idle_a || idle_b)
		return idle_a != idle_b;
	return factor_apart(bw_interval_rate(a), bw_interval_rate(b)) || factor_apart(a->kb_per_rq, b->kb_per_rq) ||
	       factor_apart(little_depth(a), little_depth(b));
}

void bw_interval_solo_estimate(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			       const struct bw_interval *iv, __u64 ios[BW_NR_OPS][BW_SIZE_CLASSES],
			       __u64 ns[BW_NR_OPS][BW_SIZE_CLASSES])
{
	struct bw_op_stats d;
	int op, c, top;

	if (!prev || cur->counts_ds || !iv->depth_source || strcmp(iv->depth_source, "estimated") ||
	    !(iv->depth_busy <= BW_SOLO_DEPTH) || iv->timing_source == NULL ||
	    strcmp(iv->timing_source, "stamp") || iv->stamp_plugged_share > BW_PLUGGED_TRUST)
		return;
	for (op = 0; op < BW_NR_OPS; op++) {
		bw_op_stats_sub(&d, &cur->op[op], &prev->op[op]);
		if (d.ios < bw_peff_default.min_ios || !d.d2c_ns)
			continue;
		for (top = 0, c = 1; c < BW_SIZE_CLASSES; c++)
			if (d.class_ios[c] > d.class_ios[top])
				top = c;
		if (d.class_ios[top] * 10 < d.ios * 9)	/* no one size: no one S1 */
			continue;
		ios[op][top] += d.ios;
		ns[op][top] += d.d2c_ns;
	}
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
