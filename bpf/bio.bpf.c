// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise bio: per-device figures of bio-based devices (zram, brd, dm, md,
 * ...), which have no request queue of their own and so never fire the
 * request tracepoints the core counts.
 *
 * Design.  An I/O of a bio-based device is a bio, from block_bio_queue
 * (submit_bio_noacct, before the driver's ->submit_bio) to
 * block_bio_complete (bio_endio).  The kernel traces the completion of
 * exactly the bios it traced at queue: submit_bio_noacct sets
 * BIO_TRACE_COMPLETION when it traces the queue, bio_endio traces and clears
 * it, and bio_split copies it to the split (6.1 and 6.18 alike).  So:
 *
 * - Pairing is by the bio's address, in a hash: at queue the bio's device,
 *   time, op and size go in; at complete they come out.  The device is the
 *   one it was queued on, not bio->bi_bdev at completion: md remaps a bio to
 *   a member (block_bio_remap, same bio, no second queue event), and its
 *   completion then names the member.  A split's completion finds nothing
 *   (it was never queued) and is ignored: its parent completes after it,
 *   chained, and counts once, as the submitter sent it.
 * - Only bio-based disks are kept: the queue program returns after four
 *   plain loads when the bio's disk has a request queue (q->mq_ops set), so
 *   request-based devices pay one program run per bio, no map access.  The
 *   complete program returns at once while no tracked bio is in flight (a
 *   counter), else it costs request-based devices a hash miss.  The loader
 *   attaches this object only when a bio-based device is to be watched.
 * - Figures land in the same per-device structs as the core's (bpf/core.h,
 *   by field) with the same in-flight word (bpf/flight.h): service time
 *   is queue to completion, which for a bio-based device is everything
 *   below it (the driver, and for a stacked device its members); busy time,
 *   depth, solo service and so P_eff follow from it as for a disk.  There is
 *   no queue time: nothing queues above the driver.
 * - With export --cgroups, each final completion also goes to its
 *   (device, op, cgroup) series in the cgroups object's maps (bpf/cgio.bpf.h,
 *   the loader hands them over), owned by the bio's blkg read at queue.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "flight.h"
#include "devmaps.bpf.h"
#include "util.bpf.h"
#include "rq.bpf.h"
#include "cgio.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool bio_arg_second = false;	/* pre-5.11 block_bio_queue(q, bio) */
const volatile bool filter_on = false;
const volatile __u32 max_slots = 16;
const volatile bool have_fetch = true;		/* 5.12+ (bpf/flight.h) */
const volatile bool cg_on = false;		/* export --cgroups: the series of bpf/cgio.bpf.h */

/* Written by user space. */
__u64 epoch;

__u32 next_slot;
__u64 tracked;		/* bios in the hash: 0 lets complete return at once */
__u64 slot_overflow;
__u64 no_room;		/* hash full at queue */

struct bw_bio_state {
	__u64 ts;
	__u32 slot;
	__u32 op;
	__u32 bytes;
	__u32 pad;
	__u64 cgroup;		/* its blkg's, with cg_on */
};

BW_DEV_MAPS(0);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct bw_bio_state);
} bios SEC(".maps");

/* A bio-based disk seen for the first time while every device is watched. */
static __noinline __u32 claim_slot(__u32 dev)
{
	struct bw_dev_shared *sh;
	__u32 slot, *found;

	if (filter_on)
		return BW_SLOT_NONE;
	slot = __sync_fetch_and_add(&next_slot, 1);
	if (slot >= max_slots) {
		__sync_fetch_and_add(&slot_overflow, 1);
		return BW_SLOT_NONE;
	}
	if (bpf_map_update_elem(&dev2slot, &dev, &slot, BPF_NOEXIST)) {
		found = bpf_map_lookup_elem(&dev2slot, &dev);
		return found ? *found : BW_SLOT_NONE;
	}
	sh = bpf_map_lookup_elem(&shared, &slot);
	if (sh)
		sh->dev = dev;
	return slot;
}

/* The slot of a bio-based disk when it is watched, else BW_SLOT_NONE. */
static __always_inline __u32 bio_slot(struct gendisk *disk)
{
	__u32 dev = bw_disk_dev(disk), *found;

	found = bpf_map_lookup_elem(&dev2slot, &dev);
	return found ? *found : claim_slot(dev);
}

/*
 * The bio's disk when it has no request queue, else NULL: the test every
 * bio of every device pays.  tp_btf reads with plain loads (the bio is a
 * trusted pointer), raw_tp through probe reads.
 */
static __always_inline struct gendisk *bio_based_disk_btf(struct bio *bio)
{
	struct bio___has_bi_disk *old = (void *)bio;
	struct gendisk *disk;

	if (bpf_core_field_exists(old->bi_disk))
		disk = old->bi_disk;
	else
		disk = bio->bi_bdev->bd_disk;
	if (!disk || disk->queue->mq_ops)
		return NULL;
	return disk;
}

static __always_inline struct gendisk *bio_based_disk_raw(struct bio *bio)
{
	struct gendisk *disk = bw_bio_disk(bio);

	if (!disk || BPF_CORE_READ(disk, queue, mq_ops))
		return NULL;
	return disk;
}

/* The I/O a bio's entry stood for leaves flight; returns whether it was solo. */
static __always_inline bool leave(const struct bw_bio_state *st, __u64 bio, __u64 now,
				  struct bw_dev_shared **shp, struct bw_dev_pcpu **pcp)
{
	__u32 slot = st->slot;

	__sync_fetch_and_add(&tracked, -1ULL);
	*shp = bpf_map_lookup_elem(&shared, &slot);
	*pcp = bpf_map_lookup_elem(&pcpu, &slot);
	if (!*shp || !*pcp)
		return false;
	return bw_flight_leave(*shp, *pcp, now, bio, have_fetch, false);
}

static __noinline void on_bio_queue(struct bio *bio, struct gendisk *disk)
{
	struct bw_bio_state st = {}, *old;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u64 key = (__u64)bio;
	__u32 root;

	if (!bio || !disk)
		return;
	st.slot = bio_slot(disk);
	if (st.slot == BW_SLOT_NONE)
		return;
	st.ts = bpf_ktime_get_ns();
	st.op = bw_op_of(BPF_CORE_READ(bio, bi_opf));
	st.bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	if (cg_on)
		st.cgroup = bw_bio_owner(bio, &root);
	old = bpf_map_lookup_elem(&bios, &key);
	if (old) {
		/* The bio's previous life never reached complete for us. */
		leave(old, key, st.ts, &sh, &pc);
		if (pc)
			pc->lost++;
	}
	if (bpf_map_update_elem(&bios, &key, &st, BPF_ANY)) {
		__sync_fetch_and_add(&no_room, 1);
		return;
	}
	__sync_fetch_and_add(&tracked, 1);
	sh = bpf_map_lookup_elem(&shared, &st.slot);
	pc = bpf_map_lookup_elem(&pcpu, &st.slot);
	if (sh && pc)
		bw_flight_enter(sh, pc, st.ts, key, epoch, BW_D_INC, have_fetch, false);
}

/* export --cgroups: the bio's series (bpf/cgio.bpf.h), as a request's there. */
static __always_inline void count_cgroup(const struct bw_bio_state *st, __u32 dev, __u64 svc)
{
	struct bw_cg_key k = { .dev = dev, .op = st->op, .cgroup = st->cgroup };
	struct bw_cg_val *val = bw_cg_series(&k);

	if (!val)
		return;
	val->bytes += st->bytes;
	bw_cg_final(val, svc, true);
}

static __always_inline void on_bio_complete(struct bio *bio)
{
	struct bw_bio_state st, *p;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	struct bw_op_pcpu *os;
	__u64 key = (__u64)bio, now, svc;
	__u32 cls, op;
	bool solo;
	int error;

	if (!tracked)
		return;
	p = bpf_map_lookup_elem(&bios, &key);
	if (!p)
		return;
	st = *p;
	bpf_map_delete_elem(&bios, &key);
	now = bpf_ktime_get_ns();
	solo = leave(&st, key, now, &sh, &pc);
	/* Read before the op's bound is checked: 6.1's verifier loses it across the call. */
	error = BPF_CORE_READ(bio, bi_status);
	/*
	 * The op in a register of its own, checked and used there: read again
	 * from st on the stack, 6.1's verifier knows no bound for it.
	 */
	op = st.op;
	barrier_var(op);
	if (!pc || op >= BW_NR_OPS)
		return;
	os = &pc->op[op];
	svc = now > st.ts ? now - st.ts : 0;
	bw_count_io(os, error, st.bytes, svc, true);
	cls = bw_count_class(os, st.bytes);
	if (solo)
		bw_count_solo(os, cls, svc);
	if (cg_on && sh)
		count_cgroup(&st, sh->dev, svc);
}

SEC("tp_btf/block_bio_queue")
int bw_bio_queue(__u64 *ctx)
{
	struct bio *bio = (void *)(bio_arg_second ? CTX_ARG(ctx, 8) : CTX_ARG(ctx, 0));
	struct gendisk *disk = bio_based_disk_btf(bio);

	if (disk)
		on_bio_queue(bio, disk);
	return 0;
}

SEC("raw_tp/block_bio_queue")
int bw_bio_queue_raw(__u64 *ctx)
{
	struct bio *bio = (void *)(bio_arg_second ? CTX_ARG(ctx, 8) : CTX_ARG(ctx, 0));
	struct gendisk *disk = bio_based_disk_raw(bio);

	if (disk)
		on_bio_queue(bio, disk);
	return 0;
}

/* block_bio_complete(q, bio) on every kernel we load on. */
SEC("tp_btf/block_bio_complete")
int bw_bio_complete(__u64 *ctx)
{
	on_bio_complete((struct bio *)ctx[1]);
	return 0;
}

SEC("raw_tp/block_bio_complete")
int bw_bio_complete_raw(__u64 *ctx)
{
	on_bio_complete((struct bio *)ctx[1]);
	return 0;
}
