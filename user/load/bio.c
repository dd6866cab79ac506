// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/bio.bpf.c: finds the bio-based disks to watch (those with no
 * /sys/block/X/mq: no request queue of their own), gives each a slot, and
 * adds their figures to the core's snapshot.  Nothing is loaded when there is
 * no such disk, so request-based devices pay nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "load/loader.h"
#include "bio.skel.h"

struct bw_bio {
	struct bio_bpf *skel;
	int ncpus;
	__u32 max_slots;
	struct bw_dev_pcpu *pcpu_buf;
	struct bw_op_stats **hist;	/* per slot: histograms extended to 64 bits */
};

/* The bio-based disks among the watched ones, or among all present. */
static int list_bio_disks(const struct bw_core_opts *o, __u32 *out, int max)
{
	__u32 all[BW_MAX_WATCH];
	int i, n, k = 0;

	n = bw_watched_or_all(o->nr_watch, o->watch, all, BW_MAX_WATCH);
	for (i = 0; i < n && k < max; i++)
		if (bw_dev_is_bio_based(all[i]))
			out[k++] = all[i];
	return k;
}

/*
 * A failure is an error when a bio-based device was named with -d; when
 * every device is watched it is a warning, and the others are still watched.
 */
int bw_bio_open(struct bw_bio **out, const struct bw_core_opts *o, const struct bw_load_env *env,
		const struct bw_cg_fds *cg)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	void (*say)(const char *fmt, ...) = o->nr_watch ? bw_err : bw_warn;
	__u32 devs[BW_MAX_WATCH];
	struct bw_bio *b;
	int n, err;

	*out = NULL;
	n = list_bio_disks(o, devs, BW_MAX_WATCH);
	if (!n)
		return 0;
	if (!env->have_fetch) {
		/* bpf/flight.h's fetch atomics: the object would be refused whole. */
		if (o->nr_watch) {
			bw_err("bio-based devices need BPF atomic fetch-and-add: Linux 5.12 or later");
			return -EOPNOTSUPP;
		}
		bw_warn("bio-based devices are not measured on this kernel "
			"(no BPF atomic fetch-and-add: Linux 5.12 or later)");
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ncpus = env->ncpus;
	b->pcpu_buf = calloc(b->ncpus, sizeof(*b->pcpu_buf));
	b->skel = bio_bpf__open_opts(&oo);
	if (!b->pcpu_buf || !b->skel) {
		err = b->skel ? -ENOMEM : -errno;
		say("opening the bio BPF object: %s", strerror(-err));
		goto fail;
	}
	/* Room for bio-based disks appearing later, when every device is watched. */
	b->max_slots = o->nr_watch ? (__u32)n : (__u32)n + 16;
	bw_prog_pair(b->skel->progs.bw_bio_queue, b->skel->progs.bw_bio_queue_raw, true, env->raw_tp);
	bw_prog_pair(b->skel->progs.bw_bio_complete, b->skel->progs.bw_bio_complete_raw, true,
		     env->raw_tp);
	b->skel->rodata->bio_arg_second = env->bio_arg_second;
	b->skel->rodata->filter_on = o->nr_watch > 0;
	b->skel->rodata->max_slots = b->max_slots;
	b->skel->rodata->have_fetch = env->have_fetch;
	b->hist = calloc(b->max_slots, sizeof(*b->hist));
	if (!b->hist) {
		err = -ENOMEM;
		goto fail;
	}
	/* export --cgroups: the bios' series go into the cgroups object's maps. */
	b->skel->rodata->cg_on = cg != NULL;
	err = cg ? bpf_map__reuse_fd(b->skel->maps.cgio, cg->cgio) ?:
		   bpf_map__reuse_fd(b->skel->maps.cgcount, cg->cgcount) :
		   bpf_map__set_max_entries(b->skel->maps.cgio, 1);
	err = err ?: bpf_map__set_max_entries(b->skel->maps.shared, b->max_slots);
	err = err ?: bpf_map__set_max_entries(b->skel->maps.pcpu, b->max_slots);
	err = err ?: bpf_map__set_max_entries(b->skel->maps.dev2slot, b->max_slots);
	if (err) {
		say("sizing the bio BPF maps: %s", strerror(-err));
		goto fail;
	}
	err = bio_bpf__load(b->skel);
	if (err) {
		say("loading the bio BPF programs (bio-based devices): %s; rerun with --verbose",
		    strerror(-err));
		goto fail;
	}
	err = bw_fill_dev_slots(bpf_map__fd(b->skel->maps.dev2slot),
				bpf_map__fd(b->skel->maps.shared), devs, n);
	if (err)
		goto fail;
	b->skel->bss->next_slot = n;
	err = bio_bpf__attach(b->skel);
	if (err) {
		say("attaching to block_bio_queue/complete (bio-based devices): %s; "
		    "rerun with --verbose", strerror(-err));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	bw_bio_close(b);
	if (!o->nr_watch)
		return 0;	/* said as a warning: go on without them */
	return err < 0 ? err : -EINVAL;
}

void bw_bio_close(struct bw_bio *b)
{
	__u32 i;

	if (!b)
		return;
	bio_bpf__destroy(b->skel);
	for (i = 0; b->hist && i < b->max_slots; i++)
		free(b->hist[i]);
	free(b->hist);
	free(b->pcpu_buf);
	free(b);
}

struct bpf_object *bw_bio_obj(const struct bw_bio *b)
{
	return b->skel->obj;
}

__u32 bw_bio_slots(const struct bw_bio *b)
{
	return b ? b->max_slots : 0;
}

int bw_bio_snapshot(struct bw_bio *b, struct bw_snap *s)
{
	int sfd = bpf_map__fd(b->skel->maps.shared);
	int pfd = bpf_map__fd(b->skel->maps.pcpu);
	/* Close the max-depth epoch first, so what we read is final for it. */
	__u64 closed = __atomic_fetch_add(&b->skel->bss->epoch, 1, __ATOMIC_SEQ_CST);
	__u32 slot, nslots = b->skel->bss->next_slot;
	int err;

	if (nslots > b->max_slots)
		nslots = b->max_slots;
	for (slot = 0; slot < nslots; slot++) {
		struct bw_dev_shared sh;
		struct bw_snap_dev *d;

		err = bpf_map_lookup_elem(sfd, &slot, &sh) ? -errno : 0;
		err = err ?: bw_slot_read(pfd, slot, b->pcpu_buf, b->hist);
		if (err) {
			bw_err("reading the bio BPF maps, slot %u: %s", slot, strerror(-err));
			return err;
		}
		if (!sh.dev)
			continue;
		d = bw_snap_dev_get(s, (__u32)sh.dev, s->cap);
		if (!d)
			continue;
		bw_snap_add_pcpu(d, b->pcpu_buf, b->ncpus, closed, b->hist[slot]);
		d->stall_unknown = true;	/* no dispatch to stall: bio to bio */
		/* The bio object keeps its own in-flight word, whichever tier the requests have. */
		d->light = false;
		d->fallback = 0;
		if (sh.word & BW_INFLIGHT_MASK) {
			d->inflight += sh.word & BW_INFLIGHT_MASK;
			if (s->ts_ns > sh.busy_start)
				d->busy_ns += s->ts_ns - sh.busy_start;
		}
	}
	return 0;
}

/* bw_core_refresh for the bio-based slots. */
int bw_bio_refresh(struct bw_bio *b)
{
	__u32 nslots = b->skel->bss->next_slot;

	return bw_slots_refresh(bpf_map__fd(b->skel->maps.pcpu),
				nslots < b->max_slots ? nslots : b->max_slots, b->pcpu_buf, b->ncpus,
				b->hist);
}

void bw_bio_print(const struct bw_bio *b, FILE *f)
{
	const struct bio_bpf__bss *x = b->skel->bss;

	fprintf(f, "blkwise: bio-based devices %u (slots %u); bios in flight %llu, no room %llu, "
		"slot overflow %llu\n", x->next_slot, b->max_slots,
		(unsigned long long)x->tracked, (unsigned long long)x->no_room,
		(unsigned long long)x->slot_overflow);
}
