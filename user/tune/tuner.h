/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tuner as a component: what `blkwise tune` runs, and what
 * `blkwise export --tune` runs in the same process as its exporter (one
 * BPF load).  The caller owns the watch loop; the tuner picks and checks
 * its devices, saves what it will change, decides after every sample and
 * puts everything back at the end.  The sysfs files it writes are opened
 * in bw_tuner_prepare, so a caller may drop its privileges after that.
 */
#ifndef BLKWISE_TUNER_H
#define BLKWISE_TUNER_H

#include "watch/watch.h"
#include "model/policy.h"

#define BW_TUNER_RUN_DIR "/run/blkwise"
#define BW_POLICY_TICKS_PER_WINDOW 10

struct bw_tuner_args {
	struct bw_policy_cfg cfg;
	bool json;
	const char *run_dir;
	const char *set_sched;	/* --set-scheduler */
	int low_latency;	/* --low-latency; -1: leave it */
	bool given;		/* bw_tuner_opt took an option */
};

/*
 * The options the tuner takes wherever it runs.  A subcommand passes
 * what getopt returns to bw_tuner_opt; the getopt values below are its
 * (getopt's tables are cmd/options.c's).
 */
enum {
	BW_OPT_POLICY = 1100, BW_OPT_RUN_DIR, BW_OPT_SCHED, BW_OPT_LL, BW_OPT_MAX_IDLE,
	BW_OPT_TUNE_WINDOW, BW_OPT_NO_STRICT, BW_OPT_STRICT_IDLE,
};
void bw_tuner_args_init(struct bw_tuner_args *a);
/* 1 when c was one of those (and is taken), 0 when not, -EINVAL on bad input. */
int bw_tuner_opt(struct bw_tuner_args *a, int c, const char *arg);
/* The measurement window, in seconds: the policy's and the tick (window / 10). */
int bw_tuner_set_window(struct bw_tuner_args *a, const char *arg);

/* One device's tuning counters, for the exporter. */
struct bw_tuner_dev_stats {
	__u32 dev;
	char name[BW_NAME_LEN];
	bool active;		/* being tuned: not gone, not left alone */
	__u64 actions[BW_POLICY_NR_ACTIONS];	/* by enum bw_policy_action */
	__u64 probes;
	double probe_s;
	__u32 setting;
};

struct bw_tuner;

/*
 * Picks the devices (the named ones in wo, all of which must pass; else
 * every device on bfq), checks each (scheduler, lock, write permission),
 * and limits wo to them.  0, or -errno after saying why.
 */
int bw_tuner_open(struct bw_tuner **out, struct bw_tuner_args *a, struct bw_watch *w,
		  struct bw_watch_opts *wo);
/* After bw_watch_start: saves the originals, switches as asked, opens what it writes. */
int bw_tuner_prepare(struct bw_tuner *t);
/* Decisions from what is known before any window (a stored class). */
void bw_tuner_begin(struct bw_tuner *t);
/* After every bw_watch_sample: how many devices are still tuned. */
int bw_tuner_tick(struct bw_tuner *t);
/* --once: every device decided, or given up on. */
bool bw_tuner_all_decided(const struct bw_tuner *t);
/* Every device's counters into out, at most max; how many. */
int bw_tuner_stats(const struct bw_tuner *t, struct bw_tuner_dev_stats *out, int max);
/* Puts everything back (keep: leave the settings, for --once); frees t (NULL: nothing). */
void bw_tuner_close(struct bw_tuner *t, bool keep);
/*
 * `tune --restore`: puts back what tuners that did not exit cleanly left in
 * a->run_dir (only for wo's devices, when it names some).  0, or -errno.
 */
int bw_tuner_restore(const struct bw_tuner_args *a, const struct bw_watch_opts *wo);

#endif /* BLKWISE_TUNER_H */
