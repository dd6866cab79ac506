// SPDX-License-Identifier: GPL-2.0
/*
 * lostdiag: which block_rq_complete events never reach a BPF program, on
 * one device, independently of blkwise's own code (docs/design.md, "Lost
 * completions").
 *
 * Design.  Per (hw queue, tag) the last D and C seen, as blkwise keeps
 * them, in sixty lines: an issue that finds its tag's previous D with no C
 * since is a lost completion; it is recorded (tag, sector, times, CPUs) so
 * that the ftrace record of the same request, taken alongside, tells in
 * which context the unseen completion ran.  Every invocation is counted
 * before the device filter, so "not invoked" and "invoked but not matched"
 * are told apart.  A sched_switch program counts the switches to and from
 * PID 1's threads, and those run with one as current.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "lostdiag.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_major, target_minor;

struct tag_state {
	__u64 sector, d_ts, c_ts, d_cpu, c_cpu, d_count, c_count;
};


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct tag_state);
} tags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SAMPLES);
	__type(key, __u32);
	__type(value, struct lost_sample);
} samples SEC(".maps");

__u64 switches, switch_cur_pid1, switch_prev_pid1, switch_next_pid1;
__u64 all_issues, all_completes, completes_pid1, issues, completes, partial, lost, unmatched, requeues, nsamples;

static __always_inline bool ours(struct request *rq, __u32 *idx)
{
	struct gendisk *d = rq->q->disk;
	int t;

	if (!d || d->major != target_major || d->first_minor != target_minor)
		return false;
	t = rq->internal_tag >= 0 ? rq->internal_tag : rq->tag;
	*idx = ((rq->mq_hctx->queue_num & 63) << 10) | (t & 1023);
	return true;
}

static __always_inline void record(struct tag_state *s, __u32 idx, __u64 now)
{
	__u32 k = __sync_fetch_and_add(&nsamples, 1);
	struct lost_sample *sm;

	if (k >= MAX_SAMPLES)
		return;
	sm = bpf_map_lookup_elem(&samples, &k);
	if (!sm)
		return;
	sm->sector = s->sector;
	sm->now = now;
	sm->prev_d = s->d_ts;
	sm->last_c = s->c_ts;
	sm->tag = idx;
	sm->d_cpu = s->d_cpu;
	sm->c_cpu = s->c_cpu;
	sm->cpu = bpf_get_smp_processor_id();
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ld_issue, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct tag_state *s;
	__u32 idx;

	__sync_fetch_and_add(&all_issues, 1);
	if (!ours(rq, &idx))
		return 0;
	__sync_fetch_and_add(&issues, 1);
	s = bpf_map_lookup_elem(&tags, &idx);
	if (!s)
		return 0;
	if (s->d_ts) {
		__sync_fetch_and_add(&lost, 1);
		record(s, idx, now);
	}
	s->sector = rq->__sector;
	s->d_ts = now;
	s->d_cpu = bpf_get_smp_processor_id();
	s->d_count++;
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ld_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	struct tag_state *s;
	__u32 idx;

	__sync_fetch_and_add(&all_completes, 1);
	/* Where the unseen ones ran (see run.sh): is any seen there? */
	if (bpf_get_current_pid_tgid() >> 32 == 1)
		__sync_fetch_and_add(&completes_pid1, 1);
	if (!ours(rq, &idx))
		return 0;
	__sync_fetch_and_add(&completes, 1);
	s = bpf_map_lookup_elem(&tags, &idx);
	if (!s)
		return 0;
	s->c_ts = bpf_ktime_get_ns();
	s->c_cpu = bpf_get_smp_processor_id();
	s->c_count++;
	if (nr_bytes < rq->__data_len) {
		__sync_fetch_and_add(&partial, 1);
		return 0;
	}
	if (!s->d_ts)
		__sync_fetch_and_add(&unmatched, 1);
	s->d_ts = 0;
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(ld_requeue, struct request *rq)
{
	struct tag_state *s;
	__u32 idx;

	if (!ours(rq, &idx))
		return 0;
	__sync_fetch_and_add(&requeues, 1);
	s = bpf_map_lookup_elem(&tags, &idx);
	if (s)
		s->d_ts = 0;
	return 0;
}

/* Whether BPF ever runs in the context of PID 1's threads (see run.sh). */
SEC("tp_btf/sched_switch")
int BPF_PROG(ld_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__sync_fetch_and_add(&switches, 1);
	if (bpf_get_current_pid_tgid() >> 32 == 1)
		__sync_fetch_and_add(&switch_cur_pid1, 1);
	if (prev->tgid == 1)
		__sync_fetch_and_add(&switch_prev_pid1, 1);
	if (next->tgid == 1)
		__sync_fetch_and_add(&switch_next_pid1, 1);
	return 0;
}
