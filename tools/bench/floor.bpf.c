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
 * The _rec trio (floor --record) is the floor of a recorder: Q, D and C
 * each read the clock once and put a 64-byte record holding it into a
 * ring buffer, without a wakeup; floor.c drains the buffer as blkwise
 * record does (a short poll timeout).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

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
