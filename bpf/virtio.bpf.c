// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise virtio: how virtio drivers' buffers reach a split ring, direct
 * or through an indirect descriptor, per virtio device (stat --virtio).
 *
 * Design.  drivers/virtio/virtio_ring.c puts a buffer of total_sg
 * scatterlist entries on a split ring in virtqueue_add_split: through one
 * ring descriptor pointing at a kmalloc'ed table of total_sg descriptors
 * (indirect) when virtqueue_use_indirect() holds, that is when the device
 * offered VIRTIO_RING_F_INDIRECT_DESC (vq->indirect), total_sg > 1 and the
 * ring has a free descriptor; else through total_sg ring descriptors
 * (direct).  The rule is the same in 5.10, 6.1 and 6.12.  virtio-blk's
 * request is a header, the data segments and a status byte: total_sg is
 * the request's segments + 2, never 1, so with indirect descriptors
 * offered every request goes indirect.
 *
 * The program does not recompute the rule; it reads what the kernel wrote.
 * virtqueue_add_split has 8 arguments (9 from 6.8), more than a trampoline
 * takes before 6.6 on x86, so the attach point is its exported caller,
 * virtqueue_add_sgs (6 arguments, what virtio-blk and 9p call; virtio-net's
 * add_outbuf/inbuf are not counted).  fentry notes the head the buffer will
 * take (vq->free_head) and the ring's free descriptors, keyed by the vq
 * (its driver serialises adds to one vq, so one add per vq is in flight);
 * fexit, on success, reads the head descriptor written: VRING_DESC_F_INDIRECT
 * in its flags is the indirect path, and its len / 16 the table's
 * descriptors; else the descriptors the ring lost are the direct ones.
 * Packed rings (not QEMU's default) are left out.
 *
 * The types (struct vring_virtqueue) live in the virtio_ring module's BTF
 * where it is a module (Debian); libbpf relocates against module BTF.
 * fentry/fexit need function tracing; where it is refused the object is
 * off and stat says why in one line.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "virtio.h"

char LICENSE[] SEC("license") = "GPL";

#define VRING_DESC_F_INDIRECT_BIT 4

struct vio_add {
	__u32 head;
	__u32 num_free;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BW_VIO_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct bw_vio_stats);
} vio_stats SEC(".maps");

/* Adds in progress, by vq address. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct vio_add);
} vio_adds SEC(".maps");

SEC("fentry/virtqueue_add_sgs")
int BPF_PROG(bw_vio_add_in, struct virtqueue *_vq)
{
	struct vring_virtqueue *vq = (void *)_vq;	/* vq is its first member */
	struct vio_add a;
	__u64 key = (__u64)_vq;

	if (BPF_CORE_READ(vq, packed_ring))
		return 0;
	a.head = BPF_CORE_READ(vq, free_head);
	a.num_free = BPF_CORE_READ(_vq, num_free);
	bpf_map_update_elem(&vio_adds, &key, &a, BPF_ANY);
	return 0;
}

SEC("fexit/virtqueue_add_sgs")
int BPF_PROG(bw_vio_add_out, struct virtqueue *_vq, struct scatterlist **sgs,
	     unsigned int out_sgs, unsigned int in_sgs, void *data, gfp_t gfp, int ret)
{
	struct vring_virtqueue *vq = (void *)_vq;
	struct bw_vio_stats *st;
	struct vring_desc *desc;
	struct vio_add *a;
	__u64 key = (__u64)_vq;
	__u32 idx, free_now, used;
	__u16 flags = 0;
	__u32 len = 0;

	a = bpf_map_lookup_elem(&vio_adds, &key);
	if (!a)
		return 0;
	idx = BPF_CORE_READ(_vq, vdev, index);
	st = idx < BW_VIO_MAX_DEVS ? bpf_map_lookup_elem(&vio_stats, &idx) : NULL;
	if (!st)
		goto out;
	if (ret) {
		st->v[BW_VIO_FAILED]++;
		goto out;
	}
	desc = BPF_CORE_READ(vq, split.vring.desc);
	bpf_probe_read_kernel(&flags, sizeof(flags), &desc[a->head].flags);
	if (flags & VRING_DESC_F_INDIRECT_BIT) {
		bpf_probe_read_kernel(&len, sizeof(len), &desc[a->head].len);
		st->v[BW_VIO_INDIRECT]++;
		st->v[BW_VIO_INDIRECT_DESCS] += len / sizeof(struct vring_desc);
		goto out;
	}
	free_now = BPF_CORE_READ(_vq, num_free);
	used = a->num_free - free_now;
	st->v[BW_VIO_DIRECT]++;
	st->v[BW_VIO_DIRECT_DESCS] += used;
	if (used == 1)
		st->v[BW_VIO_DIRECT_SINGLE]++;
out:
	bpf_map_delete_elem(&vio_adds, &key);
	return 0;
}
