// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing the options of every subcommand (options.h) from their table
 * (optdocs.c): getopt takes exactly what --help shows.
 */
#include <errno.h>
#include <string.h>
#include "cmd/options.h"
#include "sys/sys.h"
#include "tune/tuner.h"
#include "watch/watch.h"

void bw_opts_getopt(unsigned int cmd, struct bw_getopt *g)
{
	const struct bw_optdoc *o;
	struct option *l = g->longs;
	char *p = g->shorts;

	for (o = bw_optdocs; o->help; o++) {
		int has = !o->arg ? no_argument :
			  strncmp(o->arg, "[=", 2) ? required_argument : optional_argument;

		if (!(o->cmds & cmd))
			continue;
		if (o->val < BW_OPT_LONG_ONLY) {
			*p++ = (char)o->val;
			if (has != no_argument)
				*p++ = ':';
			if (has == optional_argument)
				*p++ = ':';
		}
		if (o->lng && l < g->longs + BW_OPTS_MAX)
			*l++ = (struct option){ o->lng, has, NULL, o->val };
	}
	*l = (struct option){ 0 };
	*p = 0;
}

int bw_opts_parse(int argc, char **argv, unsigned int cmd, void (*usage)(FILE *f),
		  int (*take)(void *a, int c, const char *arg), void *a,
		  struct bw_watch_opts *w, struct bw_tuner_args *t)
{
	struct bw_getopt g;
	int c, err;

	bw_opts_getopt(cmd, &g);
	while ((c = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		err = take(a, c, optarg);
		if (!err && w)
			err = bw_watch_opt(w, c, optarg);
		if (!err && t)
			err = bw_tuner_opt(t, c, optarg);
		if (err < 0)
			return -EINVAL;
		if (!err)
			return bw_opt_other(c, usage);
	}
	return 0;
}

int bw_opt_streams_by(const char *arg, enum bw_stream_by *by)
{
	if (!arg || !strcmp(arg, "process")) {
		*by = BW_STREAMS_PROCESS;
	} else if (!strcmp(arg, "cgroup")) {
		*by = BW_STREAMS_CGROUP;
	} else {
		bw_err("bad --streams '%s': give process or cgroup", arg);
		return -EINVAL;
	}
	return 0;
}
