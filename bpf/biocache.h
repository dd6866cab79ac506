/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by bpf/biocache.bpf.c and its loader (user/load/core.c):
 * per CPU and per bio_set counters of the per-cpu bio alloc cache.
 * A plain array of __u64, so user space sums per-CPU copies field by field.
 */
#ifndef BLKWISE_BIOCACHE_H
#define BLKWISE_BIOCACHE_H

enum bw_bc_field {
	/* exact (fentry/fexit around bio_alloc_bioset and bio_put) */
	BW_BC_ALLOCS,		/* bio_alloc_bioset calls that returned a bio */
	BW_BC_REQUESTED,	/* ... asked for the cache (REQ_ALLOC_CACHE in opf) */
	BW_BC_ELIGIBLE,		/* ... and got a cache bio (flag kept: a cache on the set, few vecs) */
	BW_BC_HITS,		/* eligible, taken from the per-cpu cache (no mempool call) */
	BW_BC_MISSES,		/* eligible, the cache empty: fell back to the mempool */
	BW_BC_VERIFY_HITS,	/* second probe: the bio returned was the cache's list head */
	BW_BC_FAILED,		/* bio_alloc_bioset returned NULL */
	BW_BC_FLAGGED_PUTS,	/* bio_put of a REQ_ALLOC_CACHE bio (any reference) */
	BW_BC_CACHE_PUTS,	/* ... that left it at the head of this CPU's cache */
	/* tracepoint (block_bio_queue): what any kernel shows */
	BW_BC_Q_BIOS,		/* bios queued */
	BW_BC_Q_FLAGGED,	/* ... carrying REQ_ALLOC_CACHE */
	BW_BC_NR,
};

struct bw_bc_stats {
	__u64 v[BW_BC_NR];
};

#define BW_BC_MAX_SETS 256

#endif /* BLKWISE_BIOCACHE_H */
