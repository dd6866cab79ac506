/* SPDX-License-Identifier: GPL-2.0 */
/* The loader of bpf/virtio.bpf.c (user/vioload.c), for stat --virtio. */
#ifndef BLKWISE_VIOLOAD_H
#define BLKWISE_VIOLOAD_H

#include <linux/types.h>
#include "virtio.h"

struct bw_vio;

/* Load and attach; *out is set even when it cannot load (bw_vio_why says why). */
int bw_vio_open(struct bw_vio **out);
void bw_vio_close(struct bw_vio *v);
/* Why the counts are off, or NULL when loaded. */
const char *bw_vio_why(const struct bw_vio *v);
/* The virtio device index of a disk (/sys/block/DISK/device), or -1. */
int bw_vio_index(const char *disk);
/* Counts of a virtio device since load, summed over CPUs; 0 or -errno. */
int bw_vio_read(const struct bw_vio *v, int index, struct bw_vio_stats *sum);

#endif /* BLKWISE_VIOLOAD_H */
