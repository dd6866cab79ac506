/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A request's device as every object that counts into the per-device maps
 * of bpf/devmaps.bpf.h finds it (bpf/core.bpf.c, bpf/light.bpf.c): its
 * request_queue's address, hashed into a two-way array (qmap), gives the
 * device's slot with no load through the queue.  The first event of a
 * queue claims the entry (the only slow path, where the device filter is
 * consulted).  Include after BW_DEV_MAPS and bpf/rq.bpf.h.
 */
#ifndef BLKWISE_SLOT_BPF_H
#define BLKWISE_SLOT_BPF_H

#include "compat.bpf.h"
#include "core.h"
#include "util.bpf.h"

/* Set by the loader before load. */
const volatile bool filter_on = false;
const volatile __u32 max_slots = 16;

/* Rare events, for --verbose and the tests. */
__u32 next_slot;
__u64 slot_overflow;
__u64 claim_races;
__u64 qmap_evictions;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << BW_QMAP_BITS);
	__type(key, __u32);
	__type(value, struct bw_qmap);
} qmap SEC(".maps");

/*
 * Slow path: the first event seen from a request_queue.  The device's slot
 * comes from dev2slot, filled by user space for the devices it knows of;
 * a device that appears later gets a new slot here, and CPUs racing to
 * create it agree through the hash map's insert-if-absent.  Every racer
 * then publishes the same (queue, slot) pair, so no event is dropped.
 */
static __always_inline __u32 claim_slot(struct bw_qmap *e, __u64 q, struct request *rq,
					struct bio *bio, const bool fetch)
{
	struct bw_dev_shared *sh;
	__u32 dev, slot, *found;

	dev = bw_disk_dev(rq ? bw_rq_disk(rq) : bw_bio_disk(bio));
	found = bpf_map_lookup_elem(&dev2slot, &dev);
	if (found) {
		slot = *found;
	} else if (filter_on) {
		slot = BW_SLOT_NONE;
	} else {
		slot = next_slot;
		if (fetch)
			slot = __sync_fetch_and_add(&next_slot, 1);
		else
			next_slot = slot + 1;	/* racers may share: insert-if-absent decides */
		if (slot >= max_slots) {
			__sync_fetch_and_add(&slot_overflow, 1);
			slot = BW_SLOT_NONE;
		} else if (bpf_map_update_elem(&dev2slot, &dev, &slot, BPF_NOEXIST)) {
			__sync_fetch_and_add(&claim_races, 1);
			found = bpf_map_lookup_elem(&dev2slot, &dev);
			slot = found ? *found : BW_SLOT_NONE;
		}
	}
	if (slot != BW_SLOT_NONE) {
		sh = bpf_map_lookup_elem(&shared, &slot);
		if (!sh)
			return BW_SLOT_NONE;
		sh->dev = dev;
	}
	if (e->q)
		__sync_fetch_and_add(&qmap_evictions, 1);
	e->slot = slot;
	barrier();	/* the slot before the queue that makes it found */
	e->q = q;
	return slot;
}

/* The slow path as a function of its own, one copy with fetch atomics and one without. */
static __noinline __u32 claim_slot_fetch(struct bw_qmap *e, __u64 q, struct request *rq,
					 struct bio *bio)
{
	return claim_slot(e, q, rq, bio, true);
}

static __noinline __u32 claim_slot_plain(struct bw_qmap *e, __u64 q, struct request *rq,
					 struct bio *bio)
{
	return claim_slot(e, q, rq, bio, false);
}

/*
 * rq or bio names the device for the slow path; only one is set.  A queue
 * lives in one of two entries; a third queue on the same pair evicts (and
 * is counted), which costs slow paths, never events.
 */
static __always_inline __u32 slot_of(__u64 q, struct request *rq, struct bio *bio,
				     const bool fetch)
{
	__u32 h = bw_hash_ptr(q, BW_QMAP_BITS), h2 = h ^ 1;
	struct bw_qmap *e, *e2;

	e = bpf_map_lookup_elem(&qmap, &h);
	if (!e)
		return BW_SLOT_NONE;
	if (e->q == q)
		return e->slot;
	e2 = bpf_map_lookup_elem(&qmap, &h2);
	if (!e2)
		return BW_SLOT_NONE;
	if (e2->q == q)
		return e2->slot;
	e = e->q && !e2->q ? e2 : e;
	return fetch ? claim_slot_fetch(e, q, rq, bio) : claim_slot_plain(e, q, rq, bio);
}

#endif /* BLKWISE_SLOT_BPF_H */
