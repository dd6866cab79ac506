/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a request on the block tracepoints, shared by the BPF objects:
 * tp_btf programs get a trusted pointer (plain loads), raw_tp programs
 * (kernels whose tracepoints have no BTF) read through probe reads, and
 * BW_RQ_PAIR makes the pair from one handler.  The loader keeps one of each.
 */
#ifndef BLKWISE_RQ_BPF_H
#define BLKWISE_RQ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"

/*
 * What a handler needs from a request, one reader for every object.  A
 * program names the fields it wants (BW_RQV_*, a constant: the reader's
 * other loads, and on raw_tp their probe reads, are dropped at compile
 * time), so each object pays for its own fields only.
 */
struct bw_rqv {
	__u64 rqk;		/* the request, as a key (BW_RQ_KEY) */
	__u64 qk;		/* its queue, as a key */
	__u64 q;		/* its queue's address, to compare and store */
	__u64 start_ns;		/* rq->start_time_ns: allocation, diskstats' origin */
	__u64 sector;
	__u64 io_start_ns;	/* rq->io_start_time_ns: issue, where the queue keeps stats; else 0 */
	__u32 qid;
	__u32 hwq;
	__s32 tag;		/* the allocation tag: scheduler tag, else driver tag */
	__u32 flags;		/* cmd_flags */
	__u32 data_len;
	__u32 nr_seg;
	__u64 owner;		/* the cgroup of the first bio's blkg (kn id); 0: none */
	__u32 owner_root;	/* its hierarchy's id: 0 is cgroup v2's */
};

#define BW_RQV_KEY	(1u << 0)	/* rqk */
#define BW_RQV_QK	(1u << 1)	/* qk */
#define BW_RQV_Q	(1u << 2)	/* q */
#define BW_RQV_QID	(1u << 3)
#define BW_RQV_HWQ	(1u << 4)
#define BW_RQV_TAG	(1u << 5)
#define BW_RQV_FLAGS	(1u << 6)
#define BW_RQV_LEN	(1u << 7)	/* data_len */
#define BW_RQV_SEG	(1u << 8)	/* nr_seg */
#define BW_RQV_START	(1u << 9)
#define BW_RQV_SECTOR	(1u << 10)
#define BW_RQV_IOSTART	(1u << 11)
#define BW_RQV_OWNER	(1u << 12)	/* owner, owner_root */

/*
 * The cgroup a request is charged to: its first bio's blkg's, the owner
 * io.stat, io.max and io.latency use (for a buffered write, the cgroup that
 * dirtied the page, set by wbc_init_bio(), not the flusher that submits
 * it), in the hierarchy of the io controller (*root: 0 for cgroup v2).  0
 * where the request has no bio or no blkg (a flush), or the kernel no blkg
 * at all (CONFIG_BLK_CGROUP off).  bw_rqv_btf reads the same chain by plain
 * loads.
 */
static __always_inline __u64 bw_blkg_owner(struct blkcg_gq *blkg, __u32 *root)
{
	struct cgroup *cg;

	*root = 0;
	if (!blkg)
		return 0;
	cg = BPF_CORE_READ(blkg, blkcg, css.cgroup);
	if (!cg)
		return 0;
	*root = BPF_CORE_READ(cg, root, hierarchy_id);
	return BPF_CORE_READ(cg, kn, id);
}

static __always_inline __u64 bw_rq_owner(struct request *rq, __u32 *root)
{
	*root = 0;
	if (!bpf_core_field_exists(((struct bio *)0)->bi_blkg))
		return 0;
	return bw_blkg_owner(BPF_CORE_READ(rq, bio, bi_blkg), root);
}

/* The same for a bio not yet in a request (a merge, a request's allocation). */
static __always_inline __u64 bw_bio_owner(struct bio *bio, __u32 *root)
{
	*root = 0;
	if (!bpf_core_field_exists(((struct bio *)0)->bi_blkg))
		return 0;
	return bw_blkg_owner(BPF_CORE_READ(bio, bi_blkg), root);
}

/*
 * The cgroup a stream by cgroup is, for a request of owner (in hierarchy
 * root): the owner where it is a cgroup v2 one (root 0); else the current
 * task's v2 cgroup (*task set): the request has no bio or no blkg (a
 * flush), the kernel has no blkg (CONFIG_BLK_CGROUP off), or the io
 * controller is on a v1 hierarchy (a v1 cgroup's id is another tree's).
 * Meant for a submitter's event (Q, a request's allocation), where the
 * task is current.  The rule of bpf/streams.bpf.c and of record's trace.
 */
static __always_inline __u64 bw_stream_owner(__u64 owner, __u32 root, bool *task)
{
	*task = !owner || root;
	return *task ? bpf_get_current_cgroup_id() : owner;
}

/*
 * A kernel address as a number to hash.  A tp_btf argument stays a pointer
 * to the verifier, which allows it no arithmetic but the difference of two
 * pointers: its key is its distance from BW_RQ_KEY_BASE, the address of a
 * map the object defines before including this header (bpf/rqtab.bpf.h's
 * per-request table where objects share keys: the same map, so the same
 * address, in each).  A raw_tp argument is a number: its key is itself.
 * The keys of the two kinds of program never meet in one load.
 */
#ifdef BW_RQ_KEY_BASE
#define BW_RQ_KEY_BTF(p) ((__u64)(p) - (__u64)(BW_RQ_KEY_BASE))
#else	/* an object without a base asks for no key: if it does, it does not build */
extern __u64 bw_rq_key_needs_a_base(void)
	__attribute__((error("a tp_btf key needs BW_RQ_KEY_BASE defined before bpf/rq.bpf.h")));
#define BW_RQ_KEY_BTF(p) bw_rq_key_needs_a_base()
#endif
#define BW_RQ_KEY_RAW(p) ((__u64)(p))

/* tp_btf: the request is a trusted pointer, plain loads suffice. */
static __always_inline void bw_rqv_btf(struct request *rq, struct bw_rqv *v, const __u32 want)
{
	struct request_queue *q = rq->q;
	struct blk_mq_hw_ctx *h = rq->mq_hctx;

	if (want & BW_RQV_KEY)
		v->rqk = BW_RQ_KEY_BTF(rq);
	if (want & BW_RQV_QK)
		v->qk = BW_RQ_KEY_BTF(q);
	if (want & BW_RQV_Q)
		v->q = (__u64)q;
	if (want & BW_RQV_QID)
		v->qid = q->id;
	if (want & BW_RQV_HWQ)
		v->hwq = h ? h->queue_num : 0;
	if (want & BW_RQV_TAG)
		v->tag = rq->internal_tag >= 0 ? rq->internal_tag : rq->tag;
	if (want & BW_RQV_FLAGS)
		v->flags = rq->cmd_flags;
	if (want & BW_RQV_LEN)
		v->data_len = rq->__data_len;
	if (want & BW_RQV_SEG)
		v->nr_seg = rq->nr_phys_segments;
	if (want & BW_RQV_START)
		v->start_ns = rq->start_time_ns;
	if (want & BW_RQV_SECTOR)
		v->sector = rq->__sector;
	if (want & BW_RQV_IOSTART)
		v->io_start_ns = rq->io_start_time_ns;
	if (want & BW_RQV_OWNER) {
		struct bio *bio = rq->bio;
		struct blkcg_gq *blkg = NULL;
		struct cgroup *cg = NULL;

		if (bio && bpf_core_field_exists(bio->bi_blkg))
			blkg = bio->bi_blkg;
		if (blkg)
			cg = blkg->blkcg->css.cgroup;
		v->owner = cg ? cg->kn->id : 0;
		v->owner_root = cg ? cg->root->hierarchy_id : 0;
	}
}

/* raw_tp: every load is a probe read, the queue's address read once. */
static __always_inline void bw_rqv_raw(struct request *rq, struct bw_rqv *v, const __u32 want)
{
	struct request_queue *q = NULL;
	int itag;

	if (want & (BW_RQV_QK | BW_RQV_Q | BW_RQV_QID))
		q = BPF_CORE_READ(rq, q);
	if (want & BW_RQV_KEY)
		v->rqk = BW_RQ_KEY_RAW(rq);
	if (want & BW_RQV_QK)
		v->qk = BW_RQ_KEY_RAW(q);
	if (want & BW_RQV_Q)
		v->q = (__u64)q;
	if (want & BW_RQV_QID)
		v->qid = BPF_CORE_READ(q, id);
	if (want & BW_RQV_HWQ)
		v->hwq = BPF_CORE_READ(rq, mq_hctx, queue_num);
	if (want & BW_RQV_TAG) {
		itag = BPF_CORE_READ(rq, internal_tag);
		v->tag = itag >= 0 ? itag : BPF_CORE_READ(rq, tag);
	}
	if (want & BW_RQV_FLAGS)
		v->flags = BPF_CORE_READ(rq, cmd_flags);
	if (want & BW_RQV_LEN)
		v->data_len = BPF_CORE_READ(rq, __data_len);
	if (want & BW_RQV_SEG)
		v->nr_seg = BPF_CORE_READ(rq, nr_phys_segments);
	if (want & BW_RQV_START)
		v->start_ns = BPF_CORE_READ(rq, start_time_ns);
	if (want & BW_RQV_SECTOR)
		v->sector = BPF_CORE_READ(rq, __sector);
	if (want & BW_RQV_IOSTART)
		v->io_start_ns = BPF_CORE_READ(rq, io_start_time_ns);
	if (want & BW_RQV_OWNER)
		v->owner = bw_rq_owner(rq, &v->owner_root);
}

/*
 * One program on a request tracepoint: the fields want of the request read
 * by reader (bw_rqv_btf or bw_rqv_raw), then handler(rq, &v, ctx, extra
 * arguments).  Before 5.11 insert/issue/merge/requeue passed (q, rq)
 * (commit a54895fa057c, "block: remove the request_queue to argument
 * request based tracepoints"); complete and io_start never had q.  The
 * object defines `const volatile bool rq_arg_second`.
 */
#define BW_RQ_PROG(sec, name, qarg, reader, want, handler, ...)		\
SEC(sec)									\
int name(__u64 *ctx)								\
{										\
	struct request *rq;							\
	struct bw_rqv v;							\
										\
	rq = (void *)(qarg && rq_arg_second ? CTX_ARG(ctx, 8) : CTX_ARG(ctx, 0));	\
	reader(rq, &v, want);							\
	handler(rq, &v, ctx, ##__VA_ARGS__);					\
	return 0;								\
}

/*
 * One handler, two programs: tp_btf (name) and raw_tp (name_raw), each
 * reading the fields want its own way.  The loader keeps one
 * (bw_prog_pair).
 */
#define BW_RQ_PAIR(tp, name, qarg, want, handler, ...)				\
	BW_RQ_PROG("tp_btf/" #tp, name, qarg, bw_rqv_btf, want, handler, ##__VA_ARGS__)	\
	BW_RQ_PROG("raw_tp/" #tp, name##_raw, qarg, bw_rqv_raw, want, handler, ##__VA_ARGS__)

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

/*
 * The core's and the light tier's per-device objects: four programs per
 * request tracepoint from one handler, tp_btf and raw_tp, each with fetch
 * atomics and without (before 5.12, which refuses an object holding them
 * anywhere); the loader keeps one.  The handler's last argument is fetch.
 */
#define BW_RQ_PROGS4(tp, name, qarg, want, handler)					\
	BW_RQ_PROG("tp_btf/" #tp, name, qarg, bw_rqv_btf, want, handler, true)		\
	BW_RQ_PROG("raw_tp/" #tp, name##_raw, qarg, bw_rqv_raw, want, handler, true)	\
	BW_RQ_PROG("tp_btf/" #tp, name##_nf, qarg, bw_rqv_btf, want, handler, false)	\
	BW_RQ_PROG("raw_tp/" #tp, name##_raw_nf, qarg, bw_rqv_raw, want, handler, false)

/*
 * The bio merge tracepoints, four programs each as above: handler(bio, qk,
 * fetch), qk the bio's queue as a key, as the request programs make it.
 * The bio is at byte 16 before 5.11's (bio) prototype: the object's
 * rodata bio_merge_arg is 2 there.
 */
#define BW_BIO_MERGE_PROG(sec, name, qk, handler, fetch)			\
SEC(sec)									\
int name(__u64 *ctx)								\
{										\
	struct bio *bio;							\
										\
	bio = (void *)(bio_merge_arg == 2 ? CTX_ARG(ctx, 16) : CTX_ARG(ctx, 0));	\
	handler(bio, qk, fetch);						\
	return 0;								\
}

#define BW_BIO_QK_BTF BW_RQ_KEY_BTF(bw_bio_disk_btf(bio)->queue)
#define BW_BIO_QK_RAW BW_RQ_KEY_RAW(BPF_CORE_READ(bw_bio_disk(bio), queue))
#define BW_BIO_MERGE_PROGS4(tp, name, handler)					\
	BW_BIO_MERGE_PROG("tp_btf/" #tp, name, BW_BIO_QK_BTF, handler, true)		\
	BW_BIO_MERGE_PROG("raw_tp/" #tp, name##_raw, BW_BIO_QK_RAW, handler, true)	\
	BW_BIO_MERGE_PROG("tp_btf/" #tp, name##_nf, BW_BIO_QK_BTF, handler, false)	\
	BW_BIO_MERGE_PROG("raw_tp/" #tp, name##_raw_nf, BW_BIO_QK_RAW, handler, false)

/*
 * A completion with no issue that diskstats counts: an empty PREFLUSH write
 * (an fsync's blkdev_issue_flush) is never issued itself, the flush
 * machinery issues a flush request in its place, then completes the write,
 * and diskstats counts it as one.  Its bio has no pages at all (bi_io_vec
 * NULL), which tells it from a data write of a flush sequence, whose last
 * completion comes again with no bytes left, after the one that counted it.
 * write: the request's op is a write (bpf/core.h, bw_op_of).
 */
static __always_inline bool bw_empty_flush_write(struct request *rq, const struct bw_rqv *v,
						 bool write, __u32 nr_bytes)
{
	struct bio *bio;

	if (!write || nr_bytes || v->data_len)
		return false;
	bio = BPF_CORE_READ(rq, bio);
	return bio && !BPF_CORE_READ(bio, bi_io_vec);
}

#endif /* BLKWISE_RQ_BPF_H */
