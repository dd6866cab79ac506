// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise streams: per device and submitter (a process, or a cgroup) the
 * depth, think time, seekiness and sync share a CFQ/BFQ-style scheduler
 * would see, attributed at Q: a process while it is current; a cgroup as
 * the kernel charges the request (its bio's blkg: owner_cgroup()).
 *
 * Design.  A concern of its own, loaded only with --streams, so the core
 * pays nothing for it otherwise.  Its programs are the Q (and merge) ones;
 * a request's C is the core's completion program, which takes the request
 * out of its stream with its own clock read (bpf/streams.bpf.h): one
 * program and one clock read per I/O fewer than a completion program here.
 * The rules a stream follows at Q and C are written once, in bpf/streams.h,
 * for BPF and for the replay of a trace.
 *
 * - A request's stream goes from Q to C in its entry of the core's
 *   per-request table (bpf/rqtab.bpf.h): claimed here at Q, issued by the
 *   core's D, freed by the core's C, so an entry never outlives its
 *   request (a table that evicted would leave its stream one request in
 *   flight forever), and D-to-C and Q-to-C share one cache line crossing
 *   between CPUs.  Q looks at all of a request's probes before claiming
 *   one, so a request whose C never reached us is found at its next Q: it
 *   leaves its stream (stale), its entry is reused and marked for the
 *   core's D, which counts the lost completion as it would have.
 * - The device of a queue, and whether it is watched, come from a small
 *   array indexed by the queue's id, filled at a queue's first Q
 *   (bpf/qdev.bpf.h): no hash lookup per Q for the device filter (the
 *   tuner always filters).
 * - Q time is a clock read at block_io_start.  The kernel's allocation
 *   stamp, rq->start_time_ns, would save it, but a synchronous reader's
 *   next request then shows no think time at all (its stamp does not
 *   follow its previous completion's clock read), and the tuner decides by
 *   think time.  The fallback, whose Q is a later insert or issue, uses the
 *   stamp, as the closest to the submission it has.
 * - Counters of rare events are per CPU.
 *
 * Q, where the request gets its stream:
 * - block_io_start (6.5+) fires for every request in blk_mq_bio_to_request,
 *   in the submitter's context.
 * - Before 6.5 there is no single event.  blk_mq_submit_bio (6.1) either
 *   plugs the request, hands it to the scheduler (block_rq_insert), or, with
 *   no scheduler, issues it directly (blk_mq_try_issue_directly, traced only
 *   as block_rq_issue); a plug is flushed by its task (blk_finish_plug, or
 *   schedule()), again through insert or direct issue.  So the fallback takes
 *   whichever of block_rq_insert and block_rq_issue sees a request first.
 *   A later insert or issue of the same request (requeue, dispatch after
 *   insert) finds its entry with the same allocation stamp and is ignored.
 *   What it gets wrong: a request the driver refused before starting it
 *   (BLK_STS_RESOURCE) goes onto the dispatch list untraced
 *   (blk_mq_request_bypass_insert) and is first seen when a kworker issues
 *   it: it is counted under that kworker.  (block_getrq, in the submitter's
 *   context on both, passes only the bio.)
 * - C is block_rq_complete, in the core (a partial completion keeps the
 *   request); a request merged into another leaves at block_rq_merge, here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "streams.bpf.h"
#include "qdev.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile bool fallback_q = false;		/* no block_io_start: insert or issue */
const volatile __u32 skip = 0;			/* BW_SKIP_S_*: the bench's profile only */

/* Written by user space. */
__u64 epoch;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_stream);
} stream_scratch SEC(".maps");

/* The request's fields Q reads (bpf/rq.bpf.h); merge reads only its key. */
#define RQV_Q (BW_RQV_KEY | BW_RQV_Q | BW_RQV_QID | BW_RQV_START | BW_RQV_SECTOR | \
	       BW_RQV_LEN | BW_RQV_FLAGS)

static __always_inline bool is_sync(__u32 cmd_flags)
{
	return (cmd_flags & 0xff) == 0 ||	/* REQ_OP_READ */
	       (cmd_flags & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)));
}

static __always_inline void count_no_room(struct bw_scount *sc)
{
	if (sc)
		sc->no_room++;
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

/*
 * Q's entry for the request in the core's table: its own, still there
 * (its last C never reached us, or, in the fallback, the core's D of this
 * same issue ran first, or this is a second insert or issue), else a free
 * one.  A request found issued and never completed is marked for the D
 * that follows (BW_RQ_D_LOST), as the core's D would have found it.
 */
static __always_inline struct bw_rq_state *q_entry(const struct bw_rqv *v, __u32 dev,
						   __u64 q_ts, struct bw_scount *sc, bool *dup)
{
	struct bw_rq_state *st;
	bool own;

	*dup = false;
	st = bw_rq_claim(v->rqk, &own, true, true);
	if (!st)
		return NULL;
	if (!own) {
		st->d = BW_RQ_D_NONE;
		st->q_ts = 0;
		return st;
	}
	/* Fallback: a second insert or issue of a request that has its Q. */
	if (fallback_q && st->q_ts == q_ts) {
		*dup = true;
		return NULL;
	}
	if (st->q_ts) {	/* its previous life never reached C for us: let it go */
		if (sc)
			sc->stale++;
		bw_streams_leave(st, dev, q_ts, 0, false, true);
	}
	if (!fallback_q && st->d != BW_RQ_D_NONE)
		st->d = BW_RQ_D_LOST;
	return st;
}

/*
 * The cgroup a stream is charged to (bw_stream_owner, bpf/rq.bpf.h: the
 * bio's blkg's where that is a cgroup v2 one, else the current task's),
 * counted either way (bw_scount).
 */
static __always_inline __u64 owner_cgroup(struct request *rq, struct bw_scount *sc)
{
	__u32 root;
	bool task;
	__u64 id = bw_stream_owner(bw_rq_owner(rq, &root), root, &task);

	if (sc && task)
		sc->owner_task++;
	else if (sc)
		sc->owner_bio++;
	return id;
}

static __always_inline void on_queue(struct request *rq, const struct bw_rqv *v)
{
	struct bw_rq_state *st;
	struct bw_scount *sc;
	struct bw_stream *s;
	struct bw_skey skey;
	__u64 q_ts;
	bool dup;

	skey.dev = bw_qdev_of(v->q, v->qid, rq, NULL);
	if (!skey.dev)
		return;
	if (skip & BW_SKIP_S_BODY)
		return;
	if (fallback_q || (skip & BW_SKIP_S_CLOCK))
		q_ts = v->start_ns ?: bpf_ktime_get_ns();
	else
		q_ts = bpf_ktime_get_ns();
	sc = bw_scount();
	st = q_entry(v, skey.dev, q_ts, sc, &dup);
	if (!st) {
		if (!dup)
			count_no_room(sc);
		return;
	}
	if (skip & BW_SKIP_S_STREAM)
		return;
	skey.by = stream_by;
	skey.id = stream_by == BW_STREAMS_CGROUP ? owner_cgroup(rq, sc) :
						   bpf_get_current_pid_tgid() >> 32;
	s = stream_get(&skey);
	if (!s) {
		count_no_room(sc);
		return;
	}
	st->sid = skey.id;
	st->q_ts = q_ts;
	if (sc)
		sc->q_events++;
	bw_stream_enter(s, q_ts, v->sector, v->data_len, is_sync(v->flags), epoch);
}

/* A request merged into another before its D: it leaves its stream, uncompleted. */
static __always_inline void on_merge(struct request *rq, __u64 key)
{
	struct bw_rq_state *st = bw_rq_find(key);
	struct bw_rqv v;

	if (!st || !st->q_ts)
		return;
	bw_rqv_raw(rq, &v, BW_RQV_Q | BW_RQV_QID);	/* rare: probe reads in either program */
	bw_streams_leave(st, bw_qdev_of(v.q, v.qid, rq, NULL), bpf_ktime_get_ns(), 0, false, true);
	if (st->d > BW_RQ_D_LOST)	/* issued: the core's C frees it */
		return;
	barrier();	/* read before the entry is free for another request */
	st->rq = 0;
}

/* The Q and merge handlers as bpf/rq.bpf.h's BW_RQ_PROG calls them. */
static __always_inline void q_args(struct request *rq, struct bw_rqv *v, __u64 *ctx)
{
	on_queue(rq, v);
}

static __always_inline void merge_args(struct request *rq, struct bw_rqv *v, __u64 *ctx)
{
	on_merge(rq, v->rqk);
}

/*
 * Each tracepoint gets a tp_btf and a raw_tp program (bpf/rq.bpf.h); the
 * loader keeps one of each pair, as for the core.  Merge reads only the
 * request's key.
 */
BW_RQ_PAIR(block_io_start, bw_st_io_start, false, RQV_Q, q_args)
BW_RQ_PAIR(block_rq_insert, bw_st_insert, true, RQV_Q, q_args)
BW_RQ_PAIR(block_rq_issue, bw_st_issue, true, RQV_Q, q_args)
BW_RQ_PAIR(block_rq_merge, bw_st_merge, true, BW_RQV_KEY, merge_args)
