// SPDX-License-Identifier: GPL-2.0
/*
 * analyze --what-if-tune: tune's pure policy (policy.c) over a replay's
 * intervals, as if blkwise tune had watched the traced devices.  A replay
 * cannot change what the devices did, so each setting is believed set.
 * Pure: no system calls.
 */
#include <stdlib.h>
#include <string.h>
#include "model/whatif.h"

#define WHATIF_DEVS 16
#define MAX_DECISIONS 100000

struct wdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct bw_policy_state st;
	bool started;
};

/* A decision the policy took, and when. */
struct wdecision {
	double t;
	const struct wdev *w;
	struct bw_policy_decision d;
};

struct bw_whatif {
	struct wdev wd[WHATIF_DEVS];
	int nwd;
	struct bw_policy_cfg cfg;
	struct wdecision *dec;	/* decisions, in time order */
	int ndec, dec_cap;
};

static struct wdev *wdev_of(struct bw_whatif *r, const struct bw_replay_dev *d)
{
	int i;

	for (i = 0; i < r->nwd; i++)
		if (r->wd[i].dev == d->dev)
			return &r->wd[i];
	if (r->nwd >= WHATIF_DEVS)
		return NULL;
	memset(&r->wd[r->nwd], 0, sizeof(r->wd[0]));
	r->wd[r->nwd].dev = d->dev;
	snprintf(r->wd[r->nwd].name, sizeof(r->wd[0].name), "%s", d->name);
	return &r->wd[r->nwd++];
}

struct bw_whatif *bw_whatif_new(void)
{
	struct bw_whatif *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cfg = bw_policy_cfg_default;
	r->cfg.dry_run = true;
	return r;
}

void bw_whatif_free(struct bw_whatif *r)
{
	if (!r)
		return;
	free(r->dec);
	free(r);
}

bool bw_whatif_on(const struct bw_whatif *r)
{
	return r != NULL;
}

static void whatif_log(struct bw_whatif *r, const struct wdev *w, double t,
		       const struct bw_policy_decision *d)
{
	struct wdecision *n;

	if (r->ndec == r->dec_cap) {
		if (r->dec_cap >= MAX_DECISIONS)
			return;
		n = realloc(r->dec, (r->dec_cap ? 2 * r->dec_cap : 16) * sizeof(*n));
		if (!n)
			return;
		r->dec = n;
		r->dec_cap = r->dec_cap ? 2 * r->dec_cap : 16;
	}
	r->dec[r->ndec++] = (struct wdecision){ .t = t, .w = w, .d = *d };
}

int bw_whatif_count(const struct bw_whatif *r)
{
	return bw_whatif_on(r) ? r->ndec : 0;
}

const struct bw_policy_decision *bw_whatif_decision(const struct bw_whatif *r, int i, double *t,
						  const char **dev)
{
	*t = r->dec[i].t;
	*dev = r->dec[i].w->name;
	return &r->dec[i].d;
}

void bw_whatif_decision_json(const struct bw_whatif *r, struct bw_json *j, int i)
{
	static const struct wdev none_dev;
	static const struct wdecision none = { .w = &none_dev };
	const struct wdecision *x = i >= 0 ? &r->dec[i] : &none;
	const struct bw_policy_win *e = &x->d.win;

	bw_json_obj(j, NULL);
	bw_json_num(j, "t", x->t, 3);
	bw_json_str(j, "device", x->w->name);
	bw_json_str(j, "action", bw_policy_action_name(x->d.action));
	bw_json_u64(j, "slice_idle_us_before", x->d.before);
	bw_json_u64(j, "slice_idle_us_after", x->d.after);
	bw_json_u64(j, "strict_guarantees_before", x->d.strict_before);
	bw_json_u64(j, "strict_guarantees_after", x->d.strict_after);
	bw_json_str(j, "why", x->d.why);
	bw_json_obj(j, "evidence");
	bw_json_num(j, "mb_per_s", bw_policy_win_mbps(e), 3);
	bw_json_num(j, "p_eff", bw_policy_win_peff(e), 3);
	bw_json_num(j, "depth", bw_policy_win_depth(e), 3);
	bw_json_num(j, "s1_ms", e->s1_ms, 4);
	bw_json_str(j, "class", bw_class_name(e->cls));
	bw_json_u64(j, "streams", e->streams);
	bw_json_u64(j, "sync_sequential_streams", e->sync_seq);
	bw_json_num(j, "think_p90_ms", e->think_p90_ms, 4);
	bw_json_close(j, '}');
	bw_json_close(j, '}');
}

static const char *policy_name(const struct bw_whatif *r)
{
	return r->cfg.policy == BW_POLICY_LATENCY ? "latency" : "throughput";
}

void bw_whatif_json(const struct bw_whatif *r, struct bw_json *j)
{
	int i;

	bw_json_obj(j, "what_if");
	bw_json_str(j, "policy", policy_name(r));
	bw_json_num(j, "window_s", r->cfg.window_s, 3);
	bw_json_arr(j, "decisions");
	for (i = 0; i < r->ndec; i++)
		bw_whatif_decision_json(r, j, i);
	bw_json_close(j, ']');
	bw_json_close(j, '}');
}

void bw_whatif_tick(struct bw_whatif *r, const struct bw_replay_tick *t)
{
	struct wdev *w = wdev_of(r, t->d);
	struct bw_policy_decision d;
	struct bw_policy_obs o;
	double end = t->t + t->iv->secs;
	__u32 idle;

	if (!w)
		return;
	if (!w->started) {
		idle = t->d->info && t->d->info->slice_idle_us >= 0 ?
		       (__u32)t->d->info->slice_idle_us : 8000;
		bw_policy_init(&w->st, idle);
		w->started = true;
		if (bw_policy_start(&r->cfg, &w->st, BW_CLASS_UNKNOWN, false, false, &d))
			whatif_log(r, w, t->t, &d);
	}
	bw_policy_observe(t->iv, t->cls, t->streams, t->nstreams, w->st.setting, &o);
	o.rotational = !t->d->info || t->d->info->rotational;	/* unknown: as a spindle */
	if (!bw_policy_step(&r->cfg, &w->st, &o, end, &d))
		return;
	whatif_log(r, w, end, &d);
	/*
	 * A replay cannot change what the device did: a decision's setting is
	 * believed set; a trial (probe, repair) is announced only, as in the
	 * live tuner's dry run.
	 */
	if (d.action != BW_POLICY_PROBE && d.action != BW_POLICY_REPAIR)
		bw_policy_applied(&r->cfg, &w->st, d.after, d.strict_after, end);
}

void bw_whatif_print(const struct bw_whatif *r, FILE *f)
{
	int i;

	fprintf(f, "\nWhat if blkwise tune had run (policy %s, window %.2f s, from the recorded "
		"slice_idle_us, or BFQ's default 8000 where the device was not on BFQ; a replay "
		"cannot show what the settings would have changed)\n", policy_name(r),
		r->cfg.window_s);
	if (!r->ndec)
		fprintf(f, "  no decision\n");
	for (i = 0; i < r->ndec; i++) {
		const struct wdecision *x = &r->dec[i];
		const struct bw_policy_win *e = &x->d.win;
		char ev[400];

		bw_policy_win_evidence(ev, sizeof(ev), e);
		fprintf(f, "  t=%8.2f s %s %s: slice_idle_us %u -> %u%s: %s\n      evidence: %s\n",
			x->t, x->w->name, bw_policy_action_name(x->d.action), x->d.before, x->d.after,
			bw_policy_strict_note(&x->d), x->d.why, ev);
	}
}
