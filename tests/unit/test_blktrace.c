// SPDX-License-Identifier: GPL-2.0
/*
 * The blktrace reader (user/model/blktrace.c) on captures built here, one
 * 48-byte struct blk_io_trace at a time: each action and flag to its event,
 * payloads skipped, files merged by time, both byte orders, and a clean
 * error or a truncation notice on damaged input.
 */
#include <stdlib.h>
#include "unit.h"
#include "model/trace.h"
#include "btrec.h"

#define DEV ((8u << 20) | 16)
#define TC(x) ((__u32)(x) << 16)
#define TC_WRITE TC(1u << 1)
#define TC_FLUSH TC(1u << 2)
#define TC_SYNC TC(1u << 3)
#define TC_NOTIFY TC(1u << 10)
#define TC_DISCARD TC(1u << 13)
#define TC_FUA TC(1u << 15)
#define SYNC_FLAG (1u << 11)
#define FUA_FLAG (1u << 17)

/* A capture being built in memory. */
struct cap {
	FILE *w;
	char *buf;
	size_t len;
	bool swap;
};

static void cap_open(struct cap *c, bool swap)
{
	memset(c, 0, sizeof(*c));
	c->w = open_memstream(&c->buf, &c->len);
	c->swap = swap;
}

/* One record, and its payload. */
static void put(struct cap *c, struct bt_rec r, const void *pdu)
{
	bt_put(c->w, c->swap, r, pdu);
	fflush(c->w);
}

/* An I/O record: action act with category bits tc, at ts. */
static void io(struct cap *c, __u64 ts, __u32 act, __u32 tc, __u64 sector, __u32 bytes,
	       __u32 cpu)
{
	put(c, (struct bt_rec){ .time = ts, .sector = sector, .bytes = bytes, .action = act | tc,
			    .pid = 42, .device = DEV, .cpu = cpu }, NULL);
}

/* The events of a capture of nfiles files (each len[i] bytes of buf[i]); -1 on error. */
struct got {
	struct bw_trec ev[64];
	int n;
	bool truncated;
	__u32 ncpus;
	char err[256];
};

static int read_all(char **buf, const size_t *len, int nfiles, struct got *g)
{
	static const char *names[] = { "t.blktrace.0", "t.blktrace.1" };
	FILE *rd[2];
	struct bw_btreader *b;
	struct bw_tsource s;
	const struct bw_trec *ev;
	int i, rc;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < nfiles; i++)
		rd[i] = fmemopen(buf[i], len[i] ? len[i] : 1, "r");
	for (i = 0; i < nfiles; i++)
		if (!len[i])	/* fmemopen refuses size 0: an empty file read to its end */
			fseek(rd[i], 1, SEEK_SET);
	rc = bw_bt_open(&b, rd, names, nfiles, g->err, sizeof(g->err));
	if (!rc) {
		bw_bt_source(b, &s);
		while ((rc = s.next(s.ctx, &ev)) > 0 && g->n < 64)
			g->ev[g->n++] = *ev;
		g->truncated = *s.truncated;
		g->ncpus = s.info->ncpus;
		bw_bt_close(b);
	}
	for (i = 0; i < nfiles; i++)
		fclose(rd[i]);
	return rc;
}

/* Every action and flag we use, in one file. */
static void capture(struct cap *c, bool swap)
{
	char comm[8] = "fio", stamp[8] = { 1 }, cdb[16] = { 0x28 };

	cap_open(c, swap);
	put(c, (struct bt_rec){ .time = 10, .action = TC_NOTIFY | 0, .pid = 42, .pdu_len = 4 }, comm);
	put(c, (struct bt_rec){ .time = 11, .action = TC_NOTIFY | 1, .pdu_len = 8 }, stamp);
	io(c, 100, 1, TC_SYNC, 2048, 4096, 0);			/* Q, a sync read */
	io(c, 101, 4, TC_SYNC, 2048, 4096, 0);			/* G */
	io(c, 102, 9, 0, 0, 0, 0);				/* P: not used */
	io(c, 103, 12, TC_SYNC, 2048, 4096, 0);			/* I */
	put(c, (struct bt_rec){ .time = 104, .sector = 2048, .bytes = 4096, .pid = 42, .device = DEV,
			    .action = 7 | 1u << 8 | TC_WRITE | TC_FUA, .cpu = 3,
			    .pdu_len = 16 }, cdb);		/* D, cgroup flag, a payload */
	put(c, (struct bt_rec){ .time = 105, .sector = 2048, .bytes = 4096, .device = DEV,
			    .action = 8 | TC_WRITE, .error = 10, .cpu = 1 }, NULL);	/* C */
	io(c, 106, 1, TC_DISCARD | TC_WRITE, 4096, 1 << 20, 0);	/* Q, a discard */
	io(c, 107, 1, TC_FLUSH | TC_SYNC, 0, 0, 0);		/* Q, an empty flush */
	io(c, 108, 1, TC_FLUSH | TC_WRITE, 8, 512, 0);		/* Q, a write with preflush */
	io(c, 109, 2, 0, 8, 512, 0);				/* A, back merge */
	io(c, 110, 3, 0, 0, 512, 0);				/* A, front merge */
	io(c, 111, 6, 0, 8, 512, 0);				/* R */
	fclose(c->w);
}

static const struct { __u8 type; __u64 ts; __u32 flags; } want[] = {
	{ BW_EV_COMM, 10, 0 },
	{ BW_EV_QUEUE, 100, SYNC_FLAG },
	{ BW_EV_GETRQ, 101, SYNC_FLAG },
	{ BW_EV_INSERT, 103, SYNC_FLAG },
	{ BW_EV_ISSUE, 104, 1 | FUA_FLAG },
	{ BW_EV_COMPLETE, 105, 1 },
	{ BW_EV_QUEUE, 106, 3 },
	{ BW_EV_QUEUE, 107, 2 | SYNC_FLAG },
	{ BW_EV_QUEUE, 108, 1 },
	{ BW_EV_BACKMERGE, 109, 0 },
	{ BW_EV_FRONTMERGE, 110, 0 },
	{ BW_EV_REQUEUE, 111, 0 },
};
#define NWANT ((int)(sizeof(want) / sizeof(want[0])))

/* Each record to its event, in either byte order. */
static void test_events_and_fields(void)
{
	int order;

	for (order = 0; order < 2; order++) {
		struct cap c;
		struct got g;
		int i;

		capture(&c, order);
		CHECK(read_all(&c.buf, &c.len, 1, &g) == 0, "order %d: read: %s", order, g.err);
		CHECK(g.n == NWANT && !g.truncated, "order %d: %d events, want %d", order, g.n, NWANT);
		for (i = 0; i < g.n && i < NWANT; i++)
			CHECK(g.ev[i].type == want[i].type && g.ev[i].ts == want[i].ts &&
			      (i == 0 || g.ev[i].flags == want[i].flags),
			      "order %d, event %d: type %u at %llu, flags %#x", order, i,
			      g.ev[i].type, (unsigned long long)g.ev[i].ts, g.ev[i].flags);
		CHECK(!strcmp(g.ev[0].comm, "fio") && g.ev[0].pid == 42, "comm %.16s", g.ev[0].comm);
		CHECK(g.ev[4].sector == 2048 && g.ev[4].bytes == 4096 && g.ev[4].dev == DEV &&
		      g.ev[4].pid == 42 && g.ev[4].cpu == 3 && g.ev[4].tag == BW_TAG_NONE,
		      "order %d: D's fields", order);
		CHECK(g.ev[5].error == 10 && g.ev[5].cpu == 1, "order %d: C's error %d", order,
		      g.ev[5].error);
		CHECK(g.ev[6].bytes == 1 << 20 && g.ev[6].sector == 4096, "the discard's size");
		CHECK(g.ncpus == 4, "CPUs: the files', or past them the highest seen + 1: %u",
		      g.ncpus);
		free(c.buf);
	}
}

/* Two per-CPU files: one stream, by time, and again after a rewind. */
static void test_merge_and_rewind(void)
{
	static const __u64 t0[] = { 1, 4, 5 }, t1[] = { 2, 3, 6 };
	struct cap c[2];
	char *buf[2];
	size_t len[2];
	FILE *rd[2];
	const char *names[2] = { "a", "b" };
	struct bw_btreader *b;
	struct bw_tsource s;
	const struct bw_trec *ev;
	char err[256];
	int i, pass, n;

	cap_open(&c[0], false);
	cap_open(&c[1], true);	/* a file of the other byte order merges as well */
	for (i = 0; i < 3; i++) {
		io(&c[0], t0[i], 1, 0, i, 512, 0);
		io(&c[1], t1[i], 8, 0, i, 512, 1);
	}
	for (i = 0; i < 2; i++) {
		fclose(c[i].w);
		buf[i] = c[i].buf;
		len[i] = c[i].len;
		rd[i] = fmemopen(buf[i], len[i], "r");
	}
	CHECK(!bw_bt_open(&b, rd, names, 2, err, sizeof(err)), "open: %s", err);
	bw_bt_source(b, &s);
	for (pass = 0; pass < 2; pass++) {
		for (n = 0; s.next(s.ctx, &ev) > 0; n++)
			CHECK(ev->ts == (__u64)n + 1 && ev->cpu == (ev->ts == 1 || ev->ts == 4 ||
			      ev->ts == 5 ? 0 : 1), "pass %d: event %d at %llu from CPU %u", pass, n,
			      (unsigned long long)ev->ts, ev->cpu);
		CHECK(n == 6, "pass %d: 6 events, got %d", pass, n);
		CHECK(!s.rewind(s.ctx), "rewind");
	}
	bw_bt_close(b);
	for (i = 0; i < 2; i++) {
		fclose(rd[i]);
		free(buf[i]);
	}
}

/* A record cut short, in its head or its payload: read up to it, said truncated. */
static void test_truncated(void)
{
	char pdu[32] = "";
	struct cap c;
	struct got g;
	size_t cut;

	cap_open(&c, false);
	io(&c, 1, 1, 0, 0, 512, 0);
	io(&c, 2, 7, 0, 0, 512, 0);
	put(&c, (struct bt_rec){ .time = 3, .action = 8, .device = DEV, .pdu_len = 32 }, pdu);
	fclose(c.w);
	for (cut = 1; cut < 48 + 32; cut += 47) {
		size_t len = c.len - cut;

		CHECK(read_all(&c.buf, &len, 1, &g) == 0 && g.n == 2 && g.truncated,
		      "cut %zu bytes: %d events, truncated %d", cut, g.n, g.truncated);
		CHECK(strstr(g.err, "t.blktrace.0: truncated at offset 96 (record cut)"),
		      "names the record: %s", g.err);
	}
	cut = c.len - 48 - 32;
	CHECK(read_all(&c.buf, &cut, 1, &g) == 0 && g.n == 2 && !g.truncated,
	      "cut at a record's end: whole (%d events)", g.n);
	cut = 20;
	CHECK(read_all(&c.buf, &cut, 1, &g) == 0 && g.n == 0 && g.truncated,
	      "the first record cut: opened, nothing read, truncated");
	free(c.buf);
}

/* What is not blktrace is refused with the file and the offset, at open or midway. */
static void test_bad_input(void)
{
	struct cap c;
	struct got g;
	size_t len = 0;
	char *empty = (char *)"";
	struct bw_btreader *b;

	cap_open(&c, false);
	put(&c, (struct bt_rec){ .magic = 0x65617406, .time = 1, .action = 1 }, NULL);
	fclose(c.w);
	CHECK(read_all(&c.buf, &c.len, 1, &g) < 0 &&
	      !strcmp(g.err, "t.blktrace.0: blktrace version 0x6 at offset 0"), "version: %s", g.err);
	free(c.buf);
	cap_open(&c, false);
	fwrite("BWTRACE\0 a trace of ours, not blktrace's........", 1, 48, c.w);
	fclose(c.w);
	CHECK(read_all(&c.buf, &c.len, 1, &g) < 0 &&
	      !strcmp(g.err, "t.blktrace.0: not a blktrace record: magic 0x52545742 at offset 0"),
	      "magic: %s", g.err);
	free(c.buf);
	cap_open(&c, false);
	io(&c, 1, 1, 0, 0, 512, 0);
	io(&c, 2, 7, 0, 0, 512, 0);
	c.swap = true;
	io(&c, 3, 8, 0, 0, 512, 0);
	fclose(c.w);
	CHECK(read_all(&c.buf, &c.len, 1, &g) < 0 && g.n == 2 &&
	      !strcmp(g.err, "t.blktrace.0: byte order changes: magic 0x7746165 at offset 96"),
	      "midway: refused after 2 events (%d): %s", g.n, g.err);
	memset(c.buf + 48, 0, 4);
	CHECK(read_all(&c.buf, &c.len, 1, &g) < 0 && g.n == 1 &&
	      strstr(g.err, "not a blktrace record: magic 0 at offset 48"), "a zeroed magic: %s",
	      g.err);
	free(c.buf);
	cap_open(&c, false);
	put(&c, (struct bt_rec){ .time = 1, .action = 7, .pdu_len = 16 }, "0123456789abcdef");
	put(&c, (struct bt_rec){ .magic = 0x12345678, .time = 2, .action = 8 }, NULL);
	fclose(c.w);
	CHECK(read_all(&c.buf, &c.len, 1, &g) < 0 && g.n == 1 &&
	      strstr(g.err, "magic 0x12345678 at offset 64"), "offsets count payloads: %s", g.err);
	free(c.buf);
	CHECK(read_all(&empty, &len, 1, &g) < 0 &&
	      !strcmp(g.err, "t.blktrace.0: empty blktrace file at offset 0"), "empty: %s", g.err);
	CHECK(bw_bt_open(&b, NULL, NULL, 0, g.err, sizeof(g.err)) < 0 &&
	      !strcmp(g.err, "no blktrace files"), "no files: %s", g.err);
	CHECK(bw_bt_open(&b, NULL, NULL, BW_BT_MAX_FILES + 1, g.err, sizeof(g.err)) < 0,
	      "too many files");
}

static void test_magic(void)
{
	static const unsigned char le[] = { 0x07, 0x74, 0x61, 0x65 }, be[] = { 0x65, 0x61, 0x74, 0x07 };

	CHECK(bw_bt_magic(le, 4) && bw_bt_magic(be, 4), "both byte orders");
	CHECK(!bw_bt_magic(le, 3), "too short");
	CHECK(!bw_bt_magic("BWTRACE", 8), "our own trace");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_events_and_fields), UNIT(test_merge_and_rewind), UNIT(test_truncated),
		UNIT(test_bad_input), UNIT(test_magic),
	};

	return unit_run("blktrace", tests, sizeof(tests) / sizeof(tests[0]));
}
