/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by bpf/virtio.bpf.c and its loader (user/vioload.c):
 * per virtio device (its index, the N of /sys/bus/virtio/devices/virtioN)
 * and per CPU, the buffers added to its split rings through
 * virtqueue_add_sgs, by descriptor kind.  A plain array of __u64, so user
 * space sums per-CPU copies field by field.
 */
#ifndef BLKWISE_VIRTIO_H
#define BLKWISE_VIRTIO_H

enum bw_vio_field {
	BW_VIO_INDIRECT,	/* buffers added through one indirect descriptor */
	BW_VIO_INDIRECT_DESCS,	/* ... the descriptors in their tables (len / 16) */
	BW_VIO_DIRECT,		/* buffers added through direct descriptors */
	BW_VIO_DIRECT_DESCS,	/* ... the ring descriptors they took */
	BW_VIO_DIRECT_SINGLE,	/* direct buffers of one descriptor */
	BW_VIO_FAILED,		/* virtqueue_add_sgs returned an error (ring full) */
	BW_VIO_NR,
};

struct bw_vio_stats {
	__u64 v[BW_VIO_NR];
};

#define BW_VIO_MAX_DEVS 256	/* virtio device indexes counted; above: not */

#endif /* BLKWISE_VIRTIO_H */
