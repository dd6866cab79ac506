/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The streams' state as both BPF objects that touch it see it: the Q
 * programs of bpf/streams.bpf.c put a request into its stream, the core's
 * completion (bpf/core.bpf.c, whose clock read it shares) takes it out, so
 * that a stream costs one program per I/O, not two.  A request's stream
 * rides in its entry of the core's per-request table (bpf/rqtab.bpf.h).
 * The maps are the core's (created small when streams are off);
 * user/load/streams.c hands them to the streams object, which reuses them.
 */
#ifndef BLKWISE_STREAMS_BPF_H
#define BLKWISE_STREAMS_BPF_H

#include "streams.h"
#include "rqtab.bpf.h"

/* Set by the loader: what a stream is (enum bw_stream_by). */
const volatile __u32 stream_by = BW_STREAMS_PROCESS;

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

/* The stream an entry's request is in, on device dev; NULL when none. */
static __always_inline struct bw_stream *bw_stream_of(const struct bw_rq_state *st, __u32 dev)
{
	struct bw_skey key = { .dev = dev, .by = stream_by, .id = st->sid };

	return bpf_map_lookup_elem(&streams, &key);
}

/*
 * The request of entry st, on device dev, leaves its stream at now: C
 * (completed, bytes done) or merged away / found stale.  The caller frees
 * or reuses the entry.  leave false (the bench's profile only) leaves the
 * stream alone.
 */
static __always_inline void bw_streams_leave(struct bw_rq_state *st, __u32 dev, __u64 now,
					     __u32 bytes, bool completed, bool leave)
{
	struct bw_stream *s;
	struct bw_scount *sc;
	__u64 q_ts = st->q_ts;

	if (!q_ts)
		return;
	st->q_ts = 0;
	if (completed) {
		sc = bw_scount();
		if (sc)
			sc->c_events++;
	}
	if (!leave)
		return;
	s = bw_stream_of(st, dev);
	if (s)
		bw_stream_leave(s, q_ts, now, bytes, completed);
}

#endif /* BLKWISE_STREAMS_BPF_H */
