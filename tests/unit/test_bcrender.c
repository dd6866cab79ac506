// SPDX-License-Identifier: GPL-2.0
/*
 * The bio cache's rendering: the hit ratio over eligible allocations, and
 * the method rule: a tracepoint snapshot shows queued counts only, never a
 * hit, a miss or a ratio, in the text, the JSON and the exporter's page.
 */
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "model/bcrender.h"
#include "model/promfmt.h"

static struct bw_bc_stats cpus[2];
static struct bw_bc_set set = { .bs = 0xffffffff81000000ULL, .name = "blkdev_dio_pool",
				.cpu = cpus };

static void fill(void)
{
	memset(cpus, 0, sizeof(cpus));
	cpus[0].v[BW_BC_ALLOCS] = 1000;
	cpus[0].v[BW_BC_ELIGIBLE] = 990;
	cpus[0].v[BW_BC_HITS] = 980;
	cpus[0].v[BW_BC_MISSES] = 10;
	cpus[1].v[BW_BC_Q_BIOS] = 7;
	cpus[1].v[BW_BC_Q_FLAGGED] = 5;
	memset(&set.sum, 0, sizeof(set.sum));
	for (int c = 0; c < 2; c++)
		for (int f = 0; f < BW_BC_NR; f++)
			set.sum.v[f] += cpus[c].v[f];
}

/* What each renderer writes for snapshot b, in one string. */
static char *render_all(const struct bw_bc_snap *b)
{
	struct bw_expo_self self = { .version = "v", .commit = "c", .libbpf = "l",
				     .attach = "tp_btf", .biocache = b };
	struct bw_prom p = {};
	struct bw_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	bw_bc_render_text(f, b);
	bw_json_begin(&j, f);
	bw_json_obj(&j, NULL);
	bw_bc_render_json(&j, b);
	bw_json_close(&j, '}');
	bw_json_end(&j);
	p.f = f;
	bw_expo_render(&p, &self, NULL, 0);
	fclose(f);
	return buf;
}

static void test_ratio(void)
{
	struct bw_bc_stats s = {};

	CHECK(isnan(bw_bc_hit_ratio(&s)), "no eligible allocation: no ratio");
	fill();
	CHECK_NEAR(bw_bc_hit_ratio(&set.sum), 980.0 / 990, 1e-12, "hits / eligible");
}

static void test_exact(void)
{
	struct bw_bc_snap b = { .method = BW_BC_EXACT, .why = "", .ncpus = 2, .nr = 1, .sets = &set };
	char *out;

	fill();
	out = render_all(&b);
	CHECK(strstr(out, "bio cache (exact, since start) blkdev_dio_pool") != NULL, "text: %s", out);
	CHECK(strstr(out, "\"method\":\"exact\"") != NULL, "JSON method");
	CHECK(strstr(out, "\"hits\":980") != NULL, "JSON hits");
	CHECK(strstr(out, "\"hit_ratio\":0.9899") != NULL, "JSON ratio");
	CHECK(strstr(out, "blkwise_bio_cache_events_total{bio_set=\"blkdev_dio_pool\","
			  "event=\"hits\",method=\"exact\"} 980") != NULL, "exporter hits: %s", out);
	free(out);
}

static void test_tracepoint_shows_no_hits(void)
{
	struct bw_bc_snap b = { .method = BW_BC_TRACEPOINT, .why = "fentry refused", .ncpus = 2,
				.nr = 1, .sets = &set };
	char *out;

	fill();
	out = render_all(&b);
	CHECK(strstr(out, "\"method\":\"tracepoint\"") != NULL, "JSON method");
	CHECK(strstr(out, "\"queued_cache_flagged\":5") != NULL, "JSON queued flagged");
	CHECK(strstr(out, "hits") == NULL || strstr(out, "hits and misses not visible") != NULL,
	      "no hit figure anywhere: %s", out);
	CHECK(strstr(out, "\"hits\"") == NULL && strstr(out, "hit_ratio") == NULL &&
	      strstr(out, "event=\"hits\"") == NULL && strstr(out, "event=\"misses\"") == NULL,
	      "no hit, miss or ratio: %s", out);
	CHECK(strstr(out, "event=\"queued_cache_flagged\",method=\"tracepoint\"} 5") != NULL,
	      "exporter: %s", out);
	free(out);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_ratio), UNIT(test_exact), UNIT(test_tracepoint_shows_no_hits),
	};

	return unit_run("bcrender", tests, sizeof(tests) / sizeof(tests[0]));
}
