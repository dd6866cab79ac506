// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/cgroups.bpf.c (export --cgroups): its completion program
 * with the core's attach type, the device filter, and the series read back
 * summed over CPUs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "load/loader.h"
#include "cgroups.skel.h"

/* Series (device, op, cgroup) the map holds: allocated as they come. */
#define MAX_SERIES 16384

struct bw_cgio {
	struct cgroups_bpf *skel;
	struct bw_cg_val *pcpu;		/* one lookup's per-CPU values */
	int ncpus;
};

int bw_cgio_open(struct bw_cgio **out, const struct bw_core_opts *o,
		 const struct bw_load_env *env)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct bw_cgio *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->ncpus = env->ncpus;
	c->pcpu = calloc(c->ncpus, sizeof(*c->pcpu));
	c->skel = c->pcpu ? cgroups_bpf__open_opts(&oo) : NULL;
	if (!c->skel) {
		err = c->pcpu ? -errno : -ENOMEM;
		bw_err("opening the cgroups BPF object: %s", strerror(-err));
		goto fail;
	}
	bw_prog_pair(c->skel->progs.bw_cg_complete, c->skel->progs.bw_cg_complete_raw, true,
		     env->raw_tp);
	c->skel->rodata->rq_arg_second = env->rq_arg_second;
	c->skel->rodata->filter_on = o->nr_watch > 0;
	err = bpf_map__set_max_entries(c->skel->maps.cgio, MAX_SERIES);
	err = err ?: cgroups_bpf__load(c->skel);
	if (err) {
		bw_err("loading the cgroups BPF program: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	err = bw_fill_watch_map(bpf_map__fd(c->skel->maps.qwatch), o->nr_watch, o->watch,
				"the cgroups' device filter");
	if (err)
		goto fail;
	err = cgroups_bpf__attach(c->skel);
	if (err) {
		bw_err("attaching the cgroups program: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	bw_cgio_close(c);
	return err < 0 ? err : -EINVAL;
}

void bw_cgio_fds(const struct bw_cgio *c, struct bw_cg_fds *fds)
{
	fds->cgio = bpf_map__fd(c->skel->maps.cgio);
	fds->cgcount = bpf_map__fd(c->skel->maps.cgcount);
}

void bw_cgio_close(struct bw_cgio *c)
{
	if (!c)
		return;
	cgroups_bpf__destroy(c->skel);
	free(c->pcpu);
	free(c);
}

struct bpf_object *bw_cgio_obj(const struct bw_cgio *c)
{
	return c->skel->obj;
}

static void sum_val(const struct bw_cg_val *pc, int ncpus, struct bw_cg_val *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ncpus; i++)
		bw_cg_val_add(t, &pc[i]);
}

int bw_cgio_read(struct bw_cgio *c, struct bw_cg_series *out, int max)
{
	int fd = bpf_map__fd(c->skel->maps.cgio);
	struct bw_cg_key key, next;
	void *prev = NULL;
	int n = 0;

	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, c->pcpu))
			continue;	/* deleted meanwhile */
		out[n].key = key;
		sum_val(c->pcpu, c->ncpus, &out[n].v);
		n++;
	}
	return n;
}

void bw_cgio_forget(struct bw_cgio *c, __u64 cgroup)
{
	int fd = bpf_map__fd(c->skel->maps.cgio);
	struct bw_cg_key key, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (key.cgroup == cgroup && !bpf_map_delete_elem(fd, &key))
			continue;	/* from the start again: the order may change */
		prev = &key;
	}
}

int bw_cgio_counts(const struct bw_cgio *c, struct bw_cg_count *t)
{
	struct bw_cg_count *pc = calloc(c->ncpus, sizeof(*pc));
	__u32 zero = 0;
	int i, err = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (pc && !(err = bpf_map__lookup_elem(c->skel->maps.cgcount, &zero, sizeof(zero), pc,
					       c->ncpus * sizeof(*pc), 0))) {
		for (i = 0; i < c->ncpus; i++)
			t->no_room += pc[i].no_room;
	}
	free(pc);
	return err;
}
