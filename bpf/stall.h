/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dispatch stalls, as docs/design.md ("Dispatch stalls") defines them: the
 * time during which requests of a device wait to be dispatched (inserted or
 * requeued, not yet issued) while fewer than the device's observed maximum
 * depth are in flight.  The rule, shared by bpf/stall.bpf.h (live) and
 * user/replay.c (analyze), so the two cannot disagree:
 *
 * - waiting: requests inserted (block_rq_insert) or requeued
 *   (block_rq_requeue) and not yet issued, merged away or completed;
 * - inflight: the core's in-flight count (issued, not completed);
 * - max_depth: the largest in-flight count any issue on the device has left
 *   since watching began (a running maximum; the core's per-interval max
 *   depth never resets here);
 * - stalled = waiting > 0 && inflight < max_depth.  An episode is one
 *   stretch of stalled being true; its time is from the event that made
 *   it true to the event that made it false.
 *
 * Per device, one cache line shared by all CPUs (bpf/stall.bpf.h); user
 * space adds the open episode (now - start) when it reads, as for busy time.
 */
#ifndef BLKWISE_STALL_H
#define BLKWISE_STALL_H

struct bw_stall {
	__u64 waiting;		/* requests waiting to be dispatched */
	__u64 max_depth;	/* running maximum of in-flight after an issue */
	__u64 start;		/* start of the open episode, ns; 0: none open */
	__u64 ns;		/* closed episodes' time */
	__u64 episodes;		/* episodes opened */
	__u64 untracked;	/* waits not counted: the wait table was full */
	__u64 pad[2];
};

static inline __attribute__((always_inline)) bool bw_stalled(__u64 waiting, __u64 inflight,
							      __u64 max_depth)
{
	return waiting && inflight < max_depth;
}

/*
 * One evaluation at now, for a single writer (user/replay.c): opens or
 * closes the episode when the condition changed.  bpf/stall.bpf.h does the
 * same with compare-and-swap, for many CPUs at once.
 */
static inline __attribute__((always_inline)) void bw_stall_eval(struct bw_stall *s, __u64 inflight,
								 __u64 now)
{
	bool on = bw_stalled(s->waiting, inflight, s->max_depth);

	if (on && !s->start) {
		s->start = now ? now : 1;
		s->episodes++;
	} else if (!on && s->start) {
		if (now > s->start)
			s->ns += now - s->start;
		s->start = 0;
	}
}

#endif /* BLKWISE_STALL_H */
