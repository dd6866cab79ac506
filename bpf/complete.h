/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a completion adds to its op's figures (struct bw_op_pcpu,
 * bpf/core.h), written once: compiled by clang for bpf/core.bpf.c,
 * bpf/light.bpf.c and bpf/bio.bpf.c, and by cc for the replay of a trace
 * (user/model/replay.c), which keeps its figures as one more CPU would.
 * Unit-tested by user/model/test_complete.c.
 *
 * A final completion counts its request, bytes, error, service time (D2C)
 * and its histogram (bw_count_io); a request's segments (bw_count_segs);
 * its queue and total time where its allocation stamp is known
 * (bw_count_queue); its size class (bw_count_class); and, when it was
 * alone on the device from issue to completion, its solo service time
 * (bw_count_solo).  A partial
 * completion adds its bytes only (bw_count_partial): the request stays in
 * flight.  A completion with no issue is an empty flush write or a missed
 * issue (bw_count_unissued).
 */
#ifndef BLKWISE_COMPLETE_H
#define BLKWISE_COMPLETE_H

#include "core.h"

#ifndef __bpf__
#include <stdbool.h>
#endif

#ifndef bw_hist_inc	/* BPF: bpf/util.bpf.h's, which the verifier follows */
#define bw_hist_inc(hist, u, nbuckets) ((hist)[bw_bucket((u), (nbuckets))]++)
#endif

#define BW_INLINE static inline __attribute__((always_inline))

BW_INLINE void bw_count_partial(struct bw_op_pcpu *os, __u32 nr_bytes)
{
	os->bytes += nr_bytes;
}

/* The request itself: d2c its service time, hist whether histograms are kept. */
BW_INLINE void bw_count_io(struct bw_op_pcpu *os, int error, __u32 nr_bytes, __u64 d2c,
			   const bool hist)
{
	os->ios++;
	os->bytes += nr_bytes;
	if (error)
		os->errors++;
	os->d2c_ns += d2c;
	if (hist)
		bw_hist_inc(os->hist_d2c, d2c >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
}

/*
 * Its size class, counted and returned last, so that the class's bound is
 * fresh where the caller indexes solo_ios with it (a verifier may lose a
 * bound kept across other work: 6.1's lost an op's across a helper call).
 */
BW_INLINE __u32 bw_count_class(struct bw_op_pcpu *os, __u32 nr_bytes)
{
	__u32 cls = bw_size_class(nr_bytes);

	os->class_ios[cls]++;
	return cls;
}

BW_INLINE void bw_count_segs(struct bw_op_pcpu *os, __u32 nr_seg, const bool hist)
{
	os->segments += nr_seg;
	if (hist)
		bw_hist_inc(os->hist_seg, nr_seg, BW_SEG_BUCKETS);
}

/*
 * Queue (Q2D) and total (Q2C) time from q0, the request's allocation stamp
 * (0: none), d_ts its issue and now its completion, into *q2d and *q2c;
 * false where q0 is unknown.  Total time needs only q0 <= now.  The
 * kernel's stamps, within a plug since 6.9, come from the plug's cached
 * clock, so an issue stamped by one task's plug can read earlier than an
 * allocation stamped afresh by another: such a request waited no
 * measurable time (Q2D 0) and is counted, as /proc/diskstats counts it.
 */
BW_INLINE bool bw_queue_times(__u64 q0, __u64 d_ts, __u64 now, __u64 *q2d, __u64 *q2c)
{
	if (!q0 || q0 > now)
		return false;
	*q2d = d_ts > q0 ? d_ts - q0 : 0;
	*q2c = now - q0;
	return true;
}

/*
 * Queue time's origin: Q's own clock read at block_io_start where one ran
 * (q_clock: 6.5+, the exact tier and the recordings), else the kernel's
 * allocation stamp, which since 6.9 is a plug's cached clock.
 */
BW_INLINE __u64 bw_q_origin(bool q_clock, __u64 q_ts, __u64 alloc_ns)
{
	return q_clock && q_ts ? q_ts : alloc_ns;
}

BW_INLINE void bw_count_queue(struct bw_op_pcpu *os, __u64 q0, __u64 d_ts, __u64 now,
			      const bool hist)
{
	__u64 q2d, q2c;

	if (!bw_queue_times(q0, d_ts, now, &q2d, &q2c))
		return;
	os->q_ios++;
	os->q2d_ns += q2d;
	os->q2c_ns += q2c;
	if (hist)
		bw_hist_inc(os->hist_q2d, q2d >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
}

/*
 * Whether a request's issue stamp (io_start, rq->io_start_time_ns) was not
 * taken at its issue.  Since 6.9 both stamps come from blk_time_get_ns,
 * which inside a plug returns the plug's clock, read once: an issue stamp
 * equal to the allocation stamp (start) was read before the issue, at the
 * plug's first request, and one below it came from another task's plug.
 * Two reads of the clock apart (every kernel before 6.9, and a request
 * issued outside its submitter's plug) differ by the path between them.
 * An issue stamp above the allocation stamp may still be another plug's
 * cached clock: that one is not told.
 */
BW_INLINE bool bw_stamp_plugged(__u64 io_start, __u64 start)
{
	return io_start && start && io_start <= start;
}

/* A request that opened a busy period and closed it, nothing issued between: S1's sample. */
BW_INLINE void bw_count_solo(struct bw_op_pcpu *os, __u32 cls, __u64 d2c)
{
	os->solo_ios[cls]++;
	os->solo_ns[cls] += d2c;
}

/*
 * A completion with no issue seen: an empty PREFLUSH write (never issued:
 * the flush machinery completes it, and diskstats counts it as a write),
 * or one whose issue was missed.
 */
BW_INLINE void bw_count_unissued(struct bw_dev_pcpu *pc, bool empty_flush_write)
{
	if (empty_flush_write)
		pc->fsync_writes++;
	else
		pc->unmatched++;
}

/* A final completion of a request (as above); its size class. */
BW_INLINE __u32 bw_count_final(struct bw_op_pcpu *os, int error, __u32 nr_bytes, __u32 nr_seg,
			       __u64 q0, __u64 d_ts, __u64 d2c, __u64 now, const bool hist)
{
	bw_count_io(os, error, nr_bytes, d2c, hist);
	bw_count_segs(os, nr_seg, hist);
	bw_count_queue(os, q0, d_ts, now, hist);
	return bw_count_class(os, nr_bytes);
}

/*
 * A requeue, and a bio or request merge, for the op of the request's (or
 * the bio's) flags, as diskstats files them; an op blkwise does not know
 * is not counted.  The core, the light tier and the replay count them so.
 */
BW_INLINE void bw_count_requeue(struct bw_dev_pcpu *pc, __u32 cmd_flags)
{
	__u32 op = bw_op_of(cmd_flags);

	if (op < BW_NR_OPS)
		pc->op[op].requeues++;
}

BW_INLINE void bw_count_merge(struct bw_dev_pcpu *pc, __u32 cmd_flags)
{
	__u32 op = bw_op_of(cmd_flags);

	if (op < BW_NR_OPS)
		pc->op[op].merges++;
}

#undef BW_INLINE

#endif /* BLKWISE_COMPLETE_H */
