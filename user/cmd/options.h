/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The option text of every subcommand, in one place.  Each command's
 * --help prints its options from this table (bw_opts_help), getopt parses
 * the options it lists (bw_opts_getopt, bw_opts_parse), and
 * tests/test_docs.sh holds the man page (man/blkwise.8), docs/COMMAND.md
 * and the options getopt really accepts to it, so none of them can drift.
 * An option two commands describe alike is one entry; one they describe
 * differently is two.
 */
#ifndef BLKWISE_OPTIONS_H
#define BLKWISE_OPTIONS_H

#include <getopt.h>
#include <stdio.h>
#include <linux/types.h>
#include "streams.h"

enum bw_cmd_bit {
	BW_CMD_STAT = 1 << 0,
	BW_CMD_TUNE = 1 << 1,
	BW_CMD_EXPORT = 1 << 2,
	BW_CMD_RECORD = 1 << 3,
	BW_CMD_ANALYZE = 1 << 4,
};

/*
 * getopt's values of the long-only options the commands take themselves
 * (watch/watch.h and tune/tuner.h number those they parse).
 */
enum bw_cmd_opt {
	BW_OPT_MAX_DEV = 1200, BW_OPT_VIRTIO, BW_OPT_ONCE, BW_OPT_RESTORE, BW_OPT_USER,
	BW_OPT_BPF_STATS, BW_OPT_MAX_CONN, BW_OPT_TUNE, BW_OPT_MAX_PER_IP, BW_OPT_WEB_CONFIG,
	BW_OPT_MAX_SIZE, BW_OPT_BUFFER, BW_OPT_FROM, BW_OPT_TO, BW_OPT_NO_EXACT, BW_OPT_HTML,
	BW_OPT_PERFETTO, BW_OPT_WHAT_IF, BW_OPT_TABLE, BW_OPT_CSV_DIR, BW_OPT_CGROUPS,
	BW_OPT_CGROUP_PATH, BW_OPT_CGROUPS_MAX,
};

/* An option's getopt value: its short letter, or one of these for a long-only one. */
#define BW_OPT_LONG_ONLY 256

struct bw_optdoc {
	unsigned int cmds;	/* enum bw_cmd_bit, or'ed */
	int val;		/* the short option's letter, or a BW_OPT_ value: long only */
	const char *lng;	/* NULL: a short option only */
	const char *arg;	/* "DEV", "[=BY]" (optional), or NULL */
	const char *help;	/* lines separated by \n */
};

extern const struct bw_optdoc bw_optdocs[];

/* The options of cmd, one per line (continuations indented), as --help shows them. */
void bw_opts_help(FILE *f, unsigned int cmd);

#define BW_OPTS_MAX 64

/* getopt_long's tables of one command. */
struct bw_getopt {
	struct option longs[BW_OPTS_MAX + 1];
	char shorts[3 * BW_OPTS_MAX + 1];
};

/* getopt_long's tables for cmd, from bw_optdocs: what --help shows is what is parsed. */
void bw_opts_getopt(unsigned int cmd, struct bw_getopt *g);

struct bw_watch_opts;
struct bw_tuner_args;

/*
 * cmd's options, each offered to take(a, ...) first (1: taken, 0: not its,
 * -EINVAL), then to the watch options w and the tuner's t (either NULL:
 * none); one nobody takes is a usage error (-h: usage on stdout, exit 0).
 * 0 or -EINVAL; the arguments after the options are the caller's.
 */
int bw_opts_parse(int argc, char **argv, unsigned int cmd, void (*usage)(FILE *f),
		  int (*take)(void *a, int c, const char *arg), void *a,
		  struct bw_watch_opts *w, struct bw_tuner_args *t);

/* --streams' BY (NULL: process) into *by; -EINVAL, said, when it is neither. */
int bw_opt_streams_by(const char *arg, enum bw_stream_by *by);

#endif /* BLKWISE_OPTIONS_H */
