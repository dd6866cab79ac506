/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-device maps of every object that counts into struct
 * bw_dev_shared and bw_dev_pcpu (bpf/core.h, with bpf/flight.bpf.h's
 * rules): a dev_t's slot, the slot's shared word and its per-CPU counters.
 * The loader sizes all three and gives each known device its slot
 * (user/load/object.c, bw_fill_dev_slots); user space sums a slot with
 * user/model/snap.c.  shared_flags is BPF_F_MMAPABLE where user space maps
 * the shared array.
 */
#ifndef BLKWISE_DEVMAPS_BPF_H
#define BLKWISE_DEVMAPS_BPF_H

#include "core.h"

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
