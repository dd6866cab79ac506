// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/virtio.bpf.c (stat --virtio): per virtio device, the
 * buffers its drivers put on split rings, direct or indirect.  Where
 * fentry/fexit on virtqueue_add_sgs do not load (function tracing refused,
 * no virtio_ring), it is off, saying why in one line; the rest goes on.
 * A disk's virtio device is its /sys/block/DISK/device link (virtioN):
 * reading a link makes no request to the device.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "load/vioload.h"
#include "virtio.skel.h"

struct bw_vio {
	struct virtio_bpf *skel;
	int ncpus;
	char why[200];
};

int bw_vio_open(struct bw_vio **out)
{
	struct bw_vio *v = calloc(1, sizeof(*v));
	struct virtio_bpf *s;
	int err;

	if (!v)
		return -ENOMEM;
	*out = v;
	v->ncpus = libbpf_num_possible_cpus();
	s = virtio_bpf__open();
	err = s ? virtio_bpf__load(s) : -errno;
	err = err ?: virtio_bpf__attach(s);
	if (err) {
		virtio_bpf__destroy(s);
		snprintf(v->why, sizeof(v->why), "fentry/fexit on virtqueue_add_sgs refused: %s",
			 strerror(err < 0 ? -err : err));
		return 0;
	}
	v->skel = s;
	return 0;
}

void bw_vio_close(struct bw_vio *v)
{
	if (!v)
		return;
	virtio_bpf__destroy(v->skel);
	free(v);
}

const char *bw_vio_why(const struct bw_vio *v)
{
	return v->skel ? NULL : v->why;
}

int bw_vio_index(const char *disk)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;
	int idx;

	snprintf(path, sizeof(path), "/sys/block/%s/device", disk);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (sscanf(base, "virtio%d", &idx) != 1 || idx < 0 || idx >= BW_VIO_MAX_DEVS)
		return -1;
	return idx;
}

int bw_vio_read(const struct bw_vio *v, int index, struct bw_vio_stats *sum)
{
	struct bw_vio_stats *cpu;
	__u32 key = (__u32)index;
	int i, f, err;

	memset(sum, 0, sizeof(*sum));
	if (!v->skel)
		return -ENOENT;
	cpu = calloc(v->ncpus, sizeof(*cpu));
	if (!cpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(v->skel->maps.vio_stats), &key, cpu);
	for (i = 0; !err && i < v->ncpus; i++)
		for (f = 0; f < BW_VIO_NR; f++)
			sum->v[f] += cpu[i].v[f];
	free(cpu);
	return err ? -errno : 0;
}
