// SPDX-License-Identifier: GPL-2.0
/*
 * The tuner's policy (see policy.h and docs/tune.md, "The policy").
 *
 * Rules, in order, for each full window of a device with I/O:
 *  1. A probe's verdict, taken on the same workload less than
 *     probe_every_s ago, stands: it measured both settings on this load.
 *     Past that time, where rule 2 would overturn it, it is measured again
 *     (a probe), not overruled: a measurement outranks the class's model;
 *     so, at once, is one taken on 2+ sync sequential streams when their
 *     count changes (BFQ idling shows a window only some of them).
 *     A verdict from the store (bw_policy_seed_verdict: a probe of an earlier
 *     run on this device) holds for any workload of 2+ sync sequential
 *     streams, as if probed at the first window with one (a stored 0 is
 *     set at start, bw_policy_start).
 *  2. Else the device class decides: deep -> 0 (idling for one queue wastes
 *     a device that can serve the others meanwhile); shallow with sync
 *     sequential streams -> idle for about their p90 think time; shallow
 *     otherwise -> leave it (throughput) or 0 (latency).
 *  3. Else, when the evidence is missing on a steady workload (the same
 *     for two windows; class unknown, and P_eff
 *     undetermined in this window, as it is while BFQ idles: one queue at
 *     a time keeps the device at depth ~1; or between the shallow and deep
 *     marks) and two or more streams compete,
 *     probe: the other setting for probe_s (longer on a slow device, until
 *     it has the completions to resolve `gain`: PROBE_STRETCH), measured
 *     after settle_s, and compared with the window just before.  Throughput
 *     that differs by more than `gain`, and by more than the two windows'
 *     resolution (a request either way, and their ticks' scatter:
 *     resolution()), decides; a tie leaves the setting a clear
 *     measurement chose last (a 0.5 s probe of idling cannot show
 *     idling's gain: BFQ takes 1-2 s to idle well), else goes to P_eff's
 *     class as seen with idling off (the probe's window for a probe of 0,
 *     the window before it for a probe of idling; deep -> 0, shallow ->
 *     idling), else back.
 *     A probe with idling off that finds P_eff clearly deep or shallow
 *     also tells the device class (d->learned), for the store: a restarted
 *     tuner need not probe again (on a spindle BFQ needs ~2.5 s to idle
 *     well again after even 0.2 s without idling, so a probe there costs
 *     ~3 s of throughput).
 *  4. Changes are at least dwell_s apart, a probe's start and end aside
 *     (a probe is itself bounded and rate-limited), and wait for a new
 *     workload to hold for a second window: its first window is judged
 *     against the workload before it, whose verdict does not apply.
 * At start (bw_policy_start), a device already known deep gets 0 at once.
 * The latency policy keeps idling only for a gain of 4 x `gain`, and
 * settles ties on 0: idling holds every other queue back.
 *
 * Idling set is not idling done.  BFQ's own log (tools/bfq-log.py) shows
 * how it stops with slice_idle_us unchanged: a reader late by more than
 * slice_idle expires its queue idle with budget left; its request, arriving
 * within 3 x slice_idle, preempts the queue in service
 * (bfq_bfqq_update_budg_for_activation()), which had sent its request and
 * so expires empty and preempts back at its next one: a queue switch per
 * request, for seconds (docs/idling.md).  A probe of 0 leaves every queue
 * in that state (with idling off they expire empty).
 * So while idling is set for two or more sync sequential streams
 * (throughput policy), the window where BFQ idled (depth while busy near 1)
 * is kept; two windows in a row at depth >= 1.35, slower than it, on a
 * device not deep, is BFQ no longer idling: said with the evidence, and
 * strict_guarantees (bfq_better_to_idle() returns true whatever the queue's
 * flags) is tried against the window that showed it, kept only if faster,
 * with slice_idle at least strict_idle_us (strict_idle()).
 * BFQ does not idle well at once: on the emulated spindle under four
 * readers, from 2-3 s after the switch it served one request per queue turn
 * at depth 1, no faster than not idling, for 2 to 14 s, then idled well
 * again (once it went back to that state for 4 s after idling well: the
 * same chain of preemptions, at depth 1 since strict_guarantees holds the
 * device to one request).  So a repair's trial is measured window by
 * window from trial_settle_s after the switch, kept at the first window
 * faster than the one without and within 2 x gain of the rate BFQ idled at
 * before (where known), and goes back only when none has been by
 * repair_patience_s, whose last window needs only to be faster (one fixed
 * window 12 s after the switch fell into the dip, and went back, in 2 of 5
 * runs).  A repair that lost is tried once more repair_retry_s after the
 * first, if BFQ still does not idle; a trial that lost twice, or a random
 * reads' trial that lost once, is not repeated on the same workload for
 * probe_every_s.  The same trial is made for sync random streams queued two
 * or more deep in a shallow device (order_trial()): one request at a time,
 * BFQ picks the nearest, where the device would serve them as they came.
 * strict_guarantees goes off again when the device turns out deep, or when
 * neither a sync sequential stream nor the workload a trial kept it for is
 * left (or, for sequential streams, idling is set to 0).
 * A probe of 0 that loses clearly to idling on a spindle (rotational, the
 * probe's P_eff shallow) under two or more sync sequential streams goes
 * back to idling with strict_guarantees at once, as a repair's trial
 * (repair_after_probe()): the probe leaves every queue in the preemption
 * chain, and going back to plain idling to see whether BFQ gets out of it
 * costs two windows, then the repair's dip, where it does not.  A probe of
 * 0 that wins against a window where BFQ was not idling, on a rotational
 * device under those streams whose probe does not say deep, is tried the
 * same way, with 0 where the trial loses (probe_met_collapse()).
 * A belief in doubt (bw_policy_doubt()) is checked by a probe
 * (check_doubt()); a check that settles nothing (a tie P_eff cannot break,
 * or too little I/O) is measured again, twice as long each time, up to
 * CHECK_TRIES probes: in a TCG guest a half-second check of a stripe that
 * serves 80-150% more without idling once went back, and a wrong belief
 * stands for probe_every_s.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/policy.h"

/*
 * Depth while busy under 2+ sync sequential streams: BFQ serves one at a
 * time (measured 1.00-1.16 on the emulated spindle, strict_guarantees
 * 1.16 on a loaded host) ...
 */
#define IDLED_DEPTH 1.2
/* ... or, at least now and then, several together (a partial collapse: 1.4-2.0). */
#define LOST_DEPTH 1.35
#define LOST_WINDOWS 2
/*
 * A probe's window goes on past probe_s until it holds enough completions
 * to resolve `gain` (probe_ios()), up to this many times probe_s: a slow
 * device (a spindle serving 256 KiB requests at 20 MB/s completes under 40
 * a second, fewer with idling off) would otherwise leave too little I/O to
 * compare in half a second.
 */
#define PROBE_STRETCH 4
/* Probes a check of a belief in doubt makes at most, while they tie. */
#define CHECK_TRIES 3

/*
 * The relative standard error of a window's throughput, from the spread of
 * its ticks' rates (each weighted by its length): 0 with under two ticks.
 */
static double win_noise(const struct bw_policy_win *w)
{
	double m, var;

	if (w->ticks < 2 || w->secs <= 0 || w->bytes <= 0)
		return 0;
	m = w->bytes / w->secs;
	var = w->rate2_sum / w->secs - m * m;
	if (var <= 0)
		return 0;
	return sqrt(var / (w->ticks - 1)) / m;
}

/*
 * What two windows' throughputs can tell apart, relative: a difference
 * within it is a tie, whatever `gain` says.  A window of n completions
 * measures throughput to within one request either way, 2/n of the smaller
 * for two (on a slow device, or a guest whose own path jitters, 0.5 s holds
 * 20 requests: a 9% "win" was two of them); and to within what its ticks'
 * rates scatter, twice the two windows' standard errors combined (a seeking
 * disk's 100 ms ticks scatter by a third and more: a 6% "win" of 64
 * requests over 106 was noise, seen in a guest).
 */
static double resolution(const struct bw_policy_win *a, const struct bw_policy_win *b)
{
	__u64 n = a->ios < b->ios ? a->ios : b->ios;
	double na = win_noise(a), nb = win_noise(b);

	if (!n)
		return INFINITY;
	return fmax(2.0 / (double)n, 2 * sqrt(na * na + nb * nb));
}

/* Completions a probe's window gathers, stretch allowing: what resolves gain. */
static __u64 probe_ios(const struct bw_policy_cfg *cfg)
{
	__u64 n = (__u64)ceil(2.0 / cfg->gain);

	return n > cfg->min_ios ? n : cfg->min_ios;
}

const struct bw_policy_cfg bw_policy_cfg_default = {
	.policy = BW_POLICY_THROUGHPUT,
	.max_idle_us = 8000, .min_idle_us = 4000, .strict_idle_us = 20000,
	.window_s = 1.0, .settle_s = 0.1, .min_ios = 20, .gain = 0.05,
	.probe_s = 0.5, .probe_every_s = 300, .dwell_s = 10,
	.trial_settle_s = 2.0, .repair_patience_s = 20.0, .repair_retry_s = 40,
};

const char *bw_policy_action_name(enum bw_policy_action a)
{
	static const char *const names[] = { "none", "set", "probe", "keep", "revert", "repair" };

	return a < BW_POLICY_NR_ACTIONS ? names[a] : "?";
}

void bw_policy_init(struct bw_policy_state *st, __u32 setting)
{
	memset(st, 0, sizeof(*st));
	st->setting = setting;
	st->last_change = -1;
	st->last_probe = -1;
}

/*
 * Idle well past the streams' p90 think time: BFQ idles for a queue only
 * while its mean think time is at most half of slice_idle ("block, bfq:
 * use half slice_idle as a threshold to check short ttime", P. Valente,
 * January 2021), so three times the p90 plus 0.5 ms for the
 * completion path, clamped; 4 ms at least.  Measured on the emulated
 * spindle under 4 sequential readers (p90 think 0.2 ms): going from 8 ms
 * to 2 or 3 ms mid-run collapses BFQ into not idling (-63%, it stays
 * there), 4 and 6 ms hold; rare multi-ms gaps, not the p90, expire its
 * idle window, and a queue that expires idle sets off a chain of
 * preemptions, a queue switch per request (docs/idling.md).
 * Unknown think: the ceiling.
 */
__u32 bw_policy_idle_for(const struct bw_policy_cfg *cfg, double think_ms)
{
	double us = isnan(think_ms) ? cfg->max_idle_us : think_ms * 3000 + 500;

	if (us < cfg->min_idle_us)
		us = cfg->min_idle_us;
	if (us > cfg->max_idle_us)
		us = cfg->max_idle_us;
	return (__u32)us;
}

/*
 * The setting that goes with strict_guarantees for sync sequential
 * streams: at least strict_idle_us.  strict_guarantees makes BFQ idle for
 * every queue, but a reader later than slice_idle still expires its queue
 * with budget left and sets off the preemption chain (see the top of this
 * file) at depth 1; a longer wait needs a later reader.  On the emulated
 * spindle 13 of 79,389 think times were over 8 ms, one over 20 ms, and
 * 20 ms with strict_guarantees held where 8 ms dropped (docs/idling.md).
 * Idling costs only when a reader is late: one wait of up to 20 ms per
 * stream that ends.
 */
static __u32 strict_idle(const struct bw_policy_cfg *cfg, __u32 v)
{
	return v && v < cfg->strict_idle_us ? cfg->strict_idle_us : v;
}

double bw_policy_win_mbps(const struct bw_policy_win *w)
{
	return w->secs > 0 ? w->bytes / 1048576.0 / w->secs : NAN;
}

/*
 * P_eff over the whole window, by its definition (metrics.c): the work the
 * completions would have taken alone over the busy time, when enough of
 * them, at enough depth, had a known S1.  Not an average of the ticks',
 * which at 0.1 s often have too few completions each on a slow device.
 */
double bw_policy_win_peff(const struct bw_policy_win *w)
{
	const struct bw_peff_params *pp = &bw_peff_default;

	if (w->ios < pp->min_ios || !(w->busy_s > 0) || !(bw_policy_win_depth(w) >= pp->min_depth) ||
	    (double)w->known < pp->min_coverage * (double)w->ios)
		return NAN;
	return w->work_s / w->busy_s;
}

double bw_policy_win_depth(const struct bw_policy_win *w)
{
	return w->busy_s > 0 ? w->depth_sum / w->busy_s : NAN;
}

/* ", strict_guarantees 0 -> 1" where the decision changes it, else "". */
const char *bw_policy_strict_note(const struct bw_policy_decision *d)
{
	if (d->strict_before == d->strict_after)
		return "";
	return d->strict_after ? ", strict_guarantees 0 -> 1" : ", strict_guarantees 1 -> 0";
}

/* v printed with fmt into buf, or "-" where it is unknown (NaN: no window yet). */
static const char *figure(char *buf, size_t len, const char *fmt, double v)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, len, fmt, v);
	return buf;
}

void bw_policy_win_evidence(char *buf, size_t len, const struct bw_policy_win *w)
{
	char mb[32], pe[32], dp[32], s1[32], th[32];

	snprintf(buf, len, "%s MB/s, P_eff %s, depth %s, S1 %s ms (%s), class %s, streams %d "
		 "(%d sync sequential), think p90 %s ms",
		 figure(mb, sizeof(mb), "%.1f", bw_policy_win_mbps(w)),
		 figure(pe, sizeof(pe), "%.2f", bw_policy_win_peff(w)),
		 figure(dp, sizeof(dp), "%.2f", bw_policy_win_depth(w)),
		 figure(s1, sizeof(s1), "%.3f", w->s1_ms), w->s1_source ? w->s1_source : "-",
		 bw_class_name(w->cls), w->streams, w->sync_seq,
		 figure(th, sizeof(th), "%.3f", w->think_p90_ms));
}

static void win_add(struct bw_policy_win *w, const struct bw_policy_obs *o)
{
	w->secs += o->secs;
	w->bytes += o->bytes;
	w->busy_s += o->busy_s;
	w->ios += o->ios;
	w->work_s += o->solo_work_s;
	w->known += o->solo_known;
	if (!isnan(o->depth))
		w->depth_sum += o->depth * o->busy_s;
	if (!isnan(o->seq_pct))
		w->seq_sum += o->seq_pct * o->ios;
	if (!isnan(o->kb_per_rq))
		w->kb_sum += o->kb_per_rq * o->ios;
	if (o->secs > 0) {
		w->rate2_sum += o->bytes * o->bytes / o->secs;
		w->ticks++;
	}
	if (!isnan(o->think_p90_ms) && !(o->think_p90_ms <= w->think_p90_ms))
		w->think_p90_ms = o->think_p90_ms;
	if (o->streams > w->streams)
		w->streams = o->streams;
	if (o->sync_seq > w->sync_seq)
		w->sync_seq = o->sync_seq;
	if (o->sync_rand > w->sync_rand)
		w->sync_rand = o->sync_rand;
	if (!isnan(o->s1_ms)) {
		w->s1_ms = o->s1_ms;
		w->s1_source = o->s1_source;
	}
	w->cls = o->cls;
	w->cls_stored = o->cls_stored;
	w->idle_us = o->idle_us;
	w->rotational = o->rotational;
}

static void win_reset(struct bw_policy_win *w)
{
	memset(w, 0, sizeof(*w));
	w->think_p90_ms = NAN;
	w->s1_ms = NAN;
}

static struct bw_policy_sig sig_of(const struct bw_policy_win *w)
{
	double kb = w->ios ? w->kb_sum / w->ios : 0;
	struct bw_policy_sig s = {
		.streams = w->streams,
		.sync_seq = w->sync_seq,
		.seq_tenths = w->ios ? (int)lround(w->seq_sum / w->ios / 10) : 0,
		.size_class = kb >= 1 ? (int)floor(log2(kb)) : 0,
	};

	return s;
}

/* A workload change worth a new look: streams come or go, or their nature shifts. */
static bool sig_changed(const struct bw_policy_sig *a, const struct bw_policy_sig *b)
{
	return a->streams != b->streams || a->sync_seq != b->sync_seq ||
	       abs(a->seq_tenths - b->seq_tenths) >= 3 || abs(a->size_class - b->size_class) >= 2;
}

/*
 * The workload as it has been for two windows in a row: a change counts
 * once it holds, so streams starting a little apart (fio's jobs) or one
 * odd window do not count as a new workload.
 */
static struct bw_policy_sig stable_sig(struct bw_policy_state *st, struct bw_policy_sig now)
{
	if (!st->has_sig) {
		st->sig = now;
		st->has_sig = true;
	} else if (sig_changed(&now, &st->sig)) {
		if (st->cand_n && !sig_changed(&now, &st->cand_sig)) {
			st->sig = now;
			st->cand_n = 0;
		} else {
			st->cand_sig = now;
			st->cand_n = 1;
		}
	} else {
		st->cand_n = 0;
	}
	return st->sig;
}

static void describe(char *buf, size_t len, const struct bw_policy_win *w)
{
	char pe[32], dp[32], th[32];

	snprintf(buf, len, "P_eff %s, depth %s, %d streams (%d sync sequential), think p90 %s ms",
		 figure(pe, sizeof(pe), "%.2f", bw_policy_win_peff(w)),
		 figure(dp, sizeof(dp), "%.2f", bw_policy_win_depth(w)), w->streams, w->sync_seq,
		 figure(th, sizeof(th), "%.3f", w->think_p90_ms));
}

/* Rule 2: the setting the device class asks for; false when it asks for none. */
static bool class_target(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			 const struct bw_policy_win *w, __u32 *target, char *why, size_t len)
{
	double peff = bw_policy_win_peff(w);

	if (w->cls == BW_CLASS_DEEP) {
		*target = 0;
		snprintf(why, len, "deep device (class deep, P_eff %.2f): idling wastes it", peff);
		return true;
	}
	if (w->cls != BW_CLASS_SHALLOW)
		return false;
	if (w->sync_seq > 0 && !(w->think_p90_ms * 1000 > cfg->max_idle_us)) {
		*target = bw_policy_idle_for(cfg, w->think_p90_ms);
		/* Idling that already covers it stays: shortening it risks the above. */
		if (st->setting >= *target &&
		    st->setting <= (st->strict ? strict_idle(cfg, cfg->max_idle_us) : cfg->max_idle_us))
			*target = st->setting;
		snprintf(why, len, "shallow device with %d sync sequential streams, think p90 "
			 "%.3f ms: idle for it", w->sync_seq, w->think_p90_ms);
		return true;
	}
	*target = cfg->policy == BW_POLICY_LATENCY ? 0 : st->setting;
	snprintf(why, len, "shallow device, no sync sequential stream whose think time fits");
	return true;
}

/*
 * The workload a verdict holds for: the one the probe measured, or, for
 * the store's, any with two or more sync sequential streams (the workload
 * idling is about; a stored verdict outlives the stream count).
 */
static bool verdict_applies(const struct bw_policy_state *st, const struct bw_policy_sig *sig)
{
	if (!st->has_verdict)
		return false;
	if (st->verdict_stored)
		return sig->sync_seq >= 2;
	return !sig_changed(sig, &st->verdict_sig);
}

static bool verdict_valid(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			  const struct bw_policy_sig *sig, double t)
{
	return verdict_applies(st, sig) && t - st->last_probe < cfg->probe_every_s;
}

/*
 * The verdict's workload and this one both have two or more sync
 * sequential streams: idling serves some of them at a time, so their
 * count moves with the setting, and a count that keeps moving is no new
 * load.  Such a move is probed again at most once per dwell.
 */
static bool count_moved(const struct bw_policy_state *st, const struct bw_policy_sig *sig)
{
	return st->verdict_sig.sync_seq >= 2 && sig->sync_seq >= 2;
}

/*
 * A probe's verdict in force that the class rule would overturn: past its
 * time on this very workload, or at once on another workload of the kind
 * idling is about (two or more sync sequential streams either way: BFQ
 * idling one reader at a time, a window sees only some of them, so their
 * count moves with the setting).  A measurement outranks the class's model
 * (a RAID-0 whose readers meet on one spindle reads shallow, yet serves them
 * faster without idling), so it is measured again rather than overruled.
 */
static bool verdict_outranks(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			     const struct bw_policy_sig *sig, __u32 target, double t)
{
	if (!st->has_verdict || st->verdict != st->setting || st->verdict == target)
		return false;
	if (verdict_applies(st, sig))
		return t - st->last_probe >= cfg->probe_every_s;
	return count_moved(st, sig) && t - st->last_probe >= cfg->dwell_s;
}

/*
 * Rule 3's rate limit: once per probe_every_s, and again on a workload the
 * last verdict does not apply to; where only the count of sync sequential
 * streams moved (two or more either way: idling serves some of them at a
 * time, so the count moves with the setting), at most once per dwell.
 */
static bool probe_again(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			const struct bw_policy_sig *sig, double t)
{
	if (st->last_probe < 0 || t - st->last_probe >= cfg->probe_every_s)
		return true;
	if (!st->has_verdict || verdict_applies(st, sig))
		return false;
	if (count_moved(st, sig))
		return t - st->last_probe >= cfg->dwell_s;
	return true;
}

/* why: what calls for the probe; NULL: the evidence is missing (rule 3). */
static void begin_probe(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			const struct bw_policy_win *w, double t, const char *why,
			struct bw_policy_decision *d)
{
	double secs = cfg->probe_s * (1 << st->check_ties);

	d->action = BW_POLICY_PROBE;
	d->after = st->setting ? 0 : bw_policy_idle_for(cfg, w->think_p90_ms);
	if (why)
		snprintf(d->why, sizeof(d->why), "%s: trying %u us for %.1f s", why, d->after,
			 secs);
	else
		snprintf(d->why, sizeof(d->why), "evidence missing (class unknown, P_eff %s) "
			 "with %d streams competing: trying %u us for %.1f s",
			 isnan(bw_policy_win_peff(w)) ? "undetermined" : "between the marks",
			 w->streams, d->after, secs);
	st->probe_s = secs;
	st->last_probe = t;
	st->probes++;
	if (cfg->dry_run)
		return;
	st->phase = BW_PH_PROBE;
	st->base = *w;
	st->probe_from = st->setting;
	st->probe_to = d->after;
}

/*
 * Whether strict_guarantees may come to the rescue of idling in window w:
 * throughput policy, strict allowed and not on, and the workload idling
 * is about (two or more sync sequential streams).
 */
static bool strict_may_repair(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			      const struct bw_policy_win *w)
{
	return cfg->policy == BW_POLICY_THROUGHPUT && !cfg->no_strict && !st->strict &&
	       w->sync_seq >= 2;
}

/* Whether BFQ's idling is watched in window w: it must be on to be lost. */
static bool watches_idling(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			   const struct bw_policy_win *w)
{
	return st->setting && strict_may_repair(cfg, st, w);
}

/*
 * The window BFQ idled in, comparable with now: same setting, same
 * workload (as it held for two windows: one window may see fewer of the
 * streams, BFQ serving each for its budget).
 */
static const struct bw_policy_win *idled_before(const struct bw_policy_state *st,
					      const struct bw_policy_sig *sig)
{
	return st->has_idled && st->idled.idle_us == st->setting &&
	       !sig_changed(&st->idled_sig, sig) ? &st->idled : NULL;
}

static bool strict_lost_here(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			     const struct bw_policy_sig *sig, double t)
{
	/* A repair that lost once is tried again sooner (see the top of this file). */
	double hold = st->strict_repair && st->strict_lost_n == 1 ? cfg->repair_retry_s :
								    cfg->probe_every_s;

	return st->strict_tried && !st->strict_won && !sig_changed(sig, &st->strict_sig) &&
	       t - st->strict_at < hold;
}

/*
 * A shallow device: its class says so (live, or stored for this very
 * device: the trial is judged on live throughput anyway), and this
 * window's P_eff does not say deep.  One window's P_eff alone is not
 * enough (a RAID-0 whose readers meet on one spindle shows 1 now and then);
 * unknown, or between the marks, is rule 3's to probe: strict_guarantees is
 * never tried on a device that may be deep.
 */
static bool shallow_evidence(const struct bw_policy_win *w)
{
	double peff = bw_policy_win_peff(w);

	return w->cls == BW_CLASS_SHALLOW && !(peff >= BW_DEEP_AT);
}

/*
 * A window with strict_guarantees on, judged against w, the window without:
 * a repair (BFQ stopped idling) or a trial for random reads.
 */
static void start_strict(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			 const struct bw_policy_win *w, const struct bw_policy_sig *sig, double t,
			 unsigned int from_us, bool repair, double idled_mbps)
{
	if (!st->strict_tried || st->strict_won || st->strict_repair != repair ||
	    sig_changed(sig, &st->strict_sig))
		st->strict_lost_n = 0;	/* the first trial of its kind on this workload */
	st->strict_repair = repair;
	st->strict_tried = true;
	st->strict_won = false;
	st->strict_at = t;
	st->strict_sig = *sig;
	st->strict_idled_mbps = idled_mbps;
	st->strict_from_us = from_us;
	st->strict_back_us = from_us;
	if (cfg->dry_run)
		return;
	st->phase = BW_PH_STRICT;
	st->base = *w;
}

/*
 * A probe of 0 that lost clearly (slower) on a spindle under sync sequential
 * streams: back to idling with strict_guarantees, judged as a repair
 * against the probe's window and the rate BFQ idled at before it (see the
 * top of this file).  d holds end_probe()'s revert; it becomes the repair.
 */
static void repair_after_probe(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			       const struct bw_policy_win *p, bool slower, double t,
			       struct bw_policy_decision *d)
{
	size_t n;

	if (st->probe_to != 0 || !slower || !strict_may_repair(cfg, st, &st->base) ||
	    !p->rotational || d->learned != BW_CLASS_SHALLOW ||
	    strict_lost_here(cfg, st, &st->sig, t))
		return;
	d->action = BW_POLICY_REPAIR;
	d->after = strict_idle(cfg, st->probe_from);
	d->strict_after = 1;
	n = strlen(d->why);
	snprintf(d->why + n, sizeof(d->why) - n, " to idling, with strict_guarantees 1 and "
		 "slice_idle_us %u: after a probe BFQ may not idle again (up to %.0f s)",
		 d->after, cfg->repair_patience_s);
	st->repairs++;
	start_strict(cfg, st, p, &st->sig, t, st->probe_from, true, bw_policy_win_mbps(&st->base));
}

/*
 * A probe of 0 that won against a window where BFQ was not idling throughout
 * (depth above IDLED_DEPTH under two or more sync sequential streams), on a
 * rotational device whose probe did not show it deep, compared 0 with a
 * collapse, not with idling: seen in a guest, +18% over a window at depth
 * 1.90 with P_eff 0.41 in the probe, and on a slowed guest +34% over a
 * window at depth 1.28 (37 MB/s, where idling that works gave the same
 * spindle 58-80) with P_eff 1.27, the emulated disk's own path, which
 * requests share without seeking, lifting it.  A RAID-0 whose readers meet
 * on one spindle reads the same 1.3, and there 0 is right: the two cannot
 * be told apart by what the probe saw.  Only a deep P_eff says idling
 * cannot pay, and keeps 0 at once; else idling with strict_guarantees is
 * tried against the probe's window, as a repair, and where it loses, 0 it
 * is, as the verdict (one trial, a probe where nothing else can decide).
 * Not for a check of the store's beliefs: that asks what the device is,
 * and the probe answers it.
 */
static bool probe_met_collapse(const struct bw_policy_cfg *cfg, const struct bw_policy_state *st,
			       const struct bw_policy_win *p, double peff, double t)
{
	return st->probe_to == 0 && !st->checking && p->rotational && !(peff >= BW_DEEP_AT) &&
	       bw_policy_win_depth(&st->base) > IDLED_DEPTH &&
	       strict_may_repair(cfg, st, &st->base) && !strict_lost_here(cfg, st, &st->sig, t);
}

static void repair_collapsed_probe(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
				   const struct bw_policy_win *p, double t,
				   struct bw_policy_decision *d)
{
	size_t n = strlen(d->why);

	d->action = BW_POLICY_REPAIR;
	d->after = strict_idle(cfg, st->probe_from);
	d->strict_after = 1;
	snprintf(d->why + n, sizeof(d->why) - n, ", but BFQ was not idling at %u us (depth "
		 "%.2f): trying idling with strict_guarantees 1 and slice_idle_us %u against 0 "
		 "(up to %.0f s)", st->probe_from, bw_policy_win_depth(&st->base), d->after,
		 cfg->repair_patience_s);
	st->repairs++;
	start_strict(cfg, st, p, &st->sig, t, st->probe_from, true, NAN);
	st->strict_back_us = 0;
}

/*
 * A check's end: one that settled nothing puts the doubt back, for a
 * longer probe at the next steady window (CHECK_TRIES at most); one that
 * settled it, or the last, ends the check.
 */
static void recheck_unsettled(struct bw_policy_state *st, bool unsettled,
			      struct bw_policy_decision *d)
{
	size_t n = strlen(d->why);

	if (!unsettled || st->check_ties + 1 >= CHECK_TRIES) {
		st->check_ties = 0;
		return;
	}
	st->check_ties++;
	st->doubt = st->check_doubt;
	snprintf(d->why + n, sizeof(d->why) - n, "; the check settled nothing: measuring "
		 "again, for longer");
}

/* Rule 3's end: keep the probed setting or go back. */
static void end_probe(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
		      const struct bw_policy_win *p, double t, struct bw_policy_decision *d)
{
	double mp = bw_policy_win_mbps(p), mb = bw_policy_win_mbps(&st->base);
	double rel = mb > 0 ? mp / mb - 1 : NAN, peff = bw_policy_win_peff(p);
	double res = resolution(p, &st->base);
	double need = cfg->gain;
	bool keep, collapse, idle_probe = st->probe_to != 0, slower = rel < -fmax(cfg->gain, res);
	bool unsettled = false;	/* neither throughput nor P_eff told the settings apart */
	const char *how;
	char res_txt[48];
	/*
	 * A tie leaves what a clear measurement chose; else it goes to the
	 * class seen with idling off: the probe's own window for a probe of 0,
	 * the window before it for a probe of idling (idling serves one queue
	 * at a time and hides what the device could do).
	 */
	double tie_peff = idle_probe ? bw_policy_win_peff(&st->base) : peff;

	/* Latency: idling holds other queues back, so it must win clearly. */
	if (cfg->policy == BW_POLICY_LATENCY && idle_probe)
		need = 4 * cfg->gain;
	if (cfg->policy == BW_POLICY_LATENCY && !idle_probe)
		need = -cfg->gain;
	if (need >= 0 && need < res)
		need = res;
	if (p->ios < cfg->min_ios || st->base.ios < cfg->min_ios || isnan(rel)) {
		keep = false;
		unsettled = true;
		how = "too little I/O to compare";
	} else if (rel > need) {
		keep = true;
		how = "faster";
	} else if (slower) {
		keep = false;
		how = "slower";
	} else if (st->has_verdict && st->verdict_clear && st->verdict == st->probe_from) {
		keep = false;
		how = "a tie; the last clear measurement chose it";
	} else if (!isnan(tie_peff) && tie_peff >= BW_DEEP_AT) {
		keep = !idle_probe;
		how = "a tie; P_eff says deep";
	} else if (!isnan(tie_peff) && tie_peff <= BW_SHALLOW_AT) {
		keep = idle_probe;
		how = "a tie; P_eff says shallow";
	} else {
		keep = cfg->policy == BW_POLICY_LATENCY ? !idle_probe : false;
		unsettled = cfg->policy != BW_POLICY_LATENCY;
		how = cfg->policy == BW_POLICY_LATENCY ? "a tie; latency prefers no idling" :
			"a tie";
	}
	collapse = keep && probe_met_collapse(cfg, st, p, peff, t);
	d->action = keep ? BW_POLICY_KEEP : BW_POLICY_REVERT;
	d->resolution = res;
	d->strict_before = d->strict_after = st->strict;
	d->before = st->probe_from;
	d->after = keep ? st->probe_to : st->probe_from;
	d->base = st->base;
	res_txt[0] = 0;
	if (res > cfg->gain && fabs(rel) <= res)
		snprintf(res_txt, sizeof(res_txt), ", within the %.0f%% the windows resolve",
			 res * 100);
	snprintf(d->why, sizeof(d->why), "probe of %u us: %.1f MB/s vs %.1f MB/s at %u us "
		 "(%+.0f%%%s, %s)%s", st->probe_to, mp, mb, st->probe_from, rel * 100,
		 res_txt, how, collapse ? "" : keep ? ": keeping it" : ": going back");
	/* What the probe showed of the device itself, for the store. */
	if (!idle_probe && peff >= BW_DEEP_AT)
		d->learned = BW_CLASS_DEEP;
	else if (!idle_probe && peff <= BW_SHALLOW_AT)
		d->learned = BW_CLASS_SHALLOW;
	d->learned_peff = peff;
	if (collapse) {
		st->probe_cost_s += p->secs + cfg->settle_s;
		st->phase = BW_PH_MEASURE;
		repair_collapsed_probe(cfg, st, p, t, d);
		return;
	}
	/* Decided by throughput on the workload idling is about: the device's verdict. */
	if (cfg->policy == BW_POLICY_THROUGHPUT && st->base.sync_seq >= 2 && mp > 0 &&
	    (rel > need || slower)) {
		d->verdict_learned = true;
		d->verdict_us = d->after;
		d->verdict_gain = keep ? rel : mb / mp - 1;
	}
	/* A tie leaves the last clear verdict as it was: nothing new was measured. */
	if (rel > need || slower)
		st->verdict_clear = true;
	else if (!(st->has_verdict && st->verdict == d->after))
		st->verdict_clear = false;
	st->has_verdict = true;
	st->verdict = d->after;
	st->verdict_sig = st->sig;
	st->verdict_stored = false;
	st->probe_cost_s += p->secs + cfg->settle_s;
	st->phase = BW_PH_MEASURE;
	/*
	 * Back to idling: the window before the probe is what idling gave, to
	 * hold what follows against (BFQ may not idle again: a probe's
	 * after-effect is part of its cost).  This holds when the repair
	 * below takes over too: should its trial lose, BFQ not idling after
	 * it is still the probe's after-effect.
	 */
	if (!keep && !idle_probe && bw_policy_win_depth(&st->base) <= IDLED_DEPTH) {
		st->idled = st->base;
		st->idled_sig = st->sig;
		st->has_idled = true;
		st->after_probe = true;
	}
	/*
	 * A check of the store's beliefs that loses goes back to plain idling:
	 * it asked what the device is, not how to get BFQ idling again, and
	 * where BFQ then does not idle, watch_idling() repairs it two windows
	 * on, from what the disk shows.
	 */
	/* The check kept the other setting than the store's: the belief was wrong here. */
	d->dropped = st->checking && keep;
	if (d->dropped) {
		size_t n = strlen(d->why);

		snprintf(d->why + n, sizeof(d->why) - n, "; the store's beliefs about this device "
			 "dropped");
	}
	if (!keep && !st->checking)
		repair_after_probe(cfg, st, p, slower, t, d);
	if (st->checking)
		recheck_unsettled(st, unsettled, d);
	st->checking = false;
}

/*
 * The effect of idling, not only its setting (see the top of this file):
 * true, with d filled, when BFQ stopped idling and strict_guarantees is
 * worth a trial.
 */
static bool watch_idling(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			 const struct bw_policy_win *w, const struct bw_policy_sig *sig, double t,
			 struct bw_policy_decision *d)
{
	double depth = bw_policy_win_depth(w);
	const struct bw_policy_win *was;

	if (!watches_idling(cfg, st, w)) {
		st->lost_n = 0;
		return false;
	}
	if (depth <= IDLED_DEPTH) {
		st->after_probe = false;
		st->idled = *w;
		st->idled_sig = *sig;
		st->has_idled = true;
		st->lost_n = 0;
		return false;
	}
	if (!(depth >= LOST_DEPTH) || ++st->lost_n < LOST_WINDOWS)
		return false;
	was = idled_before(st, sig);
	if (was && bw_policy_win_mbps(w) >= (1 - 2 * cfg->gain) * bw_policy_win_mbps(was))
		return false;	/* not idling costs nothing here */
	if (!shallow_evidence(w))
		return false;	/* rule 2's or 3's */
	if (strict_lost_here(cfg, st, sig, t))
		return false;	/* tried on this workload, and it lost */
	d->action = BW_POLICY_REPAIR;
	d->after = strict_idle(cfg, st->setting);
	d->strict_after = 1;
	if (was)
		snprintf(d->why, sizeof(d->why), "BFQ stopped idling at slice_idle_us %u: depth "
			 "%.2f -> %.2f, %.0f -> %.0f MB/s; trying strict_guarantees 1 with "
			 "slice_idle_us %u (up to %.0f s)", st->setting, bw_policy_win_depth(was),
			 depth, bw_policy_win_mbps(was), bw_policy_win_mbps(w), d->after,
			 cfg->repair_patience_s);
	else
		snprintf(d->why, sizeof(d->why), "BFQ is not idling at slice_idle_us %u: depth "
			 "%.2f under %d sync sequential streams, %.0f MB/s; trying "
			 "strict_guarantees 1 with slice_idle_us %u (up to %.0f s)", st->setting,
			 depth, w->sync_seq, bw_policy_win_mbps(w), d->after, cfg->repair_patience_s);
	if (st->after_probe) {
		size_t n = strlen(d->why);

		snprintf(d->why + n, sizeof(d->why) - n, " (since the probe of 0 us)");
		st->probe_damage++;
	}
	st->repairs++;
	st->lost_n = 0;
	start_strict(cfg, st, w, sig, t, st->setting, true, was ? bw_policy_win_mbps(was) : NAN);
	return true;
}

/*
 * Random sync reads queued several deep in a shallow device that serves
 * them in arrival order (no command queueing of its own) seek from each to
 * the next as submitted.  With strict_guarantees BFQ hands the device one
 * request at a time, the one nearest the head among those it holds
 * (bfq_choose_req()): on the emulated spindle, random 4 KiB reads at
 * iodepth 8 went from 0.34 to 0.77 MB/s.  A device that orders its queue
 * itself gains nothing from it, and the trial's window says so.  Only a
 * device BFQ serves as a spindle (queue/rotational) seeks: elsewhere one
 * request at a time can still measure faster (a memory-backed loop device
 * did, +50%) but not for this reason, and it serializes every queue and
 * hides P_eff (depth 1), so it is not tried there.  Such a
 * workload never leaves a request alone in the device, so S1, P_eff and
 * the class stay unknown: a device not shown deep is tried (a deep one
 * loses the trial, 3 s once per workload and probe_every_s; the trial's
 * requests, each alone, are S1 samples).  True, with d filled, when such a
 * trial starts.
 */
static bool order_trial(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			const struct bw_policy_win *w, const struct bw_policy_sig *sig, double t,
			struct bw_policy_decision *d)
{
	double depth = bw_policy_win_depth(w);

	if (cfg->policy != BW_POLICY_THROUGHPUT || cfg->no_strict || st->strict ||
	    w->sync_seq || !w->sync_rand || !w->rotational)
		return false;
	if (!(depth >= LOST_DEPTH) || w->cls == BW_CLASS_DEEP || bw_policy_win_peff(w) >= BW_DEEP_AT)
		return false;	/* nothing to order, or a deep device */
	if (st->windows < 2 || st->cand_n || strict_lost_here(cfg, st, sig, t))
		return false;	/* settling, or tried on this workload and lost */
	d->action = BW_POLICY_PROBE;
	d->after = st->setting;
	d->strict_after = 1;
	snprintf(d->why, sizeof(d->why), "%d sync random streams at depth %.2f, %.2f MB/s, "
		 "device not deep: trying strict_guarantees 1, one request at a time in BFQ's order "
		 "(%.1f s, measured after %.1f s)", w->sync_rand, depth, bw_policy_win_mbps(w),
		 cfg->window_s, cfg->trial_settle_s);
	st->probes++;
	start_strict(cfg, st, w, sig, t, st->setting, false, NAN);
	return true;
}

/*
 * A strict_guarantees trial's window: kept if faster than the window
 * without; a repair that is not yet goes on until repair_patience_s (false:
 * nothing decided).
 */
static bool end_strict(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
		       const struct bw_policy_win *p, double t, struct bw_policy_decision *d)
{
	double mp = bw_policy_win_mbps(p), mb = bw_policy_win_mbps(&st->base);
	double rel = mb > 0 ? mp / mb - 1 : NAN, peff = bw_policy_win_peff(&st->base);
	double on = t - st->strict_at;
	bool keep = p->ios >= cfg->min_ios && rel > cfg->gain;
	bool patient = st->strict_repair && on + cfg->window_s < cfg->repair_patience_s + 1e-9;

	/*
	 * Before its end, a repair is kept only once BFQ idles well again:
	 * near the rate it idled at, where that is known (in the dip, one
	 * window of the 15-24 MB/s it wavers over can beat the collapsed 18).
	 */
	if (patient && keep && mp < (1 - 2 * cfg->gain) * st->strict_idled_mbps)
		keep = false;
	if (!keep && patient)
		return false;
	d->action = keep ? BW_POLICY_KEEP : BW_POLICY_REVERT;
	d->before = st->setting;
	d->after = keep ? st->setting : st->strict_back_us;
	d->strict_before = 1;
	d->strict_after = keep;
	d->base = st->base;
	snprintf(d->why, sizeof(d->why), "strict_guarantees 1: %.1f MB/s vs %.1f MB/s without "
		 "(%+.0f%%, %.0f s after the switch): %s", mp, mb, rel * 100, on,
		 !keep ? (st->strict_back_us ? "no gain, going back" : "no gain, going to 0") :
		 p->sync_seq && mp >= (1 - 2 * cfg->gain) * st->strict_idled_mbps ?
		 "BFQ idles again, keeping it" : "faster, keeping it");
	if (keep && peff <= BW_SHALLOW_AT)
		d->learned = BW_CLASS_SHALLOW;
	d->learned_peff = peff;
	st->strict_won = keep;
	st->strict_lost_n = keep ? 0 : st->strict_lost_n + 1;
	/* A repair won on the workload idling is about: the device's verdict, with strict. */
	if (keep && st->strict_repair && st->base.sync_seq >= 2 && mb > 0) {
		d->verdict_learned = true;
		d->verdict_us = st->strict_from_us;
		d->verdict_strict = 1;
		d->verdict_gain = rel;
	}
	/* One that lost to a probe of 0 (repair_collapsed_probe()): 0 is the verdict. */
	if (!keep && !st->strict_back_us && st->base.sync_seq >= 2 && mp > 0) {
		d->verdict_learned = true;
		d->verdict_us = 0;
		d->verdict_gain = fmax(mb / mp - 1, 0);
	}
	if (keep || !st->strict_back_us) {
		/* A verdict on this workload, as a probe's: no probe of 0 over it. */
		st->has_verdict = true;
		st->verdict_clear = true;
		st->verdict = keep ? st->strict_from_us : 0;
		st->verdict_sig = st->sig;
		st->verdict_stored = false;
		st->last_probe = st->strict_at;
	}
	st->probe_cost_s += on;
	st->phase = BW_PH_MEASURE;
	return true;
}

/*
 * strict_guarantees in force where it no longer belongs: why, or NULL.  It
 * stays for sync sequential streams, or for the workload whose trial it won.
 */
static const char *strict_unwanted(const struct bw_policy_state *st, const struct bw_policy_win *w,
				   const struct bw_policy_sig *sig, bool have, __u32 target)
{
	bool won_here = st->strict_won && !sig_changed(sig, &st->strict_sig);

	if (w->cls == BW_CLASS_DEEP || bw_policy_win_peff(w) >= BW_DEEP_AT)
		return "deep device: one request at a time wastes it";
	if (have && !target && !won_here)
		return "idling set to 0";
	if (!sig->sync_seq && !won_here)
		return "no sync sequential stream left";
	return NULL;
}

void bw_policy_seed_verdict(struct bw_policy_state *st, __u32 idle_us, __u32 strict, double gain,
			  double age_s)
{
	st->has_stored = true;
	st->stored_us = idle_us;
	st->stored_strict = idle_us && strict;
	st->stored_gain = gain;
	st->stored_age_s = age_s;
}

void bw_policy_doubt(struct bw_policy_state *st, const char *why)
{
	st->doubt = why;
}

/*
 * A belief in doubt (bw_policy_doubt) is checked before it decides on a
 * workload idling matters to (two or more streams): P_eff from this
 * device's own solo service time, clear of the dead zone, settles it (the
 * class follows it); else a probe of the other setting measures both on
 * this very device, and its verdict and class replace the store's.
 */
static bool check_doubt(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			const struct bw_policy_win *w, double t, struct bw_policy_decision *d)
{
	double peff = bw_policy_win_peff(w);
	char why[400];

	if (!st->doubt || w->streams < 2)
		return false;
	if (w->s1_source && !strcmp(w->s1_source, "live") && !isnan(peff) &&
	    (peff >= BW_DEEP_AT || peff <= BW_SHALLOW_AT)) {
		st->doubt = NULL;
		return false;
	}
	if (st->windows < 2 || st->cand_n)
		return false;	/* the workload is still settling: probe a steady one */
	snprintf(why, sizeof(why), "checking what the store holds for this device (%s; "
		 "class %s %s, P_eff %s with %d streams competing)", st->doubt,
		 bw_class_name(w->cls), w->cls_stored ? "stored" : "live",
		 isnan(peff) ? "undetermined" : "between the marks", w->streams);
	st->check_doubt = st->doubt;
	st->doubt = NULL;
	st->has_stored = false;
	st->has_verdict = false;
	begin_probe(cfg, st, w, t, why, d);
	st->checking = st->phase == BW_PH_PROBE;
	return true;
}

static void stored_why(const struct bw_policy_state *st, char *why, size_t len)
{
	snprintf(why, len, "the stored verdict for this device: %s won by %.0f%% for sync "
		 "sequential streams, %.0f min before this run",
		 st->stored_strict ? "strict_guarantees, once BFQ had stopped idling," :
		 st->stored_us ? "idling" : "0 us", st->stored_gain * 100, st->stored_age_s / 60);
}

/*
 * The store's verdict becomes this run's, as if probed now: it stands for
 * probe_every_s, then is measured again where the class rule disagrees.
 */
static void take_stored(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
			const struct bw_policy_win *w, const struct bw_policy_sig *sig, double t)
{
	st->has_stored = false;
	st->has_verdict = true;
	st->verdict_stored = true;
	st->verdict_clear = true;
	st->verdict = !st->stored_us ? 0 : st->setting ? st->setting :
		bw_policy_idle_for(cfg, w->think_p90_ms);
	st->verdict_sig = *sig;
	st->last_probe = t;
}

bool bw_policy_step(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
		  const struct bw_policy_obs *o, double t, struct bw_policy_decision *d)
{
	struct bw_policy_win w;
	struct bw_policy_sig sig;
	char why[200], ev[200];
	const char *strict_off;
	__u32 target = 0;
	bool have;

	memset(d, 0, sizeof(*d));
	d->before = st->setting;
	if (st->win.secs == 0)
		win_reset(&st->win);
	if (t < st->settle_until)
		return false;
	win_add(&st->win, o);
	if (st->win.secs + 1e-9 < (st->phase == BW_PH_PROBE ? st->probe_s : cfg->window_s))
		return false;
	/* A probe on a slow device goes on until it has enough to compare, up to 4x. */
	if (st->phase == BW_PH_PROBE && st->win.ios < probe_ios(cfg) &&
	    st->win.secs + 1e-9 < PROBE_STRETCH * st->probe_s)
		return false;
	w = st->win;
	win_reset(&st->win);
	d->win = w;
	d->strict_before = d->strict_after = st->strict;
	if (st->phase == BW_PH_PROBE) {
		end_probe(cfg, st, &w, t, d);
		return true;
	}
	if (st->phase == BW_PH_STRICT)
		return end_strict(cfg, st, &w, t, d);
	if (w.ios < cfg->min_ios)
		return false;	/* nothing to judge by */
	st->windows++;
	sig = stable_sig(st, sig_of(&w));
	describe(ev, sizeof(ev), &w);
	if (check_doubt(cfg, st, &w, t, d))
		return true;
	if (!st->has_verdict && st->has_stored && sig.sync_seq >= 2 &&
	    cfg->policy == BW_POLICY_THROUGHPUT)
		take_stored(cfg, st, &w, &sig, t);
	if (verdict_valid(cfg, st, &sig, t)) {
		target = st->verdict;
		if (st->verdict_stored)
			stored_why(st, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "the last probe's verdict on this workload");
		have = true;
	} else {
		have = class_target(cfg, st, &w, &target, why, sizeof(why));
	}
	if (st->strict && !st->cand_n && (strict_off = strict_unwanted(st, &w, &sig, have, target))) {
		d->action = BW_POLICY_SET;
		d->after = have ? target : st->setting;
		/* strict_guarantees' longer idle goes with it. */
		if (d->after > cfg->max_idle_us && d->after > st->strict_from_us)
			d->after = st->strict_from_us;
		d->strict_after = 0;
		st->changes++;
		snprintf(d->why, sizeof(d->why), "strict_guarantees off: %s; %s", strict_off, ev);
		return true;
	}
	if (have && st->strict && sig.sync_seq)
		target = strict_idle(cfg, target);
	if (watch_idling(cfg, st, &w, &sig, t, d))
		return true;
	if (order_trial(cfg, st, &w, &sig, t, d))
		return true;
	if (!have) {
		double peff = bw_policy_win_peff(&w);

		/* P_eff clear of the dead zone: the class follows in a few windows. */
		if (w.streams < 2 || peff >= BW_DEEP_AT || peff <= BW_SHALLOW_AT)
			return false;	/* idling cannot matter, or the class is coming */
		if (!probe_again(cfg, st, &sig, t))
			return false;	/* rate limit: the workload has not changed */
		if (st->windows < 2 || st->cand_n)
			return false;	/* the workload is still settling: probe a steady one */
		begin_probe(cfg, st, &w, t, NULL, d);
		return true;
	}
	if (target == st->setting)
		return false;
	if (st->cand_n)
		return false;	/* a new workload, seen once: judge it when it holds */
	if (verdict_outranks(cfg, st, &sig, target, t)) {
		char pw[400];

		snprintf(pw, sizeof(pw), "%s (%u us), but the last probe measured %u us better, "
			 "with %d sync sequential streams, %.0f s ago: measuring again", why, target,
			 st->verdict, st->verdict_sig.sync_seq, t - st->last_probe);
		begin_probe(cfg, st, &w, t, pw, d);
		return true;
	}
	if (st->last_change >= 0 && t - st->last_change < cfg->dwell_s)
		return false;	/* dwell: the next window asks again */
	d->action = BW_POLICY_SET;
	d->after = target;
	st->changes++;
	snprintf(d->why, sizeof(d->why), "%s; %s", why, ev);
	return true;
}

void bw_policy_applied(const struct bw_policy_cfg *cfg, struct bw_policy_state *st, __u32 v,
		     __u32 strict, double t)
{
	st->setting = v;
	st->strict = strict;
	st->settle_until = t + (st->phase == BW_PH_STRICT ? cfg->trial_settle_s : cfg->settle_s);
	if (st->phase == BW_PH_MEASURE)
		st->last_change = t;
	win_reset(&st->win);
}

/*
 * A stored repair (strict_guarantees won once BFQ had stopped idling on
 * this device) is set before the first window: BFQ loses idling within
 * seconds of a start as often as later, and strict_guarantees then dips
 * for seconds before BFQ idles again; from the start it idles throughout.
 * Not on a device known deep, nor one no longer served as a spindle.  It
 * is the store's verdict, taken now: it stands for probe_every_s, and
 * strict_unwanted() drops it as soon as a window shows P_eff deep or no
 * sync sequential stream.
 */
static bool start_strict_stored(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
				enum bw_class_id cls, bool rotational, struct bw_policy_decision *d)
{
	size_t n;

	if (!st->has_stored || !st->stored_strict || !rotational || cls == BW_CLASS_DEEP ||
	    cfg->policy != BW_POLICY_THROUGHPUT || cfg->no_strict || st->strict)
		return false;
	d->action = BW_POLICY_SET;
	st->strict_from_us = st->setting ? st->setting : st->stored_us;
	d->after = strict_idle(cfg, st->strict_from_us);
	d->strict_after = 1;
	stored_why(st, d->why, sizeof(d->why));
	n = strlen(d->why);
	snprintf(d->why + n, sizeof(d->why) - n, ": strict_guarantees 1 from the start");
	st->has_stored = false;
	st->has_verdict = true;
	st->verdict_stored = true;
	st->verdict_clear = true;
	st->verdict = st->strict_from_us;
	st->last_probe = 0;
	st->changes++;
	return true;
}

/*
 * Before the first window: a device known deep (the store), or whose
 * stored verdict is 0 (seeded before this), gets 0 at once; one whose
 * stored verdict is a repair gets strict_guarantees; nothing else can be
 * decided without a window (a shallow device's idle needs its streams'
 * think time).
 */
bool bw_policy_start(const struct bw_policy_cfg *cfg, struct bw_policy_state *st, enum bw_class_id cls,
		   bool stored, bool rotational, struct bw_policy_decision *d)
{
	bool zero = st->has_stored && !st->stored_us && cfg->policy == BW_POLICY_THROUGHPUT;

	memset(d, 0, sizeof(*d));
	win_reset(&st->win);
	d->before = st->setting;
	d->strict_before = st->strict;
	d->win.cls = cls;
	d->win.cls_stored = stored;
	d->win.think_p90_ms = NAN;
	d->win.s1_ms = NAN;
	if (start_strict_stored(cfg, st, cls, rotational, d))
		return true;
	if ((cls != BW_CLASS_DEEP && !zero) || (!st->setting && !st->strict))
		return false;
	d->action = BW_POLICY_SET;
	d->after = 0;
	d->strict_after = 0;
	if (cls == BW_CLASS_DEEP)
		snprintf(d->why, sizeof(d->why), "deep device (class deep, %s): idling wastes it",
			 stored ? "stored" : "live");
	else
		stored_why(st, d->why, sizeof(d->why));
	st->changes++;
	return true;
}

/* A stream that BFQ would idle for: sync, and mostly sequential. */
static bool sync_seq(const struct bw_stream_interval *s)
{
	return s->sync_pct >= 90 && s->seq_pct >= 50;
}

/* A sync stream of mostly random requests (reads, as a rule). */
static bool sync_rand(const struct bw_stream_interval *s)
{
	return s->sync_pct >= 90 && s->seq_pct < 50;
}

/* The streams' part of an observation. */
static void observe_streams(const struct bw_stream_interval *const *streams, int n,
			    struct bw_policy_obs *o)
{
	double seq = 0, ios = 0;
	int i;

	o->think_p90_ms = NAN;
	for (i = 0; i < n; i++) {
		const struct bw_stream_interval *s = streams[i];

		o->streams++;
		if (!isnan(s->seq_pct)) {
			seq += s->seq_pct * s->ios;
			ios += s->ios;
		}
		if (sync_rand(s))
			o->sync_rand++;
		if (!sync_seq(s))
			continue;
		o->sync_seq++;
		if (!isnan(s->think_p90_ms) && !(s->think_p90_ms <= o->think_p90_ms))
			o->think_p90_ms = s->think_p90_ms;
	}
	o->seq_pct = ios ? seq / ios : NAN;
}

/*
 * One interval of a device (and its streams) as the policy sees it: the
 * live tuner and analyze --what-if-tune observe through this one function.
 */
void bw_policy_observe(const struct bw_interval *iv, const struct bw_class *cls,
		     const struct bw_stream_interval *const *streams, int nstreams, __u32 idle_us,
		     struct bw_policy_obs *o)
{
	int op;

	memset(o, 0, sizeof(*o));
	o->secs = iv->secs;
	for (op = 0; op < BW_NR_OPS; op++) {
		o->ios += iv->ios[op];
		o->bytes += iv->bytes[op];
	}
	o->busy_s = isnan(iv->busy_pct) ? 0 : iv->busy_pct / 100 * iv->secs;
	o->p_eff = iv->p_eff;
	o->p_eff_why = iv->p_eff_why;
	o->solo_work_s = iv->solo_work_ns / 1e9;
	o->solo_known = iv->solo_known;
	o->depth = iv->depth_busy;
	o->s1_ms = iv->solo_ms;
	o->s1_source = iv->s1_source;
	o->cls = cls->cls;
	o->cls_stored = cls->stored;
	o->kb_per_rq = iv->kb_per_rq;
	o->idle_us = idle_us;
	observe_streams(streams, nstreams, o);
}
