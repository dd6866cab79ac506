/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-device maps of every object that counts into struct
 * bw_dev_shared and bw_dev_pcpu (bpf/core.h, with the rules of
 * bpf/flight.h and bpf/complete.h): a dev_t's slot, the slot's shared
 * word and its per-CPU counters.
 * The loader sizes all three and gives each known device its slot
 * (user/load/object.c, bw_fill_dev_slots); user space sums a slot with
 * user/model/snap.c.  shared_flags is BPF_F_MMAPABLE where user space maps
 * the shared array.
 */
#ifndef BLKWISE_DEVMAPS_BPF_H
#define BLKWISE_DEVMAPS_BPF_H

#include "core.h"
#include "util.bpf.h"
#include "complete.h"

/*
 * A completion's op figures (*op its op), or NULL: an op out of range, or
 * a partial completion (nr_bytes short of what is left: the request stays
 * in flight), whose bytes are added and nothing else.
 */
static __always_inline struct bw_op_pcpu *bw_final_op(struct bw_dev_pcpu *pc, __u32 cmd_flags,
						      __u32 data_len, __u32 nr_bytes, __u32 *op)
{
	struct bw_op_pcpu *os;

	*op = bw_op_of(cmd_flags);
	if (*op >= BW_NR_OPS)
		return NULL;
	os = &pc->op[*op];
	if (nr_bytes < data_len) {
		bw_count_partial(os, nr_bytes);
		return NULL;
	}
	return os;
}

#define BW_DEV_MAPS(shared_flags)						\
struct {									\
	__uint(type, BPF_MAP_TYPE_ARRAY);					\
	__uint(map_flags, shared_flags);					\
	__uint(max_entries, 16);						\
	__type(key, __u32);							\
	__type(value, struct bw_dev_shared);					\
} shared SEC(".maps");								\
										\
struct {									\
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);				\
	__uint(max_entries, 16);						\
	__type(key, __u32);							\
	__type(value, struct bw_dev_pcpu);					\
} pcpu SEC(".maps");								\
										\
/* dev_t -> slot; with filter_on, only the watched devices are in it. */	\
struct {									\
	__uint(type, BPF_MAP_TYPE_HASH);					\
	__uint(max_entries, 16);						\
	__type(key, __u32);							\
	__type(value, __u32);							\
} dev2slot SEC(".maps")

#endif /* BLKWISE_DEVMAPS_BPF_H */
