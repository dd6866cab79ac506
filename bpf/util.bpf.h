/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers every blkwise BPF object uses: histogram increments and
 * the hash of an address.  (The size class of solo service time is
 * bpf/core.h's, shared with user space.)
 */
#ifndef BLKWISE_UTIL_BPF_H
#define BLKWISE_UTIL_BPF_H

#include "core.h"

/*
 * One more in bucket u of a histogram of nbuckets (32- or 64-bit).  The
 * verifier cannot follow bw_bucket's bound through the compiler's register
 * reuse: re-check it behind a barrier the compiler cannot see past.
 */
#define bw_hist_inc(hist, u, nbuckets)						\
	do {									\
		__u32 __idx = bw_bucket((u), (nbuckets));			\
										\
		barrier_var(__idx);						\
		if (__idx < (nbuckets))						\
			(hist)[__idx]++;					\
	} while (0)

/* Fibonacci hashing: the top bits of the product mix every bit of the address. */
static __always_inline __u32 bw_hash_ptr(__u64 p, __u32 bits)
{
	return (__u32)((p * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

#endif /* BLKWISE_UTIL_BPF_H */
