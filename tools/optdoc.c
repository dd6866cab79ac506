// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the man page's option lists from the option table
 * (user/cmd/optdocs.c), the text each command's --help prints:
 *   optdoc common    the options stat, tune, export and record all take
 *                    (and -h, which every command takes)
 *   optdoc COMMAND   the other options of stat, tune, export, record or analyze
 *   optdoc md COMMAND  every option of COMMAND as a markdown table (docs/COMMAND.md)
 * tools/sync-docs.sh writes them into man/blkwise.8 between
 * .\" options: WHICH and .\" end options, and into docs/COMMAND.md between
 * <!-- options: COMMAND --> and <!-- end options -->; tests/test_docs.sh
 * checks them.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cmd/options.h"

#define COMMON (BW_CMD_STAT | BW_CMD_TUNE | BW_CMD_EXPORT | BW_CMD_RECORD)

static const struct {
	const char *name;
	unsigned int bit;
} cmds[] = {
	{ "stat", BW_CMD_STAT }, { "tune", BW_CMD_TUNE }, { "export", BW_CMD_EXPORT },
	{ "record", BW_CMD_RECORD }, { "analyze", BW_CMD_ANALYZE }, { "common", COMMON },
};

/* One character for roff: a minus and a backslash escaped. */
static void roff_char(char c)
{
	if (c == '-')
		fputs("\\-", stdout);
	else if (c == '\\')
		fputs("\\e", stdout);
	else
		putchar(c);
}

/* An argument: upper-case words italic (DEV, SECS), the others bold (bfq, 0|1). */
static void roff_arg(const char *a)
{
	while (*a) {
		int up = isupper((unsigned char)*a), word = isalnum((unsigned char)*a) || *a == '.';

		if (!word) {
			roff_char(*a++);
			continue;
		}
		fputs(up ? "\\fI" : "\\fB", stdout);
		while (*a && (isalnum((unsigned char)*a) || *a == '.') &&
		       !!isupper((unsigned char)*a) == !!up)
			roff_char(*a++);
		fputs("\\fR", stdout);
	}
}

/* The help text: a sentence a line (roff's end of sentence). */
static void roff_help(const char *h)
{
	for (; *h; h++) {
		if (*h == '.' && !strncmp(h + 1, "  ", 2)) {
			fputs(".\n", stdout);
			h += 2;
			continue;
		}
		roff_char(*h);
	}
	putchar('\n');
}

static void entry(const struct bw_optdoc *o)
{
	const char *p;

	fputs(".TP\n", stdout);
	if (o->val < BW_OPT_LONG_ONLY)
		printf("\\fB\\-%c\\fR%s", o->val, o->lng ? ", " : "");
	if (o->lng) {
		fputs("\\fB\\-\\-", stdout);
		for (p = o->lng; *p; p++)
			roff_char(*p);
		fputs("\\fR", stdout);
	}
	if (o->arg) {
		if (strncmp(o->arg, "[=", 2))
			putchar(' ');
		roff_arg(o->arg);
	}
	putchar('\n');
	roff_help(o->help);
}

/* A markdown cell: a pipe escaped. */
static void md_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s);
	}
}

/* One row of the markdown table: `-d, --device DEV` | its help. */
static void md_entry(const struct bw_optdoc *o)
{
	const char *h;

	fputs("| `", stdout);
	if (o->val < BW_OPT_LONG_ONLY)
		printf("-%c%s", o->val, o->lng ? ", " : "");
	if (o->lng)
		printf("--%s", o->lng);
	if (o->arg) {
		if (strncmp(o->arg, "[=", 2))
			putchar(' ');
		md_text(o->arg);
	}
	fputs("` | ", stdout);
	for (h = o->help; *h; h++) {
		if (*h == '.' && !strncmp(h + 1, "  ", 2)) {
			fputs(". ", stdout);
			h += 2;
			continue;
		}
		if (*h == '|')
			putchar('\\');
		putchar(*h);
	}
	fputs(" |\n", stdout);
}

int main(int argc, char **argv)
{
	const struct bw_optdoc *o;
	unsigned int bit = 0;
	bool md = argc == 3 && !strcmp(argv[1], "md");
	size_t i;

	for (i = 0; argc == 2 + md && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1 + md], cmds[i].name))
			bit = cmds[i].bit;
	if (!bit || (md && bit == COMMON)) {
		fprintf(stderr, "usage: optdoc [md] common|stat|tune|export|record|analyze\n");
		return 2;
	}
	if (md) {
		fputs("| option | meaning |\n|---|---|\n", stdout);
		for (o = bw_optdocs; o->help; o++)
			if (o->cmds & bit)
				md_entry(o);
		return 0;
	}
	for (o = bw_optdocs; o->help; o++) {
		int common = (o->cmds & COMMON) == COMMON;

		if (bit == COMMON ? common : (o->cmds & bit) && !common)
			entry(o);
	}
	return 0;
}
