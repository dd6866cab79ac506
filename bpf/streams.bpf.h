/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The streams' state as both BPF objects that touch it see it: the Q
 * programs of bpf/streams.bpf.c put a request into its stream, the core's
 * completion (bpf/core.bpf.c, whose clock read it shares) takes it out, so
 * that a stream costs one program per I/O, not two.  The maps are the
 * core's (created small when streams are off); user/streams.c hands them to
 * the streams object, which reuses them.
 *
 * A request is found by its address as a number both objects compute
 * alike: for tp_btf (a trusted pointer, on which the verifier allows no
 * arithmetic but the difference of two pointers) its distance from the
 * per-request table's struct bpf_map, one map shared by both objects, so
 * one address (a kernel symbol would do, but kallsyms lists no data
 * symbols without CONFIG_KALLSYMS_ALL); for raw_tp the address itself.
 */
#ifndef BLKWISE_STREAMS_BPF_H
#define BLKWISE_STREAMS_BPF_H

#include "streams.h"
#include "util.bpf.h"

/* Set by the loader: the per-request table has 1 << srq_bits entries. */
const volatile __u32 srq_bits = 12;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 12);
	__type(key, __u32);
	__type(value, struct bw_srq);
} srqs SEC(".maps");

#define BW_SRQ_KEY_BTF(rq) ((__u64)(rq) - (__u64)&srqs)
#define BW_SRQ_KEY_RAW(rq) ((__u64)(rq))

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bw_skey);
	__type(value, struct bw_stream);
} streams SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_scount);
} scount SEC(".maps");

static __always_inline struct bw_scount *bw_scount(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scount, &zero);
}

static __always_inline struct bw_srq *bw_srq_entry(__u32 h, __u32 i)
{
	__u32 idx = (h + i) & ((1u << srq_bits) - 1);

	return bpf_map_lookup_elem(&srqs, &idx);
}

/* The request's entry while it is in flight, or NULL. */
static __always_inline struct bw_srq *bw_srq_find(__u64 rq)
{
	__u32 h = bw_hash_ptr(rq, srq_bits), i;
	struct bw_srq *r;

	for (i = 0; i < BW_SRQ_PROBES; i++) {
		r = bw_srq_entry(h, i);
		if (r && r->rq == rq)
			return r;
	}
	return NULL;
}

/*
 * C: the request leaves its stream, and its entry is freed.  now is the
 * completion's own clock read; bytes what it completed; leave false (the
 * bench's profile only) frees the entry and leaves the stream alone.
 */
static __always_inline void bw_streams_complete(__u64 rq, __u64 now, __u32 bytes, bool leave)
{
	struct bw_srq *r = bw_srq_find(rq);
	struct bw_stream *s;
	struct bw_scount *sc;
	__u64 q_ts;

	if (!r)
		return;
	s = leave ? bpf_map_lookup_elem(&streams, &r->key) : NULL;
	q_ts = r->q_ts;
	barrier();	/* read before the entry is free for another Q */
	r->rq = 0;
	sc = bw_scount();
	if (sc)
		sc->c_events++;
	if (s && leave)
		bw_stream_leave(s, q_ts, now, bytes, 1);
}

#endif /* BLKWISE_STREAMS_BPF_H */
