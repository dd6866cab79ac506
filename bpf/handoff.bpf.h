/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One completion's clock, handed from the light tier to the exact tier's
 * slice on the same event.  The light tier's completion program is attached
 * first, so it runs first: the exact tier's completion program, attached for
 * a slice beside it, would read its clock after the light program's whole
 * run (a fifth of a microsecond on a loop device, 2% of its service time).
 * The light program leaves its clock read here, per CPU; the exact one takes
 * it when the entry names the same request (its allocation stamp and tag:
 * no two requests in flight share both), else reads the clock itself (an
 * interrupt that completed another request in between).  The exact tier
 * reuses the light tier's map (user/load/core.c).
 */
#ifndef BLKWISE_HANDOFF_BPF_H
#define BLKWISE_HANDOFF_BPF_H

#include "core.h"

struct bw_handoff {
	__u64 start_ns;		/* the request's allocation stamp (rq->start_time_ns) */
	__s64 tag;		/* and its tag */
	__u64 now;		/* the completion's clock */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_handoff);
} handoff SEC(".maps");

static __always_inline void bw_handoff_put(__u64 start_ns, __s32 tag, __u64 now)
{
	__u32 k = 0;
	struct bw_handoff *h = bpf_map_lookup_elem(&handoff, &k);

	if (!h)
		return;
	h->start_ns = start_ns;
	h->tag = tag;
	h->now = now;
}

/* The light tier's clock for this completion, else the clock. */
static __always_inline __u64 bw_handoff_take(__u64 start_ns, __s32 tag)
{
	__u32 k = 0;
	struct bw_handoff *h = bpf_map_lookup_elem(&handoff, &k);

	if (h && start_ns && h->start_ns == start_ns && h->tag == tag)
		return h->now;
	return bpf_ktime_get_ns();
}

#endif /* BLKWISE_HANDOFF_BPF_H */
