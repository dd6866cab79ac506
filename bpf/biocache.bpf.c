// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise bio cache: hits and misses of the per-cpu bio alloc cache
 * (bio_sets made with BIOSET_PERCPU_CACHE, bios asking with
 * REQ_ALLOC_CACHE), per CPU and per bio_set.
 *
 * Design.  The cache has no tracepoint, and its helpers
 * (bio_alloc_percpu_cache, bio_put_percpu_cache) are inlined, so the exact
 * counts come from what is left to trace:
 * - fexit of bio_alloc_bioset sees the flags asked for (opf) and the bio
 *   returned; the bio keeps REQ_ALLOC_CACHE only when the set has a cache
 *   and the bio few enough vecs (eligible).  An eligible allocation either
 *   came off the per-cpu list (hit) or fell back to mempool_alloc of the
 *   set's bio_pool (miss): fentry of mempool_alloc marks the allocating
 *   task when the pool is that one.  Keyed by task, not CPU: mempool_alloc
 *   may sleep and the task move.
 * - A second, independent probe reads the cache itself: fentry of
 *   bio_alloc_bioset notes this CPU's list heads, and a hit is a bio equal
 *   to one of them (the irq list is spliced onto the list on an empty one,
 *   6.2+).  It disagrees with the first only when the task moved between
 *   the probe and the allocation.
 * - bio_put of a cache bio (REQ_ALLOC_CACHE) either puts it at the head of
 *   this CPU's list (or irq list) or frees it (cache full; in 6.2+ also
 *   from softirq); fexit looks at the heads.
 * fentry/fexit need function tracing; where it is refused (lockdown, this
 * CI host) only the tracepoint program loads: block_bio_queue counts the
 * bios that carry REQ_ALLOC_CACHE at submission, hits and misses alike,
 * and is reported as such, never as hits.
 *
 * The per-CPU address of bs->cache is computed as the kernel does, from
 * __per_cpu_offset: without BTF type tags (a GCC-built kernel) the verifier
 * knows no __percpu pointer, so bpf_per_cpu_ptr cannot take it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "biocache.h"

char LICENSE[] SEC("license") = "GPL";

extern const void __per_cpu_offset __ksym __weak;

/* A second list for puts from hard irq came with 6.2 (bio_alloc_irq_cache_splice
 * is 6.2+); Debian's 6.1.0-50 BTF has free_list and nr only, 6.12's both. */
struct bio_alloc_cache___irq {
	struct bio *free_list_irq;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, BW_BC_MAX_SETS);
	__type(key, __u64);	/* struct bio_set address; 0: none */
	__type(value, struct bw_bc_stats);
} bc_stats SEC(".maps");

struct bc_alloc {
	__u64 bs;
	__u64 pool;		/* &bs->bio_pool */
	__u64 head, head_irq;	/* this CPU's lists at entry */
	__u32 pool_seen;
	__u32 pad;
};

/* Allocations in progress, by task. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct bc_alloc);
} bc_allocs SEC(".maps");

/* Puts in progress, by bio: their bio_set, read while the bio is live. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
} bc_puts SEC(".maps");

static __always_inline __u32 req_alloc_cache(void)
{
	if (!bpf_core_enum_value_exists(enum req_flag_bits, __REQ_ALLOC_CACHE))
		return 0;
	return 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_ALLOC_CACHE);
}

static __always_inline void bump(__u64 bs, enum bw_bc_field f)
{
	struct bw_bc_stats *s, zero = {};

	s = bpf_map_lookup_elem(&bc_stats, &bs);
	if (!s) {
		bpf_map_update_elem(&bc_stats, &bs, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&bc_stats, &bs);
		if (!s)
			return;
	}
	if (f < BW_BC_NR)
		s->v[f]++;
}

/* This CPU's struct bio_alloc_cache of bs, or 0 when bs has none. */
static __always_inline struct bio_alloc_cache *cpu_cache(struct bio_set *bs)
{
	__u64 pcpu = (__u64)BPF_CORE_READ(bs, cache), off = 0;
	__u32 cpu = bpf_get_smp_processor_id();

	if (!pcpu || !&__per_cpu_offset)
		return 0;
	if (bpf_probe_read_kernel(&off, sizeof(off), (const char *)&__per_cpu_offset + cpu * 8))
		return 0;
	return (struct bio_alloc_cache *)(pcpu + off);
}

static __always_inline void cache_heads(struct bio_alloc_cache *c, __u64 *head, __u64 *head_irq)
{
	struct bio_alloc_cache___irq *ci = (void *)c;

	*head = (__u64)BPF_CORE_READ(c, free_list);
	*head_irq = 0;
	if (bpf_core_field_exists(ci->free_list_irq))
		*head_irq = (__u64)BPF_CORE_READ(ci, free_list_irq);
}

SEC("fentry/bio_alloc_bioset")
int BPF_PROG(bw_bc_alloc_in, struct block_device *bdev, unsigned short nr_vecs, __u32 opf,
	     gfp_t gfp, struct bio_set *bs)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct bc_alloc a = { .bs = (__u64)bs };
	struct bio_alloc_cache *c;

	a.pool = (__u64)bs + bpf_core_field_offset(struct bio_set, bio_pool);
	c = cpu_cache(bs);
	if (c)
		cache_heads(c, &a.head, &a.head_irq);
	bpf_map_update_elem(&bc_allocs, &tid, &a, BPF_ANY);
	return 0;
}

/* mempool_alloc_noprof from 6.10 (memory allocation profiling): the loader
 * retargets this program by BTF. */
SEC("fentry/mempool_alloc")
int BPF_PROG(bw_bc_mempool, mempool_t *pool)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct bc_alloc *a = bpf_map_lookup_elem(&bc_allocs, &tid);

	if (a && a->pool == (__u64)pool)
		a->pool_seen = 1;
	return 0;
}

SEC("fexit/bio_alloc_bioset")
int BPF_PROG(bw_bc_alloc_out, struct block_device *bdev, unsigned short nr_vecs, __u32 opf,
	     gfp_t gfp, struct bio_set *bs, struct bio *ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), flag = req_alloc_cache();
	struct bc_alloc *a = bpf_map_lookup_elem(&bc_allocs, &tid);
	__u64 key = (__u64)bs;

	if (!a || a->bs != key)
		return 0;
	if (!ret) {
		bump(key, BW_BC_FAILED);
		goto out;
	}
	bump(key, BW_BC_ALLOCS);
	if (!flag || !(opf & flag))
		goto out;
	bump(key, BW_BC_REQUESTED);
	if (!(BPF_CORE_READ(ret, bi_opf) & flag))
		goto out;
	bump(key, BW_BC_ELIGIBLE);
	bump(key, a->pool_seen ? BW_BC_MISSES : BW_BC_HITS);
	if ((__u64)ret == a->head || (a->head_irq && (__u64)ret == a->head_irq))
		bump(key, BW_BC_VERIFY_HITS);
out:
	bpf_map_delete_elem(&bc_allocs, &tid);
	return 0;
}

SEC("fentry/bio_put")
int BPF_PROG(bw_bc_put_in, struct bio *bio)
{
	__u32 flag = req_alloc_cache();
	__u64 key = (__u64)bio, bs;

	if (!flag || !(BPF_CORE_READ(bio, bi_opf) & flag))
		return 0;
	bs = (__u64)BPF_CORE_READ(bio, bi_pool);
	bump(bs, BW_BC_FLAGGED_PUTS);
	bpf_map_update_elem(&bc_puts, &key, &bs, BPF_ANY);
	return 0;
}

SEC("fexit/bio_put")
int BPF_PROG(bw_bc_put_out, struct bio *bio)
{
	__u64 key = (__u64)bio, *bs, head, head_irq;
	struct bio_alloc_cache *c;

	bs = bpf_map_lookup_elem(&bc_puts, &key);
	if (!bs)
		return 0;
	c = cpu_cache((struct bio_set *)*bs);
	if (c) {
		cache_heads(c, &head, &head_irq);
		if (head == key || head_irq == key)
			bump(*bs, BW_BC_CACHE_PUTS);
	}
	bpf_map_delete_elem(&bc_puts, &key);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(bw_bc_bio_queue, struct bio *bio)
{
	__u32 flag = req_alloc_cache();
	__u64 bs = (__u64)BPF_CORE_READ(bio, bi_pool);

	bump(bs, BW_BC_Q_BIOS);
	if (flag && (BPF_CORE_READ(bio, bi_opf) & flag))
		bump(bs, BW_BC_Q_FLAGGED);
	return 0;
}
