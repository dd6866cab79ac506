/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures and rules shared by bpf/streams.bpf.c, the core's completion
 * (bpf/streams.bpf.h), their loader user/load/streams.c, and the replay of a
 * trace (user/model/replay.c).  A stream's figures are struct bw_stream
 * (bpf/core.h); what is new here is its key, which names either a process
 * or a cgroup (a request carries its stream from Q to C in its entry of
 * the core's per-request table, struct bw_rq_state), and the two rules
 * every event of a stream follows: a request joins it at Q
 * (bw_stream_enter) and leaves it at C, or when it is merged away or
 * found stale (bw_stream_leave).  The rules are written once: in
 * BPF the stream is shared by every CPU, so its in-flight word and the sums
 * C adds go through atomics; compiled for user space (one thread) the same
 * lines are plain adds.
 */
#ifndef BLKWISE_STREAMS_H
#define BLKWISE_STREAMS_H

#include "core.h"

/*
 * What a stream is: the submitting process (tgid), or the cgroup (v2 id)
 * the kernel charges the request to: its bio's blkg's (bpf/streams.bpf.c).
 */
enum bw_stream_by {
	BW_STREAMS_PROCESS,
	BW_STREAMS_CGROUP,
};

struct bw_skey {
	__u32 dev;		/* MKDEV of the disk */
	__u32 by;		/* enum bw_stream_by */
	__u64 id;		/* tgid, or cgroup id (the cgroup2 directory's inode) */
};

/* Rare events, per CPU: --verbose and the tests. */
struct bw_scount {
	__u64 q_events;
	__u64 c_events;
	__u64 stale;		/* a request seen at Q again before its C */
	__u64 no_room;		/* per-request table or stream map full */
	__u64 owner_bio;	/* by cgroup: Qs charged to the cgroup of the bio's blkg */
	__u64 owner_task;	/* by cgroup: Qs charged to the current task's (no blkg) */
};

#ifdef __bpf__
#define bw_s_xadd(p, v) __sync_fetch_and_add((p), (v))
#define bw_s_add(p, v) ((void)__sync_fetch_and_add((p), (v)))
#else
static inline __u64 bw_s_xadd(__u64 *p, __u64 v)
{
	__u64 old = *p;

	*p = old + v;
	return old;
}
#define bw_s_add(p, v) ((void)(*(p) += (v)))
#endif

#define BW_NO_SECTOR ((__u64)-1)

/*
 * Q: a request of len bytes at sector joins stream s at q_ts.  The in-flight
 * word counts requests outstanding (low bits) and Qs (high bits), as a
 * device's (bpf/flight.h); the stream's think time is the gap from its
 * last request's end to a Q that finds nothing outstanding, so it is taken
 * only there, on the idle-to-busy transition.  Seeks are between requests
 * with data: one without (a flush) is counted but moves no position.  The
 * maximum depth is kept per epoch (bw_epoch_max_note: user space moves the
 * epoch at each read, the replay at each interval's end).
 */
static inline __attribute__((always_inline)) void
bw_stream_enter(struct bw_stream *s, __u64 q_ts, __u64 sector, __u32 len, int sync,
		__u64 epoch)
{
	__u64 old, n, dist, end, think;
	__u32 b;

	old = bw_s_xadd(&s->word, BW_D_INC);
	n = old & BW_INFLIGHT_MASK;
	if (n == 0) {
		s->busy_start = q_ts;
		if (s->idle_start && q_ts > s->idle_start) {
			think = q_ts - s->idle_start;
			s->think_ns += think;
			s->thinks++;
			b = bw_bucket(think >> BW_THINK_SHIFT, BW_THINK_BUCKETS);
#ifdef __bpf__
			barrier_var(b);	/* the verifier re-checks the bound (util.bpf.h) */
#endif
			if (b < BW_THINK_BUCKETS)
				s->think_hist[b]++;
		}
	}
	bw_epoch_max_note(&s->max, epoch, n + 1);
	s->queued++;
	if (sync)
		s->sync_ios++;
	/* No data, no place on the disk: a flush, an empty PREFLUSH write (sector ~0). */
	if (!len || sector == BW_NO_SECTOR)
		return;
	end = s->next_sector;
	if (end) {
		dist = sector > end ? sector - end : end - sector;
		s->seek_sectors += dist;
		if (!dist)
			s->seq_ios++;
	}
	s->next_sector = sector + (len >> 9);
}

/*
 * C (completed: bytes done, its time in flight counted) or merged away /
 * stale: the request that joined s at q_ts leaves it at now.  The last one
 * out closes the stream's busy period and starts its idle time.  A word
 * already at 0 (user space healed it, or a replayed trace began mid-flight)
 * is left alone.
 */
static inline __attribute__((always_inline)) void
bw_stream_leave(struct bw_stream *s, __u64 q_ts, __u64 now, __u32 bytes, int completed)
{
	__u64 bs, old;

	if (completed) {
		bw_s_add(&s->ios, 1);
		bw_s_add(&s->bytes, bytes);
		bw_s_add(&s->area_ns, now > q_ts ? now - q_ts : 0);
	}
	if (!(s->word & BW_INFLIGHT_MASK))
		return;
	bs = s->busy_start;
	old = bw_s_xadd(&s->word, -1ULL);
	if ((old & BW_INFLIGHT_MASK) == 1) {
		if (now > bs)
			bw_s_add(&s->busy_ns, now - bs);
		s->idle_start = now;
	}
}

#endif /* BLKWISE_STREAMS_H */
