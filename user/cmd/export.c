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
		"                      [--exact | --exact-period SECS [--exact-slice SECS]]\n"
		"                      [--web.config.file FILE] [--tune [TUNE OPTIONS]] [-v]\n"
		"                      [--btf FILE] [--force-raw-tp]\n"
		"Serves the block layer's metrics to Prometheus: GET /metrics (text format, or\n"
		"OpenMetrics when the scraper asks for it) and / (links, build).\n");
	bw_opts_help(f, BW_CMD_EXPORT);
}

enum { OPT_USER = 256, OPT_BPF_STATS, OPT_MAX_CONN, OPT_TUNE, OPT_MAX_PER_IP, OPT_WEB_CONFIG };

static int parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option opts[] = {
		BW_WATCH_LONGOPTS,
		BW_TIER_LONGOPTS,
		BW_STATE_LONGOPTS,
		BW_TUNER_LONGOPTS,
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "user", required_argument, NULL, OPT_USER },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
		{ "max-per-ip", required_argument, NULL, OPT_MAX_PER_IP },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "tune", no_argument, NULL, OPT_TUNE },
		{ "tune-window", required_argument, NULL, BW_OPT_TUNE_WINDOW },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool tune_opt = false;
	int c, err;

	bw_watch_opts_init(&a->w);
	bw_tuner_args_init(&a->t);
	a->listen = ":" DEFAULT_PORT;
	a->interval = 1.0;
	a->user = "nobody";
	a->max_conn = 4096;
	a->max_per_ip = 64;
	while ((c = getopt_long(argc, argv, "d:l:i:njvh", opts, NULL)) != -1) {
		err = bw_watch_opt(&a->w, c, optarg);
		if (err < 0)
			return err;
		if (err)
			continue;
		if (c == BW_OPT_TUNE_WINDOW) {
			if (bw_tuner_set_window(&a->t, optarg))
				return -EINVAL;
			tune_opt = true;
			continue;
		}
		err = bw_tuner_opt(&a->t, c, optarg);
		if (err < 0)
			return err;
		if (err) {
			tune_opt = true;
			continue;
		}
		switch (c) {
		case 'l':
			a->listen = optarg;
			break;
		case 'i':
			if (bw_parse_interval(optarg, &a->interval) || a->interval < 0.1) {
				bw_err("bad interval '%s': give seconds between 0.1 and 86400", optarg);
				return -EINVAL;
			}
			break;
		case OPT_USER:
			a->user = optarg;
			break;
		case OPT_BPF_STATS:
			a->bpf_stats = true;
			break;
		case OPT_MAX_CONN:
			if (bw_parse_count(optarg, &a->max_conn) || a->max_conn > 65536) {
				bw_err("bad --max-connections '%s': give 1..65536", optarg);
				return -EINVAL;
			}
			break;
		case OPT_MAX_PER_IP:
			if (bw_parse_count(optarg, &a->max_per_ip) || a->max_per_ip > 65536) {
				bw_err("bad --max-per-ip '%s': give 1..65536", optarg);
				return -EINVAL;
			}
			break;
		case OPT_WEB_CONFIG:
			a->web_config = optarg;
			break;
		case OPT_TUNE:
			a->tune = true;
			break;
		default:
			return bw_opt_other(c, usage);
		}
	}
	if (bw_opt_rest(argc, argv))
		return -EINVAL;
	if (tune_opt && !a->tune) {
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
