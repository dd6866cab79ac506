// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise cgroups: per device, cgroup and op, the requests, bytes and
 * service time (D2C) of completions, charged to the cgroup the kernel
 * charges them to (export --cgroups).
 *
 * Design.  A concern of its own, loaded only when asked for: one program,
 * on block_rq_complete, beside the tier's own, and nothing else on the
 * I/O path.
 *
 * - The owner is the cgroup of the request's first bio's blkg
 *   (bio->bi_blkg->blkcg->css.cgroup, bpf/rq.bpf.h's BW_RQV_OWNER: plain
 *   loads on tp_btf): the cgroup io.stat, io.max and io.latency charge,
 *   for a buffered write the one that dirtied the page (wbc_init_bio()),
 *   not the flusher that submitted it.  At completion
 *   the current task is whoever runs the interrupt, so there is no task
 *   to fall back to: a request without a bio or a blkg (a flush, a
 *   passthrough request, a kernel without blk-cgroup) goes under cgroup 0,
 *   which user space names the root.  The blkg's cgroup lives in the
 *   hierarchy that holds the io controller: cgroup v2, or v1's blkio on a
 *   host that mounts it there; user space resolves its id in that one.
 * - Which completions are requests follows the light tier: a final one
 *   (nr_bytes == __data_len), and an empty flush write (no bytes, never
 *   issued: counted, with no service time), not the second, empty
 *   completion of a flush sequence's data write.
 * - Service time is the kernel's issue stamp (rq->io_start_time_ns) to a
 *   clock read here, as in the light tier (bpf/light.bpf.c); a completion
 *   without the stamp (a queue that keeps no statistics) is counted, and
 *   has no service time.  A partial completion adds its bytes only.
 * - Bio-based devices (zram, dm, md) have no requests: the bio object
 *   (bpf/bio.bpf.c), which pairs their bios' queue and completion, adds
 *   each final one to the same series, owned by the bio's blkg at queue
 *   and timed from queue to completion as its device figures are.
 * - One per-CPU hash entry per (device, op, cgroup), allocated at its
 *   first completion (no preallocation: only series that do I/O take
 *   memory), its histogram already at the exporter's resolution
 *   (bw_expo_bucket, bpf/hist.h: 62 buckets, not 184).  A full map counts
 *   the completion in no_room.  User space deletes a cgroup's entries
 *   once the cgroup is gone.
 * - The device filter is the streams' (bpf/qdev.bpf.h): an array load by
 *   the queue's id.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "core.h"
#include "rq.bpf.h"
#include "cgio.bpf.h"
#include "qdev.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */

#define RQV_C (BW_RQV_Q | BW_RQV_QID | BW_RQV_IOSTART | BW_RQV_FLAGS | BW_RQV_LEN | BW_RQV_OWNER)

static __always_inline void on_complete(struct request *rq, const struct bw_rqv *v,
					__u32 nr_bytes)
{
	struct bw_cg_val *val;
	struct bw_cg_key k;
	__u64 now, d2c;

	k.dev = bw_qdev_of(v->q, v->qid, rq, NULL);
	if (!k.dev)
		return;
	k.op = bw_op_of(v->flags);
	if (k.op >= BW_NR_OPS)
		return;
	/*
	 * No bytes at all: an empty flush write (one request to diskstats,
	 * never issued) is counted; the second completion of a flush
	 * sequence's data write, after the one that counted it, is not.
	 */
	if (k.op == BW_OP_WRITE && !nr_bytes && !v->data_len &&
	    !bw_empty_flush_write(rq, v, true, nr_bytes))
		return;
	k.cgroup = v->owner;
	val = bw_cg_series(&k);
	if (!val)
		return;
	val->bytes += nr_bytes;
	if (nr_bytes < v->data_len)	/* partial: the request stays in flight */
		return;
	/* No stamp (an empty flush write never has one): counted, not timed. */
	now = v->io_start_ns ? bpf_ktime_get_ns() : 0;
	d2c = now > v->io_start_ns ? now - v->io_start_ns : 0;
	bw_cg_final(val, d2c, v->io_start_ns);
}

static __always_inline void complete_args(struct request *rq, const struct bw_rqv *v, __u64 *ctx)
{
	on_complete(rq, v, (__u32)ctx[2]);
}

BW_RQ_PAIR(block_rq_complete, bw_cg_complete, false, RQV_C, complete_args)
