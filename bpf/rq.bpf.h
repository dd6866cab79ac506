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
 * One handler, two programs.  Before 5.11 insert/issue/merge/requeue passed
 * (q, rq) (commit a54895fa057c, "block: remove the request_queue to argument
 * request based tracepoints"); complete and io_start never had q.  The
 * object defines `const volatile bool rq_arg_second`.
 */
#define BW_RQ_PROGS(tp, name, qarg, handler)					\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	struct request *rq = (void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]);	\
	struct bw_rqv v;							\
										\
	bw_rqv_btf(rq, &v);							\
	handler(rq, &v, ctx);							\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	struct request *rq = (void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]);	\
	struct bw_rqv v;							\
										\
	bw_rqv_raw(rq, &v);							\
	handler(rq, &v, ctx);							\
	return 0;								\
}

/*
 * A bio's tracepoint: the bio is the first argument since 5.11; before, it
 * was argument oldarg (getrq: (q, bio, rw); back/front merge: (q, rq, bio)).
 */
#define BW_BIO_PROGS(tp, name, oldarg, handler)					\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	handler((struct bio *)(rq_arg_second ? ctx[oldarg] : ctx[0]), ctx);	\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	handler((struct bio *)(rq_arg_second ? ctx[oldarg] : ctx[0]), ctx);	\
	return 0;								\
}

#endif /* BLKWISE_RQ_BPF_H */
