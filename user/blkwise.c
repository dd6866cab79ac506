// SPDX-License-Identifier: GPL-2.0
/* blkwise: watch the Linux block layer per device, and act on what it shows. */
#include <stdio.h>
#include <string.h>
#include "blkwise.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcmd subcmds[] = {
	{ "stat", cmd_stat, "live per-device view: rates, service and queue time, depth, P_eff" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: blkwise COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  %-8s %s\n", subcmds[i].name, subcmds[i].help);
	fprintf(f, "\n`blkwise COMMAND --help` for a command's options.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return BW_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(argv[1], subcmds[i].name))
			return subcmds[i].fn(argc - 1, argv + 1);
	bw_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return BW_EXIT_USAGE;
}
