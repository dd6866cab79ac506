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

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile __u32 bio_merge_arg = 0;		/* the bio's index: 2 before 5.11's (bio) */
const volatile __u32 skip = 0;			/* BW_SKIP_L_STAMP: tests of the fallback only */

BW_DEV_MAPS(BPF_F_MMAPABLE);
#include "slot.bpf.h"

#define RQV_C (BW_RQV_KEY | BW_RQV_QK | BW_RQV_START | BW_RQV_IOSTART | BW_RQV_FLAGS | \
	       BW_RQV_LEN | BW_RQV_SEG)
#define RQV_D (BW_RQV_KEY | BW_RQV_QK)
#define RQV_M (BW_RQV_QK | BW_RQV_FLAGS)

static __always_inline struct bw_dev_pcpu *pcpu_of(__u64 qk, struct request *rq, __u32 *slot,
						   const bool fetch)
{
	*slot = slot_of(qk, rq, NULL, fetch);
	if (*slot == BW_SLOT_NONE)
		return NULL;
	return bpf_map_lookup_elem(&pcpu, slot);
}

/* Fallback: the issue of a request on a device whose queue keeps no stamp. */
static __always_inline void on_issue(struct request *rq, const struct bw_rqv *v, __u64 *ctx,
				     const bool fetch)
{
	struct bw_dev_shared *sh;
	struct bw_rq_state *st;
	__u32 slot;
	bool own;

	slot = slot_of(v->qk, rq, NULL, fetch);
	if (slot == BW_SLOT_NONE)
		return;
	sh = bpf_map_lookup_elem(&shared, &slot);
	if (!sh || !sh->fallback)
		return;
	st = bw_rq_claim(v->rqk, &own, fetch, false);
	if (st)
		st->d = (bpf_ktime_get_ns() & BW_RQ_TS_MASK) | (__u64)slot << BW_RQ_TS_BITS;
}

/* No stamp: the fallback's issue time, else 0 (counted as such). */
static __always_inline __u64 unstamped_issue(struct request *rq, const struct bw_rqv *v,
					     struct bw_dev_pcpu *pc, __u32 slot, __u64 now)
{
	struct bw_dev_shared *sh = bpf_map_lookup_elem(&shared, &slot);
	struct bw_rq_state *st;
	__u64 d2c;

	pc->nostamp++;
	if (!sh || !sh->fallback)
		return 0;
	st = bw_rq_find(v->rqk);
	if (!st)
		return 0;
	d2c = (now - st->d) & BW_RQ_TS_MASK;
	barrier();	/* d read before the entry is free for another issue */
	st->rq = 0;
	pc->fallback++;
	return d2c > BW_RQ_TS_MASK / 2 ? now : now - d2c;
}

static __always_inline void on_complete(struct request *rq, const struct bw_rqv *v, int error,
					__u32 nr_bytes, const bool fetch)
{
	struct bw_dev_pcpu *pc;
	struct bw_op_pcpu *os;
	__u64 now, d_ts, d2c, q0;
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
	if (!d_ts) {
		d_ts = unstamped_issue(rq, v, pc, slot, now);
		if (!d_ts) {
			pc->unmatched++;
			return;
		}
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
BW_RQ_PROGS4(block_rq_requeue, bw_light_requeue, true, RQV_M, on_requeue)
BW_RQ_PROGS4(block_rq_merge, bw_light_rq_merge, true, RQV_M, on_rq_merge)
BW_BIO_MERGE_PROGS4(block_bio_backmerge, bw_light_backmerge, on_bio_merge)
BW_BIO_MERGE_PROGS4(block_bio_frontmerge, bw_light_frontmerge, on_bio_merge)
