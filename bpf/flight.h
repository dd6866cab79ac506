/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A device's in-flight word, busy periods and solo detection, as docs/design.md
 * defines them (see the design comment of bpf/core.bpf.c): one atomic add
 * per event on the word whose low bits count I/Os in flight and high bits
 * count entries.  Shared by every object that keeps per-device figures in
 * struct bw_dev_shared / bw_dev_pcpu; only their fields are used here.
 * Compiled by clang for bpf/core.bpf.c and bpf/bio.bpf.c, and by cc for the
 * replay of a trace (user/model/replay.c), which is one thread: plain
 * updates, one CPU's bw_dev_pcpu.  Unit-tested by tests/unit/test_flight.c.
 *
 * fetch is the object's have_fetch (5.12+): without atomic fetch-and-add
 * the word is still counted, but no event learns what it was, so busy
 * time, solo time and the maximum depth are not measured.  plain (the
 * bench's profile only) updates the word without atomics.
 */
#ifndef BLKWISE_FLIGHT_H
#define BLKWISE_FLIGHT_H

#include "core.h"

#ifndef __bpf__
#include <stdbool.h>
#endif

#define BW_INLINE static inline __attribute__((always_inline))

BW_INLINE __u64 bw_word_add(struct bw_dev_shared *sh, __u64 inc, bool plain)
{
	__u64 old;

	if (plain) {
		old = sh->word;
		sh->word = old + inc;
		return old;
	}
	return __sync_fetch_and_add(&sh->word, inc);
}

/*
 * An I/O enters flight at now; id names it for the solo test at its end.
 * inc is BW_D_INC, or BW_D_INC - 1 when it takes the place of an I/O whose
 * end was never seen.  The depth it found, itself included (0: not known).
 */
BW_INLINE __u64 bw_flight_enter(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc, __u64 now,
				__u64 id, __u64 epoch, __u64 inc, bool fetch, bool plain)
{
	__u64 old, n;

	if (!fetch) {
		__sync_fetch_and_add(&sh->word, inc);
		return 0;
	}
	old = bw_word_add(sh, inc, plain);
	n = old & BW_INFLIGHT_MASK;
	if (n == 0) {
		sh->busy_start = now;
		sh->opener_rq = id;
		sh->opener_seq = (old >> BW_INFLIGHT_BITS) + 1;
	}
	bw_epoch_max_note(&pc->max, epoch, n + 1);
	return n + 1;
}

/*
 * An I/O leaves flight at now: closes the busy period when it was the last.
 * True when it was alone from entry to exit (it opened the period and
 * nothing entered since); the opener is read before the decrement, while it
 * cannot change.
 */
BW_INLINE bool bw_flight_leave(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc, __u64 now,
				__u64 id, bool fetch, bool plain)
{
	__u64 bs, opener, seq, old;

	if (!fetch) {
		__sync_fetch_and_add(&sh->word, -1ULL);
		return false;
	}
	bs = sh->busy_start;
	opener = sh->opener_rq;
	seq = sh->opener_seq;
	old = bw_word_add(sh, -1ULL, plain);
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

/*
 * Lost completions (docs/design.md): the kernel at times runs no program
 * for a completion, and the request's entry outlives it.  The next issue
 * of the same request finds the entry and takes its place.  A completion
 * with no issue of its own (an empty flush write, never issued) can find
 * it first, and tells it by the stamps: its request was allocated after
 * the entry's issue, so that issue was an earlier request's.  d is the
 * entry's issue time (its low BW_RQ_TS_BITS bits suffice), alloc_ns the
 * completing request's allocation stamp (0: unknown, never outlived).
 * Valid entries are issued after their allocation; the margin keeps the
 * issue's NMI-safe clock and the stamp's clock, a hair apart at times,
 * from meeting.
 */
#define BW_RQ_OUTLIVED_NS 1000ULL

BW_INLINE bool bw_rq_outlived(__u64 d, __u64 alloc_ns)
{
	__u64 ahead = (alloc_ns - d) & BW_RQ_TS_MASK;

	return alloc_ns && ahead > BW_RQ_OUTLIVED_NS && ahead <= BW_RQ_TS_MASK / 2;
}

/* The outlived entry's request leaves flight at now, its completion counted lost. */
BW_INLINE void bw_flight_outlived(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc, __u64 now,
				  __u64 id, bool fetch, bool plain)
{
	pc->lost++;
	bw_flight_leave(sh, pc, now, id, fetch, plain);
}

#undef BW_INLINE

#endif /* BLKWISE_FLIGHT_H */
