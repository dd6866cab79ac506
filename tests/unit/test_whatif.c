// SPDX-License-Identifier: GPL-2.0
/*
 * analyze --what-if-tune (user/model/whatif.c) on a replay's ticks built
 * here: four devices calling for the tuner's decisions (a set from the
 * class, a set from the recorded setting 0, a probe announced and never
 * believed run, a strict_guarantees repair announced), and the decisions as
 * text, JSON and CSV rows, which must agree with each other and with the
 * decisions themselves.
 */
#include <stdlib.h>
#include "unit.h"
#include "model/whatif.h"
#include "jsontext.h"

#define NDEV 4
#define SECS 20

/* What a device shows in one second. */
struct shows {
	double mbps, depth, p_eff;
	enum bw_class_id cls;
};

static struct shows device_shows(int dev, int sec)
{
	switch (dev) {
	case 0:		/* deep: idling off */
		return (struct shows){ 200, 3.9, 3.0, BW_CLASS_DEEP };
	case 1:		/* shallow; BFQ stops idling at 10 s */
		return sec < 10 ? (struct shows){ 101, 1.0, NAN, BW_CLASS_SHALLOW } :
				  (struct shows){ 35, 3.9, 0.9, BW_CLASS_SHALLOW };
	case 2:		/* nothing known: a probe (announced only), then deep from 5 s */
		return sec < 5 ? (struct shows){ 150, 1.0, NAN, BW_CLASS_UNKNOWN } :
				 (struct shows){ 200, 3.9, 3.0, BW_CLASS_DEEP };
	default:	/* shallow, recorded with idling off */
		return (struct shows){ 100, 1.0, NAN, BW_CLASS_SHALLOW };
	}
}

static struct bw_replay_dev devs[NDEV];
static struct bw_tdev infos[NDEV];

/* Four sync sequential streams with a p90 think time of 0.1 ms. */
static struct bw_stream_interval streams[4];
static const struct bw_stream_interval *const stream_ptrs[4] = {
	&streams[0], &streams[1], &streams[2], &streams[3],
};

static void tick(struct bw_whatif *r, int dev, int sec)
{
	struct shows s = device_shows(dev, sec);
	struct bw_interval iv = { .secs = 1, .busy_pct = 100, .depth_busy = s.depth,
				  .p_eff = s.p_eff, .solo_ms = 1.6, .s1_source = "live",
				  .kb_per_rq = 256 };
	struct bw_class cls = { .cls = s.cls };
	struct bw_replay_tick t = { .d = &devs[dev], .t = sec, .iv = &iv, .cls = &cls,
				.streams = stream_ptrs, .nstreams = 4 };

	iv.bytes[BW_OP_READ] = (__u64)(s.mbps * 1048576);
	iv.ios[BW_OP_READ] = iv.bytes[BW_OP_READ] / 262144;
	if (!isnan(s.p_eff)) {
		iv.solo_known = iv.ios[BW_OP_READ];
		iv.solo_work_ns = s.p_eff * 1e9;
	}
	bw_whatif_tick(r, &t);
}

static struct bw_whatif *run(void)
{
	static const char *const names[NDEV] = { "sda", "sdb", "sdc", "sdd" };
	struct bw_whatif *r = bw_whatif_new();
	int d, sec;

	for (d = 0; d < 4; d++) {
		streams[d] = (struct bw_stream_interval){ .tgid = 100 + d, .ios = 100,
							  .seq_pct = 100, .sync_pct = 100,
							  .think_p90_ms = 0.1 };
	}
	for (d = 0; d < NDEV; d++) {
		memset(&devs[d], 0, sizeof(devs[d]));
		devs[d].dev = (8u << 20) | (16 * d);
		snprintf(devs[d].name, sizeof(devs[d].name), "%s", names[d]);
		infos[d] = (struct bw_tdev){ .slice_idle_us = d == 3 ? 0 : d == 1 ? 8000 : -1 };
		devs[d].info = d ? &infos[d] : NULL;	/* sda: no header row, BFQ's default */
	}
	for (sec = 0; sec < SECS; sec++)
		for (d = 0; d < NDEV; d++)
			tick(r, d, sec);
	return r;
}

/* What the policy decides, in time order. */
static const struct {
	double t;
	const char *dev, *action;
	unsigned int before, after, strict_before, strict_after;
} want[] = {
	{ 1, "sda", "set", 8000, 0, 0, 0 },
	{ 1, "sdd", "set", 0, 4000, 0, 0 },
	{ 2, "sdc", "probe", 8000, 0, 0, 0 },
	{ 6, "sdc", "set", 8000, 0, 0, 0 },	/* the probe was not run: still 8000 */
	{ 12, "sdb", "repair", 8000, 20000, 0, 1 },
};
#define NWANT ((int)(sizeof(want) / sizeof(want[0])))

static void test_decisions(void)
{
	struct bw_whatif *r = run();
	const struct bw_policy_decision *d;
	const char *dev;
	double t;
	int i;

	CHECK(bw_whatif_on(r) && !bw_whatif_on(NULL) && !bw_whatif_count(NULL), "on");
	CHECK(bw_whatif_count(r) == NWANT, "%d decisions, want %d", bw_whatif_count(r), NWANT);
	for (i = 0; i < bw_whatif_count(r) && i < NWANT; i++) {
		d = bw_whatif_decision(r, i, &t, &dev);
		CHECK(t == want[i].t && !strcmp(dev, want[i].dev) &&
		      !strcmp(bw_policy_action_name(d->action), want[i].action) &&
		      d->before == want[i].before && d->after == want[i].after &&
		      d->strict_before == want[i].strict_before &&
		      d->strict_after == want[i].strict_after,
		      "decision %d: t=%g %s %s %u -> %u, strict %u -> %u: %s", i, t, dev,
		      bw_policy_action_name(d->action), d->before, d->after, d->strict_before,
		      d->strict_after, d->why);
	}
	d = bw_whatif_count(r) == NWANT ? bw_whatif_decision(r, NWANT - 1, &t, &dev) : NULL;
	CHECK(d && strstr(d->why, "BFQ stopped idling at slice_idle_us 8000: depth 1.00 -> 3.90, "
		     "101 -> 35 MB/s; trying strict_guarantees 1"), "the repair's why: %s",
	      d ? d->why : "(none)");
	bw_whatif_free(r);
}

/* The text report's decision lines. */
static void test_text(void)
{
	struct bw_whatif *r = run();
	char *buf = NULL, *line, action[16], dev[32];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned int before, after;
	double t;
	int n = 0;

	bw_whatif_print(r, f);
	fclose(f);
	CHECK(strstr(buf, "What if blkwise tune had run (policy throughput, window 1.00 s"),
	      "the heading: %s", buf);
	for (line = strstr(buf, "\n  t="); line; line = strstr(line + 1, "\n  t=")) {
		CHECK(sscanf(line, "\n  t=%lf s %31s %15[^:]: slice_idle_us %u -> %u", &t, dev,
			     action, &before, &after) == 5, "a decision line: %.80s", line + 1);
		if (n < NWANT)
			CHECK(t == want[n].t && !strcmp(dev, want[n].dev) &&
			      !strcmp(action, want[n].action) && before == want[n].before &&
			      after == want[n].after, "line %d: %.100s", n, line + 1);
		n++;
	}
	CHECK(n == NWANT, "%d decision lines", n);
	CHECK(strstr(buf, "sdb repair: slice_idle_us 8000 -> 20000, strict_guarantees 0 -> 1: "
		     "BFQ stopped idling"), "the repair's strict_guarantees: %s", buf);
	CHECK(strstr(buf, "      evidence: 35.0 MB/s, P_eff 0.90, depth 3.90, S1 1.600 ms (live), "
		     "class shallow, streams 4 (4 sync sequential), think p90 0.100 ms\n"),
	      "its evidence: %s", buf);
	free(buf);
	bw_whatif_free(r);
}

static void whatif_obj(struct bw_json *j, const void *r)
{
	bw_json_obj(j, NULL);
	bw_whatif_json(r, j);
	bw_json_close(j, '}');
}

static char *json_of(const struct bw_whatif *r)
{
	return json_text(whatif_obj, r, BW_JSON);
}

/* The JSON report: the same decisions, in the same order. */
static void test_json(void)
{
	struct bw_whatif *r = run();
	static const char head[] = "{\"what_if\":{\"policy\":\"throughput\",\"window_s\":1.000,"
				   "\"decisions\":[{\"t\":";
	char *buf = json_of(r), *p, dev[32], action[16];
	unsigned int before, after, sb, sa;
	double t;
	int n = 0;

	CHECK(!strncmp(buf, head, strlen(head)), "the head: %.120s", buf);
	for (p = strstr(buf, "{\"t\":"); p; p = strstr(p + 1, "{\"t\":")) {
		CHECK(sscanf(p, "{\"t\":%lf,\"device\":\"%31[^\"]\",\"action\":\"%15[^\"]\","
			     "\"slice_idle_us_before\":%u,\"slice_idle_us_after\":%u,"
			     "\"strict_guarantees_before\":%u,\"strict_guarantees_after\":%u",
			     &t, dev, action, &before, &after, &sb, &sa) == 7,
		      "a decision: %.200s", p);
		if (n < NWANT)
			CHECK(t == want[n].t && !strcmp(dev, want[n].dev) &&
			      !strcmp(action, want[n].action) && before == want[n].before &&
			      after == want[n].after && sb == want[n].strict_before &&
			      sa == want[n].strict_after, "decision %d: %.200s", n, p);
		n++;
	}
	CHECK(n == NWANT, "%d decisions", n);
	CHECK(strstr(buf, "\"evidence\":{\"mb_per_s\":35.000,\"p_eff\":0.900,\"depth\":3.900,"
		     "\"s1_ms\":1.6000,\"class\":\"shallow\",\"streams\":4,"
		     "\"sync_sequential_streams\":4,\"think_p90_ms\":0.1000}}]}}\n"),
	      "the repair's evidence, last: %s", buf);
	free(buf);
	bw_whatif_free(r);
}

/* One CSV line's cells (RFC 4180 quoting undone); how many. */
static int csv_split(const char *s, char cells[][256], int max)
{
	int n = 0, k = 0;
	bool quoted = false;

	for (; *s && n < max; s++) {
		if (quoted && *s == '"' && s[1] == '"') {
			s++;
		} else if (*s == '"') {
			quoted = !quoted;
			continue;
		} else if (!quoted && (*s == ',' || *s == '\n')) {
			cells[n++][k] = '\0';
			k = 0;
			if (*s == '\n')
				break;
			continue;
		}
		if (k < 255)
			cells[n][k++] = *s;
	}
	return n;
}

struct row {
	const struct bw_whatif *r;
	int i;
};

static void decision(struct bw_json *j, const void *arg)
{
	const struct row *w = arg;

	bw_whatif_decision_json(w->r, j, w->i);
}

/* Decision i as a CSV row; -1: the header. */
static char *csv_of(const struct bw_whatif *r, int i)
{
	return json_text(decision, &(struct row){ r, i }, i < 0 ? BW_CSV_HEADER : BW_CSV_ROW);
}

/* The CSV table: a header, then a row a decision with the same cells. */
static void test_csv(void)
{
	static char head[32][256], row[32][256];
	struct bw_whatif *r = run();
	char *buf = csv_of(r, -1);
	int nh = csv_split(buf, head, 32), nr, i;

	free(buf);
	CHECK(nh == 16 && !strcmp(head[0], "t") && !strcmp(head[1], "device") &&
	      !strcmp(head[2], "action") && !strcmp(head[3], "slice_idle_us_before") &&
	      !strcmp(head[4], "slice_idle_us_after") &&
	      !strcmp(head[5], "strict_guarantees_before") &&
	      !strcmp(head[6], "strict_guarantees_after") && !strcmp(head[7], "why") &&
	      !strcmp(head[8], "evidence.mb_per_s") && !strcmp(head[12], "evidence.class"),
	      "header: %d cells", nh);
	for (i = 0; i < bw_whatif_count(r) && i < NWANT; i++) {
		const struct bw_policy_decision *d;
		const char *dev;
		double t;

		buf = csv_of(r, i);
		nr = csv_split(buf, row, 32);
		d = bw_whatif_decision(r, i, &t, &dev);
		CHECK(nr == nh, "row %d: %d cells, the header %d: %s", i, nr, nh, buf);
		CHECK(strtod(row[0], NULL) == want[i].t && !strcmp(row[1], want[i].dev) &&
		      !strcmp(row[2], want[i].action) &&
		      strtoul(row[3], NULL, 10) == want[i].before &&
		      strtoul(row[4], NULL, 10) == want[i].after &&
		      strtoul(row[5], NULL, 10) == want[i].strict_before &&
		      strtoul(row[6], NULL, 10) == want[i].strict_after,
		      "row %d: %s", i, buf);
		CHECK(!strncmp(row[7], d->why, 255), "row %d: the why, unquoted: %s", i, row[7]);
		free(buf);
	}
	bw_whatif_free(r);
}

/* Nothing decided: said so, and an empty list. */
static void test_no_decision(void)
{
	struct bw_whatif *r = bw_whatif_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	bw_whatif_print(r, f);
	fclose(f);
	CHECK(bw_whatif_count(r) == 0 && strstr(buf, "\n  no decision\n"), "text: %s", buf);
	free(buf);
	buf = json_of(r);
	CHECK(!strcmp(buf, "{\"what_if\":{\"policy\":\"throughput\",\"window_s\":1.000,"
		      "\"decisions\":[]}}\n"), "JSON: %s", buf);
	free(buf);
	bw_whatif_free(r);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_decisions), UNIT(test_text), UNIT(test_json), UNIT(test_csv),
		UNIT(test_no_decision),
	};

	return unit_run("whatif", tests, sizeof(tests) / sizeof(tests[0]));
}
