// SPDX-License-Identifier: GPL-2.0
/* blkwise: watch the Linux block layer per device, and act on what it shows. */
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "sys/sys.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcmd subcmds[] = {
	{ "stat", cmd_stat, "live per-device view: rates, service and queue time, depth, P_eff" },
	{ "tune", cmd_tune, "live-tune BFQ idling per device from its measured parallelism" },
	{ "export", cmd_export, "Prometheus exporter of the same figures (and --tune)" },
	{ "record", cmd_record, "every request event of the devices into a trace file" },
	{ "analyze", cmd_analyze, "a trace file (or blktrace capture) offline: latencies, streams" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: blkwise COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  %-8s %s\n", subcmds[i].name, subcmds[i].help);
	fprintf(f, "\n`blkwise help COMMAND` or `blkwise COMMAND --help` for a command's options;\n"
		   "`blkwise --version` for the version.\n");
}

static const struct subcmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(name, subcmds[i].name))
			return &subcmds[i];
	return NULL;
}

static int unknown(const char *name)
{
	bw_err("unknown command '%s'", name);
	usage(stderr);
	return BW_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct subcmd *cmd;

	if (argc < 2) {
		usage(stderr);
		return BW_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		bw_print_version(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		char *help[] = { argv[2], "--help", NULL };

		if (argc > 3) {
			bw_err("help takes one command, got '%s' too", argv[3]);
			return BW_EXIT_USAGE;
		}
		cmd = find_cmd(argv[2]);
		return cmd ? cmd->fn(2, help) : unknown(argv[2]);
	}
	cmd = find_cmd(argv[1]);
	return cmd ? cmd->fn(argc - 1, argv + 1) : unknown(argv[1]);
}
