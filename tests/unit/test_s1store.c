// SPDX-License-Identifier: GPL-2.0
/* The S1 store's file format: round trip, merge, prune, and damaged files. */
#include <errno.h>
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"

static int parse_text(const char *text, struct bw_s1_store *s, char *why, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = bw_s1_store_parse(f, s, why, len);

	fclose(f);
	return err;
}

static void test_round_trip(void)
{
	struct bw_s1_store a = {}, b = {};
	struct bw_s1 v = { .samples = 1234, .mean_ns = 2083112, .learned = 1764570000 };
	struct bw_s1_dev d;
	char *buf = NULL, why[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(!bw_s1_store_put(&a, "loop:/var/tmp/a b.img", BW_OP_READ, 0, &v), "put");
	v.mean_ns = 9000000;
	CHECK(!bw_s1_store_put(&a, "loop:/var/tmp/a b.img", BW_OP_WRITE, 5, &v), "put write");
	CHECK(!bw_s1_store_put(&a, "serial:X", BW_OP_READ, 0, &v), "put other");
	CHECK(bw_s1_store_put(&a, "bad\tid", BW_OP_READ, 0, &v) == -EINVAL, "tab refused");
	CHECK(bw_s1_store_put(&a, "x", BW_OP_READ, BW_SIZE_CLASSES, &v) == -EINVAL, "class");
	CHECK(!bw_s1_store_format(f, &a), "format");
	fclose(f);
	CHECK(!parse_text(buf, &b, why, sizeof(why)), "parse back: %s", why);
	CHECK(b.n == 3, "three records, got %d", b.n);
	CHECK(bw_s1_store_get(&b, "loop:/var/tmp/a b.img", &d) == 2, "two for the loop");
	CHECK(d.s[BW_OP_READ][0].mean_ns == 2083112 && d.s[BW_OP_READ][0].samples == 1234 &&
	      d.s[BW_OP_READ][0].learned == 1764570000, "read record intact");
	CHECK(d.s[BW_OP_WRITE][5].mean_ns == 9000000, "write record intact");
	CHECK(d.s[BW_OP_READ][1].samples == 0, "nothing else");
	free(buf);
	bw_s1_store_free(&a);
	bw_s1_store_free(&b);
}

static void test_damaged(void)
{
	static const char *const bad[] = {
		"",
		"something else\n",
		"blkwise-s1 5\n",
		"blkwise-s1 2\nloop:/a\tread\t0\t10\t10\t10\n",	/* v2 records are typed */
		"blkwise-s1 2\nidle\tloop:/a\t0\t0.5\t10\n",		/* idle records are v3's */
		"blkwise-s1 3\nidle\tloop:/a\t0\t-0.5\t10\n",
		"blkwise-s1 3\nidle\tloop:/a\tx\t0.5\t10\n",
		"blkwise-s1 3\nidle\tloop:/a\t0\t0.5\n",
		"blkwise-s1 3\nidle\tloop:/a\t0\t0.5\t10\t1\n",	/* strict is v4's */
		"blkwise-s1 4\nidle\tloop:/a\t8000\t0.5\t10\n",	/* v4 names strict */
		"blkwise-s1 4\nidle\tloop:/a\t8000\t0.5\t10\t2\n",
		"blkwise-s1 4\nidle\tloop:/a\t0\t0.5\t10\t1\n",	/* strict needs idling */
		"blkwise-s1 2\nclass\tloop:/a\tmedium\t1.0\t10\n",
		"blkwise-s1 2\nclass\tloop:/a\tdeep\t-1\t10\n",
		"blkwise-s1 1\nloop:/a\tread\t0\t10\n",
		"blkwise-s1 1\nloop:/a\tfrob\t0\t10\t10\t10\n",
		"blkwise-s1 1\nloop:/a\tread\t8\t10\t10\t10\n",
		"blkwise-s1 1\nloop:/a\tread\t0\t0\t10\t10\n",
		"blkwise-s1 1\nloop:/a\tread\t0\t10\t10\t10 trailing\n",
		"\x7f" "ELF\x02\x01\x01",
	};
	struct bw_s1_store s = {};
	char why[200];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK(parse_text(bad[i], &s, why, sizeof(why)) == -EINVAL, "case %zu refused", i);
		CHECK(why[0], "case %zu says why", i);
		bw_s1_store_free(&s);
	}
	CHECK(!parse_text("blkwise-s1 1\n# comment\n\nloop:/a\tread\t0\t10\t10\t10\n", &s, why,
			  sizeof(why)) && s.n == 1, "comments, blank lines and version 1 are fine");
	bw_s1_store_free(&s);
}

static void test_classes(void)
{
	struct bw_s1_store a = {}, b = {};
	const struct bw_cls_rec *c;
	char *buf = NULL, why[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(!bw_s1_store_put_class(&a, "serial:X", BW_CLASS_DEEP, 3.812, 100), "put deep");
	CHECK(!bw_s1_store_put_class(&a, "loop:/y", BW_CLASS_SHALLOW, 0.41, 200), "put shallow");
	CHECK(bw_s1_store_put_class(&a, "loop:/z", BW_CLASS_UNKNOWN, 1, 1) == -EINVAL,
	      "unknown is not stored");
	bw_s1_store_put(&a, "loop:/y", BW_OP_READ, 6, &(struct bw_s1){ 30, 1600000, 200 });
	bw_s1_store_format(f, &a);
	fclose(f);
	CHECK(!parse_text(buf, &b, why, sizeof(why)), "parse back: %s", why);
	c = bw_s1_store_class(&b, "serial:X");
	CHECK(c && c->cls == BW_CLASS_DEEP && fabs(c->p_eff - 3.812) < 1e-9 && c->learned == 100,
	      "deep record intact");
	c = bw_s1_store_class(&b, "loop:/y");
	CHECK(c && c->cls == BW_CLASS_SHALLOW, "shallow record intact");
	CHECK(b.n == 1 && bw_s1_store_find(&b, "loop:/y", BW_OP_READ, 6), "s1 record beside it");
	/* Merge: the newer class wins. */
	bw_s1_store_put_class(&a, "serial:X", BW_CLASS_SHALLOW, 1.0, 50);
	bw_s1_store_merge(&b, &a);
	CHECK(bw_s1_store_class(&b, "serial:X")->cls == BW_CLASS_DEEP, "older class loses");
	bw_s1_store_put_class(&a, "serial:X", BW_CLASS_SHALLOW, 1.0, 500);
	bw_s1_store_merge(&b, &a);
	CHECK(bw_s1_store_class(&b, "serial:X")->cls == BW_CLASS_SHALLOW, "newer class wins");
	free(buf);
	bw_s1_store_free(&a);
	bw_s1_store_free(&b);
}

static void test_idle_verdicts(void)
{
	struct bw_s1_store a = {}, b = {};
	const struct bw_idle_rec *v;
	char *buf = NULL, why[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(!bw_s1_store_put_idle(&a, "loop:/stripe#254:0:12", 0, 0, 0.58, 100), "put 0");
	CHECK(!bw_s1_store_put_idle(&a, "serial:S", 8000, 0, 5.2, 200), "put 8000");
	CHECK(!bw_s1_store_put_idle(&a, "loop:/spindle#254:0:13", 8000, 1, 4.3, 250),
	      "put 8000 with strict");
	CHECK(bw_s1_store_put_idle(&a, "serial:T", 0, 0, -0.1, 1) == -EINVAL,
	      "negative gain refused");
	CHECK(bw_s1_store_put_idle(&a, "serial:T", 0, 1, 0.1, 1) == -EINVAL,
	      "strict without idling refused");
	CHECK(bw_s1_store_put_idle(&a, "bad\tid", 0, 0, 0.1, 1) == -EINVAL, "tab refused");
	bw_s1_store_put_class(&a, "serial:S", BW_CLASS_SHALLOW, 1.0, 200);
	bw_s1_store_format(f, &a);
	fclose(f);
	CHECK(strstr(buf, "blkwise-s1 4\n") == buf, "written as version 4");
	CHECK(!parse_text(buf, &b, why, sizeof(why)), "parse back: %s", why);
	v = bw_s1_store_idle(&b, "loop:/stripe#254:0:12");
	CHECK(v && v->idle_us == 0 && fabs(v->gain - 0.58) < 1e-9 && v->learned == 100,
	      "0 verdict intact");
	v = bw_s1_store_idle(&b, "serial:S");
	CHECK(v && v->idle_us == 8000 && !v->strict && fabs(v->gain - 5.2) < 1e-9,
	      "8000 verdict intact");
	v = bw_s1_store_idle(&b, "loop:/spindle#254:0:13");
	CHECK(v && v->idle_us == 8000 && v->strict == 1 && fabs(v->gain - 4.3) < 1e-9,
	      "strict verdict intact");
	CHECK(bw_s1_store_class(&b, "serial:S"), "class beside it");
	CHECK(!bw_s1_store_idle(&b, "serial:T"), "nothing for another identity");
	/* Merge: the newer verdict wins, whichever it says. */
	bw_s1_store_put_idle(&a, "serial:S", 0, 0, 0.3, 150);
	bw_s1_store_merge(&b, &a);
	CHECK(bw_s1_store_idle(&b, "serial:S")->idle_us == 8000, "older verdict loses");
	bw_s1_store_put_idle(&a, "serial:S", 0, 0, 0.3, 300);
	bw_s1_store_merge(&b, &a);
	CHECK(bw_s1_store_idle(&b, "serial:S")->idle_us == 0, "newer verdict wins");
	/* A version 3 store (no strict column) is still read: no strict. */
	bw_s1_store_free(&b);
	CHECK(!parse_text("blkwise-s1 3\nidle\tloop:/a\t8000\t0.5\t10\n", &b, why, sizeof(why)),
	      "version 3 read: %s", why);
	v = bw_s1_store_idle(&b, "loop:/a");
	CHECK(v && v->idle_us == 8000 && !v->strict, "version 3: idling, no strict");
	free(buf);
	bw_s1_store_free(&a);
	bw_s1_store_free(&b);
}

static void test_merge_prune(void)
{
	struct bw_s1_store mine = {}, disk = {};
	struct bw_s1_rec *r;

	bw_s1_store_put(&mine, "a", 0, 0, &(struct bw_s1){ 20, 100, 50 });
	bw_s1_store_put(&disk, "a", 0, 0, &(struct bw_s1){ 30, 200, 40 });	/* older */
	bw_s1_store_put(&disk, "b", 0, 0, &(struct bw_s1){ 30, 300, 60 });	/* theirs only */
	bw_s1_store_put(&disk, "c", 1, 2, &(struct bw_s1){ 30, 400, 70 });
	CHECK(!bw_s1_store_merge(&mine, &disk), "merge");
	r = bw_s1_store_find(&mine, "a", 0, 0);
	CHECK(r && r->v.mean_ns == 100, "ours is newer: kept");
	CHECK(bw_s1_store_find(&mine, "b", 0, 0) && bw_s1_store_find(&mine, "c", 1, 2),
	      "theirs added");
	bw_s1_store_put(&disk, "a", 0, 0, &(struct bw_s1){ 30, 500, 90 });
	bw_s1_store_merge(&mine, &disk);
	CHECK(bw_s1_store_find(&mine, "a", 0, 0)->v.mean_ns == 500, "a newer one replaces ours");
	bw_s1_store_prune(&mine, 2);
	CHECK(mine.n == 2 && !bw_s1_store_find(&mine, "b", 0, 0), "prune drops the oldest");
	bw_s1_store_free(&mine);
	bw_s1_store_free(&disk);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_round_trip), UNIT(test_damaged), UNIT(test_merge_prune),
		UNIT(test_classes), UNIT(test_idle_verdicts),
	};

	return unit_run("s1store", tests, sizeof(tests) / sizeof(tests[0]));
}
