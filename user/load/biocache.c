// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/biocache.bpf.c (--bio-cache): the per-cpu bio alloc cache,
 * counted exactly where fentry/fexit load, else at block_bio_queue alone
 * (no hit, miss or ratio then: user/model/bcrender.c says what each method can
 * tell).  Bio sets are named from /proc/kallsyms, read at load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "load/loader.h"
#include "biocache.skel.h"

#define BC_NAMES 1024

struct bw_bc {
	struct biocache_bpf *skel;
	enum bw_bc_method method;
	char why[200];
	int nnames;
	struct { __u64 addr; char name[48]; } names[BC_NAMES];
};

static void bc_read_names(struct bw_bc *b);

/* Load and attach, exact (fentry/fexit too) or with the tracepoint alone. */
static int bc_load(struct bw_bc *b, const struct bw_load_env *env, bool exact)
{
	struct biocache_bpf *s = biocache_bpf__open();
	struct bpf_program *fprogs[5];
	size_t i;
	int err;

	if (!s)
		return -errno;
	fprogs[0] = s->progs.bw_bc_alloc_in;
	fprogs[1] = s->progs.bw_bc_mempool;
	fprogs[2] = s->progs.bw_bc_alloc_out;
	fprogs[3] = s->progs.bw_bc_put_in;
	fprogs[4] = s->progs.bw_bc_put_out;
	for (i = 0; i < 5; i++)
		bpf_program__set_autoload(fprogs[i], exact);
	/* Memory allocation profiling (6.10) renamed it mempool_alloc_noprof. */
	if (exact && env->mempool_noprof)
		bpf_program__set_attach_target(s->progs.bw_bc_mempool, 0, "mempool_alloc_noprof");
	err = biocache_bpf__load(s);
	err = err ?: biocache_bpf__attach(s);
	if (err) {
		biocache_bpf__destroy(s);
		return err;
	}
	b->skel = s;
	return 0;
}

/*
 * Exact where fentry/fexit load and attach; else the tracepoint alone,
 * saying why.  Neither: bio cache accounting off (*out kept, to say why),
 * the rest goes on.
 */
int bw_bc_open(struct bw_bc **out, const struct bw_load_env *env, bool verbose)
{
	struct bw_bc *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	*out = b;
	if (!env->has_biocache) {
		snprintf(b->why, sizeof(b->why), "this kernel has no per-cpu bio alloc cache "
			 "(REQ_ALLOC_CACHE, Linux 5.15 or later)");
		bw_warn("bio cache accounting off: %s", b->why);
		return 0;
	}
	bc_read_names(b);
	err = bc_load(b, env, true);
	if (!err) {
		b->method = BW_BC_EXACT;
		return 0;
	}
	snprintf(b->why, sizeof(b->why), "fentry/fexit on bio_alloc_bioset, bio_put refused: %s",
		 strerror(-err));
	err = bc_load(b, env, false);
	if (!err) {
		b->method = BW_BC_TRACEPOINT;
		if (verbose)
			bw_warn("bio cache: %s; counting REQ_ALLOC_CACHE bios at block_bio_queue only",
				b->why);
		return 0;
	}
	snprintf(b->why + strlen(b->why), sizeof(b->why) - strlen(b->why),
		 "; tp_btf/block_bio_queue refused: %s", strerror(-err));
	bw_warn("bio cache accounting off: %s", b->why);
	return 0;
}

void bw_bc_close(struct bw_bc *b)
{
	if (!b)
		return;
	biocache_bpf__destroy(b->skel);
	free(b);
}

/*
 * Data symbols that may be bio_sets (fs_bio_set, blkdev_dio_pool, ...),
 * read at load while /proc/kallsyms still shows addresses (the exporter
 * drops privileges); a set is named only by an exact address match.
 */
static void bc_read_names(struct bw_bc *b)
{
	char line[256], sym[128], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && b->nnames < BC_NAMES && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) != 3 || !a ||
		    !strchr("bBdD", type) || (!strstr(sym, "bio") && !strstr(sym, "pool") &&
					       !strstr(sym, "_bs")))
			continue;
		b->names[b->nnames].addr = a;
		snprintf(b->names[b->nnames].name, sizeof(b->names[0].name), "%.47s", sym);
		b->nnames++;
	}
	if (f)
		fclose(f);
}

static void bc_name(const struct bw_bc *b, __u64 addr, char *out, size_t len)
{
	int i;

	for (i = 0; i < b->nnames; i++) {
		if (b->names[i].addr == addr) {
			snprintf(out, len, "%s", b->names[i].name);
			return;
		}
	}
	snprintf(out, len, addr ? "0x%llx" : "none", (unsigned long long)addr);
}

struct bpf_object *bw_bc_obj(const struct bw_bc *b)
{
	return b && b->skel ? b->skel->obj : NULL;
}

int bw_bc_snapshot(const struct bw_bc *b, int ncpus, struct bw_bc_snap *s)
{
	__u64 key, next, *prev = NULL;
	int fd, cpu, f;

	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	if (!b || !b->skel) {
		s->why = b ? b->why : "not asked for";
		return 0;
	}
	s->method = b->method;
	s->why = b->why;
	s->sets = calloc(BW_BC_MAX_SETS, sizeof(*s->sets));
	if (!s->sets)
		return -ENOMEM;
	fd = bpf_map__fd(b->skel->maps.bc_stats);
	while (s->nr < BW_BC_MAX_SETS && !bpf_map_get_next_key(fd, prev, &next)) {
		struct bw_bc_set *set = &s->sets[s->nr];

		key = next;
		prev = &key;
		set->cpu = calloc(ncpus, sizeof(*set->cpu));
		if (!set->cpu)
			return -ENOMEM;
		if (bpf_map_lookup_elem(fd, &key, set->cpu)) {
			free(set->cpu);
			set->cpu = NULL;
			continue;
		}
		set->bs = key;
		bc_name(b, key, set->name, sizeof(set->name));
		for (cpu = 0; cpu < ncpus; cpu++)
			for (f = 0; f < BW_BC_NR; f++)
				set->sum.v[f] += set->cpu[cpu].v[f];
		s->nr++;
	}
	return 0;
}
