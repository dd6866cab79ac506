// SPDX-License-Identifier: GPL-2.0
/*
 * The cost model and the ceiling's plan (user/model/cost.c): prices learned
 * from the kernel's accounting by kind, and the shares a ceiling leaves,
 * checked by spending them: whatever the plan says, the CPU it implies is
 * within the ceiling wherever the ceiling can be kept at all.
 */
#include "unit.h"
#include "model/model.h"

static void test_kinds(void)
{
	CHECK(bw_cost_kind_of("bw_light_complete") == BW_COST_ALWAYS, "light C");
	CHECK(bw_cost_kind_of("bw_light_issue_raw") == BW_COST_TIMING, "light D");
	CHECK(bw_cost_kind_of("bw_light_io_start") == BW_COST_TIMING, "light Q");
	CHECK(bw_cost_kind_of("bw_complete_nf") == BW_COST_EXACT, "exact C");
	CHECK(bw_cost_kind_of("bw_bc_alloc") == BW_COST_OTHER, "bio cache");
	CHECK(bw_cost_kind_of("other") == BW_COST_OTHER, "not ours");
}

/* A kind's price: its programs' time over its anchor's runs; too few runs teach nothing. */
static void test_learn(void)
{
	struct bw_prog_stat a[3] = {
		{ "bw_light_complete", 1000, 10 }, { "bw_light_rq_merge", 0, 0 },
		{ "bw_complete", 0, 0 },
	};
	struct bw_prog_stat b[3] = {
		{ "bw_light_complete", 1000 + 150ULL * 100000, 10 + 100000 },
		{ "bw_light_rq_merge", 10ULL * 100000, 5000 },
		{ "bw_complete", 500ULL * 10, 10 },
	};
	struct bw_cost_model m;

	bw_cost_init(&m);
	bw_cost_learn(&m, a, b, 3);
	CHECK_NEAR(m.ns[BW_COST_ALWAYS], 160, 1e-9, "light: complete and merge over completions");
	CHECK(m.measured[BW_COST_ALWAYS], "measured");
	CHECK(m.ns[BW_COST_EXACT] == BW_COST_EXACT_NS && !m.measured[BW_COST_EXACT],
	      "10 runs teach nothing: %g", m.ns[BW_COST_EXACT]);
	bw_cost_switched(&m, true, 0.004);
	CHECK(m.sw_light_s == 0.004, "the first switch replaces the default");
	bw_cost_switched(&m, true, 0.008);
	CHECK_NEAR(m.sw_light_s, 0.005, 1e-9, "later ones average in");
}

/* What a plan costs a second: the light tier's share, its switching, the slices' budget. */
static double spent(const struct bw_cost_model *m, const struct bw_cost_in *in,
		    const struct bw_cost_plan *p)
{
	double cycle_s = p->cycle * in->period_s;
	double light = in->rate * m->ns[BW_COST_ALWAYS] / 1e9 * p->light_share;
	double sw = (p->light_share < 1 ? m->sw_light_s : 0) / cycle_s +
		    (in->min_timing > 0 ? m->sw_timing_s : 0) / cycle_s;

	return in->user + light + sw + p->slice_budget;
}

static void test_no_ceiling(void)
{
	struct bw_cost_model m;
	struct bw_cost_in in = { .rate = 1e6, .user = 0.01, .budget = 0.0025, .min_timing = 0.004,
				 .period_s = 0.5 };
	struct bw_cost_plan p;

	bw_cost_init(&m);
	bw_cost_plan(&m, &in, &p);
	CHECK(p.light_share == 1 && p.cycle == 1 && p.slice_budget == 0.0025,
	      "unbounded: %g %d %g", p.light_share, p.cycle, p.slice_budget);
}

/* Room for the light tier throughout: the slices get what is left, up to their budget. */
static void test_room(void)
{
	struct bw_cost_model m;
	struct bw_cost_in in = { .ceiling = 0.01, .rate = 10000, .user = 0.0005, .budget = 0.0025,
				 .min_timing = 0.004, .period_s = 0.5 };
	struct bw_cost_plan p;

	bw_cost_init(&m);
	m.sw_timing_s = 0.0005;
	bw_cost_plan(&m, &in, &p);
	CHECK(p.light_share == 1 && p.cycle == 1, "throughout: %g %d", p.light_share, p.cycle);
	CHECK(p.slice_budget == 0.0025, "the slices' whole budget: %g", p.slice_budget);
	in.ceiling = 0.005 / 0.9;	/* aimed at 0.5%: 0.25% light, 0.1% switching, 0.05% user */
	bw_cost_plan(&m, &in, &p);
	CHECK(p.light_share == 1, "still throughout: %g", p.light_share);
	CHECK_NEAR(p.slice_budget, 0.001, 1e-6, "the slices: what is left");
	CHECK(spent(&m, &in, &p) <= in.ceiling * (1 + 1e-9), "spent %g", spent(&m, &in, &p));
}

/*
 * The light tier alone over the ceiling: a share of a cycle long enough
 * that switching takes at most a quarter of what is left; the plan spends
 * no more than the ceiling at any switching price, and a dearer switch
 * makes the cycle longer, not the spending higher.
 */
static void test_duty_cycle(void)
{
	static const double sw[] = { 0.00002, 0.0005, 0.002 };
	struct bw_cost_model m;
	struct bw_cost_in in = { .ceiling = 0.005, .rate = 300000, .user = 0.0003,
				 .budget = 0.0025, .min_timing = 0.004, .period_s = 0.5 };
	struct bw_cost_plan p;
	int last_cycle = 0;
	size_t i;

	bw_cost_init(&m);
	m.ns[BW_COST_ALWAYS] = 150;	/* 4.5% of a CPU throughout */
	for (i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		m.sw_light_s = m.sw_timing_s = sw[i];
		bw_cost_plan(&m, &in, &p);
		CHECK(p.light_share > 0 && p.light_share < 0.2, "switch %g: share %g", sw[i],
		      p.light_share);
		CHECK(p.cycle >= last_cycle, "switch %g: cycle %d after %d", sw[i], p.cycle,
		      last_cycle);
		CHECK(spent(&m, &in, &p) <= in.ceiling * (1 + 1e-9), "switch %g: spent %g", sw[i],
		      spent(&m, &in, &p));
		CHECK(spent(&m, &in, &p) >= in.ceiling * 0.85, "switch %g: spent %g, the ceiling used",
		      sw[i], spent(&m, &in, &p));
		last_cycle = p.cycle;
	}
	CHECK(last_cycle > 1, "a dear switch: a cycle of %d periods", last_cycle);
	/* The process alone over the ceiling: nothing for the light tier. */
	in.user = 0.006;
	bw_cost_plan(&m, &in, &p);
	CHECK(p.light_share == 0 && p.cycle == BW_COST_MAX_CYCLE, "over: %g %d", p.light_share,
	      p.cycle);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_kinds), UNIT(test_learn), UNIT(test_no_ceiling), UNIT(test_room),
		UNIT(test_duty_cycle),
	};

	return unit_run("cost", tests, sizeof(tests) / sizeof(tests[0]));
}
