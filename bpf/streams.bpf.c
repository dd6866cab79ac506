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
 * Request structs are a fixed pool per tag set, so an entry is kept after C
 * and rewritten in place at its request's next Q: one lookup at Q and one at
 * C, no insert or delete once warm (an LRU drops the entries of devices
 * gone).  tp_btf programs read the request with plain loads.
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
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
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

/* What Q needs from a request, read the cheap way per attach type. */
struct rq_view {
	__u64 start_ns;
	__u64 sector;
	__u32 dev;
	__u32 len;
	__u32 flags;
};

/* tp_btf: the request is a trusted pointer, plain loads suffice. */
static __always_inline void view_btf(struct request *rq, struct rq_view *v)
{
	struct request___has_rq_disk *old = (void *)rq;
	struct request_queue___has_disk *q = (void *)rq->q;
	struct gendisk *disk;

	if (bpf_core_field_exists(old->rq_disk))
		disk = old->rq_disk;
	else
		disk = q->disk;
	v->dev = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	v->start_ns = rq->start_time_ns;
	v->sector = rq->__sector;
	v->len = rq->__data_len;
	v->flags = rq->cmd_flags;
}

/* raw_tp: every load goes through a probe read. */
static __always_inline void view_raw(struct request *rq, struct rq_view *v)
{
	v->dev = bw_disk_dev(bw_rq_disk(rq));
	v->start_ns = BPF_CORE_READ(rq, start_time_ns);
	v->sector = BPF_CORE_READ(rq, __sector);
	v->len = BPF_CORE_READ(rq, __data_len);
	v->flags = BPF_CORE_READ(rq, cmd_flags);
}

/*
 * The per-request entry stays in the map after C (q_ts 0: not in flight)
 * and is rewritten in place at the request's next Q: request structs are
 * a fixed pool per tag set, so steady state costs one lookup at Q and one
 * at C, no insert or delete.  The LRU drops entries of devices gone.
 */
static __always_inline void on_queue(struct request *rq, const struct rq_view *v)
{
	__u64 key = (__u64)rq, now;
	struct bw_skey skey;
	struct bw_srq *r, fresh = {};
	struct bw_stream *s;

	if (filter_on && !bpf_map_lookup_elem(&watched, &v->dev))
		return;
	now = bpf_ktime_get_ns();
	r = bpf_map_lookup_elem(&srqs, &key);
	if (r && r->q_ts) {
		/* Fallback: a second insert or issue of a request that has its Q. */
		if (fallback_q && r->start_ns == v->start_ns)
			return;
		/* Its previous life never reached C for us: let it go. */
		__sync_fetch_and_add(&stale, 1);
		stream_leave(r, now, 0, false);
		r->q_ts = 0;
	}
	skey.dev = v->dev;
	skey.by = stream_by;
	skey.id = stream_by == BW_STREAMS_CGROUP ? bpf_get_current_cgroup_id() :
						   bpf_get_current_pid_tgid() >> 32;
	s = stream_get(&skey);
	if (!r) {	/* the first Q of this request struct: an LRU insert never lacks room */
		bpf_map_update_elem(&srqs, &key, &fresh, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&srqs, &key);
	}
	if (!s || !r)
		goto no_room;
	r->key = skey;
	r->start_ns = v->start_ns;
	r->q_ts = fallback_q && v->start_ns && v->start_ns <= now ? v->start_ns : now;
	__sync_fetch_and_add(&q_events, 1);
	stream_queue(s, r->q_ts, v->sector, v->len, v->flags);
	return;
no_room:
	__sync_fetch_and_add(&no_room, 1);
}

/* C (completed) or merged away: the request leaves its stream. */
static __always_inline void on_leave(struct request *rq, __u32 len, __u32 nr_bytes,
				     bool completed)
{
	__u64 key = (__u64)rq;
	struct bw_srq *r;

	/* A partial completion keeps the request in flight. */
	if (completed && nr_bytes < len)
		return;
	r = bpf_map_lookup_elem(&srqs, &key);
	if (!r || !r->q_ts)
		return;
	if (completed)
		__sync_fetch_and_add(&c_events, 1);
	stream_leave(r, bpf_ktime_get_ns(), nr_bytes, completed);
	r->q_ts = 0;
}

/*
 * Each tracepoint gets a tp_btf and a raw_tp program; the loader keeps one
 * of each pair, as for the core.  Before 5.11 insert/issue/merge passed
 * (q, rq); complete never had q.
 */
#define RQ_ARG(ctx, qarg)							\
	((struct request *)(qarg && rq_arg_second ? CTX_ARG(ctx, 8) : CTX_ARG(ctx, 0)))

#define Q_PROGS(tp, name, qarg)							\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	struct request *rq = RQ_ARG(ctx, qarg);					\
	struct rq_view v;							\
										\
	view_btf(rq, &v);							\
	on_queue(rq, &v);							\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	struct request *rq = RQ_ARG(ctx, qarg);					\
	struct rq_view v;							\
										\
	view_raw(rq, &v);							\
	on_queue(rq, &v);							\
	return 0;								\
}

Q_PROGS(block_io_start, bws_io_start, false)
Q_PROGS(block_rq_insert, bws_insert, true)
Q_PROGS(block_rq_issue, bws_issue, true)

SEC("tp_btf/block_rq_complete")
int bws_complete(__u64 *ctx)
{
	struct request *rq = RQ_ARG(ctx, false);

	on_leave(rq, rq->__data_len, (__u32)ctx[2], true);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int bws_complete_raw(__u64 *ctx)
{
	struct request *rq = RQ_ARG(ctx, false);

	on_leave(rq, BPF_CORE_READ(rq, __data_len), (__u32)ctx[2], true);
	return 0;
}

SEC("tp_btf/block_rq_merge")
int bws_merge(__u64 *ctx)
{
	on_leave(RQ_ARG(ctx, true), 0, 0, false);
	return 0;
}

SEC("raw_tp/block_rq_merge")
int bws_merge_raw(__u64 *ctx)
{
	on_leave(RQ_ARG(ctx, true), 0, 0, false);
	return 0;
}
