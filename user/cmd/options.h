/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The option text of every subcommand, in one place.  Each command's
 * --help prints its options from this table (bw_opts_help), and
 * tests/test_docs.sh holds the man page (man/blkwise.8), docs/COMMAND.md
 * and the options getopt really accepts to it, so none of them can drift.
 * An option two commands describe alike is one entry; one they describe
 * differently is two.
 */
#ifndef BLKWISE_OPTIONS_H
#define BLKWISE_OPTIONS_H

#include <stdio.h>

enum bw_cmd_bit {
	BW_CMD_STAT = 1 << 0,
	BW_CMD_TUNE = 1 << 1,
	BW_CMD_EXPORT = 1 << 2,
	BW_CMD_RECORD = 1 << 3,
	BW_CMD_ANALYZE = 1 << 4,
};

struct bw_optdoc {
	unsigned int cmds;	/* enum bw_cmd_bit, or'ed */
	char shrt;		/* 0: long only */
	const char *lng;	/* NULL: a short option only */
	const char *arg;	/* "DEV", "[=BY]" (optional), or NULL */
	const char *help;	/* lines separated by \n */
};

extern const struct bw_optdoc bw_optdocs[];

/* The options of cmd, one per line (continuations indented), as --help shows them. */
void bw_opts_help(FILE *f, unsigned int cmd);

#endif /* BLKWISE_OPTIONS_H */
