/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dispatch stalls in BPF (the rule: bpf/stall.h; the design: the comment
 * of bpf/core.bpf.c).  Only the copies with atomic fetch (5.12+) do
 * anything: the rule needs the maximum depth, which only they measure.
 *
 * A request waiting to be dispatched is marked in its own table, keyed like
 * the core's per-request table (bpf/rqtab.bpf.h, whose size and hash it
 * shares) and holding only the key and the device's slot, so the core's
 * table and its issue path stay as they are.  A device's waiting count,
 * running maximum depth and open episode share one cache line, read with a
 * plain load by issue and completion: while nothing waits and no issue
 * sets a new maximum, that load is all they add.
 *
 * A mark whose request ended unseen (a missed event) keeps the device
 * counted waiting until that request, which blk-mq reuses from its tag
 * pool, is issued again and takes the mark away.
 *
 * Many CPUs change the condition at once without a lock (tracing programs
 * may not take bpf_spin_lock on every kernel): each change of waiting or
 * of the in-flight word is an atomic read-modify-write, a full barrier,
 * and is followed by an evaluation that reads both and moves the episode
 * with compare-and-swap on its start, then reads them again and repeats
 * if the condition moved meanwhile.  Of two events racing, the later one's
 * evaluation sees the other's change, so no change goes unevaluated and
 * the episode ends in the state the last change left.
 */
#ifndef BLKWISE_STALL_BPF_H
#define BLKWISE_STALL_BPF_H

#include "core.h"
#include "stall.h"
#include "rqtab.bpf.h"

struct bw_wait {
	__u64 rq;		/* the request's key; 0 when free */
	__u64 slot;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct bw_stall);
} stalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 12);
	__type(key, __u32);
	__type(value, struct bw_wait);
} waits SEC(".maps");

#define BW_STALL_RETRIES 3
#define BW_READ_ONCE(x) (*(volatile typeof(x) *)&(x))

static __always_inline struct bw_wait *bw_wait_entry(__u32 h, __u32 i)
{
	__u32 idx = (h + i) & ((1u << rq_hash_bits) - 1);

	return bpf_map_lookup_elem(&waits, &idx);
}

/* Mark rq waiting: true when it was not already (a requeued request is inserted again). */
static __always_inline bool bw_wait_put(struct bw_stall *s, __u64 rq, __u32 slot)
{
	__u32 h = bw_hash_ptr(rq, rq_hash_bits), i;
	struct bw_wait *w;

	for (i = 0; i < BW_RQ_PROBES; i++) {
		w = bw_wait_entry(h, i);
		if (w && w->rq == rq)
			return false;
	}
	for (i = 0; i < BW_RQ_PROBES; i++) {
		w = bw_wait_entry(h, i);
		if (w && __sync_val_compare_and_swap(&w->rq, 0, rq) == 0) {
			w->slot = slot;
			return true;
		}
	}
	__sync_fetch_and_add(&s->untracked, 1);
	return false;
}

/* Unmark rq: true when it was waiting. */
static __always_inline bool bw_wait_take(__u64 rq)
{
	__u32 h = bw_hash_ptr(rq, rq_hash_bits), i;
	struct bw_wait *w;

	for (i = 0; i < BW_RQ_PROBES; i++) {
		w = bw_wait_entry(h, i);
		if (w && w->rq == rq)
			return __sync_val_compare_and_swap(&w->rq, rq, 0) == rq;
	}
	return false;
}

/* Open or close the episode until it agrees with the condition (see the comment above). */
static __always_inline void bw_stall_update(struct bw_stall *s, struct bw_dev_shared *sh, __u64 now)
{
	__u64 start;
	bool on;
	int i;

	for (i = 0; i < BW_STALL_RETRIES; i++) {
		on = bw_stalled(BW_READ_ONCE(s->waiting), BW_READ_ONCE(sh->word) & BW_INFLIGHT_MASK,
				BW_READ_ONCE(s->max_depth));
		start = BW_READ_ONCE(s->start);
		if (on == (start != 0))
			return;
		if (on) {
			if (__sync_val_compare_and_swap(&s->start, 0, now) == 0)
				__sync_fetch_and_add(&s->episodes, 1);
		} else if (__sync_val_compare_and_swap(&s->start, start, 0) == start && now > start) {
			__sync_fetch_and_add(&s->ns, now - start);
		}
	}
}

static __always_inline struct bw_stall *bw_stall_of(__u32 slot)
{
	return bpf_map_lookup_elem(&stalls, &slot);
}

/* Inserted or requeued: rq waits from now on. */
static __always_inline void bw_stall_wait(__u32 slot, struct bw_dev_shared *sh, __u64 rq)
{
	struct bw_stall *s = bw_stall_of(slot);

	if (!s || !bw_wait_put(s, rq, slot))
		return;
	__sync_fetch_and_add(&s->waiting, 1);
	bw_stall_update(s, sh, bpf_ktime_get_ns());
}

/*
 * Issued at now, after the core counted it in flight (its atomic add is
 * the barrier before the plain loads here).  depth is what this issue
 * found in flight, itself included (bw_flight_enter): above the device's
 * running maximum only when this issue set a new one.
 */
static __always_inline void bw_stall_issue(__u32 slot, struct bw_dev_shared *sh, __u64 rq,
					   __u64 depth, __u64 now)
{
	struct bw_stall *s = bw_stall_of(slot);
	__u64 m;
	int i;

	if (!s)
		return;
	if (!BW_READ_ONCE(s->waiting) && depth <= BW_READ_ONCE(s->max_depth))
		return;
	for (i = 0; i < BW_STALL_RETRIES; i++) {
		m = BW_READ_ONCE(s->max_depth);
		if (depth <= m || __sync_val_compare_and_swap(&s->max_depth, m, depth) == m)
			break;
	}
	if (BW_READ_ONCE(s->waiting) && bw_wait_take(rq))
		__sync_fetch_and_add(&s->waiting, -1);
	bw_stall_update(s, sh, now);
}

/*
 * Completed (gone: never issued, or merged into another request): the
 * in-flight count, or the waiting one, moved.
 */
static __always_inline void bw_stall_leave(__u32 slot, struct bw_dev_shared *sh, __u64 rq,
					   bool gone, __u64 now)
{
	struct bw_stall *s = bw_stall_of(slot);

	if (!s || !BW_READ_ONCE(s->waiting))
		return;
	if (gone && bw_wait_take(rq))
		__sync_fetch_and_add(&s->waiting, -1);
	bw_stall_update(s, sh, now ? now : bpf_ktime_get_ns());
}

#endif /* BLKWISE_STALL_BPF_H */
