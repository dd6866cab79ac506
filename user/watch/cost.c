// SPDX-License-Identifier: GPL-2.0
/*
 * What blkwise costs, measured while it runs, and the ceiling it keeps
 * (--max-cpu; user/model/cost.c has the arithmetic).
 *
 * - Its process's CPU: the kernel's, from getrusage, each interval.
 * - Its programs': each kind's price per event, learned in calibration
 *   windows, times the events of the interval: completions on every disk
 *   (diskstats, partitions left out) while the light tier was attached,
 *   and the rate of them while timing or exact slices ran.  The kernel
 *   counts programs' runs and time only while its accounting is on, which
 *   costs every program on the machine two more clock reads a run: a
 *   window holds it on (BPF_ENABLE_STATS) for CAL_NS every CAL_EVERY_NS,
 *   the first as soon as the rate of completions would price the light
 *   tier, and again CAL_RETRY_NS after one that saw too few; while the
 *   rate is lower, none opens.  Where it is on anyway, every interval is a
 *   window.  Where blkwise may not turn it on (export after dropping its
 *   privileges: it needs CAP_SYS_ADMIN), the prices stay as last learned,
 *   or their defaults.
 * - The plan, each period: with a ceiling, the light tier's share of a
 *   cycle of periods and the slices' budget (user/model/cost.c).  What
 *   attaching and detaching take is measured apart (the thread's CPU
 *   around them, bw_cost_switch), as the plan prices it apart.
 * - Between plans, under a ceiling and while the light tier is attached,
 *   the rate is checked every GUARD_NS (one read of /proc/diskstats): a
 *   load that starts meanwhile would run the light tier at the old plan's
 *   share for a period (at 500k completions a second, 2% of a CPU for half
 *   a second); where the share would cost more than the ceiling at the
 *   new rate, the plan is made again at once (bw_cost_guard).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include "watch/internal.h"

#define CAL_EVERY_NS (30 * 1000000000ULL)
#define CAL_NS (1000000000ULL)
#define CAL_RETRY_NS (2 * 1000000000ULL)
#define COST_PROGS 96
/* The shortest timing slice the ceiling keeps where the stamps need one: a share of the period. */
#define MIN_TIMING 0.004
/* A period at least (what it reads is not free); the first sooner, for the first plan. */
#define UPDATE_S 0.45
#define FIRST_UPDATE_S 0.2
/* Under a ceiling, the light tier attached: the rate checked this often. */
#define GUARD_NS 100000000ULL

static double process_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static bool stats_on(void)
{
	char v = '0';
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");

	if (f) {
		if (fread(&v, 1, 1, f) != 1)
			v = '0';
		fclose(f);
	}
	return v == '1';
}

/* The BPF objects the session runs, the core first: the programs whose cost is counted. */
int bw_watch_objects(const struct bw_watch *w, struct bpf_object **objs)
{
	int n = 0;

	objs[n++] = bw_core_obj(w->core);
	if (w->xcore)
		objs[n++] = bw_core_obj(w->xcore);
	if (w->bio)
		objs[n++] = bw_bio_obj(w->bio);
	if (w->st)
		objs[n++] = bw_streams_obj(w->st);
	if (w->cg)
		objs[n++] = bw_cgio_obj(w->cg);
	if (bw_bc_obj(w->bc))
		objs[n++] = bw_bc_obj(w->bc);
	return n;
}

int bw_watch_prog_stats(const struct bw_watch *w, struct bw_prog_stat *out, int max)
{
	struct bpf_object *objs[BW_WATCH_MAX_OBJS];
	int i, nobj = bw_watch_objects(w, objs), n = 0;

	for (i = 0; i < nobj && n >= 0; i++)
		n = bw_obj_prog_stats(objs[i], out, max, n);
	return n;
}

/* Time the light tier was attached, and timing slices timed, up to now. */
static __u64 light_ns_at(const struct bw_watch *w, __u64 now)
{
	return w->l_total_ns + (!w->l_off && now > w->l_on_ns ? now - w->l_on_ns : 0);
}

static __u64 timing_ns_at(const struct bw_watch *w, __u64 now)
{
	bool on = w->x_state == BW_X_ON && !w->x_exact;

	return w->t_total_ns + (on && now > w->t_on_ns ? now - w->t_on_ns : 0);
}

void bw_cost_start(struct bw_watch *w)
{
	struct bw_cost_state *c = &w->cost;

	bw_cost_init(&c->model);
	c->stats_fd = -1;
	c->at_ns = bw_now_ns();
	c->cpu_s = process_cpu_s();
	c->completions = bw_disks_completions();
	c->cal_next_ns = c->at_ns;
	c->plan.light_share = 1;
	c->light_share = 1;
	c->plan.slice_budget = w->o->exact_budget;
	c->light_ns = light_ns_at(w, c->at_ns);
	c->iv_ns = c->at_ns;
	c->iv_cpu_s = c->cpu_s;
	c->iv_light_ns = c->light_ns;
}

static void cal_end(struct bw_watch *w)
{
	struct bw_cost_state *c = &w->cost;
	struct bw_prog_stat *b = calloc(COST_PROGS, sizeof(*b));
	int n;

	if (b && (n = bw_watch_prog_stats(w, b, COST_PROGS)) == c->cal_n)
		bw_cost_learn(&c->model, c->cal_a, b, n);
	/* Too few completions to price the light tier (idle): again soon, not in 30 s. */
	if (!c->model.measured[BW_COST_ALWAYS])
		c->cal_next_ns = bw_now_ns() + CAL_RETRY_NS;
	free(b);
	free(c->cal_a);
	c->cal_a = NULL;
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
}

/*
 * A window is worth opening once the rate is known and would price the
 * light tier: turning the accounting on and off patches every program's
 * call site on the machine, so an idle device's window, which learns
 * nothing, is not opened at all.
 */
static bool cal_worth(const struct bw_cost_state *c)
{
	return c->rated && c->rate * (CAL_NS / 1e9) >= BW_COST_MIN_EVENTS;
}

/* A window opens: the kernel's accounting on (if it may be), the programs' read. */
static void cal_begin(struct bw_watch *w, __u64 now)
{
	struct bw_cost_state *c = &w->cost;

	c->cal_next_ns = now + CAL_EVERY_NS;
	if (!stats_on()) {
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c->stats_fd < 0) {
			if (!c->cal_said && w->o->core.verbose)
				bw_warn("the kernel's BPF accounting cannot be turned on (%s): the "
					"programs' prices stay as last measured", strerror(errno));
			c->cal_said = true;
			return;
		}
	}
	c->cal_a = calloc(COST_PROGS, sizeof(*c->cal_a));
	if (!c->cal_a) {
		cal_end(w);
		return;
	}
	c->cal_n = bw_watch_prog_stats(w, c->cal_a, COST_PROGS);
	c->cal_end_ns = now + CAL_NS;
}

__u64 bw_cost_poll(struct bw_watch *w)
{
	struct bw_cost_state *c = &w->cost;
	__u64 now = bw_now_ns();

	if (c->cal_a && now >= c->cal_end_ns)
		cal_end(w);
	else if (!c->cal_a && now >= c->cal_next_ns && !cal_worth(c))
		c->cal_next_ns = now + CAL_RETRY_NS;
	else if (!c->cal_a && now >= c->cal_next_ns)
		cal_begin(w, now);
	now = bw_now_ns();
	if (c->cal_a)
		return c->cal_end_ns > now ? c->cal_end_ns - now : 0;
	return c->cal_next_ns > now ? c->cal_next_ns - now : 0;
}

/*
 * The cost since the last update (each period), and the plan for the
 * next: the programs' CPU from their prices and events, the process's
 * from the kernel, the ceiling's shares from both.
 */
/* Completions a second on every disk since the last update, at now with comp of them. */
static double rate_since(const struct bw_cost_state *c, __u64 now, __u64 comp)
{
	double secs = (now - c->at_ns) / 1e9;

	return comp >= c->completions && secs > 0 ? (comp - c->completions) / secs : 0;
}

static void cost_update(struct bw_watch *w, __u64 now, __u64 comp)
{
	struct bw_cost_state *c = &w->cost;
	__u64 light_ns = light_ns_at(w, now), timing_ns = timing_ns_at(w, now);
	double secs = (now - c->at_ns) / 1e9, cpu_s = process_cpu_s(), rate, ev[BW_COST_KINDS] = { 0 };
	double light_s = (light_ns - c->light_ns) / 1e9, user;
	struct bw_cost_in in;

	rate = rate_since(c, now, comp);
	/* The light tier ran for light_s of it: its completions were those of that time. */
	ev[BW_COST_ALWAYS] = rate * fmin(light_s, secs);
	ev[BW_COST_TIMING] = rate * (timing_ns - c->timing_ns) / 1e9;
	ev[BW_COST_EXACT] = rate * (w->x_total_ns - c->exact_ns) / 1e9;
	c->bpf_s += bw_cost_cpu(&c->model, ev, secs) * secs;
	/* The process's own share, less its switching (the plan prices that apart). */
	user = fmax(0, (cpu_s - c->cpu_s) - (c->sw_s - c->sw_s_at)) / secs;
	c->sw_s_at = c->sw_s;
	c->rate = rate;
	c->rated = true;
	c->at_ns = now;
	c->cpu_s = cpu_s;
	c->completions = comp;
	c->light_ns = light_ns;
	c->timing_ns = timing_ns;
	c->exact_ns = w->x_total_ns;
	in.ceiling = w->o->max_cpu;
	in.rate = rate;
	in.user = user;
	in.budget = w->o->exact_budget;
	in.min_timing = w->t_on ? MIN_TIMING : 0;
	in.period_s = w->o->exact_period_s > 0 ? w->o->exact_period_s : 0.5;
	bw_cost_plan(&c->model, &in, &c->plan);
}

void bw_cost_update(struct bw_watch *w)
{
	struct bw_cost_state *c = &w->cost;
	__u64 now = bw_now_ns();

	if ((now - c->at_ns) / 1e9 < (c->rated ? UPDATE_S : FIRST_UPDATE_S))
		return;
	cost_update(w, now, bw_disks_completions());
}

/*
 * Under a ceiling, the light tier attached: ns until the next check of the
 * rate; *replanned when this one found the light tier's share costing more
 * than the ceiling at the rate since the plan, and made the plan again.
 */
__u64 bw_cost_guard(struct bw_watch *w, bool *replanned)
{
	struct bw_cost_state *c = &w->cost;
	__u64 now = bw_now_ns(), comp;

	*replanned = false;
	if (now - c->guard_ns < GUARD_NS)
		return c->guard_ns + GUARD_NS - now;
	c->guard_ns = now;
	if (!c->rated || now <= c->at_ns)
		return GUARD_NS;
	comp = bw_disks_completions();
	if (rate_since(c, now, comp) * c->model.ns[BW_COST_ALWAYS] / 1e9 * fmin(1, c->plan.light_share) <=
	    w->o->max_cpu)
		return GUARD_NS;
	cost_update(w, now, comp);
	*replanned = true;
	return GUARD_NS;
}

/* The thread's own CPU: what an attach or a detach took, around it. */
double bw_cost_thread_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An attach (on) or detach took cpu_s: a detach completes the pair the model learns. */
void bw_cost_switch(struct bw_watch *w, bool light, bool on, double cpu_s)
{
	struct bw_cost_state *c = &w->cost;

	c->sw_s += cpu_s;
	if (on) {
		c->sw_on_s[light] = cpu_s;
		return;
	}
	bw_cost_switched(&c->model, light, c->sw_on_s[light] + cpu_s);
}

/* An interval ended: what it cost, as shares of one CPU, and the light tier's share of it. */
void bw_cost_interval(struct bw_watch *w)
{
	struct bw_cost_state *c = &w->cost;
	__u64 now;
	double secs;

	bw_cost_update(w);
	now = c->at_ns;
	secs = (now - c->iv_ns) / 1e9;
	if (secs <= 0)
		return;
	c->bpf = (c->bpf_s - c->iv_bpf_s) / secs;
	c->user = (c->cpu_s - c->iv_cpu_s) / secs;
	c->light_share = fmin(1, (c->light_ns - c->iv_light_ns) / 1e9 / secs);
	c->iv_ns = now;
	c->iv_bpf_s = c->bpf_s;
	c->iv_cpu_s = c->cpu_s;
	c->iv_light_ns = c->light_ns;
}

void bw_cost_close(struct bw_watch *w)
{
	/* Not started (a usage error): nothing held; fd 0 is never the accounting's. */
	if (w->core && (w->cost.cal_a || w->cost.stats_fd > 0))
		cal_end(w);
}
