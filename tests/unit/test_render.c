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
#include "model/figures.h"
#include "model/model.h"

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

static void stream_csv(FILE *f, const void *arg)
{
	struct bw_json j;

	bw_json_begin_csv(&j, f, true);
	bw_render_json_stream(&j, "loop1", arg);
	bw_json_begin_csv(&j, f, false);
	bw_render_json_stream(&j, "loop1", arg);
}

static void dev_csv(FILE *f, const void *arg)
{
	struct bw_json j;

	bw_json_begin_csv(&j, f, true);
	bw_render_json_dev(&j, arg, NULL, 0);
	bw_json_begin_csv(&j, f, false);
	bw_render_json_dev(&j, arg, NULL, 0);
}

/* How many cells a CSV line has, RFC 4180's quoting understood. */
static int csv_cells(const char *line)
{
	bool q = false;
	int n = 1;

	for (; *line && *line != '\n'; line++) {
		if (*line == '"')
			q = !q;	/* a doubled quote toggles twice */
		else if (*line == ',' && !q)
			n++;
	}
	return n;
}

/*
 * CSV rows are the JSON's fields: the same names (nested ones joined by
 * '.'), RFC 4180 quoting, an empty cell for null, one cell for an array.
 */
static void test_csv(void)
{
	struct bw_stream_interval s = { .tgid = 42, .comm = "a,\"b\" c", .ios = 3, .bytes = 12288,
					.depth = NAN, .think_ms = 0.5 };
	struct bw_interval iv = { .name = "md127", .slaves = "loop4 loop5", .p_eff = NAN,
				  .svc_mean_ms = 1.5 };
	char *out = render(stream_csv, &s), *row;

	row = out + strcspn(out, "\n") + 1;
	CHECK(!strncmp(out, "device,pid,comm,ios,bytes,ios_per_s,depth_mean,", 47), "header: %s", out);
	CHECK(!strncmp(row, "loop1,42,\"a,\"\"b\"\" c\",3,", strlen("loop1,42,\"a,\"\"b\"\" c\",3,")),
	      "quoted comm: %s", row);
	CHECK(strstr(row, ",3,12288,0.00,,0,0.5000,"), "NaN depth is an empty cell: %s", row);
	CHECK(csv_cells(out) == csv_cells(row), "as many cells as names: %d, %d", csv_cells(out),
	      csv_cells(row));
	CHECK(!strstr(out, "nan"), "no nan: %s", out);
	free(out);
	out = render(dev_csv, &iv);
	row = out + strcspn(out, "\n") + 1;
	CHECK(strstr(out, ",class_reason.median_p_eff,") || !strstr(out, "class_reason"),
	      "nested names: %s", out);
	CHECK(strstr(out, ",ops.read.ios,ops.read.bytes,"), "nested names: %s", out);
	CHECK(strstr(row, ",\"loop4 loop5\",\"\","), "arrays as one cell: %s", row);
	CHECK(csv_cells(out) == csv_cells(row), "as many cells as names: %d, %d", csv_cells(out),
	      csv_cells(row));
	CHECK(row[strcspn(row, "\n")] == '\n' && !row[strcspn(row, "\n") + 1], "one row: %s", row);
	free(out);
}

static void summary(FILE *f, const void *arg)
{
	bw_fig_summary(f, arg);
}

/*
 * analyze's summary of a whole trace comes from the figure table: every
 * figure with a summary word, with its interval value, in the table's order;
 * a figure not measured shows "-".
 */
static void test_summary_from_the_table(void)
{
	struct bw_interval iv = { .name = "loop1", .unmatched = 16, .lost = 2, .p_eff = NAN };
	char *out;
	size_t i, n = 0;

	iv.sum.merges = 3;
	iv.sum.requeues = 1;
	iv.sum.errors = 0;
	out = render(summary, &iv);
	CHECK(!strcmp(out, "merges 3, requeues 1, errors 0, completions whose issue was not seen 16, "
		      "issues whose completion was not seen 2"), "%s", out);
	for (i = 0; i < bw_nfigures; i++)
		if (bw_figures[i].summary) {
			CHECK(strstr(out, bw_figures[i].summary), "%s in %s", bw_figures[i].summary, out);
			n++;
		}
	CHECK(n == 5, "five figures in the summary: %zu", n);
	free(out);
	iv.light = true;	/* the light tier cannot tell a lost completion */
	out = render(summary, &iv);
	CHECK(strstr(out, "issues whose completion was not seen -"), "%s", out);
	free(out);
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_relations),
		UNIT(test_cgroup_streams),
		UNIT(test_process_streams),
		UNIT(test_csv),
		UNIT(test_summary_from_the_table),
	};

	return unit_run("render", t, sizeof(t) / sizeof(t[0]));
}
