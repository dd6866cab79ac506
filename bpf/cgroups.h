/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by bpf/cgroups.bpf.c and its loader user/load/cgroups.c:
 * per device, cgroup and op, what completions carried (export --cgroups).
 */
#ifndef BLKWISE_CGROUPS_H
#define BLKWISE_CGROUPS_H

#include "hist.h"

/*
 * A series' key.  cgroup is the id (kernfs inode) of the cgroup the kernel
 * charged the request to, in the hierarchy that holds the io controller
 * (cgroup v2, or v1's blkio); 0 when the request carried no owner (no bio,
 * or no blkg: a flush, a passthrough request, a kernel without blk-cgroup).
 */
struct bw_cg_key {
	__u32 dev;		/* MKDEV of the disk */
	__u32 op;		/* enum bw_op (bpf/core.h) */
	__u64 cgroup;
};

/* Per CPU.  hist: D2C at export resolution (bw_expo_bucket, bpf/hist.h). */
struct bw_cg_val {
	__u64 ios;		/* final completions */
	__u64 bytes;		/* every completion's bytes, partial ones too */
	__u64 timed;		/* final completions with an issue stamp: hist's count */
	__u64 d2c_ns;		/* their service time, summed */
	__u64 hist[BW_EXPO_LAT_BOUNDS + 1];
};

/* Rare events, per CPU. */
struct bw_cg_count {
	__u64 no_room;		/* a new series found the map full: not counted */
};

#endif /* BLKWISE_CGROUPS_H */
