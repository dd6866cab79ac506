// SPDX-License-Identifier: GPL-2.0
/*
 * What blkwise costs the machine, and how a ceiling (--max-cpu) is kept:
 * pure arithmetic over what user/watch/cost.c measures.
 *
 * - Its programs' price per run comes from the kernel's own accounting
 *   (run_time_ns, run_cnt) over windows where it is on: a program kind's
 *   ns per run is learned as their ratio (bw_cost_learn).  The run counts
 *   between windows are not counted by the kernel, so the cost of an
 *   interval is the kinds' prices times the events that ran them:
 *   completions on every device for the always-attached programs, and
 *   those during timing and exact slices for theirs (bw_cost_cpu).
 * - Its own process's CPU is the kernel's (getrusage).
 * - Under a ceiling the slices are shortened first, then the light tier
 *   runs for a share of each period (bw_cost_plan).
 */
#include <math.h>
#include <string.h>
#include "model/model.h"

/* A program's kind by its name (the names of the BPF objects' programs). */
enum bw_cost_kind bw_cost_kind_of(const char *prog)
{
	static const struct { const char *prefix; enum bw_cost_kind k; } kinds[] = {
		{ "bw_light_issue", BW_COST_TIMING },
		{ "bw_light_io_start", BW_COST_TIMING },
		{ "bw_light_", BW_COST_ALWAYS },
		{ "bw_cg_", BW_COST_ALWAYS },
		{ "bw_bio_", BW_COST_ALWAYS },
		{ "bw_bc_", BW_COST_OTHER },
		{ "bw_vio_", BW_COST_OTHER },
		{ "bw_", BW_COST_EXACT },
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(prog, kinds[i].prefix, strlen(kinds[i].prefix)))
			return kinds[i].k;
	return BW_COST_OTHER;
}

void bw_cost_init(struct bw_cost_model *m)
{
	memset(m, 0, sizeof(*m));
	m->ns[BW_COST_ALWAYS] = BW_COST_ALWAYS_NS;
	m->ns[BW_COST_TIMING] = BW_COST_TIMING_NS;
	m->ns[BW_COST_EXACT] = BW_COST_EXACT_NS;
	m->sw_light_s = BW_COST_SWITCH_S;
	m->sw_timing_s = BW_COST_SWITCH_S;
}

/* A switch pair measured (CPU seconds): the first replaces the default, later ones average in. */
void bw_cost_switched(struct bw_cost_model *m, bool light, double pair_s)
{
	double *v = light ? &m->sw_light_s : &m->sw_timing_s;
	bool *seen = light ? &m->sw_light_seen : &m->sw_timing_seen;

	if (!(pair_s >= 0))
		return;
	*v = *seen ? 0.75 * *v + 0.25 * pair_s : pair_s;
	*seen = true;
}

/*
 * A kind's events are the runs of its anchor program: the light tier's
 * completion (one per completion on any device), its issue program (one
 * per request issued during a timing slice), the exact tier's completion.
 */
static bool is_anchor(const char *prog, enum bw_cost_kind k)
{
	static const char *const anchor[BW_COST_OTHER] = {
		"bw_light_complete", "bw_light_issue", "bw_complete",
	};
	size_t n = strlen(anchor[k]);

	/* The anchor itself or one of its copies (_raw, _nf), not a longer name. */
	return !strncmp(prog, anchor[k], n) && (!prog[n] || prog[n] == '_') &&
	       (prog[n] != '_' || !strncmp(prog + n, "_raw", 4) || !strncmp(prog + n, "_nf", 3));
}

/*
 * a and b: the programs' accounting at a window's two ends (as
 * bw_watch_prog_stats lists them, the same programs in the same order).
 * A kind is priced as its programs' run time over its anchor's runs, where
 * there were enough of them.
 */
void bw_cost_learn(struct bw_cost_model *m, const struct bw_prog_stat *a,
		   const struct bw_prog_stat *b, int n)
{
	double ns[BW_COST_KINDS] = { 0 }, runs[BW_COST_KINDS] = { 0 };
	enum bw_cost_kind k;
	int i;

	for (i = 0; i < n; i++) {
		if (strcmp(a[i].name, b[i].name) || b[i].run_ns < a[i].run_ns ||
		    b[i].run_cnt < a[i].run_cnt)
			continue;
		k = bw_cost_kind_of(b[i].name);
		ns[k] += (double)(b[i].run_ns - a[i].run_ns);
		if (k < BW_COST_OTHER && is_anchor(b[i].name, k))
			runs[k] += (double)(b[i].run_cnt - a[i].run_cnt);
	}
	for (k = 0; k < BW_COST_OTHER; k++) {
		if (runs[k] < BW_COST_MIN_EVENTS)
			continue;
		m->ns[k] = ns[k] / runs[k];
		m->measured[k] = true;
	}
}

double bw_cost_cpu(const struct bw_cost_model *m, const double events[BW_COST_KINDS], double secs)
{
	double ns = 0;
	int k;

	if (secs <= 0)
		return 0;
	for (k = 0; k < BW_COST_OTHER; k++)
		ns += events[k] * m->ns[k];
	return ns / 1e9 / secs;
}

/*
 * The shares under a ceiling (in->ceiling of one CPU; 0: none).  The light
 * tier attached throughout costs rate times its price; a timing slice each
 * period its programs' switching and at least min_timing of the period's
 * requests at theirs; what is left goes to the slices, up to their budget.
 * Where the light tier throughout is more than the ceiling leaves, it runs
 * for a share of a cycle of periods, and the slices once a cycle: a cycle
 * long enough that switching (m->sw_*) takes at most SWITCH_SHARE of what
 * is left, so that the share the requests get is not spent attaching.
 */
#define SWITCH_SHARE 0.25
/* The plan spends this much of the ceiling: the rest is for a load's first period. */
#define AIM 0.9

void bw_cost_plan(const struct bw_cost_model *m, const struct bw_cost_in *in,
		  struct bw_cost_plan *p)
{
	double light = in->rate * m->ns[BW_COST_ALWAYS] / 1e9;
	double timing = in->rate * m->ns[BW_COST_TIMING] / 1e9;
	double sw_t = in->min_timing > 0 ? m->sw_timing_s : 0;
	double t_min = timing * in->min_timing * in->period_s;	/* a shortest slice's CPU */
	double left = AIM * in->ceiling - in->user, over, cycle_s;

	p->light_share = 1;
	p->slice_budget = in->budget;
	p->cycle = 1;
	if (in->ceiling <= 0 || !(in->period_s > 0))
		return;
	/* Throughout, with a timing slice a period. */
	over = (sw_t + t_min) / in->period_s;
	if (left >= light + over) {
		p->slice_budget = fmin(in->budget, left - light - sw_t / in->period_s);
		return;
	}
	/* A share of a cycle: the switching of both, and one shortest slice, per cycle. */
	over = m->sw_light_s + sw_t + t_min;
	cycle_s = left > 0 ? over / (SWITCH_SHARE * left) : INFINITY;
	p->cycle = (int)fmin(BW_COST_MAX_CYCLE, fmax(1, ceil(cycle_s / in->period_s)));
	cycle_s = p->cycle * in->period_s;
	p->slice_budget = t_min / cycle_s;
	p->light_share = light > 0 ? fmax(0, left - over / cycle_s) / light : 1;
	if (p->light_share > 1)
		p->light_share = 1;
}
