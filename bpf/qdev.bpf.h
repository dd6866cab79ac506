/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device of a request queue, and whether the object keeps its events,
 * for the objects that filter by device on every event (bpf/streams.bpf.c
 * at Q, bpf/record.bpf.c): an array indexed by the queue's id (q->id,
 * unique among live queues), filled at the queue's first event, so the
 * filter costs an array load per event, not a hash lookup.  An entry names
 * its queue by address: a queue freed and its id taken by a new one is
 * seen as new and claimed again.
 */
#ifndef BLKWISE_QDEV_BPF_H
#define BLKWISE_QDEV_BPF_H

#include "compat.bpf.h"

#define BW_QDEV_MAX 4096

/* Set by the loader before load: keep only the devices in qwatch. */
const volatile bool filter_on = false;

struct bw_qdev {
	__u64 q;		/* struct request_queue address; 0: not seen yet */
	__u32 dev;
	__u32 watched;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_QDEV_MAX);
	__type(key, __u32);
	__type(value, struct bw_qdev);
} qdevs SEC(".maps");

/* With filter_on: the devices kept (dev_t -> 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u8);
} qwatch SEC(".maps");

/*
 * Slow path: the first event of a queue names its device and decides
 * whether it is kept.  Published last, by a plain store (an exchange is a
 * 5.12 atomic, which 5.10 refuses); racers publish the same pair.
 */
static __noinline __u32 bw_qdev_claim(struct bw_qdev *e, __u64 q, struct request *rq,
				      struct bio *bio)
{
	__u32 dev = bw_disk_dev(rq ? bw_rq_disk(rq) : bw_bio_disk(bio));

	e->dev = dev;
	e->watched = !filter_on || bpf_map_lookup_elem(&qwatch, &dev);
	barrier();
	e->q = q;
	return e->watched ? dev : 0;
}

/* The device of queue q (id qid) of request rq or bio bio; 0 when not kept. */
static __always_inline __u32 bw_qdev_of(__u64 q, __u32 qid, struct request *rq, struct bio *bio)
{
	struct bw_qdev *e;

	if (qid >= BW_QDEV_MAX)
		return 0;
	e = bpf_map_lookup_elem(&qdevs, &qid);
	if (!e)
		return 0;
	if (e->q == q)
		return e->watched ? e->dev : 0;
	return bw_qdev_claim(e, q, rq, bio);
}

#endif /* BLKWISE_QDEV_BPF_H */
