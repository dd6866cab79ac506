/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.  Each is detected by CO-RE field
 * existence at load time, never by comparing version numbers (stable
 * backports make those lie).
 */
#ifndef BLKWISE_COMPAT_BPF_H
#define BLKWISE_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/* rq->rq_disk was removed in 5.17 (commit f3fa33acca9f, "block: remove the
 * ->rq_disk field in struct request"); q->disk appeared in 5.15. */
struct request___has_rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct request_queue___has_disk {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

/* bio->bi_disk became bio->bi_bdev in 5.12 (commit 309dca309fc3,
 * "block: store a block_device pointer in struct bio"). */
struct bio___has_bi_disk {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

static __always_inline struct gendisk *bw_rq_disk(struct request *rq)
{
	struct request___has_rq_disk *old = (void *)rq;
	struct request_queue___has_disk *q;

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	q = (void *)BPF_CORE_READ(rq, q);
	return BPF_CORE_READ(q, disk);
}

static __always_inline struct gendisk *bw_bio_disk(struct bio *bio)
{
	struct bio___has_bi_disk *old = (void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return BPF_CORE_READ(old, bi_disk);
	return BPF_CORE_READ(bio, bi_bdev, bd_disk);
}

/* The same with plain loads, for tp_btf programs (the pointers they get are trusted). */
static __always_inline struct gendisk *bw_bio_disk_btf(struct bio *bio)
{
	struct bio___has_bi_disk *old = (void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return old->bi_disk;
	return bio->bi_bdev->bd_disk;
}

/* MKDEV as the kernel's dev_t (12-bit major, 20-bit minor). */
static __always_inline __u32 bw_disk_dev(struct gendisk *disk)
{
	__u32 major = BPF_CORE_READ(disk, major);
	__u32 minor = BPF_CORE_READ(disk, first_minor);

	return (major << 20) | minor;
}

/*
 * The tracepoint's argument at byte offset off of ctx.  The verifier wants
 * every context load at a constant offset, and clang turns a choice between
 * two arguments into one load at a computed address, even of volatiles
 * (refused on 5.10: "dereference of modified ctx ptr"); a load in asm stays
 * where it is written.
 */
#define CTX_ARG(ctx, off)							\
	({									\
		__u64 __v;							\
										\
		asm volatile("%0 = *(u64 *)(%1 + " #off ")" : "=r"(__v) : "r"(ctx));	\
		__v;								\
	})

#endif /* BLKWISE_COMPAT_BPF_H */
