// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise core: per-device service time, queue time, in-flight depth, busy
 * time and solo service time, from block tracepoints alone.
 *
 * Design.  An I/O passes through two programs, issue (D) and complete (C);
 * nothing else runs per I/O (streams, recording and bio-based devices are
 * objects of their own, loaded on request).
 *
 * - No hash map on the hot path.  A device is found from its
 *   request_queue's address, hashed into a two-way array: no load through
 *   the queue.  The first event of a queue claims the entry (the only slow
 *   path, where the device filter is consulted).
 * - D's time goes to a table keyed by the request's address (open
 *   addressing over BW_RQ_PROBES entries, claimed with compare-and-swap;
 *   bpf/rqtab.bpf.h),
 *   shared by all devices and sized by how many requests may be live at
 *   once, so its memory does not grow with hw queues x tags.  The kernel's
 *   own rq->io_start_time_ns would save the clock read, but since 6.9 it
 *   comes from the plug's cached clock (blk_time_get_ns), which can precede
 *   the issue by the plug's whole life: less exact, so not used.  An
 *   entry is 32 bytes, never across two cache lines: the issue time's low
 *   54 bits (a service time is their difference modulo 2^54) under the
 *   device's slot, which user space needs to heal the entries of lost
 *   completions.  An issue that finds its own request still in the table
 *   knows that request's previous completion never reached us
 *   (docs/design.md, "Lost completions").
 * - Queue time needs no Q program: the kernel stamps rq->start_time_ns at
 *   allocation for every request it accounts in /proc/diskstats, so Q2D and
 *   Q2C here share diskstats' origin exactly.  Passthrough requests are not
 *   accounted, and their stamp is whatever the request's last use left: no
 *   queue time for them.
 * - Everything summed is per-CPU.  The one cross-CPU quantity, in-flight, is
 *   a single 64-bit word per device updated with one atomic add per event:
 *   the low bits count requests in flight, the high bits count issues.  From
 *   the value the add returns, D learns whether it opened a busy period
 *   (and records itself as the opener) and C whether it closed one, and
 *   whether its request was alone from D to C: it opened the period and the
 *   issue count did not move since.  That gives busy time and solo service
 *   time without locks and without per-request state.
 * - Busy time is added when a busy period closes; user space adds the open
 *   period (now - busy_start) when it reads, so a device that never idles
 *   still shows busy time.  busy_start is read before C's decrement: while
 *   our request is in flight no new period can start, so the value is the
 *   current period's.
 * - With --streams, the streams' Q claims the request's entry before D
 *   and leaves its stream in it, and C takes the request out of its stream
 *   (bpf/streams.bpf.h), sharing this program's clock read and this
 *   entry's cache line: the streams object has Q programs only.
 *   streams_on is rodata, so without streams the verifier drops those
 *   paths.
 * - Dispatch stalls (bpf/stall.h defines them, bpf/stall.bpf.h keeps
 *   them): a third program, on block_rq_insert, marks a request waiting in
 *   a table of its own and counts it per device; requeue does the same,
 *   and issue, a merge into another request or a completion without issue
 *   unmark it.  Seen waiting (block/blk-mq.c, 5.10 to 6.18): every request
 *   of an I/O scheduler (its insert_requests fires the insert event);
 *   under `none`, requests put on a software queue (the hardware queue was
 *   busy, or a direct issue was refused budget or a driver tag: both
 *   insert); and any request ->queue_rq answered BUSY, which blk-mq
 *   requeues (__blk_mq_requeue_request fires the requeue event) before
 *   putting it back on the dispatch list.  Not seen: a plug's list (the
 *   submitter still holds it: not waiting for dispatch), requests a plug
 *   flush issues directly and puts on the dispatch list when budget or a
 *   driver tag is refused (blk_mq_request_bypass_insert fires nothing),
 *   and flush and passthrough requests, which bypass insertion.  `none`
 *   with direct issue fires no insert, so there issue and completion pay
 *   one plain load of the device's stall line and a compare; they do more
 *   only while something waits, or when an issue sets a new maximum
 *   depth.  No lock: see bpf/stall.bpf.h.
 * - Kernels before 5.12 have atomic add but neither fetch-and-add nor
 *   compare-and-swap, and refuse an object holding either instruction
 *   anywhere, dead code included.  So every program comes twice, compiled
 *   with and without them (fetch, a constant of each copy), and the loader
 *   keeps one: without, the word is still counted but no event learns what
 *   it was, so busy time, solo time and the maximum depth are not measured
 *   (user space says so), and a table entry is claimed with a plain store.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "core.h"
#include "util.bpf.h"
#include "flight.h"
#include "devmaps.bpf.h"
#include "rqtab.bpf.h"
#include "streams.bpf.h"
#include "stall.bpf.h"
#include "handoff.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile __u32 bio_merge_arg = 0;		/* the bio's index: 2 before 5.11's (bio) */
const volatile __u32 skip = 0;			/* BW_SKIP_*: the bench's profile only */
const volatile bool streams_on = false;		/* C takes requests out of their streams */
const volatile bool handoff_on = false;		/* a slice beside the light tier: its clock at C */
const volatile bool qtime_on = false;		/* the core's own Q program (no streams) */
const volatile bool q_clock = false;		/* an entry's q_ts is Q's clock (block_io_start) */

/* Written by user space. */
__u64 epoch;

/* shared is mappable: user space reads it without syscalls and heals lost counts. */
BW_DEV_MAPS(BPF_F_MMAPABLE);
#include "slot.bpf.h"

/* The request's fields the core reads (bpf/rq.bpf.h). */
#define RQV (BW_RQV_KEY | BW_RQV_QK | BW_RQV_START | BW_RQV_FLAGS | BW_RQV_LEN | BW_RQV_SEG | \
	     BW_RQV_TAG)

/*
 * D: the request's entry, in one pass over its probes: its own entry,
 * still there and issued (or marked so by a Q), means its last C was never
 * seen (*lost); else the first free one, claimed atomically.  (An own
 * entry behind a free one, left when the free one was taken, is a ghost
 * user space heals at idle.)  With streams, Q claimed the entry first, so
 * all probes are looked at before a free one is taken.
 */
static __always_inline struct bw_rq_state *rq_claim(__u64 rq, bool *lost, const bool fetch)
{
	struct bw_rq_state *st;
	bool own;

	if (!((streams_on || qtime_on) && fetch))
		return bw_rq_claim(rq, lost, fetch, false);
	st = bw_rq_claim(rq, &own, true, true);
	*lost = false;
	if (st && own)
		*lost = st->d != BW_RQ_D_NONE;
	else if (st)
		st->q_ts = 0;
	return st;
}

/* A slot's maps; false when the slot is not watched. */
static __always_inline bool maps_of(__u32 *slot, struct bw_dev_shared **sh,
				    struct bw_dev_pcpu **pc)
{
	if (*slot == BW_SLOT_NONE)
		return false;
	*sh = bpf_map_lookup_elem(&shared, slot);
	*pc = bpf_map_lookup_elem(&pcpu, slot);
	return *sh && *pc;
}

/* A request's device: its slot and maps; false when the device is not watched. */
static __always_inline bool dev_of(struct request *rq, const struct bw_rqv *v, __u32 *slot,
				   struct bw_dev_shared **sh, struct bw_dev_pcpu **pc, const bool fetch)
{
	*slot = slot_of(v->qk, rq, NULL, fetch);
	return maps_of(slot, sh, pc);
}

/*
 * Q (block_io_start, 6.5+), without streams (whose Q does the same): the
 * request's own allocation time, in its entry, claimed here before D as
 * the streams' Q claims it, so that queue time runs from it (blktrace's
 * Q2D; bw_q_origin) and not from the kernel's stamp, which since 6.9 is a
 * plug's first request's.  A request found issued and never completed is
 * marked for the D that follows (BW_RQ_D_LOST), as D would have found it.
 */
static __always_inline void on_io_start(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					const bool fetch)
{
	struct bw_rq_state *st;
	__u64 now;
	bool own;

	if (!qtime_on || !fetch || slot_of(v->qk, rq, NULL, fetch) == BW_SLOT_NONE)
		return;
	now = bpf_ktime_get_ns();	/* before the claim: Q's time is the event's */
	st = bw_rq_claim(v->rqk, &own, fetch, true);
	if (!st)
		return;
	if (!own)
		st->d = BW_RQ_D_NONE;
	else if (st->d != BW_RQ_D_NONE)
		st->d = BW_RQ_D_LOST;
	st->q_ts = now;
}

static __always_inline void on_issue(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				     const bool fetch)
{
	struct bw_rq_state *st;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u64 now, depth, inc = BW_D_INC;
	__u32 slot;
	bool lost;

	if (!dev_of(rq, v, &slot, &sh, &pc, fetch))
		return;
	if (skip & BW_SKIP_BODY)
		return;
	now = (skip & BW_SKIP_CLOCK_D) ? v->start_ns + 1 : bpf_ktime_get_ns();
	if (skip & BW_SKIP_TABLE) {
		lost = false;
		goto flight;
	}
	st = rq_claim(v->rqk, &lost, fetch);
	if (!st) {
		pc->untracked++;
		return;
	}
	st->d = (now & BW_RQ_TS_MASK) | (__u64)slot << BW_RQ_TS_BITS;
	/* Its previous C never reached us: this issue takes its place in the count. */
	if (lost) {
		pc->lost++;
		inc = BW_D_INC - 1;
	}
flight:
	if (skip & BW_SKIP_FLIGHT)
		return;
	depth = bw_flight_enter(sh, pc, now, v->rqk, epoch, inc, fetch, skip & BW_SKIP_ATOMIC);
	/* Dispatch stalls: one plain load unless requests wait (bpf/stall.bpf.h). */
	if (fetch && !(skip & BW_SKIP_STALL))
		bw_stall_issue(slot, sh, v->rqk, depth, now);
}

/*
 * A completion we saw no issue for (an empty flush write, or one missed):
 * its entry (st, where one was found) freed, counted as unissued, and no
 * longer waiting.  outlived: the entry was an earlier request's, whose
 * completion was lost, and still counts in flight.
 */
static __always_inline void end_unissued(struct request *rq, const struct bw_rqv *v,
					 struct bw_rq_state *st, __u32 slot,
					 struct bw_dev_shared *sh, struct bw_dev_pcpu *pc,
					 __u32 op, __u32 nr_bytes, __u64 now, bool outlived,
					 const bool fetch)
{
	if (st) {
		barrier();	/* d read before the entry is free for another D */
		st->rq = 0;
	}
	if (outlived && !(skip & BW_SKIP_FLIGHT))
		bw_flight_outlived(sh, pc, now, v->rqk, fetch, skip & BW_SKIP_ATOMIC);
	bw_count_unissued(pc, bw_empty_flush_write(rq, v, op == BW_OP_WRITE, nr_bytes));
	if (fetch)	/* ended while waiting: no longer waits */
		bw_stall_leave(slot, sh, v->rqk, true, 0);
}

static __always_inline void on_complete(struct request *rq, const struct bw_rqv *v, int error,
					__u32 nr_bytes, const bool fetch)
{
	struct bw_rq_state *st;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	struct bw_op_pcpu *os;
	__u64 now, d2c, d_ts, q0, q_ts;
	__u32 slot, op, cls;
	bool solo;

	if (!dev_of(rq, v, &slot, &sh, &pc, fetch))
		return;
	if (skip & BW_SKIP_BODY)
		return;
	os = bw_final_op(pc, v->flags, v->data_len, nr_bytes, &op);
	if (!os)
		return;
	st = (skip & BW_SKIP_TABLE) ? NULL : bw_rq_find(v->rqk);
	if (!st && !(skip & BW_SKIP_TABLE)) {
		end_unissued(rq, v, NULL, slot, sh, pc, op, nr_bytes, 0, false, fetch);
		return;
	}
	now = handoff_on ? bw_handoff_take(v->start_ns, v->tag) : bpf_ktime_get_ns();
	q_ts = st ? st->q_ts : 0;	/* before the stream's leave clears it */
	if (streams_on && fetch && st)
		bw_streams_leave(st, sh->dev, now, nr_bytes, true, !(skip & BW_SKIP_S_LEAVE));
	/*
	 * Queued (a stream's Q, or Q's clock), never issued for us.  Its Q
	 * found the entry's earlier request issued and never completed
	 * (BW_RQ_D_LOST): with no D since to take its place, that request
	 * leaves flight here, its completion counted lost, as the replay's
	 * outlived entry does.
	 */
	if ((streams_on || qtime_on) && fetch && st && st->d <= BW_RQ_D_LOST) {
		end_unissued(rq, v, st, slot, sh, pc, op, nr_bytes, now, st->d == BW_RQ_D_LOST,
			     fetch);
		return;
	}
	/* Not issued itself; the entry is an earlier request's, whose C was lost. */
	if (st && st->d > BW_RQ_D_LOST && bw_rq_outlived(st->d, v->start_ns)) {
		end_unissued(rq, v, st, slot, sh, pc, op, nr_bytes, now, true, fetch);
		return;
	}
	/*
	 * The issue time's low bits: the difference modulo 2^54 is exact.  A
	 * clock a hair behind the issuing CPU's (the NMI-safe clock may step
	 * back a little across an update) wraps to the top: 0, as before.
	 */
	d2c = st ? (now - st->d) & BW_RQ_TS_MASK : now - v->start_ns;
	if (d2c > BW_RQ_TS_MASK / 2)
		d2c = 0;
	q0 = bw_q_origin(q_clock, q_ts, v->start_ns);
	if (st) {
		barrier();	/* d and q_ts read before the entry is free for another D */
		st->rq = 0;
	}
	d_ts = now - d2c;
	solo = false;
	if (!(skip & BW_SKIP_FLIGHT))
		solo = bw_flight_leave(sh, pc, now, v->rqk, fetch, skip & BW_SKIP_ATOMIC);
	if (fetch && !(skip & (BW_SKIP_FLIGHT | BW_SKIP_STALL)))	/* one plain load unless requests wait */
		bw_stall_leave(slot, sh, v->rqk, false, now);
	if (skip & BW_SKIP_SUMS) {
		os->d2c_ns += d2c;
		return;
	}

	/* Passthrough requests are not stamped at allocation (diskstats does not count them). */
	if (op == BW_OP_PASSTHROUGH)
		q0 = 0;
	cls = bw_count_final(os, error, nr_bytes, v->nr_seg, q0, d_ts, d2c, now,
			     !(skip & BW_SKIP_HIST));
	/* Solo: it opened the busy period, nothing was issued since, it closes it. */
	if (solo)
		bw_count_solo(os, cls, d2c);
}

static __always_inline void on_requeue(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				       const bool fetch)
{
	struct bw_rq_state *st;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u32 slot;

	if (!dev_of(rq, v, &slot, &sh, &pc, fetch))
		return;
	bw_count_requeue(pc, v->flags);
	st = bw_rq_find(v->rqk);
	if (!st || st->d <= BW_RQ_D_LOST) {
		pc->unmatched++;
		if (fetch)	/* BUSY before its issue: waits again (or still) */
			bw_stall_wait(slot, sh, v->rqk);
		return;
	}
	/*
	 * A request in a stream (or with Q's clock) stays queued, its entry
	 * with it, until issued again.
	 */
	if ((streams_on || qtime_on) && st->q_ts)
		st->d = BW_RQ_D_NONE;
	else
		st->rq = 0;
	bw_flight_leave(sh, pc, bpf_ktime_get_ns(), v->rqk, fetch, skip & BW_SKIP_ATOMIC);
	/* Back to waiting for dispatch, until issued again. */
	if (fetch)
		bw_stall_wait(slot, sh, v->rqk);
}

static __always_inline void count_merge(__u32 slot, __u32 cmd_flags)
{
	struct bw_dev_pcpu *pc = bpf_map_lookup_elem(&pcpu, &slot);

	if (pc)
		bw_count_merge(pc, cmd_flags);
}

static __always_inline void on_rq_merge(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					const bool fetch)
{
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u32 slot;

	if (!dev_of(rq, v, &slot, &sh, &pc, fetch))
		return;
	count_merge(slot, v->flags);
	/* The request merged into another one: it no longer waits, nor holds Q's entry. */
	if (fetch)
		bw_stall_leave(slot, sh, v->rqk, true, 0);
	if (qtime_on && fetch)
		bw_rq_drop_queued(v->rqk);
}

/* Inserted into the scheduler or the software queue: waits for dispatch (bpf/stall.bpf.h). */
static __always_inline void on_insert(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				      const bool fetch)
{
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u32 slot;

	if (!fetch || !dev_of(rq, v, &slot, &sh, &pc, fetch))
		return;
	bw_stall_wait(slot, sh, v->rqk);
}

/* A bio merged into a request: qk is its queue as a key, as the request programs make it. */
static __always_inline void on_bio_merge(struct bio *bio, __u64 qk, const bool fetch)
{
	__u32 slot = slot_of(qk, NULL, bio, fetch);

	if (slot != BW_SLOT_NONE)
		count_merge(slot, BPF_CORE_READ(bio, bi_opf));
}

/*
 * Every request tracepoint gets four programs from one handler: tp_btf
 * reads the request with plain loads, raw_tp (kernels whose tracepoints have
 * no BTF) through probe reads, each with fetch atomics and without (_nf:
 * before 5.12).  The loader keeps one of the four.  bpf/rq.bpf.h's
 * BW_RQ_PROG, shared with the record object, makes each.
 */
#define RQ_PROGS(tp, name, qarg, handler) BW_RQ_PROGS4(tp, name, qarg, RQV, handler)

static __always_inline void complete_args(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					  const bool fetch)
{
	on_complete(rq, v, (int)ctx[1], (__u32)ctx[2], fetch);
}

RQ_PROGS(block_rq_issue, bw_issue, true, on_issue)
RQ_PROGS(block_rq_complete, bw_complete, false, complete_args)
RQ_PROGS(block_rq_requeue, bw_requeue, true, on_requeue)
RQ_PROGS(block_rq_merge, bw_rq_merge, true, on_rq_merge)
RQ_PROGS(block_rq_insert, bw_insert, true, on_insert)
RQ_PROGS(block_io_start, bw_io_start, false, on_io_start)

BW_BIO_MERGE_PROGS4(block_bio_backmerge, bw_backmerge, on_bio_merge)
BW_BIO_MERGE_PROGS4(block_bio_frontmerge, bw_frontmerge, on_bio_merge)
