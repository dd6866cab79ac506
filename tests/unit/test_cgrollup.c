// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup series for the exporter: paths cut to a depth and merged into
 * their ancestor, a path filter that matches whole components, the cap
 * keeping the cgroups with the most requests, every request accounted.
 */
#include <string.h>
#include "unit.h"
#include "model/model.h"

static void row(struct bw_cg_row *r, __u32 dev, int op, const char *path, __u64 ios)
{
	int b;

	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->op = op;
	strcpy(r->path, path);
	r->v.ios = r->v.timed = ios;
	r->v.bytes = ios * 4096;
	r->v.d2c_ns = ios * 1000;
	b = (int)bw_expo_bucket(1);
	r->v.hist[b] = ios;
}

static void test_cut(void)
{
	static const struct { const char *path; int depth; const char *want; } cases[] = {
		{ "/a/b/c", 1, "/a" }, { "/a/b/c", 2, "/a/b" }, { "/a/b/c", 3, "/a/b/c" },
		{ "/a/b/c", 0, "/a/b/c" }, { "/", 1, "/" },
	};
	unsigned int i;
	char p[64];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(p, cases[i].path);
		bw_cg_cut(p, cases[i].depth);
		CHECK(!strcmp(p, cases[i].want), "%s at depth %d: %s, not %s", cases[i].path,
		      cases[i].depth, p, cases[i].want);
	}
	CHECK(bw_cg_under("/a/b", "/a") && bw_cg_under("/a", "/a") && bw_cg_under("/a", "/a/"),
	      "under its parent, and itself");
	CHECK(!bw_cg_under("/ab", "/a") && !bw_cg_under("/", "/a"), "whole components only");
	CHECK(bw_cg_under("/x", "/") && bw_cg_under("/x", NULL), "everything under the root");
}

static void test_rollup(void)
{
	struct bw_cg_row r[8];
	struct bw_cg_select sel = { .depth = 1 };
	int n, omitted;

	row(&r[0], 7, 1, "/sys/db", 10);
	row(&r[1], 7, 1, "/sys/web", 5);
	row(&r[2], 7, 0, "/sys/db", 3);
	row(&r[3], 7, 1, "/user", 100);
	row(&r[4], 8, 1, "/sys/db", 1);
	row(&r[5], 7, 1, "/", 2);
	n = bw_cg_rollup(r, 6, &sel, &omitted);
	CHECK(n == 5 && omitted == 0, "5 rows (%d), none omitted (%d)", n, omitted);
	CHECK(!strcmp(r[0].path, "/") && !strcmp(r[1].path, "/sys") && r[1].dev == 7 &&
	      r[1].op == 0 && r[1].v.ios == 3, "sorted by path, device, op");
	CHECK(!strcmp(r[2].path, "/sys") && r[2].op == 1 && r[2].v.ios == 15 &&
	      r[2].v.bytes == 15 * 4096 && r[2].v.hist[bw_expo_bucket(1)] == 15,
	      "db and web merged into /sys: %llu", (unsigned long long)r[2].v.ios);
	CHECK(r[3].dev == 8 && r[3].v.ios == 1, "another device stays apart");

	row(&r[0], 7, 1, "/a", 10);
	row(&r[1], 7, 1, "/b", 50);
	row(&r[2], 7, 0, "/c", 30);
	row(&r[3], 7, 1, "/c", 30);
	row(&r[4], 7, 1, "/d/x", 1);
	sel = (struct bw_cg_select){ .max = 2 };
	n = bw_cg_rollup(r, 5, &sel, &omitted);
	CHECK(n == 3 && omitted == 2, "two cgroups kept, two left out (%d rows, %d)", n, omitted);
	CHECK(!strcmp(r[0].path, "/b") && !strcmp(r[1].path, "/c") && !strcmp(r[2].path, "/c"),
	      "the busiest kept: %s %s %s", r[0].path, r[1].path, r[2].path);

	row(&r[0], 7, 1, "/d/x", 1);
	row(&r[1], 7, 1, "/dd", 2);
	row(&r[2], 7, 1, "/d", 4);
	sel = (struct bw_cg_select){ .under = "/d" };
	n = bw_cg_rollup(r, 3, &sel, &omitted);
	CHECK(n == 2 && !strcmp(r[0].path, "/d") && !strcmp(r[1].path, "/d/x"),
	      "under /d: /d and /d/x, not /dd (%d)", n);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_cut), UNIT(test_rollup),
	};

	return unit_run("cgrollup", tests, sizeof(tests) / sizeof(tests[0]));
}
