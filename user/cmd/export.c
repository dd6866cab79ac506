// SPDX-License-Identifier: GPL-2.0
/* `blkwise export`: its command line; the exporter is user/export/'s. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include "export/export.h"
#include "cmd/options.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise export [-d DEV]... [-l [ADDR]:PORT] [-i SECS] [--user USER]\n"
		"                      [--state-dir DIR | --no-state] [--bpf-stats]\n"
		"                      [--max-connections N] [--max-per-ip N] [--bio-cache]\n"
		"                      [--exact | --exact-period SECS [--exact-slice SECS]\n"
		"                        [--exact-budget PCT] [--max-cpu PCT]]\n"
		"                      [--cgroups[=DEPTH] [--cgroup-path PATH] [--cgroups-max N]]\n"
		"                      [--web.config.file FILE] [--tune [TUNE OPTIONS]] [-v]\n"
		"                      [--btf FILE] [--force-raw-tp]\n"
		"Serves the block layer's metrics to Prometheus: GET /metrics (text format, or\n"
		"OpenMetrics when the scraper asks for it) and / (links, build).\n");
	bw_opts_help(f, BW_CMD_EXPORT);
}

/* One of export's own options: 1 taken, 0 not its, -EINVAL on bad input. */
static int take_opt(void *opts, int c, const char *arg)
{
	struct export_args *a = opts;
	long n;

	switch (c) {
	case 'l':
		a->listen = arg;
		return 1;
	case 'i':
		if (bw_parse_interval(arg, &a->interval) || a->interval < 0.1) {
			bw_err("bad interval '%s': give seconds between 0.1 and 86400", arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_USER:
		a->user = arg;
		return 1;
	case BW_OPT_BPF_STATS:
		a->bpf_stats = true;
		return 1;
	case BW_OPT_MAX_CONN:
		if (bw_parse_count(arg, &a->max_conn) || a->max_conn > 65536) {
			bw_err("bad --max-connections '%s': give 1..65536", arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_MAX_PER_IP:
		if (bw_parse_count(arg, &a->max_per_ip) || a->max_per_ip > 65536) {
			bw_err("bad --max-per-ip '%s': give 1..65536", arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_WEB_CONFIG:
		a->web_config = arg;
		return 1;
	case BW_OPT_TUNE:
		a->tune = true;
		return 1;
	case BW_OPT_CGROUPS:
		a->w.core.cgroups = true;
		if (arg && (bw_parse_count(arg, &n) || n > 64)) {
			bw_err("bad --cgroups depth '%s': give 1..64 path components", arg);
			return -EINVAL;
		}
		a->cg.depth = arg ? (int)n : 0;
		return 1;
	case BW_OPT_CGROUP_PATH:
		if (arg[0] != '/') {
			bw_err("bad --cgroup-path '%s': give a path from the hierarchy's root, as /a/b", arg);
			return -EINVAL;
		}
		a->cg.under = arg;
		a->cg_given = true;
		return 1;
	case BW_OPT_CGROUPS_MAX:
		if (bw_parse_count(arg, &n) || n > 100000) {
			bw_err("bad --cgroups-max '%s': give 1..100000", arg);
			return -EINVAL;
		}
		a->cg.max = (int)n;
		a->cg_given = true;
		return 1;
	default:
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct export_args *a)
{
	bw_watch_opts_init(&a->w);
	a->w.max_cpu = BW_EXPORT_MAX_CPU;
	bw_tuner_args_init(&a->t);
	a->listen = ":" DEFAULT_PORT;
	a->interval = 1.0;
	a->user = "nobody";
	a->max_conn = 4096;
	a->max_per_ip = 64;
	a->cg.max = 100;
	if (bw_opts_parse(argc, argv, BW_CMD_EXPORT, usage, take_opt, a, &a->w, &a->t) ||
	    bw_opt_rest(argc, argv))
		return -EINVAL;
	if (a->cg_given && !a->w.core.cgroups) {
		bw_err("--cgroup-path and --cgroups-max need --cgroups");
		return -EINVAL;
	}
	if (a->t.given && !a->tune) {
		bw_err("tuner options need --tune");
		return -EINVAL;
	}
	if (a->tune) {
		a->w.core.exact = true;		/* the tuner's figures: S1, P_eff, busy, depth */
		a->w.core.streams = true;	/* think time and sequential share */
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_args *a = calloc(1, sizeof(*a));
	int ret;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	ret = parse_args(argc, argv, a) ? BW_EXIT_USAGE : bw_export(a);
	free(a);
	return ret;
}
