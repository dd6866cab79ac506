/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log-linear histogram geometry, shared by the BPF side (which bins) and
 * user space (which reads percentiles back).
 *
 * Values below 16 units get a bucket each.  Above, every power of two
 * [2^m, 2^(m+1)) is split into 8 equal sub-buckets, so a bucket is at most
 * 1/8 of its lower bound wide and a percentile read at a bucket's midpoint
 * is within 6.25% of the true value.  Pure log2 buckets, as libbpf-tools
 * uses, can be off by 2x.
 *
 * Latencies are binned in units of 1024 ns (a shift, not a divide, on the
 * hot path): 184 buckets reach 2^25 units, about 34 s.  Segment counts
 * are binned as they are: 56 buckets reach 512, the last taking the rest.
 */
#ifndef BLKWISE_HIST_H
#define BLKWISE_HIST_H

#define BW_HIST_SUB_BITS 3
#define BW_HIST_SUB (1u << BW_HIST_SUB_BITS)
#define BW_HIST_LINEAR (2u * BW_HIST_SUB)
#define BW_LAT_SHIFT 10
#define BW_LAT_BUCKETS 184
#define BW_SEG_BUCKETS 56

/* Branch-free floor(log2(v)) for v > 0; the verifier needs no loop. */
static inline __attribute__((always_inline)) unsigned int bw_ilog2(unsigned long long v)
{
	unsigned int r, s;

	r = (v > 0xffffffffULL) << 5;
	v >>= r;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (unsigned int)(v >> 1);
	return r;
}

/* Bucket of value u in a histogram of nbuckets; the last one also takes overflow. */
static inline __attribute__((always_inline)) unsigned int bw_bucket(unsigned long long u,
								    unsigned int nbuckets)
{
	unsigned int m, idx;

	if (u < BW_HIST_LINEAR)
		return (unsigned int)u;
	m = bw_ilog2(u);
	idx = BW_HIST_LINEAR + (m - BW_HIST_SUB_BITS - 1) * BW_HIST_SUB +
	      (unsigned int)((u >> (m - BW_HIST_SUB_BITS)) & (BW_HIST_SUB - 1));
	return idx < nbuckets ? idx : nbuckets - 1;
}

/*
 * The exported latency histogram (Prometheus): 61 bounds, three per
 * octave (8, 11 and 13 eighths of each power of two) from 8 units to 2^23
 * (8 us to 8.6 s), each a bucket boundary of the histogram above, so the
 * count below a bound is exact.  bw_expo_bound(i) is bound i;
 * bw_expo_bucket(u) is the index of the bounded bucket a value falls in:
 * how many bounds are at or below u (0 to BW_EXPO_LAT_BOUNDS), for a
 * histogram kept at export resolution (bpf/cgroups.bpf.c).
 */
#define BW_EXPO_LAT_BOUNDS 61

static inline __attribute__((always_inline)) unsigned int bw_expo_bound(int i)
{
	unsigned int m = 3 + (unsigned int)i / 3, j = (unsigned int)i % 3;

	return (j == 0 ? 8u : j == 1 ? 11u : 13u) << (m - 3);
}

static inline __attribute__((always_inline)) unsigned int bw_expo_bucket(unsigned long long u)
{
	unsigned int m, top, c;

	if (u < 8)
		return 0;
	m = bw_ilog2(u);
	top = (unsigned int)(u >> (m - 3));	/* 8..15: u's eighths of 2^m */
	c = 3 * (m - 3) + 1 + (top >= 11) + (top >= 13);
	return c < BW_EXPO_LAT_BOUNDS ? c : BW_EXPO_LAT_BOUNDS;
}

#endif /* BLKWISE_HIST_H */
