// SPDX-License-Identifier: GPL-2.0
/* Histogram geometry and percentile accuracy. */
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"

static void test_bucket_edges(void)
{
	CHECK(bw_bucket(0, BW_LAT_BUCKETS) == 0, "0");
	CHECK(bw_bucket(15, BW_LAT_BUCKETS) == 15, "15 is linear");
	CHECK(bw_bucket(16, BW_LAT_BUCKETS) == 16, "16 starts the first octave");
	CHECK(bw_bucket(17, BW_LAT_BUCKETS) == 16, "octave 16..31 has buckets of 2");
	CHECK(bw_bucket(18, BW_LAT_BUCKETS) == 17, "18");
	CHECK(bw_bucket(31, BW_LAT_BUCKETS) == 23, "31 ends the first octave");
	CHECK(bw_bucket(32, BW_LAT_BUCKETS) == 24, "32 starts the next");
	CHECK(bw_bucket(~0ULL, BW_LAT_BUCKETS) == BW_LAT_BUCKETS - 1, "overflow clamps");
	CHECK(bw_bucket(1ULL << 40, BW_SEG_BUCKETS) == BW_SEG_BUCKETS - 1, "counts clamp");
	/* 16 s in 1024 ns units must not land in the overflow bucket. */
	CHECK(bw_bucket(16000000000ULL >> BW_LAT_SHIFT, BW_LAT_BUCKETS) < BW_LAT_BUCKETS - 1,
	      "16 s is in range");
}

static void test_ilog2(void)
{
	unsigned long long v;
	unsigned int i;

	for (i = 0; i < 64; i++) {
		v = 1ULL << i;
		CHECK(bw_ilog2(v) == i, "ilog2(2^%u) = %u", i, bw_ilog2(v));
		if (i > 1)
			CHECK(bw_ilog2(v - 1) == i - 1, "ilog2(2^%u - 1)", i);
	}
}

/* Every value lies inside the bounds of its own bucket, and buckets are contiguous. */
static void test_bounds_contain_values(void)
{
	double lo, hi, plo, phi;
	unsigned long long u;
	unsigned int i;

	for (u = 0; u < (1ULL << 22); u += 1 + u / 64) {
		bw_bucket_bounds(bw_bucket(u, BW_LAT_BUCKETS), &lo, &hi);
		CHECK(lo <= (double)u && (double)u < hi, "u=%llu in [%g,%g)", u, lo, hi);
		CHECK((hi - lo) <= lo / 8 + 1e-9 || u < BW_HIST_LINEAR, "bucket width %g at %g", hi - lo, lo);
	}
	for (i = 1; i < BW_LAT_BUCKETS; i++) {
		bw_bucket_bounds(i - 1, &plo, &phi);
		bw_bucket_bounds(i, &lo, &hi);
		CHECK(phi == lo, "bucket %u starts where %u ends (%g vs %g)", i, i - 1, lo, phi);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

/* Percentiles from the histogram vs exact order statistics: within 7%. */
static void test_percentile_accuracy(void)
{
	static unsigned long long v[100000];
	static __u64 hist[BW_LAT_BUCKETS];
	const double ps[] = { 0.5, 0.9, 0.99, 0.999 };
	unsigned int seed = 12345;
	size_t i, n = sizeof(v) / sizeof(v[0]);

	for (i = 0; i < n; i++) {
		/* Log-uniform over 20 us .. 2 s, in 1024 ns units. */
		double r = (double)rand_r(&seed) / RAND_MAX;

		v[i] = (unsigned long long)(20.0 * pow(1e5, r));
		hist[bw_bucket(v[i], BW_LAT_BUCKETS)]++;
	}
	qsort(v, n, sizeof(v[0]), cmp_u64);
	CHECK(bw_hist_total(hist, BW_LAT_BUCKETS) == n, "total equals samples");
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double exact = (double)v[(size_t)(ps[i] * n) - 1];
		double est = bw_hist_percentile(hist, BW_LAT_BUCKETS, ps[i]);

		CHECK_NEAR(est, exact, 0.07, "percentile");
	}
}

static void test_percentile_known(void)
{
	__u64 hist[BW_LAT_BUCKETS] = {};

	CHECK(isnan(bw_hist_percentile(hist, BW_LAT_BUCKETS, 0.5)), "empty is NAN");
	hist[5] = 100;	/* 100 samples of value 5: all in [5,6) */
	CHECK(bw_hist_percentile(hist, BW_LAT_BUCKETS, 0.5) >= 5 &&
	      bw_hist_percentile(hist, BW_LAT_BUCKETS, 0.5) < 6, "single bucket");
	hist[bw_bucket(1000, BW_LAT_BUCKETS)] = 1;	/* one outlier */
	CHECK(bw_hist_percentile(hist, BW_LAT_BUCKETS, 0.99) < 6, "p99 of 101 ignores one outlier");
	CHECK_NEAR(bw_hist_percentile(hist, BW_LAT_BUCKETS, 1.0), 1000, 0.07, "max");
}

/* Per-CPU buckets are 32-bit; their sum, extended, must survive a wrap. */
static void test_extend32(void)
{
	__u64 v = 0;

	v = bw_extend32(v, 5);
	CHECK(v == 5, "first read");
	v = bw_extend32(0xfffffff0ULL, 0x10);
	CHECK(v == 0x100000010ULL, "across a wrap");
	v = bw_extend32(0x3fffffffeULL, 0xfffffffe);
	CHECK(v == 0x3fffffffeULL, "no change");
	v = bw_extend32(0x2fffffff0ULL, 0x20);
	CHECK(v == 0x300000020ULL, "high word carried");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_bucket_edges), UNIT(test_ilog2), UNIT(test_bounds_contain_values),
		UNIT(test_percentile_accuracy), UNIT(test_percentile_known),
		UNIT(test_extend32),
	};

	return unit_run("hist", tests, sizeof(tests) / sizeof(tests[0]));
}
