// SPDX-License-Identifier: GPL-2.0
/* A state file's first line (user/model/statefile.c): magic and version. */
#include <errno.h>
#include "unit.h"
#include "model/model.h"

static int first_line(const char *text, int *version, char *why, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = bw_state_version(f, "blkwise-x", "x state", 3, version, why, len);

	fclose(f);
	return err;
}

static void test_versions(void)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "", "empty" },
		{ "blkwise-y 1\n", "not a blkwise x state file (first line is not 'blkwise-x N')" },
		{ "blkwise-x1 1\n", "not a blkwise x state file (first line is not 'blkwise-x N')" },
		{ "blkwise-x\n", "not a blkwise x state file (first line is not 'blkwise-x N')" },
		{ "blkwise-x 0\n", "format version 0, this blkwise reads 1 to 3" },
		{ "blkwise-x 4\n", "format version 4, this blkwise reads 1 to 3" },
	};
	char why[100];
	int v, i;

	for (i = 1; i <= 3; i++) {
		char text[32];

		snprintf(text, sizeof(text), "blkwise-x %d\nrest\n", i);
		CHECK(!first_line(text, &v, why, sizeof(why)) && v == i, "version %d read", i);
	}
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		why[0] = '\0';
		CHECK(first_line(bad[i].text, &v, why, sizeof(why)) == -EINVAL &&
		      !strcmp(why, bad[i].why), "'%s': '%s', want '%s'", bad[i].text, why, bad[i].why);
	}
}

/* The reader is left at the second line. */
static void test_rest_left(void)
{
	FILE *f = fmemopen("blkwise-x 2\nsecond\n", 19, "r");
	char why[100], line[32] = "";
	int v;

	CHECK(!bw_state_version(f, "blkwise-x", "x state", 3, &v, why, sizeof(why)) &&
	      fgets(line, sizeof(line), f) && !strcmp(line, "second\n"), "then: '%s'", line);
	fclose(f);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_versions), UNIT(test_rest_left),
	};

	return unit_run("statefile", tests, sizeof(tests) / sizeof(tests[0]));
}
