/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a request on the block tracepoints, shared by the BPF objects:
 * tp_btf programs get a trusted pointer (plain loads), raw_tp programs
 * (kernels whose tracepoints have no BTF) read through probe reads, and
 * BW_RQ_PROGS makes the pair from one handler.  The loader keeps one of each.
 */
#ifndef BLKWISE_RQ_BPF_H
#define BLKWISE_RQ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"

/* What a handler needs from a request. */
struct bw_rqv {
	__u64 q;
	__u64 start_ns;		/* rq->start_time_ns: allocation, diskstats' origin */
	__u64 sector;
	__u32 qid;
	__u32 hwq;
	__s32 tag;		/* the allocation tag: scheduler tag, else driver tag */
	__u32 flags;		/* cmd_flags */
	__u32 data_len;
	__u32 nr_seg;
};

static __always_inline void bw_rqv_btf(struct request *rq, struct bw_rqv *v)
{
	struct request_queue *q = rq->q;
	struct blk_mq_hw_ctx *h = rq->mq_hctx;

	v->q = (__u64)q;
	v->qid = q->id;
	v->hwq = h ? h->queue_num : 0;
	v->tag = rq->internal_tag >= 0 ? rq->internal_tag : rq->tag;
	v->flags = rq->cmd_flags;
	v->data_len = rq->__data_len;
	v->nr_seg = rq->nr_phys_segments;
	v->start_ns = rq->start_time_ns;
	v->sector = rq->__sector;
}

static __always_inline void bw_rqv_raw(struct request *rq, struct bw_rqv *v)
{
	int itag = BPF_CORE_READ(rq, internal_tag);

	v->q = (__u64)BPF_CORE_READ(rq, q);
	v->qid = BPF_CORE_READ(rq, q, id);
	v->hwq = BPF_CORE_READ(rq, mq_hctx, queue_num);
	v->tag = itag >= 0 ? itag : BPF_CORE_READ(rq, tag);
	v->flags = BPF_CORE_READ(rq, cmd_flags);
	v->data_len = BPF_CORE_READ(rq, __data_len);
	v->nr_seg = BPF_CORE_READ(rq, nr_phys_segments);
	v->start_ns = BPF_CORE_READ(rq, start_time_ns);
	v->sector = BPF_CORE_READ(rq, __sector);
}

/*
 * One program on a request tracepoint: the request read into a vtype by
 * view, then handler(rq, &v, ctx, extra arguments).  Before 5.11
 * insert/issue/merge/requeue passed (q, rq) (commit a54895fa057c, "block:
 * remove the request_queue to argument request based tracepoints");
 * complete and io_start never had q.  The object defines
 * `const volatile bool rq_arg_second`.
 */
#define BW_RQ_PROG(sec, name, qarg, vtype, view, handler, ...)			\
SEC(sec)									\
int name(__u64 *ctx)								\
{										\
	struct request *rq;							\
	vtype v;								\
										\
	rq = (void *)(qarg && rq_arg_second ? CTX_ARG(ctx, 8) : CTX_ARG(ctx, 0));	\
	view(rq, &v);								\
	handler(rq, &v, ctx, ##__VA_ARGS__);					\
	return 0;								\
}

/* One handler, two programs: tp_btf and raw_tp.  The loader keeps one. */
#define BW_RQ_PROGS(tp, name, qarg, handler)					\
	BW_RQ_PROG("tp_btf/" #tp, name, qarg, struct bw_rqv, bw_rqv_btf, handler)	\
	BW_RQ_PROG("raw_tp/" #tp, name##_raw, qarg, struct bw_rqv, bw_rqv_raw, handler)

/*
 * A bio's tracepoint: the bio is the first argument since 5.11; before, it
 * was at byte offset oldoff (getrq: (q, bio, rw), 8; back/front merge:
 * (q, rq, bio), 16).  old is the object's rodata flag for that prototype,
 * read from BTF by the loader: the request tracepoints' change was
 * backported to 5.10.137, the bio ones' was not, so rq_arg_second does not
 * tell.
 */
#define BW_BIO_PROG(sec, name, old, oldoff, handler)				\
SEC(sec)									\
int name(__u64 *ctx)								\
{										\
	struct bio *bio;							\
										\
	bio = (void *)(old ? CTX_ARG(ctx, oldoff) : CTX_ARG(ctx, 0));		\
	handler(bio, ctx);							\
	return 0;								\
}

#define BW_BIO_PROGS(tp, name, old, oldoff, handler)				\
	BW_BIO_PROG("tp_btf/" #tp, name, old, oldoff, handler)			\
	BW_BIO_PROG("raw_tp/" #tp, name##_raw, old, oldoff, handler)

#endif /* BLKWISE_RQ_BPF_H */
