// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise record: every request event (Q, D, C, requeue, merges) of the
 * watched devices into a BPF ring buffer, one fixed-size struct bw_trec
 * each, copied by user space unchanged into the trace file.
 *
 * Design.  This object is its own concern: it is loaded only by `blkwise
 * record`, so recording costs nothing when nobody records, and the core
 * object's hot path stays as it is.
 *
 * - No per-request state here: pairing Q, D and C is analyze's job, offline.
 *   A request is named by its address (unique while it lives) and carries
 *   rq->start_time_ns, the kernel's allocation stamp, so queue time has
 *   diskstats' origin even where no Q event is seen (as in bpf/core.bpf.c).
 * - The device of a request comes from a small array indexed by the
 *   request_queue id, filled on the first event of a queue: no hash lookup
 *   per event (bpf/qdev.bpf.h, shared with the streams' Q).  The device
 *   filter is consulted only then.
 * - A full ring buffer drops the event and counts it in a per-CPU counter
 *   user space writes into the file: never silent.
 * - Wakeups are batched: user space is woken only when a quarter of the
 *   buffer is waiting, and polls on a short timeout otherwise, so an event
 *   costs a reserve and a submit, not a wakeup.
 * - A process's name goes out once (BW_EV_COMM) before its first event,
 *   found new through an LRU hash, which a CPU asks only when the process
 *   is not the last one it named.
 * - Q, I, G and bio merge events carry the cgroup a stream by cgroup
 *   charges them to, by the rule `stat --streams=cgroup` follows
 *   (bw_stream_owner, bpf/rq.bpf.h), so analyze's streams by cgroup are
 *   stat's; D, C, requeue and request merge events carry 0, which keeps
 *   the blkg's loads off the dispatch and completion path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "core.h"
#include "rq.bpf.h"
#include "qdev.bpf.h"
#include "record.h"
#include "skip.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile bool bio_merge_old = false;	/* pre-5.11 bio merges: (q, rq, bio) */
const volatile bool getrq_old = false;		/* pre-5.11 getrq: (q, bio, rw) */
const volatile __u64 wakeup_at = 1 << 20;	/* bytes waiting before a wakeup */
const volatile __u32 skip = 0;			/* BW_SKIP_R_*: the bench's profile only */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} named SEC(".maps");

/* Per CPU, the last process named: its next events need no lookup in named. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} last_named SEC(".maps");

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *d = bpf_map_lookup_elem(&drops, &zero);

	if (d)
		(*d)++;
}

static __always_inline void submit(struct bw_trec *r)
{
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_at ?
		      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(r, flags);
}

static __always_inline struct bw_trec *reserve(__u8 type, __u32 dev, __u64 now)
{
	struct bw_trec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count_drop();
		return NULL;
	}
	r->ts = now;
	r->type = type;
	r->dev = dev;
	r->cpu = bpf_get_smp_processor_id();
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->error = 0;
	r->alloc_ns = 0;
	r->nr_seg = 0;
	r->tag = BW_TAG_NONE;
	r->hwq = 0;
	r->xflags = r->pad[0] = r->pad[1] = 0;
	r->cgroup = 0;
	return r;
}

/* Before a process's first event: its name, once. */
static __always_inline void name_process(__u32 dev, __u64 now)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0, *last;
	struct bw_trec *r;
	__u8 one = 1;

	if (skip & BW_SKIP_R_COMM)
		return;
	last = bpf_map_lookup_elem(&last_named, &zero);
	if (last && *last == tgid && tgid)
		return;
	if (!bpf_map_lookup_elem(&named, &tgid)) {
		r = reserve(BW_EV_COMM, dev, now);
		if (!r)
			return;
		bpf_get_current_comm(r->comm, sizeof(r->comm));
		r->bytes = r->flags = 0;
		submit(r);
		bpf_map_update_elem(&named, &tgid, &one, BPF_ANY);
	}
	if (last)
		*last = tgid;
}

/*
 * The request's fields a record carries (bpf/rq.bpf.h); its owner at Q and
 * I only, where a stream takes it (analyze's replay, as streams.bpf.c):
 * the blkg's loads stay off the dispatch and completion path.
 */
#define RQV (BW_RQV_Q | BW_RQV_QID | BW_RQV_HWQ | BW_RQV_TAG | BW_RQV_FLAGS | BW_RQV_LEN | \
	     BW_RQV_SEG | BW_RQV_START | BW_RQV_SECTOR)
#define RQV_OWNED (RQV | BW_RQV_OWNER)

/* The record's cgroup, and whether it is the current task's. */
static __always_inline void set_owner(struct bw_trec *r, __u64 owner, __u32 root)
{
	bool task;

	r->cgroup = bw_stream_owner(owner, root, &task);
	if (task)
		r->xflags |= BW_X_OWNER_TASK;
}

static __always_inline void emit_rq(__u8 type, struct request *rq, const struct bw_rqv *v,
				    __u32 bytes, int error)
{
	__u32 dev = bw_qdev_of(v->q, v->qid, rq, NULL);
	struct bw_trec *r;
	__u64 now;

	if (!dev || (skip & BW_SKIP_R_BODY))
		return;
	if ((skip & BW_SKIP_R_Q) && type == BW_EV_QUEUE)
		return;
	now = bpf_ktime_get_ns();
	if (type == BW_EV_QUEUE || type == BW_EV_INSERT)
		name_process(dev, now);
	r = reserve(type, dev, now);
	if (!r)
		return;
	r->rq = (__u64)rq;
	r->sector = v->sector;
	r->bytes = bytes;
	r->flags = v->flags;
	r->error = error;
	r->nr_seg = v->nr_seg;
	r->tag = v->tag >= 0 && v->tag < BW_TAG_NONE ? v->tag : BW_TAG_NONE;
	r->hwq = v->hwq;
	if (type == BW_EV_ISSUE || type == BW_EV_COMPLETE)
		r->alloc_ns = v->start_ns;
	if (type == BW_EV_COMPLETE && bytes < v->data_len)
		r->xflags = BW_X_PARTIAL;
	if (type == BW_EV_COMPLETE &&
	    bw_empty_flush_write(rq, v, bw_op_of(v->flags) == BW_OP_WRITE, bytes))
		r->xflags = BW_X_EMPTY_FLUSH;
	if (type == BW_EV_QUEUE || type == BW_EV_INSERT)
		set_owner(r, v->owner, v->owner_root);
	submit(r);
}

static __always_inline void on_queue(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_QUEUE, rq, v, v->data_len, 0);
}

static __always_inline void on_insert(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_INSERT, rq, v, v->data_len, 0);
}

static __always_inline void on_issue(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_ISSUE, rq, v, v->data_len, 0);
}

static __always_inline void on_complete(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_COMPLETE, rq, v, (__u32)ctx[2], (int)ctx[1]);
}

static __always_inline void on_requeue(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_REQUEUE, rq, v, v->data_len, 0);
}

static __always_inline void on_rq_merge(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	emit_rq(BW_EV_RQ_MERGE, rq, v, v->data_len, 0);
}

static __always_inline void emit_bio(__u8 type, struct bio *bio)
{
	struct request_queue *q = BPF_CORE_READ(bw_bio_disk(bio), queue);
	__u32 dev = bw_qdev_of((__u64)q, BPF_CORE_READ(q, id), NULL, bio);
	struct bw_trec *r;
	__u64 now, owner;
	__u32 root;

	if (!dev)
		return;
	now = bpf_ktime_get_ns();
	if (type == BW_EV_GETRQ)
		name_process(dev, now);
	r = reserve(type, dev, now);
	if (!r)
		return;
	r->rq = 0;
	r->sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	r->bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	r->flags = BPF_CORE_READ(bio, bi_opf);
	owner = bw_bio_owner(bio, &root);
	set_owner(r, owner, root);
	submit(r);
}

static __always_inline void on_backmerge(struct bio *bio, __u64 *ctx)
{
	emit_bio(BW_EV_BACKMERGE, bio);
}

static __always_inline void on_frontmerge(struct bio *bio, __u64 *ctx)
{
	emit_bio(BW_EV_FRONTMERGE, bio);
}

static __always_inline void on_getrq(struct bio *bio, __u64 *ctx)
{
	emit_bio(BW_EV_GETRQ, bio);
}

BW_RQ_PAIR(block_io_start, bw_rec_io_start, false, RQV_OWNED, on_queue)
BW_RQ_PAIR(block_rq_insert, bw_rec_insert, true, RQV_OWNED, on_insert)
BW_RQ_PAIR(block_rq_issue, bw_rec_issue, true, RQV, on_issue)
BW_RQ_PAIR(block_rq_complete, bw_rec_complete, false, RQV, on_complete)
BW_RQ_PAIR(block_rq_requeue, bw_rec_requeue, true, RQV, on_requeue)
BW_RQ_PAIR(block_rq_merge, bw_rec_rq_merge, true, RQV, on_rq_merge)
BW_BIO_PROGS(block_bio_backmerge, bw_rec_backmerge, bio_merge_old, 16, on_backmerge)
BW_BIO_PROGS(block_bio_frontmerge, bw_rec_frontmerge, bio_merge_old, 16, on_frontmerge)
BW_BIO_PROGS(block_getrq, bw_rec_getrq, getrq_old, 8, on_getrq)
