// SPDX-License-Identifier: GPL-2.0
/*
 * floor.bpf.c - the cheapest possible tracer of the block layer.
 *
 * One empty tp_btf program on every tracepoint blkwise attaches to.  Its
 * cost per I/O is the floor that no real tracer on the same hooks can beat:
 * the BPF trampoline entry plus an empty program body.  floor_io_start is
 * only attached for the "floor_streams" set (blkwise stat --streams).
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
