// SPDX-License-Identifier: GPL-2.0
/*
 * The bio alloc cache's figures as stat and its JSON show them, from a
 * bw_bc_snap (user/load/biocache.c reads bpf/biocache.bpf.c).  Pure: no BPF, no
 * syscalls.  Each figure is shown with the method that produced it; in
 * tracepoint mode only the bios queued with REQ_ALLOC_CACHE, never hits.
 */
#include <math.h>
#include <stdlib.h>
#include "model/bcrender.h"

/* What bw_bc_snapshot (load/biocache.c) allocated in s. */
void bw_bc_snap_free(struct bw_bc_snap *s)
{
	int i;

	for (i = 0; i < s->nr; i++)
		free(s->sets[i].cpu);
	free(s->sets);
	s->sets = NULL;
	s->nr = 0;
}

const char *bw_bc_method_name(enum bw_bc_method m)
{
	return m == BW_BC_EXACT ? "exact" : m == BW_BC_TRACEPOINT ? "tracepoint" : "off";
}

/* Hits over cache-eligible allocations; NAN when there were none. */
double bw_bc_hit_ratio(const struct bw_bc_stats *s)
{
	return s->v[BW_BC_ELIGIBLE] ? (double)s->v[BW_BC_HITS] / s->v[BW_BC_ELIGIBLE] : NAN;
}

static const struct {
	enum bw_bc_field f;
	const char *key;
	bool exact;		/* only an exact method has it */
} fields[] = {
	{ BW_BC_ALLOCS, "allocs", true },
	{ BW_BC_REQUESTED, "requested", true },
	{ BW_BC_ELIGIBLE, "eligible", true },
	{ BW_BC_HITS, "hits", true },
	{ BW_BC_MISSES, "misses", true },
	{ BW_BC_VERIFY_HITS, "verify_hits", true },
	{ BW_BC_FAILED, "failed", true },
	{ BW_BC_FLAGGED_PUTS, "flagged_puts", true },
	{ BW_BC_CACHE_PUTS, "cache_puts", true },
	{ BW_BC_Q_BIOS, "queued_bios", false },
	{ BW_BC_Q_FLAGGED, "queued_cache_flagged", false },
};

const char *bw_bc_field_name(enum bw_bc_field f)
{
	unsigned int i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].f == f)
			return fields[i].key;
	return "?";
}

bool bw_bc_field_shown(enum bw_bc_method m, enum bw_bc_field f)
{
	unsigned int i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].f == f)
			return m == BW_BC_EXACT || (m == BW_BC_TRACEPOINT && !fields[i].exact);
	return false;
}

/* Only sets that allocated or queued something. */
static bool set_active(const struct bw_bc_set *set)
{
	return set->sum.v[BW_BC_ALLOCS] || set->sum.v[BW_BC_Q_BIOS] || set->sum.v[BW_BC_FLAGGED_PUTS];
}

static void json_stats(struct bw_json *j, enum bw_bc_method m, const struct bw_bc_stats *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (bw_bc_field_shown(m, fields[i].f))
			bw_json_u64(j, fields[i].key, s->v[fields[i].f]);
	if (m == BW_BC_EXACT)
		bw_json_num(j, "hit_ratio", bw_bc_hit_ratio(s), 4);
}

void bw_bc_render_json(struct bw_json *j, const struct bw_bc_snap *b)
{
	int i, cpu;

	bw_json_obj(j, "bio_cache");
	bw_json_str(j, "method", bw_bc_method_name(b->method));
	bw_json_str(j, "why", b->why && b->why[0] ? b->why : NULL);
	bw_json_arr(j, "bio_sets");
	for (i = 0; i < b->nr; i++) {
		const struct bw_bc_set *set = &b->sets[i];

		if (!set_active(set))
			continue;
		bw_json_obj(j, NULL);
		bw_json_str(j, "bio_set", set->name);
		json_stats(j, b->method, &set->sum);
		bw_json_arr(j, "per_cpu");
		for (cpu = 0; cpu < b->ncpus && set->cpu; cpu++) {
			bw_json_obj(j, NULL);
			bw_json_u64(j, "cpu", cpu);
			json_stats(j, b->method, &set->cpu[cpu]);
			bw_json_close(j, '}');
		}
		bw_json_close(j, ']');
		bw_json_close(j, '}');
	}
	bw_json_close(j, ']');
	bw_json_close(j, '}');
}

void bw_bc_render_text(FILE *f, const struct bw_bc_snap *b)
{
	int i, shown = 0;

	for (i = 0; i < b->nr; i++) {
		const struct bw_bc_set *set = &b->sets[i];
		const __u64 *v = set->sum.v;

		if (!set_active(set))
			continue;
		shown++;
		if (b->method == BW_BC_EXACT)
			fprintf(f, "bio cache (exact, since start) %-16s allocs %llu eligible %llu "
				"hits %llu (%.1f%%) misses %llu; puts to cache %llu of %llu\n",
				set->name, (unsigned long long)v[BW_BC_ALLOCS],
				(unsigned long long)v[BW_BC_ELIGIBLE],
				(unsigned long long)v[BW_BC_HITS], 100 * bw_bc_hit_ratio(&set->sum),
				(unsigned long long)v[BW_BC_MISSES],
				(unsigned long long)v[BW_BC_CACHE_PUTS],
				(unsigned long long)v[BW_BC_FLAGGED_PUTS]);
		else
			fprintf(f, "bio cache (tracepoint, since start) %-16s bios queued %llu, "
				"%llu of them cache-flagged (hits and misses not visible here)\n",
				set->name, (unsigned long long)v[BW_BC_Q_BIOS],
				(unsigned long long)v[BW_BC_Q_FLAGGED]);
	}
	if (b->method == BW_BC_OFF)
		fprintf(f, "bio cache: off (%s)\n", b->why ? b->why : "");
	else if (!shown)
		fprintf(f, "bio cache (%s): no bios yet\n", bw_bc_method_name(b->method));
}
