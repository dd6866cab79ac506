// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's rendering: bucket bounds exact, quantiles from the
 * exported buckets (as PromQL's histogram_quantile computes them) within
 * 25% of the exact ones (22.5% the worst seen), counters as integers, both formats' names.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "model/promfmt.h"

static void test_bounds(void)
{
	double lo, hi;
	int i;

	CHECK(bw_expo_bound(0) == 8 && bw_expo_bound(1) == 11 && bw_expo_bound(3) == 16,
	      "starts 8, 11, 13, 16");
	CHECK(bw_expo_bound(BW_EXPO_LAT_BOUNDS - 1) == 1u << 23, "ends at 2^23 units");
	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++) {
		unsigned int b = bw_expo_bound(i);

		bw_bucket_bounds(bw_bucket(b, BW_LAT_BUCKETS), &lo, &hi);
		CHECK(lo == b, "bound %u is a bucket boundary (bucket starts at %g)", b, lo);
		CHECK(i == 0 || b > bw_expo_bound(i - 1), "bounds rise");
	}
	for (i = 0; i < BW_EXPO_SEG_BOUNDS; i++) {
		unsigned int b = bw_expo_seg_bounds[i] + 1;

		bw_bucket_bounds(bw_bucket(b, BW_SEG_BUCKETS), &lo, &hi);
		CHECK(lo == b, "segments <= %u is exact", b - 1);
	}
}

/* How many bounds are at or below u, counted one by one. */
static unsigned int bounds_at_or_below(unsigned long long u)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++)
		n += bw_expo_bound(i) <= u;
	return n;
}

/* The export-resolution bucket of a value, as bpf/cgio.bpf.c bins it. */
static void test_expo_bucket(void)
{
	unsigned long long u;
	int i, bad = 0;

	for (u = 0; u < 70000; u++)
		bad += bw_expo_bucket(u) != bounds_at_or_below(u);
	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++) {
		unsigned int b = bw_expo_bound(i);

		bad += bw_expo_bucket(b) != (unsigned int)i + 1;
		bad += bw_expo_bucket(b - 1) != (unsigned int)i;
	}
	for (u = 1; u < (1ULL << 40); u = u * 3 + 1)
		bad += bw_expo_bucket(u) != bounds_at_or_below(u);
	CHECK(bad == 0, "bucket = bounds at or below the value (%d wrong)", bad);
	CHECK(bw_expo_bucket(1ULL << 40) == BW_EXPO_LAT_BOUNDS, "beyond the last bound: the last bucket");
}

static double urand(void)
{
	return (rand() + 1.0) / ((double)RAND_MAX + 2.0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* PromQL's histogram_quantile over the exported cumulative buckets. */
static double prom_quantile(const double *le, const __u64 *cum, int n, __u64 total, double q)
{
	double rank = q * (double)total, lo = 0;
	__u64 prev = 0;
	int i;

	for (i = 0; i < n; i++) {
		if ((double)cum[i] >= rank) {
			if (cum[i] == prev)
				return le[i];
			return lo + (le[i] - lo) * (rank - (double)prev) / (double)(cum[i] - prev);
		}
		lo = le[i];
		prev = cum[i];
	}
	return le[n - 1];	/* in +Inf: the highest finite bound, as Prometheus does */
}

enum dist { LOGNORMAL, UNIFORM, BIMODAL };

static double draw(enum dist d, double median)
{
	double z = sqrt(-2 * log(urand())) * cos(2 * M_PI * urand());

	switch (d) {
	case LOGNORMAL:
		return median * exp(0.4 * z);
	case UNIFORM:
		return median * (0.5 + urand());
	default:
		return urand() < 0.8 ? median * exp(0.1 * z) : 6 * median * exp(0.1 * z);
	}
}

/* Samples in ns; the exported buckets against the exact quantiles. */
static void check_dist(enum dist d, double median_ns)
{
	static const double qs[] = { 0.5, 0.9, 0.99 };
	enum { N = 20000 };
	static double v[N];
	__u64 hist[BW_LAT_BUCKETS] = {}, cum[BW_EXPO_LAT_BOUNDS];
	double le[BW_EXPO_LAT_BOUNDS];
	int i;

	for (i = 0; i < N; i++) {
		v[i] = draw(d, median_ns);
		hist[bw_bucket((unsigned long long)v[i] >> BW_LAT_SHIFT, BW_LAT_BUCKETS)]++;
	}
	qsort(v, N, sizeof(v[0]), cmp_double);
	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++) {
		unsigned int b = bw_expo_bound(i);
		__u64 below = 0;
		int k;

		le[i] = ldexp((double)b, BW_LAT_SHIFT);
		cum[i] = bw_hist_below(hist, BW_LAT_BUCKETS, b);
		for (k = 0; k < N && v[k] < le[i]; k++)
			below++;
		CHECK(cum[i] == below, "bucket le=%g ns: %llu exported, %llu samples below", le[i],
		      (unsigned long long)cum[i], (unsigned long long)below);
	}
	for (i = 0; i < 3; i++) {
		double exact = v[(int)(qs[i] * N) - 1];
		double got = prom_quantile(le, cum, BW_EXPO_LAT_BOUNDS, N, qs[i]);

		/* 22.5% is the worst seen over these distributions; 2% typical */
		CHECK(fabs(got / exact - 1) <= 0.25, "dist %d median %.0f ns: p%g %.0f vs exact %.0f "
		      "(%+.1f%%)", d, median_ns, qs[i] * 100, got, exact, (got / exact - 1) * 100);
	}
}

static void test_quantiles(void)
{
	static const double medians[] = { 20e3, 97e3, 350e3, 1.7e6, 8.3e6, 61e6 };
	unsigned int i;
	int d;

	srand(7);
	for (d = LOGNORMAL; d <= BIMODAL; d++)
		for (i = 0; i < sizeof(medians) / sizeof(medians[0]); i++)
			check_dist(d, medians[i]);
}

static char *render(bool om, const struct bw_expo_dev *d, int n)
{
	struct bw_prog_stat prog = { .name = "bw_issue", .run_ns = 123456789, .run_cnt = 1287408 };
	struct bw_expo_self s = {
		.version = "0.5.0", .commit = "abc", .libbpf = "v1.1", .attach = "tp_btf",
		.progs = &prog, .nprogs = 1, .sample_s = 0.001, .rss_bytes = 4096,
	};
	struct bw_prom p = { .om = om };
	char *buf = NULL;
	size_t len = 0;

	p.f = open_memstream(&buf, &len);
	bw_expo_render(&p, &s, d, n);
	bw_expo_render_scrapes(&p, 3, 0.002, 2);
	fclose(p.f);
	return buf;
}

static void test_render(void)
{
	static struct bw_snap_dev cum = { .dev = 7 << 20, .name = "loop0", .busy_ns = 1500000000,
					  .lost = 2 };
	struct bw_devinfo info = { .name = "loop0", .id_kind = BW_ID_BACKING,
				   .id = "loop:/var/tmp/a \"b\".img", .rotational = true };
	struct bw_expo_tune tune = { .actions = { 0, 1, 2, 1, 1 }, .probes = 2, .probe_s = 1 };
	struct bw_expo_dev d = {
		.cum = &cum, .info = &info, .depth_mean = 3.5, .p_eff = NAN, .cls = BW_CLASS_DEEP,
		.sched = "bfq", .slice_idle_us = 8000, .tune = &tune, .solo_work_s = 2.5,
		.solo_known = 1000,
	};
	char *t, *o;
	int op, c;

	for (op = 0; op < BW_NR_OPS; op++)
		for (c = 0; c < BW_SIZE_CLASSES; c++)
			d.s1_s[op][c] = NAN;
	d.s1_s[BW_OP_READ][6] = 0.00168;
	cum.op[BW_OP_READ].ios = 1287408;
	cum.op[BW_OP_READ].bytes = 337487527936ULL;
	cum.op[BW_OP_READ].hist_d2c[20] = 1287408;
	cum.op[BW_OP_READ].hist_seg[bw_bucket(64, BW_SEG_BUCKETS)] = 1287408;
	cum.op[BW_OP_READ].segments = 1287408ULL * 64;
	t = render(false, &d, 1);
	o = render(true, &d, 1);
	CHECK(strstr(t, "blkwise_requests_total{device=\"loop0\",op=\"read\"} 1287408\n"),
	      "exact integer counter:\n%s", t);
	CHECK(strstr(t, "blkwise_bytes_total{device=\"loop0\",op=\"read\"} 337487527936\n"), "bytes");
	CHECK(!strstr(t, "op=\"write\""), "ops without I/O left out");
	free(t);
	/* Empty flush writes: writes, as diskstats counts them, and a counter of their own. */
	cum.fsync_writes = 40;
	t = render(false, &d, 1);
	CHECK(strstr(t, "blkwise_requests_total{device=\"loop0\",op=\"write\"} 40\n"),
	      "fsync writes in the writes:\n%s", t);
	CHECK(strstr(t, "blkwise_fsync_writes_total{device=\"loop0\"} 40\n"), "and apart");
	CHECK(!strstr(t, "blkwise_service_seconds_count{device=\"loop0\",op=\"write\"}"),
	      "no service time for them");
	cum.fsync_writes = 0;
	free(t);
	t = render(false, &d, 1);
	CHECK(strstr(t, "# TYPE blkwise_requests_total counter\n"), "text: counter family _total");
	CHECK(strstr(o, "# TYPE blkwise_requests counter\n"), "OpenMetrics: family without _total");
	CHECK(strstr(t, "# TYPE blkwise_device_info gauge\n"), "text: info is a gauge");
	CHECK(strstr(o, "# TYPE blkwise_device info\n"), "OpenMetrics: info");
	CHECK(strstr(t, "identity=\"loop:/var/tmp/a \\\"b\\\".img\""), "label escaped");
	CHECK(strstr(t, "identity_kind=\"backing\""), "identity kind");
	CHECK(strstr(t, "blkwise_service_seconds_bucket{device=\"loop0\",op=\"read\",le=\"8.192e-06\"} 0\n"),
	      "first bucket");
	CHECK(strstr(t, "blkwise_service_seconds_bucket{device=\"loop0\",op=\"read\",le=\"+Inf\"} 1287408\n"),
	      "+Inf bucket");
	CHECK(strstr(t, "blkwise_segments_per_request_bucket{device=\"loop0\",op=\"read\",le=\"63\"} 0\n") &&
	      strstr(t, "blkwise_segments_per_request_bucket{device=\"loop0\",op=\"read\",le=\"127\"} 1287408\n"),
	      "segments: 64 is above 63 and below 127");
	CHECK(!strstr(t, "blkwise_effective_parallelism{"), "undetermined P_eff left out");
	CHECK(strstr(t, "blkwise_depth_mean{device=\"loop0\"} 3.5\n"), "depth");
	CHECK(strstr(t, "blkwise_device_class{device=\"loop0\",class=\"deep\"} 1\n") &&
	      strstr(t, "blkwise_device_class{device=\"loop0\",class=\"shallow\"} 0\n"), "class");
	CHECK(strstr(t, "blkwise_bfq_slice_idle_seconds{device=\"loop0\"} 0.0080000000000000002\n") ||
	      strstr(t, "blkwise_bfq_slice_idle_seconds{device=\"loop0\"} 0.008\n"), "idle in seconds");
	CHECK(strstr(t, "blkwise_solo_service_seconds{device=\"loop0\",op=\"read\",size_bytes=\"262144\"}"),
	      "S1 of the 256 KiB class");
	CHECK(strstr(t, "blkwise_lost_completions_total{device=\"loop0\"} 2\n"), "lost");
	CHECK(strstr(t, "blkwise_tune_decisions_total{device=\"loop0\",action=\"probe\"} 2\n"),
	      "tuner decisions");
	CHECK(strstr(t, "blkwise_bpf_runs_total{program=\"bw_issue\"} 1287408\n"), "BPF runs exact");
	CHECK(strstr(t, "blkwise_exporter_scrapes_total 3\n"), "scrapes");
	CHECK(!strstr(t, "# EOF"), "text: no EOF");
	CHECK(strlen(o) > 6 && !strcmp(o + strlen(o) - 6, "# EOF\n"), "OpenMetrics ends with EOF");
	CHECK(strstr(t, "blkwise_device_busy_seconds_total{device=\"loop0\"} 1.5\n"), "busy seconds");
	free(t);
	free(o);
	/* Before 5.12 busy time is not measured: absent, not 0. */
	cum.busy_unknown = true;
	t = render(false, &d, 1);
	CHECK(!strstr(t, "blkwise_device_busy_seconds_total{"), "busy absent when unknown");
	CHECK(strstr(t, "blkwise_requests_total{device=\"loop0\",op=\"read\"} 1287408\n"),
	      "counts still there");
	free(t);
	cum.busy_unknown = false;
	/* The light tier: the kernel's io_ticks where read, no dispatch stalls. */
	cum.light = true;
	t = render(false, &d, 1);
	CHECK(!strstr(t, "blkwise_device_busy_seconds_total{"), "light: busy absent without io_ticks");
	CHECK(!strstr(t, "blkwise_dispatch_stall_seconds_total{"), "light: no stall time");
	free(t);
	cum.io_ticks_known = true;
	cum.io_ticks_ms = 2250;
	t = render(false, &d, 1);
	CHECK(strstr(t, "blkwise_device_busy_seconds_total{device=\"loop0\"} 2.25\n"),
	      "light: busy seconds from io_ticks");
	free(t);
	cum.light = cum.io_ticks_known = false;
}

/* A device that went: present 0 and none of its other series; one there: present 1. */
static void test_presence(void)
{
	static const struct bw_expo_presence pr[] = { { "loop0", false }, { "loop1", true } };
	struct bw_expo_self s = { .version = "0.5.0", .commit = "abc", .libbpf = "v1.1",
				  .attach = "tp_btf", .presence = pr, .npresence = 2 };
	struct bw_prom p = { .om = false };
	char *t = NULL;
	size_t len = 0;

	p.f = open_memstream(&t, &len);
	bw_expo_render(&p, &s, NULL, 0);
	fclose(p.f);
	CHECK(strstr(t, "# TYPE blkwise_device_present gauge\n"), "a gauge:\n%s", t);
	CHECK(strstr(t, "blkwise_device_present{device=\"loop0\"} 0\n"), "gone: 0");
	CHECK(strstr(t, "blkwise_device_present{device=\"loop1\"} 1\n"), "there: 1");
	CHECK(!strstr(t, "blkwise_requests_total{"), "no other series of either");
	free(t);
}

static void test_labels(void)
{
	char buf[64];

	bw_prom_labels(buf, sizeof(buf), NULL);
	CHECK(!strcmp(buf, ""), "no labels: empty");
	bw_prom_labels(buf, sizeof(buf), "a", "x\\y\nz", NULL);
	CHECK(!strcmp(buf, "{a=\"x\\\\y\\nz\"}"), "escapes: %s", buf);
	bw_prom_labels(buf, 16, "device", "a-very-long-device-name", NULL);
	CHECK(strlen(buf) < 16, "truncated inside the buffer: %s", buf);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_bounds), UNIT(test_expo_bucket), UNIT(test_quantiles), UNIT(test_render),
		UNIT(test_presence),
		UNIT(test_labels),
	};

	return unit_run("promfmt", tests, sizeof(tests) / sizeof(tests[0]));
}
