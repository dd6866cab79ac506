// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise light tier: what a completion can carry, from one program on
 * block_rq_complete and the kernel's own stamps.  The default of stat and
 * export; bpf/core.bpf.c is the exact tier (--exact, tune).
 *
 * Design.  One program per I/O, on the completion, and nothing else on
 * the I/O path: no issue or insert program, no per-request map, no word
 * shared between CPUs.
 *
 * - The kernel stamps a request twice: rq->start_time_ns at allocation
 *   (every request /proc/diskstats accounts) and rq->io_start_time_ns at
 *   issue, in blk_mq_start_request, where the queue keeps statistics
 *   (QUEUE_FLAG_STATS: writeback throttling, on by default, BFQ, iocost
 *   and blk-iolatency set it).  With the clock read here, D2C is
 *   now - io_start_time_ns, Q2D io_start_time_ns - start_time_ns and Q2C
 *   now - start_time_ns.  Both stamps come from blk_time_get_ns: within a
 *   plug (since 6.9) the plug's cached clock, read once by the first
 *   request of the plug, so a stamp can precede the event it names by
 *   the plug's life so far (D2C longer, Q2D shorter than the tracepoints'
 *   times; docs/cost.md says by how much here).
 * - A final completion is the one with nr_bytes == __data_len; a partial
 *   one adds its bytes and nothing else, as in the core.
 * - The device is found as the core finds it (bpf/slot.bpf.h): the queue's
 *   address hashed into a two-way array, the same slots and maps
 *   (bpf/devmaps.bpf.h), so user space reads both tiers alike.  All
 *   figures are per-CPU: the same struct bw_op_pcpu as the core's
 *   (counts, bytes, errors, D2C, Q2D and Q2C sums and histograms, segments,
 *   size classes), merges and requeues counted by their own programs,
 *   which run on merges and requeues only.
 * - Not here: busy time, solo service time (S1, hence P_eff and the
 *   class), mean and maximum depth, dispatch stalls and streams.  Each
 *   needs to know, at an event, what else is in flight: the core's
 *   in-flight word and its issue program (and insert program, for
 *   stalls).  User space marks them not measured (struct bw_snap_dev
 *   light).
 * - Where a queue keeps no statistics the stamp is 0.  Such a completion
 *   is counted in nostamp, not in ios; user space sees it at its next
 *   read, sets the device's fallback flag in the shared array (mapped) and
 *   attaches this object's issue program, which then times that device's
 *   requests as the core does (its per-request table, bpf/rqtab.bpf.h)
 *   and returns at once for every other device.  The issue program is
 *   loaded always and attached only then: a host whose queues all keep
 *   statistics never runs it.
 * - Kernels before 5.12 refuse any object holding fetch-and-add or
 *   compare-and-swap, dead code included: every program comes twice, with
 *   and without (fetch, a constant of each copy), and the loader keeps one,
 *   as for the core.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "core.h"
#include "skip.h"
#include "util.bpf.h"
#include "devmaps.bpf.h"
#include "rqtab.bpf.h"
#include "handoff.bpf.h"
#include "flight.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile __u32 bio_merge_arg = 0;		/* the bio's index: 2 before 5.11's (bio) */
const volatile __u32 skip = 0;			/* BW_SKIP_L_STAMP: tests of the fallback only */

BW_DEV_MAPS(BPF_F_MMAPABLE);
#include "slot.bpf.h"

#define RQV_C (BW_RQV_KEY | BW_RQV_QK | BW_RQV_START | BW_RQV_IOSTART | BW_RQV_FLAGS | \
	       BW_RQV_LEN | BW_RQV_SEG | BW_RQV_TAG)
#define RQV_D (BW_RQV_KEY | BW_RQV_QK | BW_RQV_START)
#define RQV_M (BW_RQV_QK | BW_RQV_FLAGS)

/* Written by user space: a timing slice's state (BW_SAMPLING_*), and an exact slice's. */
__u32 sampling;
__u32 handoff_on;

/* The requests the light tier timed itself, per slot (struct bw_dev_xpcpu). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct bw_dev_xpcpu);
} xpcpu SEC(".maps");

static __always_inline struct bw_dev_pcpu *pcpu_of(__u64 qk, struct request *rq, __u32 *slot,
						   const bool fetch)
{
	*slot = slot_of(qk, rq, NULL, fetch);
	if (*slot == BW_SLOT_NONE)
		return NULL;
	return bpf_map_lookup_elem(&pcpu, slot);
}

/*
 * Q (block_io_start, attached for a timing slice): the request's own
 * allocation time, in its entry, claimed before its issue.
 */
static __always_inline void on_io_start(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					const bool fetch)
{
	struct bw_rq_state *st;
	__u64 now;
	bool own;

	if (!fetch || sampling != BW_SAMPLING_ON || slot_of(v->qk, rq, NULL, fetch) == BW_SLOT_NONE)
		return;
	now = bpf_ktime_get_ns();	/* the event's time, before the claim */
	st = bw_rq_claim(v->rqk, &own, fetch, true);
	if (!st)
		return;
	st->d = BW_RQ_D_NONE;
	st->q_ts = now;
}

/*
 * The issue, timed by this program where a timing slice runs or the
 * device's queue keeps no stamp (its fallback): the request's entry, its
 * Q's if Q claimed it (the Q time of an earlier life of the request
 * dropped), else a free one.
 */
static __always_inline void on_issue(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				     const bool fetch)
{
	struct bw_dev_shared *sh;
	struct bw_dev_xpcpu *x;
	struct bw_rq_state *st;
	__u64 now;
	__u32 slot;
	bool own;

	slot = slot_of(v->qk, rq, NULL, fetch);
	if (slot == BW_SLOT_NONE)
		return;
	sh = bpf_map_lookup_elem(&shared, &slot);
	if (!sh || !(sh->fallback || sampling == BW_SAMPLING_ON))
		return;
	now = bpf_ktime_get_ns();
	st = bw_rq_claim(v->rqk, &own, fetch, fetch && sampling);
	if (!st)
		return;
	if (!own || bw_rq_outlived(st->q_ts & BW_RQ_TS_MASK, v->start_ns))
		st->q_ts = 0;
	st->d = (now & BW_RQ_TS_MASK) | (__u64)slot << BW_RQ_TS_BITS;
	x = bpf_map_lookup_elem(&xpcpu, &slot);
	if (x)
		x->claimed++;
}

/*
 * The request's own times, where this object's issue program took them:
 * its issue (0: none, or an earlier life's), and its Q (*q, 0: none).
 * The entry is freed.
 */
static __always_inline __u64 own_times(const struct bw_rqv *v, __u32 slot, __u64 now, __u64 *q)
{
	struct bw_rq_state *st = bw_rq_find(v->rqk);
	struct bw_dev_xpcpu *x;
	__u64 d, d2c;

	*q = 0;
	if (!st)
		return 0;
	d = st->d;
	*q = st->q_ts;
	barrier();	/* read before the entry is free for another request */
	st->rq = 0;
	if (d <= BW_RQ_D_LOST)	/* its Q's, never issued while we looked */
		return 0;
	x = bpf_map_lookup_elem(&xpcpu, &slot);
	if (x)
		x->freed++;
	if (bw_rq_outlived(d & BW_RQ_TS_MASK, v->start_ns))
		return 0;
	d2c = (now - d) & BW_RQ_TS_MASK;
	return d2c > BW_RQ_TS_MASK / 2 ? now : now - d2c;
}

/* A request a timing slice timed: its service time, and its queue time where its Q was seen. */
static __always_inline void count_timed(const struct bw_rqv *v, __u32 slot, __u32 op, __u64 d_ts,
					__u64 q_ts, __u64 now)
{
	struct bw_dev_xpcpu *x = bpf_map_lookup_elem(&xpcpu, &slot);
	struct bw_op_time *t;
	__u64 q2d;

	if (!x || op >= BW_NR_OPS)
		return;
	t = &x->op[op];
	t->ios++;
	t->d2c_ns += now - d_ts;
	bw_hist_inc(t->hist_d2c, (now - d_ts) >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
	if (!q_ts || q_ts > d_ts || bw_rq_outlived(q_ts & BW_RQ_TS_MASK, v->start_ns))
		return;
	q2d = d_ts - q_ts;
	t->q_ios++;
	t->q2d_ns += q2d;
	t->q2c_ns += now - q_ts;
	bw_hist_inc(t->hist_q2d, q2d >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
}

static __always_inline bool fallback_of(__u32 slot)
{
	struct bw_dev_shared *sh = bpf_map_lookup_elem(&shared, &slot);

	return sh && sh->fallback;
}

static __always_inline void on_complete(struct request *rq, const struct bw_rqv *v, int error,
					__u32 nr_bytes, const bool fetch)
{
	struct bw_dev_pcpu *pc;
	struct bw_op_pcpu *os;
	__u64 now, d_ts, d2c, q0, own_d = 0, own_q = 0;
	__u32 slot, op;

	pc = pcpu_of(v->qk, rq, &slot, fetch);
	if (!pc)
		return;
	os = bw_final_op(pc, v->flags, v->data_len, nr_bytes, &op);
	if (!os)
		return;
	d_ts = (skip & BW_SKIP_L_STAMP) ? 0 : v->io_start_ns;
	/*
	 * A write with no bytes at all: an empty flush write (counted by
	 * diskstats, never issued, so never stamped), or the second
	 * completion of a flush sequence's data write, after the one that
	 * counted it (its stamp is still there: not counted again, as the
	 * core does not).  An empty write that was issued itself (stamped)
	 * is counted as any request, as the core counts it.
	 */
	if (op == BW_OP_WRITE && !nr_bytes && !v->data_len) {
		bool empty = bw_empty_flush_write(rq, v, true, nr_bytes);

		if (!empty || !d_ts) {
			bw_count_unissued(pc, empty);
			return;
		}
	}
	now = bpf_ktime_get_ns();
	if (handoff_on)	/* for an exact slice's program after us */
		bw_handoff_put(v->start_ns, v->tag, now);
	if (sampling || !d_ts)
		own_d = own_times(v, slot, now, &own_q);
	if (own_d && sampling)
		count_timed(v, slot, op, own_d, own_q, now);
	/*
	 * The kernel never stamps passthrough requests (no sign of a queue
	 * without stats): counted, with no service or queue time.
	 */
	if (!d_ts && op == BW_OP_PASSTHROUGH) {
		os->ios++;
		os->bytes += nr_bytes;
		if (error)
			os->errors++;
		os->class_ios[bw_size_class(nr_bytes)]++;
		return;
	}
	if (!d_ts) {	/* no stamp: the fallback's issue time, else counted apart */
		pc->nostamp++;
		if (!own_d || !fallback_of(slot)) {
			pc->unmatched++;
			return;
		}
		pc->fallback++;
		d_ts = own_d;
	} else if (bw_stamp_plugged(d_ts, v->start_ns)) {
		os->plugged++;
	}
	d2c = d_ts <= now ? now - d_ts : 0;
	/* Passthrough requests are not stamped at allocation (diskstats does not count them). */
	q0 = op == BW_OP_PASSTHROUGH ? 0 : v->start_ns;
	bw_count_final(os, error, nr_bytes, v->nr_seg, q0, d_ts, d2c, now, true);
}

static __always_inline void complete_args(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					  const bool fetch)
{
	on_complete(rq, v, (int)ctx[1], (__u32)ctx[2], fetch);
}

static __always_inline void on_requeue(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				       const bool fetch)
{
	struct bw_dev_pcpu *pc;
	__u32 slot;

	pc = pcpu_of(v->qk, rq, &slot, fetch);
	if (pc)
		bw_count_requeue(pc, v->flags);
}

static __always_inline void count_merge(__u32 slot, __u32 cmd_flags)
{
	struct bw_dev_pcpu *pc;

	if (slot == BW_SLOT_NONE)
		return;
	pc = bpf_map_lookup_elem(&pcpu, &slot);
	if (pc)
		bw_count_merge(pc, cmd_flags);
}

static __always_inline void on_rq_merge(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
					const bool fetch)
{
	count_merge(slot_of(v->qk, rq, NULL, fetch), v->flags);
}

/* A bio merged into a request: qk is its queue as a key, as the request programs make it. */
static __always_inline void on_bio_merge(struct bio *bio, __u64 qk, const bool fetch)
{
	count_merge(slot_of(qk, NULL, bio, fetch), BPF_CORE_READ(bio, bi_opf));
}

BW_RQ_PROGS4(block_rq_complete, bw_light_complete, false, RQV_C, complete_args)
BW_RQ_PROGS4(block_rq_issue, bw_light_issue, true, RQV_D, on_issue)
BW_RQ_PROGS4(block_io_start, bw_light_io_start, false, RQV_D, on_io_start)
BW_RQ_PROGS4(block_rq_requeue, bw_light_requeue, true, RQV_M, on_requeue)
BW_RQ_PROGS4(block_rq_merge, bw_light_rq_merge, true, RQV_M, on_rq_merge)
BW_BIO_MERGE_PROGS4(block_bio_backmerge, bw_light_backmerge, on_bio_merge)
BW_BIO_MERGE_PROGS4(block_bio_frontmerge, bw_light_frontmerge, on_bio_merge)
