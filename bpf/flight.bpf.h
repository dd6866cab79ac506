/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A device's in-flight word, busy periods and solo detection, as DESIGN.md
 * defines them (see the design comment of bpf/core.bpf.c): one atomic add
 * per event on the word whose low bits count I/Os in flight and high bits
 * count entries.  Shared by every object that keeps per-device figures in
 * struct bw_dev_shared / bw_dev_pcpu; only their fields are used here.
 */
#ifndef BLKWISE_FLIGHT_BPF_H
#define BLKWISE_FLIGHT_BPF_H

#include "core.h"

/* An I/O enters flight at now; id names it for the solo test at its end. */
static __always_inline void bw_flight_enter(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc,
					    __u64 now, __u64 id, __u64 epoch)
{
	__u64 old = __sync_fetch_and_add(&sh->word, BW_D_INC);
	__u64 n = old & BW_INFLIGHT_MASK;

	if (n == 0) {
		sh->busy_start = now;
		sh->opener_rq = id;
		sh->opener_seq = (old >> BW_INFLIGHT_BITS) + 1;
	}
	if (pc->max_epoch != epoch) {
		pc->max_epoch = epoch;
		pc->max_depth = n + 1;
	} else if (n + 1 > pc->max_depth) {
		pc->max_depth = n + 1;
	}
}

/*
 * An I/O leaves flight at now: closes the busy period when it was the last.
 * True when it was alone from entry to exit (it opened the period and
 * nothing entered since); the opener is read before the decrement, while it
 * cannot change.
 */
static __always_inline bool bw_flight_leave(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc,
					    __u64 now, __u64 id)
{
	__u64 bs = sh->busy_start, opener = sh->opener_rq, seq = sh->opener_seq;
	__u64 old = __sync_fetch_and_add(&sh->word, -1ULL);

	if ((old & BW_INFLIGHT_MASK) == 0) {
		/* Its entry predates us, or user space healed the count: undo. */
		__sync_fetch_and_add(&sh->word, 1);
		pc->unmatched++;
		return false;
	}
	if ((old & BW_INFLIGHT_MASK) != 1)
		return false;
	if (now > bs)
		pc->busy_ns += now - bs;
	return opener == id && (old >> BW_INFLIGHT_BITS) == seq;
}

#endif /* BLKWISE_FLIGHT_BPF_H */
