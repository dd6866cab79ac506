/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-cgroup series of export --cgroups (bpf/cgroups.h) and how a final
 * completion adds to them, for the objects that count into them:
 * bpf/cgroups.bpf.c for requests, bpf/bio.bpf.c for the bios of bio-based
 * devices, which have no requests.  The loader hands the bio object the
 * cgroups object's maps (one map, one set of series); the bio object alone
 * keeps a map of one entry it never uses.
 */
#ifndef BLKWISE_CGIO_BPF_H
#define BLKWISE_CGIO_BPF_H

#include "cgroups.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* the loader sets it */
	__type(key, struct bw_cg_key);
	__type(value, struct bw_cg_val);
} cgio SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_cg_count);
} cgcount SEC(".maps");

/* A new series' first value, zeroed (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_cg_val);
} cgzero SEC(".maps");

/* The series of k, made at its first completion; NULL (counted) when the map is full. */
static __always_inline struct bw_cg_val *bw_cg_series(const struct bw_cg_key *k)
{
	struct bw_cg_val *v = bpf_map_lookup_elem(&cgio, k), *zero;
	struct bw_cg_count *cc;
	__u32 z = 0;

	if (v)
		return v;
	zero = bpf_map_lookup_elem(&cgzero, &z);
	if (!zero)
		return NULL;
	if (bpf_map_update_elem(&cgio, k, zero, BPF_NOEXIST)) {
		cc = bpf_map_lookup_elem(&cgcount, &z);
		if (cc)
			cc->no_room++;
	}
	return bpf_map_lookup_elem(&cgio, k);
}

/* A final completion: one more I/O, and its service time d2c where timed. */
static __always_inline void bw_cg_final(struct bw_cg_val *val, __u64 d2c, bool timed)
{
	__u32 b;

	val->ios++;
	if (!timed)
		return;
	val->timed++;
	val->d2c_ns += d2c;
	b = bw_expo_bucket(d2c >> BW_LAT_SHIFT);
	barrier_var(b);
	if (b <= BW_EXPO_LAT_BOUNDS)
		val->hist[b]++;
}

#endif /* BLKWISE_CGIO_BPF_H */
