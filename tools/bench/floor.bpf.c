// SPDX-License-Identifier: GPL-2.0
/*
 * floor.bpf.c - the cheapest possible tracer of the block layer.
 *
 * One empty tp_btf program on every tracepoint blkwise attaches to.  Its
 * cost per I/O is the floor that no real tracer on the same hooks can beat:
 * the BPF trampoline entry plus an empty program body.  floor_io_start is
 * only attached for the "floor_streams" set (blkwise stat --streams).
 *
 * The _clk pair (floor --clock) replaces floor_issue and floor_complete
 * with programs that read the clock once each and store it: the floor of
 * any tracer that times a request from issue to completion; with
 * --streams, floor_io_start_clk joins them (Q, D and C, a clock read
 * each: the floor of streams, which time a request from Q).
 *
 * The _exact pair (floor --exact) is the floor of an exact tracer of service
 * and busy time, the core's design with nothing else: D reads the clock,
 * claims the request's entry in a table keyed by its address
 * (compare-and-swap) and stores the time in it, and adds to one in-flight
 * word (fetch-and-add; the busy period's start when it opens one); C reads
 * the clock, finds and frees the entry and takes its own from the word
 * (the busy time when it closes the period).  No device lookup, no
 * per-device or per-CPU figures: it counts every device's I/O as one.
 * floor --exact-tag is the same design with the entry's first probe at the
 * request's tag instead of a hash of its address: requests issued one
 * after another mostly hold neighbouring tags, so their entries share
 * cache lines, which then cross between CPUs once for several requests.
 *
 * The _rqf program (floor --rqfields) is the floor of the light tier, the
 * completion-only design with nothing else: one block_rq_complete program
 * that finds its device by the request's queue (q->id), keeps final
 * completions only (nr_bytes == __data_len), reads the clock once and the
 * kernel's own stamps, rq->io_start_time_ns (issue, where the queue keeps
 * stats) and rq->start_time_ns (allocation), and adds one to a D2C and a
 * Q2C histogram (log-linear, bpf/hist.h's) in a per-CPU array.  No issue
 * program, no per-request state, nothing shared between CPUs.
 *
 * The _rec trio (floor --record) is the floor of a recorder: Q, D and C
 * each read the clock once and put a 64-byte record holding it into a
 * ring buffer, without a wakeup; floor.c drains the buffer as blkwise
 * record does (a short poll timeout).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hist.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete)
{
	return 0;
}

__u64 clk_sink;

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue_clk)
{
	clk_sink = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete_clk)
{
	clk_sink = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(floor_io_start_clk)
{
	clk_sink = bpf_ktime_get_ns();
	return 0;
}

/* --exact */
#define EX_BITS 12
#define EX_PROBES 4

struct ex_entry {
	__u64 rq;
	__u64 d;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << EX_BITS);
	__type(key, __u32);
	__type(value, struct ex_entry);
} ex_rqs SEC(".maps");

/* The device's line: the in-flight word, the busy period, a sink. */
__u64 ex_word __attribute__((aligned(64)));
__u64 ex_busy_start, ex_busy_ns, ex_d2c_ns;

static __always_inline __u32 ex_hash(__u64 rq)
{
	return (__u32)((rq * 0x9E3779B97F4A7C15ULL) >> (64 - EX_BITS));
}

static __always_inline struct ex_entry *ex_entry(__u32 h, __u32 i)
{
	__u32 idx = (h + i) & ((1u << EX_BITS) - 1);

	return bpf_map_lookup_elem(&ex_rqs, &idx);
}

/* Set by floor.c: the first probe at the request's tag (--exact-tag). */
const volatile bool ex_by_tag = false;

static __always_inline __u32 ex_first(struct request *rq, __u64 key)
{
	return ex_by_tag ? (__u32)rq->tag : ex_hash(key);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue_exact, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns(), key = (__u64)rq - (__u64)&ex_rqs, old;
	__u32 h = ex_first(rq, key), i;
	struct ex_entry *e;

	for (i = 0; i < EX_PROBES; i++) {
		e = ex_entry(h, i);
		if (e && __sync_val_compare_and_swap(&e->rq, 0, key) == 0) {
			e->d = now;
			break;
		}
	}
	old = __sync_fetch_and_add(&ex_word, 1);
	if (old == 0)
		ex_busy_start = now;
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete_exact, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns(), key = (__u64)rq - (__u64)&ex_rqs, bs, old;
	__u32 h = ex_first(rq, key), i;
	struct ex_entry *e;

	for (i = 0; i < EX_PROBES; i++) {
		e = ex_entry(h, i);
		if (e && e->rq == key) {
			ex_d2c_ns += now - e->d;	/* a sink: racy, not a figure */
			e->rq = 0;
			break;
		}
	}
	if (i == EX_PROBES)
		return 0;
	bs = ex_busy_start;
	old = __sync_fetch_and_add(&ex_word, -1ULL);
	if (old == 1)
		ex_busy_ns += now - bs;
	return 0;
}

/* --rqfields */
#define RQF_DEVS 16
#define RQF_BUCKETS 128

struct rqf_hists {
	__u64 d2c[RQF_BUCKETS];
	__u64 q2c[RQF_BUCKETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RQF_DEVS);
	__type(key, __u32);
	__type(value, struct rqf_hists);
} rqf_hists SEC(".maps");

static __always_inline void rqf_add(__u64 *hist, __u64 ns)
{
	__u32 b = bw_bucket(ns >> 10, RQF_BUCKETS);

	barrier_var(b);
	if (b < RQF_BUCKETS)
		hist[b]++;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete_rqf, struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 dev = rq->q->id & (RQF_DEVS - 1);
	__u64 now, d, q;
	struct rqf_hists *h;

	if (nr_bytes < rq->__data_len)	/* partial: the request stays in flight */
		return 0;
	h = bpf_map_lookup_elem(&rqf_hists, &dev);
	if (!h)
		return 0;
	now = bpf_ktime_get_ns();
	d = rq->io_start_time_ns;
	q = rq->start_time_ns;
	if (d && d <= now)
		rqf_add(h->d2c, now - d);
	if (q && q <= now)
		rqf_add(h->q2c, now - q);
	return 0;
}

/* --rqissue (prototype): --rqfields plus a lean issue stamp where the plug caches the clock */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RQF_DEVS << 10);
	__type(key, __u32);
	__type(value, __u64);
} rqi_slots SEC(".maps");

static __always_inline __u32 rqi_idx(struct request *rq)
{
	return ((rq->q->id & (RQF_DEVS - 1)) << 10) | ((__u32)rq->tag & 1023);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue_rqi, struct request *rq)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct blk_plug *plug = t->plug;
	__u32 idx;
	__u64 *e, s;

	if (!plug || !plug->cur_ktime)
		return 0;
	idx = rqi_idx(rq);
	e = bpf_map_lookup_elem(&rqi_slots, &idx);
	if (!e)
		return 0;
	s = rq->start_time_ns;
	*e = (s << 32) | ((bpf_ktime_get_ns() - s) & 0xffffffffULL);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete_rqi, struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 dev = rq->q->id & (RQF_DEVS - 1), idx;
	__u64 now, d, q, *e, v;
	struct rqf_hists *h;

	if (nr_bytes < rq->__data_len)
		return 0;
	h = bpf_map_lookup_elem(&rqf_hists, &dev);
	if (!h)
		return 0;
	now = bpf_ktime_get_ns();
	d = rq->io_start_time_ns;
	q = rq->start_time_ns;
	idx = rqi_idx(rq);
	e = bpf_map_lookup_elem(&rqi_slots, &idx);
	if (e) {
		v = *e;
		if ((v >> 32) == (q & 0xffffffffULL))
			d = q + (v & 0xffffffffULL);
	}
	if (d && d <= now)
		rqf_add(h->d2c, now - d);
	if (q && q <= now)
		rqf_add(h->q2c, now - q);
	return 0;
}

struct floor_rec {
	__u64 ts;
	__u64 pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} floor_ring SEC(".maps");

static __always_inline void rec(void)
{
	__u64 now = bpf_ktime_get_ns();
	struct floor_rec *r = bpf_ringbuf_reserve(&floor_ring, sizeof(*r), 0);

	if (!r)
		return;
	r->ts = now;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/block_io_start")
int BPF_PROG(floor_io_start_rec)
{
	rec();
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue_rec)
{
	rec();
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete_rec)
{
	rec();
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(floor_requeue)
{
	return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(floor_rq_merge)
{
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(floor_backmerge)
{
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(floor_frontmerge)
{
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(floor_io_start)
{
	return 0;
}
