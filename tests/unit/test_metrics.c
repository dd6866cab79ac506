// SPDX-License-Identifier: GPL-2.0
/* Interval figures (user/model/metrics.c): P_eff, depth, busy time, segments, virtio. */
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"

/* A device that did n reads of 4 KiB, each taking svc_ns, over busy_ns. */
static void fill(struct bw_snap_dev *d, __u64 n, __u64 svc_ns, __u64 busy_ns, __u64 solos,
		 __u64 solo_ns)
{
	struct bw_op_stats *r = &d->op[BW_OP_READ];

	memset(d, 0, sizeof(*d));
	d->dev = (7 << 20) | 3;
	r->ios = n;
	r->bytes = n * 4096;
	r->d2c_ns = n * svc_ns;
	r->class_ios[0] = n;
	r->solo_ios[0] = solos;
	r->solo_ns[0] = solos * solo_ns;
	r->hist_d2c[bw_bucket(svc_ns >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] = n;
	r->segments = n;
	d->busy_ns = busy_ns;
}

static void test_peff_parallel_device(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	/* P=4 at 2 ms: 2000 reads in 1 s busy, each seeing 8 ms at depth 16. */
	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 1000000000, 100, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "P_eff = N * S1 / T_b");
	CHECK_NEAR(iv.depth_busy, 16.0, 1e-9, "L = sum(D2C) / T_b");
	CHECK_NEAR(iv.r_per_s, 2000, 1e-9, "r/s");
	CHECK_NEAR(iv.svc_mean_ms, 8.0, 1e-9, "mean service");
	CHECK_NEAR(iv.svc_p50_ms, 8.0, 0.07, "p50 service");
	CHECK_NEAR(iv.busy_pct, 100, 1e-9, "busy");
	CHECK_NEAR(iv.solo_ms, 2.0, 1e-9, "solo service");
	CHECK(iv.p_eff_why == NULL, "determined");
}

static void test_peff_undetermined(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	/* Depth 1: L = 1, P_eff must not be guessed. */
	fill(&cur, 500, 2000000, 1000000000, 500, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff), "depth 1 is undetermined (got %g)", iv.p_eff);
	CHECK(iv.p_eff_why && !strcmp(iv.p_eff_why, "not driven at depth"), "reason");
	/* Deep but S1 never seen. */
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff), "no S1 is undetermined");
	CHECK(iv.p_eff_why && !strcmp(iv.p_eff_why, "solo service time unknown"), "reason");
	/* Idle. */
	fill(&cur, 0, 0, 0, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff) && isnan(iv.svc_mean_ms) && isnan(iv.depth_busy), "idle");
}

static void test_stored_s1(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_s1_dev st = {};
	struct bw_interval iv;

	/* Deep, no live solo sample: a stored S1 of 2 ms, learned 600 s ago, decides. */
	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	st.s[BW_OP_READ][0] = (struct bw_s1){ .samples = 50, .mean_ns = 2000000, .learned = 1000 };
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "P_eff from the stored S1");
	CHECK(iv.s1_source && !strcmp(iv.s1_source, "stored"), "source stored");
	CHECK_NEAR(iv.s1_age_s, 600, 1e-9, "age");
	CHECK(iv.solo_ios == 50, "stored sample count, got %llu", (unsigned long long)iv.solo_ios);
	/* Enough live samples replace it, whatever the store says. */
	fill(&cur, 2000, 8000000, 1000000000, 20, 1000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 2.0, 1e-9, "P_eff from the live S1");
	CHECK(iv.s1_source && !strcmp(iv.s1_source, "live") && isnan(iv.s1_age_s), "source live");
	/* Too few live samples: the stored one still serves. */
	fill(&cur, 2000, 8000000, 1000000000, 19, 1000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "19 live samples do not replace it");
	/* A stored record of another size class does not count. */
	st.s[BW_OP_READ][0].samples = 0;
	st.s[BW_OP_READ][3] = (struct bw_s1){ .samples = 50, .mean_ns = 2000000, .learned = 1 };
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK(isnan(iv.p_eff) && iv.s1_source == NULL, "other class: undetermined");
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-nS1"), "code -nS1");
}

static void test_peff_codes(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 10, 2000000, 20000000, 10, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-n<20"), "few: %s", iv.p_eff_code);
	fill(&cur, 500, 2000000, 1000000000, 500, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-L<1.5"), "shallow: %s", iv.p_eff_code);
	fill(&cur, 0, 0, 0, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-"), "idle: %s", iv.p_eff_code);
	CHECK(!bw_interval_active(&iv), "idle is not active");
	fill(&cur, 2000, 8000000, 1000000000, 100, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!iv.p_eff_code && !iv.p_eff_why, "determined: no code");
	CHECK(bw_interval_active(&iv), "active");
}

/* Before 5.12 (no BPF fetch-and-add): busy%, depth while busy and max depth unknown, not 0. */
/*
 * Depth while busy: 8 requests issued together at 0.5 s, each in flight for
 * 1 s, observed at 0 (idle), 1 s and 2 s.  Each second holds 0.5 s of them
 * at depth 8: mean depth 8 both times, as the max, though all the service
 * time is known only in the second.
 */
static void test_depth_split(void)
{
	static struct bw_snap_dev s0, s1, s2;
	struct bw_interval iv;

	CHECK(bw_flight_area(100, 0, 0) == 100, "all completed inside");
	CHECK(bw_flight_area(100, 30, 20) == 90, "30 before the start, 20 still open");
	CHECK(bw_flight_area(10, 30, 0) == 0, "never below 0 (a table healed meanwhile)");
	fill(&s0, 0, 0, 0, 0, 0);
	fill(&s1, 0, 0, 500 * 1000000ULL, 0, 0);
	s1.open_area_ns = 8 * 500 * 1000000ULL;
	s1.inflight = 8;
	s1.max_depth = 8;
	bw_interval_compute(&s0, &s1, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.depth_busy, 8.0, 1e-9, "depth with the requests still in flight");
	fill(&s2, 8, 1000000000ULL, 1000 * 1000000ULL, 0, 0);
	s2.max_depth = 0;	/* no D in this interval: the 8 were in flight as it began */
	bw_interval_compute(&s1, &s2, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.depth_busy, 8.0, 1e-9, "depth where they complete (was 16)");
	CHECK(iv.depth_busy <= iv.depth_max, "mean %g <= max %llu", iv.depth_busy,
	      (unsigned long long)iv.depth_max);
}

/*
 * Counted as diskstats counts: empty flush writes are writes (with no
 * service time), passthrough requests are not averaged into the data ops.
 */
static void test_fsync_and_passthrough(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_op_stats *pt;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 100, 1000000, 100000000, 0, 0);
	cur.op[BW_OP_WRITE] = cur.op[BW_OP_READ];
	memset(&cur.op[BW_OP_READ], 0, sizeof(cur.op[BW_OP_READ]));
	cur.fsync_writes = 25;
	pt = &cur.op[BW_OP_PASSTHROUGH];
	pt->ios = 1;
	pt->bytes = 20;
	pt->d2c_ns = 400000000;
	pt->hist_d2c[bw_bucket(400000000 >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] = 1;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.ios[BW_OP_WRITE] == 125, "writes as diskstats: %llu",
	      (unsigned long long)iv.ios[BW_OP_WRITE]);
	CHECK(iv.fsync_writes == 25, "shown apart");
	CHECK_NEAR(iv.w_per_s, 125, 1e-9, "w/s as iostat");
	CHECK_NEAR(iv.svc_mean_ms, 1.0, 1e-9, "service mean over serviced data requests");
	CHECK(iv.svc_hist_samples == 100, "histogram of data requests");
	CHECK(iv.ios[BW_OP_PASSTHROUGH] == 1, "passthrough an op of its own");
	CHECK(!strcmp(bw_op_names[BW_OP_PASSTHROUGH], "passthrough"), "its name");
	CHECK_NEAR(iv.kb_per_rq, 4.0, 1e-9, "size of data requests");
}

static void test_busy_unknown(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;
	struct bw_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 0, 0, 0);
	cur.busy_unknown = true;
	cur.max_depth = 0;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.busy_pct) && isnan(iv.depth_busy) && iv.depth_max_unknown,
	      "busy %g, depth %g, max unknown %d", iv.busy_pct, iv.depth_busy, iv.depth_max_unknown);
	CHECK_NEAR(iv.r_per_s, 2000, 1e-9, "counts still measured");
	f = open_memstream(&buf, &len);
	bw_render_row(f, &iv, NULL);
	fclose(f);
	CHECK(buf && strstr(buf, "8.383       -      -    -      -"),
	      "row: queue time, then depth, max depth and busy%% as -: %s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	bw_json_begin(&j, f);
	bw_render_json_dev(&j, &iv, NULL, 0);
	bw_json_end(&j);
	fclose(f);
	CHECK(buf && strstr(buf, "\"depth_max\":null") && strstr(buf, "\"busy_pct\":null"),
	      "JSON nulls: %s", buf);
	free(buf);
}

/* Segments: the interval's sum and histogram, the delta of the two snapshots. */
static void test_segments(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 10, 1000000, 10000000, 0, 0);
	fill(&cur, 30, 1000000, 30000000, 0, 0);
	prev.op[BW_OP_READ].hist_seg[1] = 10;
	cur.op[BW_OP_READ].hist_seg[1] = 12;
	cur.op[BW_OP_READ].hist_seg[bw_bucket(32, BW_SEG_BUCKETS)] = 18;
	cur.op[BW_OP_READ].segments = 10 + 2 + 18 * 32;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.segments == 2 + 18 * 32, "segments of the interval: %llu",
	      (unsigned long long)iv.segments);
	CHECK(iv.hist_seg[1] == 2 && iv.hist_seg[bw_bucket(32, BW_SEG_BUCKETS)] == 18,
	      "histogram of the interval");
	CHECK(bw_hist_total(iv.hist_seg, BW_SEG_BUCKETS) == iv.ios[BW_OP_READ],
	      "histogram total = requests");
}

/* Virtio ring buffers: deltas, the share, and nothing known without counts. */
static void test_vio_interval(void)
{
	struct bw_vio_stats prev = {}, cur = {};
	struct bw_interval iv = {};

	prev.v[BW_VIO_INDIRECT] = 100;
	prev.v[BW_VIO_INDIRECT_DESCS] = 600;
	cur.v[BW_VIO_INDIRECT] = 130;
	cur.v[BW_VIO_INDIRECT_DESCS] = 600 + 30 * 6;
	cur.v[BW_VIO_DIRECT] = 10;
	cur.v[BW_VIO_DIRECT_DESCS] = 10 * 3;
	bw_vio_interval(&prev, &cur, &iv);
	CHECK(iv.virtio, "shown");
	CHECK(iv.vio_indirect == 30 && iv.vio_direct == 10, "buffers %lld indirect, %lld direct",
	      (long long)iv.vio_indirect, (long long)iv.vio_direct);
	CHECK(iv.vio_descs == 30 * 6 + 10 * 3, "descriptors %lld", (long long)iv.vio_descs);
	CHECK_NEAR(iv.indirect_share, 0.75, 1e-12, "indirect share");
	bw_vio_interval(&cur, &cur, &iv);
	CHECK(isnan(iv.indirect_share) && iv.vio_indirect == 0, "no buffer: share unknown");
	bw_vio_interval(NULL, NULL, &iv);
	CHECK(iv.virtio && iv.vio_indirect < 0 && iv.vio_descs < 0 && isnan(iv.indirect_share),
	      "not known");
}

/* The light tier: counts and service time, and what needs the exact tier unknown. */
static void test_light_tier(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 0, 0, 0);
	prev.light = cur.light = true;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.r_per_s, 2000, 1e-9, "r/s");
	CHECK_NEAR(iv.svc_mean_ms, 8.0, 1e-9, "mean service");
	CHECK(isnan(iv.busy_pct) && isnan(iv.depth_busy) && iv.depth_max_unknown, "busy, depth unknown");
	CHECK(iv.stall_unknown && isnan(iv.stall_s), "stalls unknown");
	CHECK(isnan(iv.p_eff) && iv.p_eff_why && !strcmp(iv.p_eff_code, "-lt"), "P_eff: light tier");
	CHECK(iv.light && !strcmp(iv.timing_source, "stamp"), "tier and source");
	cur.fallback = 1;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!strcmp(iv.timing_source, "issue_fallback"), "the issue program's fallback");
	cur.light = false;
	cur.busy_ns = 1000000000;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!iv.light && !strcmp(iv.timing_source, "issue"), "exact tier");
	CHECK_NEAR(iv.busy_pct, 100, 1e-9, "busy on the exact tier");
	CHECK(!strcmp(iv.busy_source, "exact"), "from the in-flight word");
	prev.io_ticks_known = cur.io_ticks_known = true;
	cur.io_ticks_ms = 10;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.busy_pct, 100, 1e-9, "io_ticks never replace the exact tier's");
}

/* The light tier's busy time: diskstats' io_ticks over the interval. */
static void test_light_busy_from_io_ticks(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 0, 0, 0);
	prev.light = cur.light = true;
	prev.io_ticks_ms = 500;
	cur.io_ticks_ms = 2000;
	bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.busy_pct) && !iv.busy_source, "io_ticks not read: not known");
	prev.io_ticks_known = cur.io_ticks_known = true;
	bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.busy_pct, 75, 1e-9, "1.5 s of 2");
	CHECK(iv.busy_source && !strcmp(iv.busy_source, "io_ticks"), "said so");
	/* Little's law: 2000 requests of 8 ms over 1.5 s busy. */
	CHECK_NEAR(iv.depth_busy, 2000 * 0.008 / 1.5, 1e-9, "depth estimated");
	CHECK(iv.depth_source && !strcmp(iv.depth_source, "estimated"), "and said so");
	CHECK(isnan(iv.p_eff) && !strcmp(iv.p_eff_code, "-nS1"), "P_eff needs S1");
	{
		static struct bw_s1_dev s1;

		s1.s[BW_OP_READ][0] = (struct bw_s1){ .samples = 50, .mean_ns = 2000000 };
		bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, &s1, 0, &iv);
		CHECK_NEAR(iv.p_eff, 2000 * 0.002 / 1.5, 1e-9, "P_eff = N x S1 / busy");
		CHECK(!strcmp(iv.p_eff_source, "estimated"), "estimated");
	}
	cur.io_ticks_ms = 2504;
	bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.busy_pct, 100, 1e-9, "a jiffy past the interval: 100%%");
	cur.appearance = 1;
	bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.busy_pct), "another appearance of the device: its own count");
	cur.appearance = 0;
	cur.io_ticks_ms = 100;
	bw_interval_compute(&prev, &cur, 2.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.busy_pct), "a count that went back: not known");
}

/* Where the kernel's stamps are a plug's: the exact slices' timing, and the share that was. */
static void test_sampled_timing(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;
	struct bw_op_stats *x;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 1000, 40000, 0, 0, 0);	/* the stamps: 40 us */
	prev.light = cur.light = true;
	cur.op[BW_OP_READ].plugged = 900;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!strcmp(iv.timing_source, "stamp") && iv.timing_share == 1, "no slice: the stamps");
	CHECK_NEAR(iv.stamp_plugged_share, 0.9, 1e-9, "900 of 1000 plugged");
	CHECK(bw_timing_mark(&iv) == '!', "marked untrusted");
	cur.plug_clock = cur.x_timed = true;
	x = &cur.xop[BW_OP_READ];
	x->ios = x->q_ios = 100;
	x->d2c_ns = 100 * 25000ULL;
	x->q2d_ns = 100 * 15000ULL;
	x->q2c_ns = 100 * 40000ULL;
	x->hist_d2c[bw_bucket(25000 >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] = 100;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!strcmp(iv.timing_source, "sampled"), "the slices' requests");
	CHECK_NEAR(iv.timing_share, 0.1, 1e-9, "100 of 1000");
	CHECK_NEAR(iv.svc_mean_ms, 0.025, 1e-9, "their service time");
	CHECK_NEAR(iv.queue_mean_ms, 0.015, 1e-9, "their queue time");
	CHECK(bw_timing_mark(&iv) == '~', "marked sampled");
	CHECK(iv.ios[BW_OP_READ] == 1000, "counts stay every completion's");
	cur.op[BW_OP_READ].plugged = 0;
	cur.plug_clock = false;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!strcmp(iv.timing_source, "stamp") && !bw_timing_mark(&iv),
	      "stamps of their own (before 6.9): trusted");
}

/* Without an exact tier, an interval of lone requests is S1's sample; a deep one is not. */
static void test_solo_estimate(void)
{
	static struct bw_snap_dev prev, cur;
	static __u64 ios[BW_NR_OPS][BW_SIZE_CLASSES], ns[BW_NR_OPS][BW_SIZE_CLASSES];
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 400, 2000000, 0, 0, 0);	/* 400 reads of 2 ms: 0.8 s of 1 s busy */
	prev.light = cur.light = prev.busy_unknown = cur.busy_unknown = true;
	prev.io_ticks_known = cur.io_ticks_known = true;
	cur.io_ticks_ms = 800;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.depth_busy, 1, 1e-9, "alone: depth 1");
	bw_interval_solo_estimate(&prev, &cur, &iv, ios, ns);
	CHECK(ios[BW_OP_READ][0] == 400 && ns[BW_OP_READ][0] == 400 * 2000000ULL,
	      "400 samples of 2 ms: %llu", (unsigned long long)ios[BW_OP_READ][0]);
	{
		static struct bw_s1_dev s1;

		s1.s[BW_OP_READ][0] = (struct bw_s1){ .samples = 400, .mean_ns = 2000000,
						      .estimated = true };
		fill(&cur, 4000, 8000000, 0, 0, 0);	/* then deep: 4000 of 8 ms in 1 s busy */
		cur.light = cur.busy_unknown = true;
		cur.io_ticks_known = true;
		cur.io_ticks_ms = 1000;
		bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &s1, 0, &iv);
		CHECK_NEAR(iv.p_eff, 4000 * 0.002 / 1.0, 1e-9, "P_eff from the estimated S1");
		CHECK(!strcmp(iv.s1_source, "estimated") && !strcmp(iv.p_eff_source, "estimated"),
		      "both said estimated");
		bw_interval_solo_estimate(&prev, &cur, &iv, ios, ns);
		CHECK(ios[BW_OP_READ][0] == 400, "a deep interval is no S1 sample");
	}
}

/* A workload moved: rate, size or depth by 1.5x, or I/O started or stopped. */
static void test_workload_moved(void)
{
	struct bw_interval a = { .secs = 1, .busy_pct = 100, .svc_mean_ms = 3, .kb_per_rq = 4 };
	struct bw_interval b;

	a.ios[BW_OP_READ] = 333;	/* depth 1 at 3 ms */
	b = a;
	CHECK(!bw_workload_moved(&a, &b), "the same");
	b.ios[BW_OP_READ] = 400;
	CHECK(!bw_workload_moved(&a, &b), "20%% more: not moved");
	b.ios[BW_OP_READ] = 1000;	/* depth 3 */
	CHECK(bw_workload_moved(&a, &b), "three times the rate");
	b = a;
	b.svc_mean_ms = 12;	/* depth 4 at the same rate: a deeper queue on one server */
	CHECK(bw_workload_moved(&a, &b), "depth four times");
	b = a;
	b.kb_per_rq = 64;
	CHECK(bw_workload_moved(&a, &b), "sixteen times the size");
	b = a;
	b.ios[BW_OP_READ] = 5;
	CHECK(bw_workload_moved(&a, &b), "stopped");
	a.ios[BW_OP_READ] = 3;
	CHECK(!bw_workload_moved(&a, &b), "idle both times");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_peff_parallel_device), UNIT(test_peff_undetermined), UNIT(test_stored_s1),
		UNIT(test_peff_codes), UNIT(test_busy_unknown), UNIT(test_depth_split),
		UNIT(test_sampled_timing), UNIT(test_workload_moved), UNIT(test_solo_estimate),
		UNIT(test_fsync_and_passthrough), UNIT(test_segments), UNIT(test_vio_interval),
		UNIT(test_light_tier), UNIT(test_light_busy_from_io_ticks),
	};

	return unit_run("metrics", tests, sizeof(tests) / sizeof(tests[0]));
}
