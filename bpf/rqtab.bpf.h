/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core's per-request table (struct bw_rq_state, bpf/core.h), as every
 * object that uses it sees it: the core's issue claims a request's entry
 * and its completion frees it; with --streams, the streams' Q claims it
 * first (bpf/streams.bpf.c) and the core's completion takes the request
 * out of its stream, so a request's D-to-C and Q-to-C state share one
 * entry, one cache line crossing from the issuing CPU to the completing
 * one per request, not two.  user/load/streams.c hands the core's map to the
 * streams object.
 *
 * A request is keyed by its address as a number every object computes
 * alike (bpf/rq.bpf.h's BW_RQV_KEY): for tp_btf its distance from this
 * table's struct bpf_map, the same map, so the same address, in every
 * object (a kernel symbol would do, but kallsyms lists no data symbols
 * without CONFIG_KALLSYMS_ALL); for raw_tp the address itself.
 */
#ifndef BLKWISE_RQTAB_BPF_H
#define BLKWISE_RQTAB_BPF_H

#include "core.h"
#include "util.bpf.h"

/* Set by the loader before load: the table has 1 << rq_hash_bits entries. */
const volatile __u32 rq_hash_bits = 12;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 12);
	__type(key, __u32);
	__type(value, struct bw_rq_state);
} rqs SEC(".maps");

/* Every object's request keys are distances from this map (bpf/rq.bpf.h). */
#define BW_RQ_KEY_BASE (&rqs)
#include "rq.bpf.h"

static __always_inline struct bw_rq_state *bw_rq_entry(__u32 h, __u32 i)
{
	__u32 idx = (h + i) & ((1u << rq_hash_bits) - 1);

	return bpf_map_lookup_elem(&rqs, &idx);
}

/* The request's entry, NULL when it has none. */
static __always_inline struct bw_rq_state *bw_rq_find(__u64 rq)
{
	__u32 h = bw_hash_ptr(rq, rq_hash_bits), i;
	struct bw_rq_state *st;

	for (i = 0; i < BW_RQ_PROBES; i++) {
		st = bw_rq_entry(h, i);
		if (st && st->rq == rq)
			return st;
	}
	return NULL;
}

/*
 * The request's own entry (*own: still held), else the first free one of
 * its probes, claimed by compare-and-swap, or by a plain store without
 * fetch (kernels before 5.12 refuse compare-and-swap: bpf/core.bpf.c).
 * With all, every probe is looked at before a free one is taken, so a
 * request another program (Q) may have claimed never holds two entries;
 * without, one pass takes the first free one.  NULL when all are taken.
 */
static __always_inline struct bw_rq_state *bw_rq_claim(__u64 rq, bool *own, const bool fetch,
						       const bool all)
{
	__u32 h = bw_hash_ptr(rq, rq_hash_bits), i, first = BW_RQ_PROBES;
	struct bw_rq_state *st;
	__u64 owner;

	*own = false;
	for (i = 0; i < BW_RQ_PROBES; i++) {
		st = bw_rq_entry(h, i);
		if (!st)
			return NULL;
		owner = st->rq;
		if (owner == rq) {
			*own = true;
			return st;
		}
		if (owner)
			continue;
		if (all) {
			if (first == BW_RQ_PROBES)
				first = i;
			continue;
		}
		if (!fetch) {
			st->rq = rq;
			return st;
		}
		if (__sync_val_compare_and_swap(&st->rq, 0, rq) == 0)
			return st;
	}
	/* all: the first free one; should a racer take it, the next. */
	for (i = first; i < BW_RQ_PROBES; i++) {
		st = bw_rq_entry(h, i);
		if (st && __sync_val_compare_and_swap(&st->rq, 0, rq) == 0)
			return st;
	}
	return NULL;
}

/* A request's entry claimed at Q and not issued (merged into another): freed. */
static __always_inline void bw_rq_drop_queued(__u64 rq)
{
	struct bw_rq_state *st = bw_rq_find(rq);

	if (!st || st->d > BW_RQ_D_LOST)
		return;
	barrier();
	st->rq = 0;
}

#endif /* BLKWISE_RQTAB_BPF_H */
