// SPDX-License-Identifier: GPL-2.0
/* Percentiles from the log-linear histograms of bpf/hist.h. */
#include <math.h>
#include "model/model.h"

/* [lo, hi) of bucket idx, in the histogram's unit. */
void bw_bucket_bounds(unsigned int idx, double *lo, double *hi)
{
	unsigned int m, sub;
	double width;

	if (idx < BW_HIST_LINEAR) {
		*lo = idx;
		*hi = idx + 1;
		return;
	}
	m = (idx - BW_HIST_LINEAR) / BW_HIST_SUB + BW_HIST_SUB_BITS + 1;
	sub = (idx - BW_HIST_LINEAR) % BW_HIST_SUB;
	width = ldexp(1.0, (int)(m - BW_HIST_SUB_BITS));
	*lo = (BW_HIST_SUB + sub) * width;
	*hi = *lo + width;
}

__u64 bw_hist_total(const __u64 *hist, unsigned int nbuckets)
{
	__u64 t = 0;
	unsigned int i;

	for (i = 0; i < nbuckets; i++)
		t += hist[i];
	return t;
}

/*
 * The p-quantile (0 < p <= 1), interpolated linearly inside its bucket, in
 * the histogram's unit; NAN for an empty histogram.
 */
double bw_hist_percentile(const __u64 *hist, unsigned int nbuckets, double p)
{
	__u64 total = bw_hist_total(hist, nbuckets), cum = 0;
	double rank, lo, hi;
	unsigned int i;

	if (!total)
		return NAN;
	rank = p * (double)total;
	if (rank < 1)
		rank = 1;
	for (i = 0; i < nbuckets; i++) {
		if (!hist[i] || (double)(cum + hist[i]) < rank) {
			cum += hist[i];
			continue;
		}
		bw_bucket_bounds(i, &lo, &hi);
		return lo + (hi - lo) * (rank - (double)cum) / (double)hist[i];
	}
	bw_bucket_bounds(nbuckets - 1, &lo, &hi);
	return hi;
}

__u64 bw_extend32(__u64 prev, __u32 sum)
{
	return prev + (__u32)(sum - (__u32)prev);
}
