// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise streams: per device and submitter (a process, or a cgroup) the
 * depth, think time, seekiness and sync share a CFQ/BFQ-style scheduler
 * would see, attributed at Q while the submitter is current.
 *
 * Design.  A concern of its own, loaded only with --streams, so the core's
 * two programs per I/O pay nothing for it.  Streams cost a hash lookup per
 * I/O anyway (the stream's entry), so the per-request state here is a hash
 * keyed by the request's address too: no slot or tag machinery shared with
 * the core, and its sizing does not depend on the devices' tag spaces.
 *
 * Q, where the request gets its stream:
 * - block_io_start (6.5+) fires for every request in blk_mq_bio_to_request,
 *   in the submitter's context.
 * - Before 6.5 there is no single event.  blk_mq_submit_bio (6.1) either
 *   plugs the request, hands it to the scheduler (block_rq_insert), or, with
 *   no scheduler, issues it directly (blk_mq_try_issue_directly, traced only
 *   as block_rq_issue); a plug is flushed by its task (blk_finish_plug, or
 *   schedule()), again through insert or direct issue.  So the fallback takes
 *   whichever of block_rq_insert and block_rq_issue sees a request first,
 *   stamped with the kernel's own allocation time (rq->start_time_ns).
 *   A later insert or issue of the same request (requeue, dispatch after
 *   insert) finds its entry and is ignored.  What it gets wrong: a request
 *   the driver refused before starting it (BLK_STS_RESOURCE) goes onto the
 *   dispatch list untraced (blk_mq_request_bypass_insert) and is first seen
 *   when a kworker issues it: it is counted under that kworker.
 *   (block_getrq, in the submitter's context on both, passes only the bio.)
 * - C is block_rq_complete (a partial completion keeps the request); a
 *   request merged into another is freed at block_rq_merge.
 *
 * Stream figures are those of struct bw_stream, updated with atomics since
 * one stream's requests complete on any CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "streams.h"
#include "util.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile bool filter_on = false;
const volatile bool fallback_q = false;		/* no block_io_start: insert or issue */
const volatile __u32 stream_by = BW_STREAMS_PROCESS;

/* Written by user space. */
__u64 epoch;

/* For --verbose and the tests. */
__u64 q_events;
__u64 c_events;
__u64 stale;		/* a request seen at Q again before its C */
__u64 no_room;		/* per-request or stream map full */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct bw_srq);
} srqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bw_skey);
	__type(value, struct bw_stream);
} streams SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_stream);
} stream_scratch SEC(".maps");

static __always_inline bool is_sync(__u32 cmd_flags)
{
	return (cmd_flags & 0xff) == 0 ||	/* REQ_OP_READ */
	       (cmd_flags & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)));
}

/* A request's stream entry leaves (completed, merged away, or stale). */
static __always_inline void stream_leave(const struct bw_srq *r, __u64 now, __u32 bytes,
					 bool completed)
{
	struct bw_stream *s = bpf_map_lookup_elem(&streams, &r->key);
	__u64 bs, old;

	if (!s)
		return;
	if (completed) {
		__sync_fetch_and_add(&s->ios, 1);
		__sync_fetch_and_add(&s->bytes, bytes);
		__sync_fetch_and_add(&s->area_ns, now > r->q_ts ? now - r->q_ts : 0);
	}
	bs = s->busy_start;
	old = __sync_fetch_and_add(&s->word, -1ULL);
	if ((old & BW_INFLIGHT_MASK) == 1) {
		if (now > bs)
			__sync_fetch_and_add(&s->busy_ns, now - bs);
		s->idle_start = now;
	}
}

static __always_inline struct bw_stream *stream_get(const struct bw_skey *key)
{
	struct bw_stream *s, *fresh;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&streams, key);
	if (s)
		return s;
	/* A new stream's first value is built per CPU: it is too big for the stack. */
	fresh = bpf_map_lookup_elem(&stream_scratch, &zero);
	if (!fresh)
		return NULL;
	__builtin_memset(fresh, 0, sizeof(*fresh));
	bpf_get_current_comm(fresh->comm, sizeof(fresh->comm));
	bpf_map_update_elem(&streams, key, fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&streams, key);
}

/* The stream's side of a Q: in flight, think time, depth, seekiness, sync. */
static __always_inline void stream_queue(struct bw_stream *s, __u64 q_ts, __u64 sector,
					 __u32 len, __u32 flags)
{
	__u64 old, n, dist, end;

	old = __sync_fetch_and_add(&s->word, BW_D_INC);
	n = old & BW_INFLIGHT_MASK;
	if (n == 0) {
		s->busy_start = q_ts;
		if (s->idle_start && q_ts > s->idle_start) {
			s->think_ns += q_ts - s->idle_start;
			s->thinks++;
			bw_hist_inc(s->think_hist, (q_ts - s->idle_start) >> BW_THINK_SHIFT,
				 BW_THINK_BUCKETS);
		}
	}
	if (s->max_epoch != epoch) {
		s->max_epoch = epoch;
		s->max_depth = n + 1;
	} else if (n + 1 > s->max_depth) {
		s->max_depth = n + 1;
	}
	s->queued++;
	if (is_sync(flags))
		s->sync_ios++;
	end = s->next_sector;
	if (end) {
		dist = sector > end ? sector - end : end - sector;
		s->seek_sectors += dist;
		if (!dist)
			s->seq_ios++;
	}
	s->next_sector = sector + (len >> 9);
}

static __always_inline void on_queue(struct request *rq)
{
	__u64 key = (__u64)rq, now, start;
	struct bw_srq r = {}, *old;
	struct bw_stream *s;

	r.key.dev = bw_disk_dev(bw_rq_disk(rq));
	if (filter_on && !bpf_map_lookup_elem(&watched, &r.key.dev))
		return;
	start = BPF_CORE_READ(rq, start_time_ns);
	now = bpf_ktime_get_ns();
	old = bpf_map_lookup_elem(&srqs, &key);
	if (old) {
		/* Fallback: a second insert or issue of a request that has its Q. */
		if (fallback_q && old->start_ns == start)
			return;
		/* Its previous life never reached C for us: let it go. */
		__sync_fetch_and_add(&stale, 1);
		stream_leave(old, now, 0, false);
	}
	r.key.by = stream_by;
	r.key.id = stream_by == BW_STREAMS_CGROUP ? bpf_get_current_cgroup_id() :
						    bpf_get_current_pid_tgid() >> 32;
	r.start_ns = start;
	r.q_ts = fallback_q && start && start <= now ? start : now;
	s = stream_get(&r.key);
	if (!s || bpf_map_update_elem(&srqs, &key, &r, BPF_ANY)) {
		__sync_fetch_and_add(&no_room, 1);
		if (old)
			bpf_map_delete_elem(&srqs, &key);
		return;
	}
	__sync_fetch_and_add(&q_events, 1);
	stream_queue(s, r.q_ts, BPF_CORE_READ(rq, __sector), BPF_CORE_READ(rq, __data_len),
		     BPF_CORE_READ(rq, cmd_flags));
}

/* C (completed) or merged away: the request leaves its stream. */
static __always_inline void on_leave(struct request *rq, __u32 nr_bytes, bool completed)
{
	__u64 key = (__u64)rq;
	struct bw_srq *r;

	/* A partial completion keeps the request in flight. */
	if (completed && nr_bytes < BPF_CORE_READ(rq, __data_len))
		return;
	r = bpf_map_lookup_elem(&srqs, &key);
	if (!r)
		return;
	if (completed)
		__sync_fetch_and_add(&c_events, 1);
	stream_leave(r, bpf_ktime_get_ns(), nr_bytes, completed);
	bpf_map_delete_elem(&srqs, &key);
}

static __always_inline void handle_queue(struct request *rq, __u64 *ctx)
{
	on_queue(rq);
}

static __always_inline void handle_complete(struct request *rq, __u64 *ctx)
{
	on_leave(rq, (__u32)ctx[2], true);
}

static __always_inline void handle_merge(struct request *rq, __u64 *ctx)
{
	on_leave(rq, 0, false);
}

/*
 * Each tracepoint gets a tp_btf and a raw_tp program from one handler; the
 * loader keeps one of each pair, as for the core.  Reads go through
 * BPF_CORE_READ in both: a hash lookup dominates here anyway.
 */
#define STREAM_PROGS(tp, name, qarg, handler)					\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	handler((void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]), ctx);	\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	handler((void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]), ctx);	\
	return 0;								\
}

STREAM_PROGS(block_io_start, bws_io_start, false, handle_queue)
STREAM_PROGS(block_rq_insert, bws_insert, true, handle_queue)
STREAM_PROGS(block_rq_issue, bws_issue, true, handle_queue)
STREAM_PROGS(block_rq_complete, bws_complete, false, handle_complete)
STREAM_PROGS(block_rq_merge, bws_merge, true, handle_merge)
