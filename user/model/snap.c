// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot's devices, and a slot's per-CPU values (struct bw_dev_pcpu of
 * bpf/core.h, which the core and bio objects both count into) summed into
 * one: the one slot reader of every loader.  Pure: no BPF, no system calls.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

struct bw_snap_dev *bw_snap_dev_get(struct bw_snap *s, __u32 dev, int cap)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	if (s->nr >= cap)
		return NULL;
	memset(&s->devs[s->nr], 0, sizeof(s->devs[0]));
	s->devs[s->nr].dev = dev;
	return &s->devs[s->nr++];
}

/* The 64-bit words at the head of struct bw_op_pcpu, laid out as bw_op_stats's. */
#define OP_WORDS (offsetof(struct bw_op_pcpu, hist_d2c) / sizeof(__u64))
_Static_assert(offsetof(struct bw_op_pcpu, hist_d2c) == offsetof(struct bw_op_stats, hist_d2c),
	       "bw_op_pcpu and bw_op_stats share their 64-bit head");

/*
 * n 32-bit buckets at b in each CPU's value: their sum modulo 2^32 moved
 * by less than 2^32 since the last read, so it extends ext, which is then
 * added to out.
 */
static void extend_hist(const struct bw_dev_pcpu *pcpu, int ncpus, size_t off, int n,
			__u64 *ext, __u64 *out)
{
	int cpu, i;

	for (i = 0; i < n; i++) {
		__u32 m = 0;

		for (cpu = 0; cpu < ncpus; cpu++)
			m += ((const __u32 *)((const char *)&pcpu[cpu] + off))[i];
		ext[i] = bw_extend32(ext[i], m);
		if (out)
			out[i] += ext[i];
	}
}

/* A latency histogram at off in each CPU's struct bw_dev_xpcpu, as extend_hist does it. */
static void extend_x(const struct bw_dev_xpcpu *x, int ncpus, size_t off, __u64 *ext, __u64 *out)
{
	int cpu, i;

	for (i = 0; i < BW_LAT_BUCKETS; i++) {
		__u32 m = 0;

		for (cpu = 0; cpu < ncpus; cpu++)
			m += ((const __u32 *)((const char *)&x[cpu] + off))[i];
		ext[i] = bw_extend32(ext[i], m);
		out[i] += ext[i];
	}
}

/* Every op's histograms of one slot extended into ext, and added to outs unless NULL. */
static void extend_ops(const struct bw_dev_pcpu *pcpu, int ncpus, struct bw_op_stats *ext,
		       struct bw_op_stats *outs)
{
	size_t base;
	int op;

	for (op = 0; op < BW_NR_OPS; op++) {
		base = offsetof(struct bw_dev_pcpu, op) + op * sizeof(struct bw_op_pcpu);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_d2c),
			    BW_LAT_BUCKETS, ext[op].hist_d2c, outs ? outs[op].hist_d2c : NULL);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_q2d),
			    BW_LAT_BUCKETS, ext[op].hist_q2d, outs ? outs[op].hist_q2d : NULL);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_seg),
			    BW_SEG_BUCKETS, ext[op].hist_seg, outs ? outs[op].hist_seg : NULL);
	}
}

void bw_pcpu_extend(const struct bw_dev_pcpu *pcpu, int ncpus, struct bw_op_stats *ext)
{
	extend_ops(pcpu, ncpus, ext, NULL);
}

/*
 * One slot's per-CPU values (pcpu, ncpus of them) added to d; ext, the
 * slot's own BW_NR_OPS histograms extended to 64 bits, carries over from
 * one read to the next.
 */
void bw_pcpu_add_ops(struct bw_op_stats *ops, const struct bw_dev_pcpu *pcpu, int ncpus,
		     struct bw_op_stats *ext)
{
	size_t w;
	int cpu, op;

	for (op = 0; op < BW_NR_OPS; op++)
		for (cpu = 0; cpu < ncpus; cpu++) {
			const __u64 *src = (const __u64 *)&pcpu[cpu].op[op];

			for (w = 0; w < OP_WORDS; w++)
				((__u64 *)&ops[op])[w] += src[w];
		}
	extend_ops(pcpu, ncpus, ext, ops);
}

void bw_xtime_add(struct bw_op_stats *ops, const struct bw_dev_xpcpu *x, int ncpus,
		  struct bw_op_stats *ext)
{
	size_t base;
	int cpu, op;

	for (op = 0; op < BW_NR_OPS; op++) {
		for (cpu = 0; cpu < ncpus; cpu++) {
			const struct bw_op_time *t = &x[cpu].op[op];

			ops[op].ios += t->ios;
			ops[op].d2c_ns += t->d2c_ns;
			ops[op].q_ios += t->q_ios;
			ops[op].q2d_ns += t->q2d_ns;
			ops[op].q2c_ns += t->q2c_ns;
		}
		base = op * sizeof(struct bw_op_time);
		extend_x(x, ncpus, base + offsetof(struct bw_op_time, hist_d2c), ext[op].hist_d2c,
			 ops[op].hist_d2c);
		extend_x(x, ncpus, base + offsetof(struct bw_op_time, hist_q2d), ext[op].hist_q2d,
			 ops[op].hist_q2d);
	}
}

void bw_snap_add_pcpu(struct bw_snap_dev *d, const struct bw_dev_pcpu *pcpu, int ncpus,
		      __u64 closed_epoch, struct bw_op_stats *ext)
{
	int cpu;

	bw_pcpu_add_ops(d->op, pcpu, ncpus, ext);
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct bw_dev_pcpu *p = &pcpu[cpu];
		__u64 max;

		d->busy_ns += p->busy_ns;
		d->unmatched += p->unmatched;
		d->untracked += p->untracked;
		d->lost += p->lost;
		d->fsync_writes += p->fsync_writes;
		d->nostamp += p->nostamp;
		max = bw_epoch_max_of(&p->max, closed_epoch);
		if (max > d->max_depth)
			d->max_depth = max;
	}
}

void bw_snap_free(struct bw_snap *s)
{
	free(s->devs);
	s->devs = NULL;
	s->nr = 0;
}

const struct bw_snap_dev *bw_snap_find(const struct bw_snap *s, __u32 dev)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	return NULL;
}
