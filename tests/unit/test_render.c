// SPDX-License-Identifier: GPL-2.0
/*
 * Rendering of a device's relations (slaves, holders)
 * and bio-based flag in JSON, and streams keyed by cgroup in the table and
 * in JSON, next to the per-process ones.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "blkwise.h"

/* What fn wrote, as a string the caller frees. */
static char *render(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void dev_json(FILE *f, const void *arg)
{
	struct bw_json j;

	bw_json_begin(&j, f);
	bw_render_json_dev(&j, arg, NULL, 0);
}

static void test_relations(void)
{
	struct bw_interval iv = { .name = "md127", .bio_based = true, .slaves = "loop4 loop5",
				  .p_eff = NAN };
	char *out = render(dev_json, &iv);

	CHECK(strstr(out, "\"bio_based\":true"), "bio_based: %s", out);
	CHECK(strstr(out, "\"slaves\":[\"loop4\",\"loop5\"]"), "slaves as an array: %s", out);
	CHECK(strstr(out, "\"holders\":[]"), "no holders: an empty array: %s", out);
	free(out);
	iv.slaves = "";
	iv.holders = "dm-0";
	iv.bio_based = false;
	out = render(dev_json, &iv);
	CHECK(strstr(out, "\"slaves\":[]") && strstr(out, "\"holders\":[\"dm-0\"]"),
	      "empty and one: %s", out);
	CHECK(strstr(out, "\"bio_based\":false"), "request-based: %s", out);
	free(out);
}

static void stream_json(FILE *f, const void *arg)
{
	struct bw_json j;

	bw_json_begin(&j, f);
	bw_render_json_stream(&j, "loop1", arg);
}

static void stream_row(FILE *f, const void *arg)
{
	bw_render_stream_row(f, "loop1", arg);
}

static void test_cgroup_streams(void)
{
	struct bw_stream_interval s = { .by_cgroup = true, .cgroup_id = 25, .cgroup = "/a/b",
					.ios = 7, .depth = 3.0, .deep = true };
	char *out = render(stream_json, &s);

	CHECK(strstr(out, "\"cgroup_id\":25") && strstr(out, "\"cgroup\":\"/a/b\""),
	      "id and path: %s", out);
	CHECK(!strstr(out, "\"pid\"") && !strstr(out, "\"comm\""), "no pid, no comm: %s", out);
	free(out);
	out = render(stream_row, &s);
	CHECK(!strncmp(out, "loop1      /a/b ", 16), "path in the row: %s", out);
	free(out);
	s.cgroup = NULL;	/* gone since */
	out = render(stream_json, &s);
	CHECK(strstr(out, "\"cgroup\":null"), "a gone cgroup's path is null: %s", out);
	free(out);
	out = render(stream_row, &s);
	CHECK(strstr(out, "(id 25)"), "a gone cgroup shows its id: %s", out);
	free(out);
}

static void test_process_streams(void)
{
	struct bw_stream_interval s = { .tgid = 42, .comm = "fio", .depth = 1.0 };
	char *out = render(stream_json, &s);

	CHECK(strstr(out, "\"pid\":42") && strstr(out, "\"comm\":\"fio\""), "pid, comm: %s", out);
	CHECK(!strstr(out, "cgroup"), "no cgroup fields: %s", out);
	free(out);
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_relations),
		UNIT(test_cgroup_streams),
		UNIT(test_process_streams),
	};

	return unit_run("render", t, sizeof(t) / sizeof(t[0]));
}
