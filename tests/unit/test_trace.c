// SPDX-License-Identifier: GPL-2.0
/* The trace file format: round trip, drops, and every kind of damaged file. */
#include <stddef.h>
#include <stdlib.h>
#include "unit.h"
#include "model/trace.h"

#define NEV 2500	/* three event blocks, the last one partial */
#define NCPU 3

static void fill_info(struct bw_tinfo *in, struct bw_tdev *d)
{
	memset(in, 0, sizeof(*in));
	memset(d, 0, sizeof(*d));
	in->start_ns = 1000;
	snprintf(in->clock, sizeof(in->clock), "monotonic");
	snprintf(in->release, sizeof(in->release), "6.18.0-test");
	in->ncpus = NCPU;
	in->ndevs = 1;
	in->rec_size = sizeof(struct bw_trec);
	d->dev = (7u << 20) | 3;
	snprintf(d->name, sizeof(d->name), "loop3");
	snprintf(d->scheduler, sizeof(d->scheduler), "none");
	d->nr_requests = 128;
}

/* A whole trace in memory: NEV events, a drop block, an end block. */
static char *make_trace(size_t *len, bool end)
{
	struct bw_twriter *w = malloc(sizeof(*w));
	__u64 lost[NCPU] = { 1, 0, 7 };
	struct bw_tinfo in;
	struct bw_tdev d;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int i;

	fill_info(&in, &d);
	CHECK(!bw_tw_begin(w, f, &in, &d), "begin");
	for (i = 0; i < NEV; i++) {
		struct bw_trec e = { .ts = 2000 + i, .type = BW_EV_ISSUE, .dev = d.dev,
				     .bytes = 4096, .rq = 0xffff0000u + i, .sector = i * 8,
				     .cgroup = 100 + i % 3 };

		if (i == 0)
			CHECK(!bw_tw_cgroup(w, 100, "/a") && !bw_tw_cgroup(w, 101, "/b/c") &&
			      !bw_tw_cgroup(w, 102, ""), "cgroups");
		CHECK(!bw_tw_event(w, &e), "event %d", i);
		if (i == 1500)
			CHECK(!bw_tw_lost(w, e.ts, lost), "lost");
	}
	lost[1] = 5;
	if (end)
		CHECK(!bw_tw_end(w, 9999, lost, BW_END_SIGNAL), "end");
	else
		bw_tw_flush(w);
	fclose(f);
	free(w);
	return buf;
}

/* Read buf[0..len): events read, or -1 on error; r keeps the message. */
static long read_all(const char *buf, size_t len, struct bw_treader *r, bool *ordered)
{
	const struct bw_trec *e;
	FILE *f = fmemopen((void *)buf, len ? len : 1, "r");
	long n = 0;
	int rc;

	if (!len)
		fgetc(f);	/* fmemopen refuses size 0: an empty stream by reading past */
	*ordered = true;
	if (bw_tr_open(r, f, "t.bwt")) {
		fclose(f);
		return -1;
	}
	while ((rc = bw_tr_next(r, &e)) > 0) {
		if (e->ts != (__u64)(2000 + n) || e->sector != (__u64)n * 8 ||
		    e->cgroup != (r->version == 1 ? 0 : (__u64)(100 + n % 3)))
			*ordered = false;
		n++;
	}
	fclose(f);
	return rc < 0 ? -1 : n;
}

static void test_round_trip(void)
{
	size_t len;
	char *buf = make_trace(&len, true);
	struct bw_treader r;
	bool ordered;
	long n = read_all(buf, len, &r, &ordered);

	CHECK(n == NEV, "events %ld of %d: %s", n, NEV, r.err);
	CHECK(ordered, "in order and intact");
	CHECK(r.ended && !r.truncated, "ended cleanly");
	CHECK(r.lost[0] == 1 && r.lost[1] == 5 && r.lost[2] == 7, "per-CPU drops from the end");
	CHECK(!strcmp(r.devs[0].name, "loop3") && r.info.ndevs == 1, "device table");
	CHECK(!strcmp(r.info.release, "6.18.0-test"), "release");
	CHECK(len % 8 == 0, "blocks 8-aligned: %zu", len);
	CHECK(r.cgroups.n == 3 && !strcmp(bw_tcgroup_path(&r.cgroups, 101), "/b/c") &&
	      !strcmp(bw_tcgroup_path(&r.cgroups, 100), "/a"), "cgroups named: %d", r.cgroups.n);
	CHECK(!bw_tcgroup_path(&r.cgroups, 102) && !bw_tcgroup_path(&r.cgroups, 103),
	      "a cgroup without a path, and one never named: NULL");
	bw_tr_close(&r);
	free(buf);
}

static void expect_error(const char *buf, size_t len, const char *what, const char *text);

static void put(FILE *f, __u32 type, const void *body, __u32 len)
{
	struct bw_tblock h = { .type = type, .len = len + 16 };
	struct bw_ttail t = { .len = len + 16, .type = type };

	fwrite(&h, sizeof(h), 1, f);
	fwrite(body, len, 1, f);
	fwrite(&t, sizeof(t), 1, f);
}

/* Version 1: 64-byte events, no cgroup; read as this version's, cgroup 0. */
static void test_version_1(void)
{
	struct bw_tfile_head h = { .magic = BW_TRACE_MAGIC, .version = 1, .bom = BW_TRACE_BOM };
	char info[sizeof(struct bw_tinfo) + sizeof(struct bw_tdev)];
	char ev[BW_TREC_V1_SIZE * 300];
	struct bw_treader r;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	bool ordered;
	long n;
	int i;

	fill_info((struct bw_tinfo *)info, (struct bw_tdev *)(info + sizeof(struct bw_tinfo)));
	((struct bw_tinfo *)info)->rec_size = BW_TREC_V1_SIZE;
	for (i = 0; i < 300; i++) {
		struct bw_trec e = { .ts = 2000 + i, .type = BW_EV_ISSUE, .bytes = 4096,
				     .sector = i * 8, .cgroup = 55 };

		memcpy(ev + i * BW_TREC_V1_SIZE, &e, BW_TREC_V1_SIZE);
	}
	fwrite(&h, sizeof(h), 1, f);
	put(f, BW_TB_INFO, info, sizeof(info));
	put(f, BW_TB_EVENTS, ev, sizeof(ev));
	fclose(f);
	n = read_all(buf, len, &r, &ordered);
	CHECK(n == 300, "version 1: events %ld of 300: %s", n, r.err);
	CHECK(ordered, "version 1: in order, intact, cgroup 0");
	bw_tr_close(&r);
	free(buf);
	/* A version 1 header that claims this version's record size is refused. */
	((struct bw_tinfo *)info)->rec_size = sizeof(struct bw_trec);
	f = open_memstream(&buf, &len);
	fwrite(&h, sizeof(h), 1, f);
	put(f, BW_TB_INFO, info, sizeof(info));
	fclose(f);
	expect_error(buf, len, "v1 size", "records of 72 bytes, this blkwise reads 64");
	free(buf);
}

/* Cut at every length: never an error past the header, and never a partial record. */
static void test_cut_anywhere(void)
{
	size_t len, cut, head_end = 0;
	char *buf = make_trace(&len, true);
	struct bw_treader r;
	bool ordered;
	long n, prev = 0;

	for (cut = 0; cut < len; cut += cut < 1200 ? 1 : 61) {
		n = read_all(buf, cut, &r, &ordered);
		if (n < 0) {
			CHECK(!head_end, "error after the header at %zu: %s", cut, r.err);
			CHECK(strstr(r.err, "t.bwt: ") && strstr(r.err, "offset"),
			      "message names the file and offset: %s", r.err);
			bw_tr_close(&r);
			continue;
		}
		if (!head_end)
			head_end = cut;
		CHECK(ordered, "cut at %zu: events intact", cut);
		CHECK(r.truncated, "cut at %zu: said truncated", cut);
		CHECK(strstr(r.err, "truncated at offset"), "cut at %zu: %s", cut, r.err);
		CHECK(n >= prev, "cut at %zu: %ld events, fewer than a shorter cut's %ld", cut, n,
		      prev);
		/* Every whole record before the cut is read. */
		CHECK((size_t)n * sizeof(struct bw_trec) + head_end + 128 >= cut - 64 * 3 || n == NEV,
		      "cut at %zu: only %ld events", cut, n);
		prev = n;
		bw_tr_close(&r);
	}
	CHECK(head_end > 0, "some cut is past the header");
	free(buf);
}

static void expect_error(const char *buf, size_t len, const char *what, const char *text)
{
	struct bw_treader r;
	bool ordered;

	CHECK(read_all(buf, len, &r, &ordered) < 0, "%s: refused", what);
	CHECK(strstr(r.err, text) && strstr(r.err, "at offset"), "%s: message '%s'", what, r.err);
	bw_tr_close(&r);
}

static void test_bad_files(void)
{
	size_t len;
	char *buf = make_trace(&len, true), *b = malloc(len);
	struct bw_tfile_head *h = (void *)b;
	size_t ev0 = sizeof(*h);

	/* The first event block, past the header and the cgroup blocks. */
	while (((struct bw_tblock *)(buf + ev0))->type != BW_TB_EVENTS)
		ev0 += ((struct bw_tblock *)(buf + ev0))->len;

	expect_error("", 0, "empty", "empty file");
	memcpy(b, buf, len);
	b[0] = 'X';
	expect_error(b, len, "magic", "not a blkwise trace");
	memcpy(b, buf, len);
	h->version = BW_TRACE_VERSION + 1;
	expect_error(b, len, "version", "format version 3");
	memcpy(b, buf, len);
	h->bom = __builtin_bswap32(BW_TRACE_BOM);
	expect_error(b, len, "byte order", "other byte order");
	/* An event's type byte. */
	memcpy(b, buf, len);
	b[ev0 + 8 + 5 * sizeof(struct bw_trec) + offsetof(struct bw_trec, type)] = 99;
	expect_error(b, len, "event type", "corrupt event (type 99) at offset");
	/* A block tail that does not match its head. */
	memcpy(b, buf, len);
	b[ev0 + 8 + BW_TRACE_BLOCK_EVENTS * sizeof(struct bw_trec)] ^= 0x10;
	expect_error(b, len, "tail", "tail does not match");
	/* A block head claiming an absurd length. */
	memcpy(b, buf, len);
	((struct bw_tblock *)(b + ev0))->len = 0xfffffff8u;
	expect_error(b, len, "length", "corrupt block");
	/* Data after the end block. */
	{
		char *c = malloc(len + 64);

		memcpy(c, buf, len);
		memcpy(c + len, buf + ev0, 64);
		expect_error(c, len + 64, "after end", "data after the end block");
		free(c);
	}
	free(b);
	free(buf);
}

/* Unknown block types are skipped; a file without an end is truncated, not refused. */
static void test_unknown_block_and_no_end(void)
{
	size_t len;
	char *buf = make_trace(&len, false), *b;
	size_t ev0 = sizeof(struct bw_tfile_head) + 8 + sizeof(struct bw_tinfo) +
		     sizeof(struct bw_tdev) + 8;
	struct bw_tblock fut = { .type = 77, .len = 32 };
	struct bw_ttail tail = { .len = 32, .type = 77 };
	struct bw_treader r;
	bool ordered;

	b = calloc(1, len + 32);
	memcpy(b, buf, ev0);
	memcpy(b + ev0, &fut, 8);
	memcpy(b + ev0 + 24, &tail, 8);
	memcpy(b + ev0 + 32, buf + ev0, len - ev0);
	CHECK(read_all(b, len + 32, &r, &ordered) == NEV, "all events past a future block: %s",
	      r.err);
	CHECK(r.truncated && strstr(r.err, "no end block"), "no end: %s", r.err);
	CHECK(r.lost[2] == 7, "the periodic drop block was read");
	bw_tr_close(&r);
	free(b);
	free(buf);
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_round_trip),
		UNIT(test_version_1),
		UNIT(test_cut_anywhere),
		UNIT(test_bad_files),
		UNIT(test_unknown_block_and_no_end),
	};

	return unit_run("trace", t, sizeof(t) / sizeof(t[0]));
}
