// SPDX-License-Identifier: GPL-2.0
/*
 * `blkwise tune`: live-tunes BFQ's dispatch idling (slice_idle_us) per
 * device.  The tuner itself (checks, state file, decisions, putting back)
 * is tuner.c's; this is its command line and the watch loop that feeds it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include "tune/tuner.h"
#include "cmd/options.h"

struct tune_args {
	struct bw_watch_opts w;
	struct bw_tuner_args t;
	bool once, restore;
	bool other;		/* an option --restore has no use for */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise tune [-d DEV]... [-i SECS] [--once] [--dry-run]\n"
		"                    [--policy throughput|latency] [--json] [--state-dir DIR]\n"
		"                    [--run-dir DIR] [--set-scheduler bfq] [--low-latency 0|1]\n"
		"                    [--max-idle-us US] [--strict-idle-us US] [--no-strict]\n"
		"                    [--no-state] [--verbose]\n"
		"                    [--btf FILE] [--force-raw-tp]\n"
		"       blkwise tune --restore [-d DEV]... [--run-dir DIR]\n"
		"Sets BFQ's slice_idle_us per device from its measured parallelism and streams:\n"
		"0 on a deep device, about the streams' think time on a shallow one, probing\n"
		"briefly when the evidence is missing.  Where BFQ stops idling although idling is\n"
		"set (a shallow device, sync sequential streams), or random sync reads queue in a\n"
		"shallow device, tries strict_guarantees and keeps it only if faster.  Every\n"
		"change is logged with its evidence; the values found are put back on exit.\n");
	bw_opts_help(f, BW_CMD_TUNE);
}

/*
 * One of tune's own options: 1 taken, 0 not its, -EINVAL on bad input.
 * Sees every option first: --restore takes only -d, --run-dir and -v.
 */
static int take_opt(void *opts, int c, const char *arg)
{
	struct tune_args *a = opts;

	if (c != 'd' && c != 'v' && c != BW_OPT_RUN_DIR && c != BW_OPT_RESTORE)
		a->other = true;
	bw_json_errors = a->t.json;	/* from -j on, errors are JSON lines too */
	switch (c) {
	case 'i':
		return bw_tuner_set_window(&a->t, arg) ?: 1;
	case BW_OPT_ONCE:
		a->once = true;
		return 1;
	case BW_OPT_RESTORE:
		a->restore = true;
		return 1;
	default:
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct tune_args *a)
{
	int err;

	bw_watch_opts_init(&a->w);
	bw_tuner_args_init(&a->t);
	err = bw_opts_parse(argc, argv, BW_CMD_TUNE, usage, take_opt, a, &a->w, &a->t);
	bw_json_errors = a->t.json;
	if (err || bw_opt_rest(argc, argv))
		return -EINVAL;
	if (a->restore && a->other) {
		bw_err("--restore takes only -d, --run-dir and --verbose");
		return -EINVAL;
	}
	return 0;
}

/* A tick (a tenth of a window) at a time, until a signal, or --once has decided. */
static int run(const struct tune_args *a, struct bw_watch *w, struct bw_tuner *t)
{
	__u64 tick = (__u64)(a->t.cfg.window_s / BW_POLICY_TICKS_PER_WINDOW * 1e9);
	int err = 0;

	while (!bw_exiting) {
		err = bw_sleep_ns(tick);
		if (err)
			break;
		err = bw_watch_sample(w);
		if (err < 0)
			break;
		err = 0;
		if (!bw_tuner_tick(t)) {
			bw_err("every tuned device is gone");
			return -ENODEV;
		}
		if (a->once && bw_tuner_all_decided(t))
			break;
	}
	return err == -EINTR ? 0 : err;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_args *a = calloc(1, sizeof(*a));
	struct bw_watch w = {};
	struct bw_tuner *t = NULL;
	int ret = BW_EXIT_RUNTIME;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a) || bw_watch_resolve(&w, &a->w)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	if (a->restore) {
		ret = bw_tuner_restore(&a->t, &a->w) ? BW_EXIT_RUNTIME : 0;
		goto out;
	}
	bw_install_signals();
	/* Nothing is written before the programs are attached. */
	if (bw_tuner_open(&t, &a->t, &w, &a->w) || bw_watch_start(&w) || bw_tuner_prepare(t))
		goto out;
	bw_tuner_begin(t);
	if (!run(a, &w, t))
		ret = 0;
	bw_watch_save(&w);
out:
	bw_tuner_close(t, a->once && ret == 0);
	bw_watch_close(&w);
	free(a);
	return ret;
}
