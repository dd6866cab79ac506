// SPDX-License-Identifier: GPL-2.0
/*
 * Slices beside the light tier (docs/design.md, "Two tiers"): for a part
 * of every period the light tier gets help it pays for only then.
 *
 * - Timing slices, where the kernel's stamps are a plug's cached clock
 *   (6.9+): the light tier's own Q and issue programs time requests
 *   themselves (bpf/light.bpf.c), so that service and queue time are
 *   those events' own, not the plug's.  One a period (half a second), so
 *   every interval of stat holds one; as long as the budget (a share of
 *   one CPU, exact_budget) pays at the last rate of completions, at their
 *   price per request: at a low rate they run throughout, at a high one
 *   for milliseconds of each period.  A slice ends in two steps: its
 *   issues stop being timed, then the completions of those it timed are
 *   still looked up until they are all back (its drain), so a long
 *   request is timed as surely as a short one.
 * - Exact slices: the exact tier (bpf/core.bpf.c) attached instead, for
 *   what only it measures (S1, P_eff, depth, stalls): at start, when a
 *   device's workload moved (bw_workload_moved; at most once per
 *   URGENT_EVERY_NS) and every EXACT_EVERY_NS; a second long, or what
 *   URGENT_CPU_S of CPU pays at the last rate.  Never at once with a
 *   timing slice: its programs' own cost would lengthen the requests a
 *   timing slice times.  It ends with a drain too.  Every second of it,
 *   and its end, is one sample of the exact figures (bw_watch_dev's xiv);
 *   between them the light tier's estimates stand (user/model/metrics.c).
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include "watch/internal.h"

#define SLICE_SAMPLE_NS 1000000000ULL	/* an exact slice's figures, per second */
#define MIN_SLICE_NS 2000000ULL		/* a slice shorter than this times too few requests */
#define URGENT_MAX_S 1.0		/* an exact slice: a second, */
#define URGENT_CPU_S 0.02		/* or what this much CPU pays at the last rate */
#define URGENT_EVERY_NS (5 * 1000000000ULL)
#define EXACT_EVERY_NS (20 * 1000000000ULL)
#define DRAIN_MAX_NS 100000000ULL	/* requests still out after this are left to the next */
#define CONTINUOUS 0.95			/* a timing share above this: never detached */
#define POLL_NS 1000000ULL		/* an exact slice's drain looks again this often */
#define ARM_NS 1000000ULL		/* a timing slice's programs attached this long before it */
#define DRAIN_MIN_NS 2000000ULL		/* a timing slice's drain: at least this, */
#define DRAIN_D2C 20			/* or this many mean service times */
/* The price per request of a timing slice (Q, issue, the lookup) and of the exact tier. */
#define T_COST_NS 450.0
#define X_COST_NS 700.0

int bw_slices_open(struct bw_watch *w)
{
	struct bw_core_opts o = w->o->core;

	w->l_on_ns = bw_now_ns();
	if (!bw_core_light(w->core) || w->o->exact_period_s <= 0)
		return 0;
	w->t_on = bw_core_can_sample(w->core);
	w->x_urgent = true;
	w->x_share = 1;
	w->x_next_ns = bw_now_ns();
	if (!bw_core_env(w->core)->have_fetch)
		return 0;
	o.exact = true;
	o.sampler = true;
	o.handoff_fd = bw_core_env(w->core)->handoff_fd;
	return bw_core_open(&w->xcore, &o);
}

struct bw_watch_dev *bw_watch_find(struct bw_watch *w, __u32 dev)
{
	int i;

	for (i = 0; i < w->ndevs; i++)
		if (w->devs[i].dev == dev)
			return &w->devs[i];
	return NULL;
}

double bw_slices_share(const struct bw_watch *w, __u64 now)
{
	__u64 on = w->x_total_ns;

	if (w->x_state == BW_X_ON && w->x_exact && now > w->xprev.ts_ns)
		on += now - w->xprev.ts_ns;
	return now > w->start_ns ? (double)on / (double)(now - w->start_ns) : 0;
}

/* Of one CPU, what the light tier's help costs at rate completions a second throughout. */
static double cpu_at(double rate, double cost_ns)
{
	return rate * cost_ns / 1e9;
}

/* The share of each period a timing slice takes: what the budget pays at rate. */
static double timing_share(const struct bw_watch *w, double rate)
{
	double cpu = cpu_at(rate, T_COST_NS);

	if (w->o->exact_slice_s > 0)
		return fmin(1, w->o->exact_slice_s / w->o->exact_period_s);
	return cpu > 0 ? fmin(1, w->cost.plan.slice_budget / cpu) : 1;
}

/* An exact slice's length, seconds: a second, or what URGENT_CPU_S pays at the last rate. */
static double exact_len(const struct bw_watch *w)
{
	double cpu = cpu_at(w->x_rate, X_COST_NS);

	/* Under a ceiling: what the slices' budget pays over EXACT_EVERY_NS, at most. */
	double most = fmin(URGENT_CPU_S, w->cost.plan.slice_budget * EXACT_EVERY_NS / 1e9);

	if (w->o->exact_slice_s > 0)
		return w->o->exact_slice_s;
	return cpu > 0 ? fmin(URGENT_MAX_S, most / cpu) : URGENT_MAX_S;
}

static void set_rate(struct bw_watch *w, double rate)
{
	w->x_rate = rate;
	w->x_share = timing_share(w, rate);
}

/* The slices follow the plan's rate (not during an exact slice, which times its own). */
static void plan_rate(struct bw_watch *w)
{
	if (w->cost.rated && !(w->x_state == BW_X_ON && w->x_exact))
		set_rate(w, w->cost.rate);
}

/*
 * The cost and the plan brought up to date, and the rate the slices' lengths
 * follow with them: completions on every disk, which run the programs (an
 * interval's or an exact slice's rate may be seconds old under a long -i).
 */
static void replan(struct bw_watch *w)
{
	bw_cost_update(w);
	plan_rate(w);
}

/* The next sample of an exact slice: a second after the last snapshot, or the slice's end. */
static void slice_next(struct bw_watch *w)
{
	__u64 t = w->xprev.ts_ns + SLICE_SAMPLE_NS;

	w->x_next_ns = t < w->x_end_ns ? t : w->x_end_ns;
}

void bw_slices_interval(struct bw_watch *w, double rate, double svc_ms, bool moved)
{
	__u64 now = bw_now_ns();

	if (svc_ms > 0)
		w->x_svc_ms = svc_ms;

	if (!w->t_on && !w->xcore)
		return;
	if (rate > 0 && !(w->x_state == BW_X_ON && w->x_exact))
		set_rate(w, rate);
	if (!moved || !w->xcore || now - w->x_urgent_ns < URGENT_EVERY_NS)
		return;
	w->x_urgent = true;
	/* A timing slice gives way at once; an exact one goes on, a long one now. */
	if (w->x_state == BW_X_ON && !w->x_exact) {
		w->x_end_ns = now;
		w->x_next_ns = now;
	} else if (w->x_state == BW_X_ON) {
		w->x_urgent = false;
		w->x_urgent_ns = now;
		if (now + (__u64)(exact_len(w) * 1e9) > w->x_end_ns) {
			w->x_end_ns = now + (__u64)(exact_len(w) * 1e9);
			slice_next(w);
		}
	} else if (w->x_state == BW_X_OFF) {
		w->x_next_ns = now;
	}
}

/*
 * An exact slice's sample: every shown device's exact figures since the
 * last (the class learns from the intervals they fall in: bw_watch_sample).
 */
static int slice_sample(struct bw_watch *w)
{
	struct bw_snap cur = {};
	__s64 now = time(NULL);
	double secs, rate = 0;
	int i;

	if (bw_core_snapshot(w->xcore, &cur, 0)) {
		bw_snap_free(&cur);
		return -1;
	}
	secs = (cur.ts_ns - w->xprev.ts_ns) / 1e9;
	w->x_total_ns += cur.ts_ns - w->xprev.ts_ns;
	for (i = 0; i < cur.nr; i++) {
		const struct bw_snap_dev *d = &cur.devs[i];
		struct bw_watch_dev *s = bw_watch_find(w, d->dev);

		if (!s || s->row != BW_ROW_SHOW)
			continue;
		bw_interval_compute(bw_snap_find(&w->xprev, d->dev), d, secs, &bw_peff_default,
				    s->has_stored ? &s->stored : NULL, now, &s->xiv);
		s->x_at_ns = cur.ts_ns;
		rate += bw_interval_rate(&s->xiv);
		if (s->xiv.svc_mean_ms > w->x_svc_ms || !w->x_svc_ms)
			w->x_svc_ms = s->xiv.svc_mean_ms;
	}
	if (secs > 0.01)	/* the rate it saw, between intervals too (a long -i) */
		set_rate(w, rate);
	bw_snap_free(&w->xprev);
	w->xprev = cur;
	return 0;
}

/* Said once: the light tier goes on without the exact tier. */
static void exact_off(struct bw_watch *w, const char *why)
{
	bw_warn("exact slices off for this run (%s): S1, P_eff, the class, depth and dispatch "
		"stalls are the light tier's estimates (--exact measures them throughout)", why);
	bw_core_close(w->xcore);
	w->xcore = NULL;
}

static void exact_begin(struct bw_watch *w, __u64 now)
{
	double len = exact_len(w);
	struct bw_snap first = {};

	w->x_urgent = false;
	w->x_urgent_ns = now;
	w->x_exact_ns = now;
	w->x_exact = true;
	if (bw_core_slice_begin(w->xcore)) {
		exact_off(w, "the exact tier did not attach");
		return;
	}
	bw_core_handoff(w->core, true);
	if (bw_core_snapshot(w->xcore, &first, 0)) {
		bw_snap_free(&first);
		bw_core_slice_end(w->xcore);
		bw_core_handoff(w->core, false);
		return;
	}
	bw_snap_free(&w->xprev);
	w->xprev = first;
	/* Timed from the first snapshot: the samples add up to the whole slice. */
	w->x_end_ns = first.ts_ns + (__u64)(len * 1e9);
	w->x_state = BW_X_ON;
	slice_next(w);
}

static void timing_begin(struct bw_watch *w, __u64 now)
{
	double cycle_s = w->cost.plan.cycle * w->o->exact_period_s;
	double len = fmax(w->x_share * cycle_s, MIN_SLICE_NS / 1e9), t0;
	int err;

	/* Within the light tier's share of the cycle, which its completions need. */
	if (w->cost.plan.light_share < 1)
		len = fmin(len, w->cost.plan.light_share * cycle_s);
	w->x_exact = false;
	/* Attached first, on a little later: the attach's work falls on no timed request. */
	t0 = bw_cost_thread_s();
	err = bw_core_sampling(w->core, BW_SAMPLING_ARM);
	bw_cost_switch(w, false, true, bw_cost_thread_s() - t0);
	if (err) {
		bw_warn("timing slices off for this run: service and queue time are the kernel's "
			"stamps (marked !)");
		bw_core_sampling(w->core, BW_SAMPLING_OFF);
		w->t_on = false;
		return;
	}
	w->x_len_ns = (__u64)(len * 1e9);
	w->x_next_ns = now + ARM_NS;
	w->x_state = BW_X_ARMED;
}

static void timing_on(struct bw_watch *w, __u64 now)
{
	bw_core_sampling(w->core, BW_SAMPLING_ON);
	w->t_on_ns = now;
	w->x_end_ns = now + w->x_len_ns;
	w->x_next_ns = w->x_end_ns;
	w->x_state = BW_X_ON;
}

/* The light tier attached (on) or not, its time kept, and what switching took. */
static void light_set(struct bw_watch *w, bool on, __u64 now)
{
	double t0;

	if (on == !w->l_off)
		return;
	t0 = bw_cost_thread_s();
	if (bw_core_light_attach(w->core, on))
		return;
	bw_cost_switch(w, true, on, bw_cost_thread_s() - t0);
	if (on)
		w->l_on_ns = now;
	else
		w->l_total_ns += now - w->l_on_ns;
	w->l_off = !on;
}

/*
 * A period's slice: an exact one when due, else a timing one where the
 * stamps need it.  Under a ceiling's duty cycle (plan.cycle periods), the
 * light tier and a slice only in a cycle's first period.
 */
static void slice_begin(struct bw_watch *w, __u64 now)
{
	double period = w->o->exact_period_s;
	bool exact;

	w->x_restart_ns = now + (__u64)(period * 1e9);
	w->x_next_ns = w->x_restart_ns;
	replan(w);
	if (w->l_skip >= w->cost.plan.cycle)
		w->l_skip = w->cost.plan.cycle - 1;
	if (w->l_skip > 0) {
		w->l_skip--;
		return;
	}
	w->l_skip = w->cost.plan.cycle - 1;
	/* The light tier for its share of the cycle (all of it without a ceiling). */
	light_set(w, true, now);
	w->l_cycle_ns = now;
	/* Under a ceiling, no slice until the rate is known: it says what one costs. */
	if ((!w->t_on && !w->xcore) || (w->o->max_cpu > 0 && !w->cost.rated))
		return;
	exact = w->xcore && (w->x_urgent || now - w->x_exact_ns >= EXACT_EVERY_NS || !w->t_on);
	if (exact)
		exact_begin(w, now);
	else if (w->t_on)
		timing_begin(w, now);
	if (w->x_state == BW_X_ON && w->x_restart_ns < w->x_end_ns)
		w->x_restart_ns = w->x_end_ns;
}

/*
 * A timing slice's drain: long enough for its requests to complete (DRAIN_D2C
 * times the last interval's mean service time), not polled: a look at
 * the maps each millisecond would take the CPU the requests it waits for
 * need.  An exact one's: until the exact tier has nothing in flight.
 */
static __u64 drain_ns(const struct bw_watch *w)
{
	double ns = DRAIN_D2C * w->x_svc_ms * 1e6;

	if (w->x_exact || !(ns > DRAIN_MIN_NS))
		return w->x_exact ? POLL_NS : DRAIN_MIN_NS;
	return ns < DRAIN_MAX_NS ? (__u64)ns : DRAIN_MAX_NS;
}

/* Its issues seen no more: the requests it saw issued complete within it. */
static void slice_drain(struct bw_watch *w, __u64 now)
{
	if (w->x_exact) {
		bw_core_slice_drain(w->xcore);
	} else {
		bw_core_sampling(w->core, BW_SAMPLING_DRAIN);
		w->t_total_ns += now - w->t_on_ns;
	}
	w->x_state = BW_X_DRAIN;
	w->x_drain_ns = now + DRAIN_MAX_NS;
	w->x_next_ns = now + drain_ns(w);
}

static __u64 still_out(struct bw_watch *w)
{
	if (w->x_exact)
		return bw_core_inflight(w->xcore);
	__u64 out = bw_core_sampled_out(w->core);

	/* Less those left by earlier slices, whose completions BPF never got. */
	return out > w->t_left ? out - w->t_left : 0;
}

static void slice_end(struct bw_watch *w, __u64 now)
{
	if (w->x_exact) {
		bw_core_slice_end(w->xcore);
		bw_core_handoff(w->core, false);
	} else {
		double t0 = bw_cost_thread_s();

		bw_core_sampling(w->core, BW_SAMPLING_OFF);
		bw_cost_switch(w, false, false, bw_cost_thread_s() - t0);
		w->t_left = bw_core_sampled_out(w->core);
	}
	w->x_state = BW_X_OFF;
	w->x_next_ns = w->x_restart_ns > now ? w->x_restart_ns : now;
}

static void slice_step(struct bw_watch *w, __u64 now)
{
	if (w->x_state == BW_X_ARMED) {
		timing_on(w, now);
		return;
	}
	if (w->x_state == BW_X_DRAIN) {
		if (!w->x_exact || !still_out(w) || now >= w->x_drain_ns)
			slice_end(w, now);
		else
			w->x_next_ns = now + POLL_NS;
		return;
	}
	if (w->x_exact && slice_sample(w)) {
		slice_end(w, now);
		return;
	}
	if (w->x_exact && w->xprev.ts_ns < w->x_end_ns) {
		slice_next(w);
		return;
	}
	/*
	 * A timing share the budget pays throughout, the light tier on for all
	 * of the period, and no exact slice due: it goes on.
	 */
	if (!w->x_exact)
		replan(w);
	if (!w->x_exact && w->x_share > CONTINUOUS && w->cost.plan.light_share >= 1 &&
	    !w->x_urgent && !(w->xcore && now - w->x_exact_ns >= EXACT_EVERY_NS)) {
		w->x_end_ns = now + (__u64)(w->o->exact_period_s * 1e9);
		w->x_next_ns = w->x_end_ns;
		return;
	}
	slice_drain(w, now);
}

/*
 * The light tier off once its share of the cycle is spent and no slice
 * needs it (a timing slice its completions, an exact one its clock); ns
 * until that is due (UINT64_MAX: never, or at the slice's end, which the
 * slice's own step brings).  Under a ceiling the rate is checked meanwhile
 * (bw_cost_guard): a load that starts while it runs makes the plan again,
 * and a slice the old plan let run long drains now.
 */
static __u64 light_duty(struct bw_watch *w, __u64 now)
{
	__u64 off, guard = UINT64_MAX;
	bool replanned;

	if (w->l_off)
		return UINT64_MAX;
	if (w->o->max_cpu > 0) {
		guard = bw_cost_guard(w, &replanned);
		if (replanned) {
			plan_rate(w);
			now = bw_now_ns();	/* after the plan's own clock read */
			if (w->x_state == BW_X_ON)
				slice_drain(w, now);
		}
	}
	if (w->cost.plan.light_share >= 1 || w->x_state != BW_X_OFF)
		return guard;
	/* From the plan as it is now: a share cut meanwhile ends this one sooner. */
	off = w->l_cycle_ns + (__u64)(fmin(1, w->cost.plan.light_share) * w->cost.plan.cycle *
				      w->o->exact_period_s * 1e9);
	if (now < off)
		return off - now < guard ? off - now : guard;
	light_set(w, false, now);
	return UINT64_MAX;
}

__u64 bw_watch_slices(struct bw_watch *w)
{
	__u64 now = bw_now_ns(), wait = UINT64_MAX, l, c;
	bool periods = w->t_on || w->xcore || w->o->max_cpu > 0;

	if (periods && now >= w->x_next_ns) {
		if (w->x_state == BW_X_OFF)
			slice_begin(w, now);
		else
			slice_step(w, now);
		now = bw_now_ns();
	}
	if (periods)
		wait = w->x_next_ns > now ? w->x_next_ns - now : 0;
	l = light_duty(w, now);
	c = bw_cost_poll(w);
	if (l < wait)
		wait = l;
	return c < wait ? c : wait;
}

const struct bw_snap_dev *bw_watch_exact_dev(const struct bw_watch *w, __u32 dev)
{
	return bw_snap_find(w->xcore ? &w->xprev : &w->prev, dev);
}
