/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal unit-test harness: one PASS/FAIL line per test for the runner. */
#ifndef BLKWISE_UNIT_H
#define BLKWISE_UNIT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int unit_failed_checks;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			unit_failed_checks++;                                   \
			fprintf(stderr, "  %s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                               \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

#define CHECK_NEAR(a, b, rel, what)                                             \
	CHECK(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)),     \
	      "%s: %g vs %g (allowed %g%%)", what, (double)(a), (double)(b),    \
	      (rel) * 100)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

static int unit_run(const char *suite, const struct unit_test *t, int n)
{
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		int before = unit_failed_checks;

		t[i].fn();
		if (unit_failed_checks != before)
			failed++;
		printf("%s unit:%s:%s\n", unit_failed_checks != before ? "FAIL" : "PASS", suite,
		       t[i].name);
	}
	return failed ? 1 : 0;
}

#define UNIT(fn) { #fn, fn }

#endif /* BLKWISE_UNIT_H */
