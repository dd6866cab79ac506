// SPDX-License-Identifier: GPL-2.0
/*
 * The device class (user/model/classify.c): the marks on both sides, the
 * evidence a first class needs, the dwell of a change, undetermined
 * intervals, and a stored class against live evidence.
 */
#include "unit.h"
#include "model/model.h"

/* n samples of p_eff, secs each. */
static void feed(struct bw_class *c, int n, double p_eff, double secs)
{
	while (n-- > 0)
		bw_class_update(c, p_eff, secs);
}

/* The class three seconds of one P_eff give a fresh classifier. */
static enum bw_class_id first_class(double p_eff)
{
	struct bw_class c = {};

	feed(&c, 3, p_eff, 1.0);
	return c.cls;
}

static void test_marks(void)
{
	double below_deep = nextafter(BW_DEEP_AT, 0), above_shallow = nextafter(BW_SHALLOW_AT, 3);

	CHECK(first_class(BW_DEEP_AT) == BW_CLASS_DEEP, "P_eff %g: deep at the mark", BW_DEEP_AT);
	CHECK(first_class(below_deep) == BW_CLASS_UNKNOWN, "just below %g: between the marks",
	      BW_DEEP_AT);
	CHECK(first_class(BW_SHALLOW_AT) == BW_CLASS_SHALLOW, "P_eff %g: shallow at the mark",
	      BW_SHALLOW_AT);
	CHECK(first_class(above_shallow) == BW_CLASS_UNKNOWN, "just above %g: between the marks",
	      BW_SHALLOW_AT);
	CHECK(first_class(1.7) == BW_CLASS_UNKNOWN, "1.7: no class of its own");
	CHECK(first_class(0.3) == BW_CLASS_SHALLOW && first_class(16) == BW_CLASS_DEEP,
	      "far from the marks");
}

/* A first class needs three samples and three seconds. */
static void test_first_class_evidence(void)
{
	struct bw_class c = {};

	feed(&c, 2, 4.0, 5.0);
	CHECK(c.cls == BW_CLASS_UNKNOWN, "two samples, 10 s: too few samples");
	feed(&c, 1, 4.0, 5.0);
	CHECK(c.cls == BW_CLASS_DEEP && bw_class_live(&c), "the third: deep");
	memset(&c, 0, sizeof(c));
	feed(&c, 5, 4.0, 0.5);
	CHECK(c.cls == BW_CLASS_UNKNOWN, "five samples, 2.5 s: too little time");
	feed(&c, 1, 4.0, 0.5);
	CHECK(c.cls == BW_CLASS_DEEP && c.evidence_s == 3.0, "at 3 s: deep (%g s)", c.evidence_s);
	CHECK(c.nwin == BW_CLASS_WIN, "the window holds the last %d: %d", BW_CLASS_WIN, c.nwin);
}

/* An undetermined interval adds neither a sample nor time. */
static void test_undetermined(void)
{
	struct bw_class c = {};

	feed(&c, 2, 4.0, 1.0);
	feed(&c, 10, NAN, 1.0);
	CHECK(c.cls == BW_CLASS_UNKNOWN && c.nwin == 2 && c.evidence_s == 2.0,
	      "NaN counted nowhere: %d samples, %g s", c.nwin, c.evidence_s);
	feed(&c, 1, 4.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "the third determined sample decides");
	feed(&c, 10, NAN, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && c.median == 4.0, "and NaN leaves it (median %g)",
	      c.median);
}

/* A change: the median past the other mark for three samples in a row. */
static void test_hysteresis(void)
{
	struct bw_class c = {};
	int i;

	feed(&c, 5, 4.0, 1.0);
	feed(&c, 4, BW_SHALLOW_AT, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && c.pending == 2,
	      "median at the mark from the third sample: two pending (%d)", c.pending);
	feed(&c, 1, BW_SHALLOW_AT, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW && !c.pending, "the fifth flips it");
	feed(&c, 20, 1.7, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW, "between the marks: shallow holds");
	feed(&c, 20, nextafter(BW_DEEP_AT, 0), 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW, "just below the deep mark: shallow holds");
	feed(&c, 2, BW_DEEP_AT, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW && !c.pending, "two at the mark: median still below");
	feed(&c, 3, BW_DEEP_AT, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "then three with the median at the mark: deep");
	memset(&c, 0, sizeof(c));
	feed(&c, 5, 4.0, 1.0);
	feed(&c, 20, nextafter(BW_SHALLOW_AT, 3), 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "just above the shallow mark: deep holds");
	for (i = 0; i < 20; i++)
		bw_class_update(&c, i % 2 ? 1.0 : 4.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "alternating 1 and 4 (median 1 or 4, never 3 in a row "
	      "below): holds, %d pending", c.pending);
	CHECK(strstr(c.reason, "of last 5 samples") && strstr(c.reason, "deep at >= 2.0, "
	      "shallow at <= 1.4"), "reason names the numbers and the marks: %s", c.reason);
}

/* A stored class: used until live evidence is enough, then live evidence decides. */
static void test_stored_against_live(void)
{
	struct bw_class c;

	bw_class_seed(&c, BW_CLASS_UNKNOWN, 3.0, 100);
	CHECK(c.cls == BW_CLASS_UNKNOWN && !c.stored && !bw_class_live(&c), "nothing stored");
	bw_class_seed(&c, BW_CLASS_DEEP, 3.8, 100);
	CHECK(c.cls == BW_CLASS_DEEP && c.stored && c.stored_p_eff == 3.8 &&
	      c.stored_learned == 100 && !bw_class_live(&c), "seeded deep, not live");
	feed(&c, 5, 1.0, 0.5);
	CHECK(c.cls == BW_CLASS_DEEP && c.stored && !c.pending,
	      "five shallow samples in 2.5 s: the store holds, nothing pending");
	feed(&c, 1, 1.0, 0.5);
	CHECK(c.cls == BW_CLASS_SHALLOW && bw_class_live(&c),
	      "at 3 s of contrary evidence: shallow at once, no dwell (%s)", bw_class_name(c.cls));
	bw_class_seed(&c, BW_CLASS_SHALLOW, 1.1, 5);
	feed(&c, 3, 1.7, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW && bw_class_live(&c),
	      "evidence between the marks confirms the stored class");
	bw_class_seed(&c, BW_CLASS_SHALLOW, 1.1, 5);
	feed(&c, 3, BW_DEEP_AT, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && bw_class_live(&c), "evidence at the other mark drops it");
	bw_class_seed(&c, BW_CLASS_DEEP, 3.8, 100);
	feed(&c, 20, NAN, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && c.stored, "undetermined intervals leave the store's");
}

/* Noise around a mark, and a sustained change. */
static void test_class_hysteresis(void)
{
	struct bw_class c = {};
	int i;

	bw_class_update(&c, 4.0, 1.0);
	bw_class_update(&c, 4.0, 1.0);
	CHECK(c.cls == BW_CLASS_UNKNOWN, "two samples are not enough evidence");
	bw_class_update(&c, 4.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "three seconds of P_eff 4 is deep");
	bw_class_update(&c, NAN, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "an undetermined interval changes nothing");
	for (i = 0; i < 20; i++)
		bw_class_update(&c, i % 2 ? 1.9 : 2.1, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "noise around the threshold does not flap");
	bw_class_update(&c, 1.0, 1.0);
	bw_class_update(&c, 1.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP, "two shallow samples do not flip");
	for (i = 0; i < 6; i++)
		bw_class_update(&c, 1.0, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW, "a sustained change does");
	CHECK(strstr(c.reason, "median P_eff 1.00") != NULL, "reason names the numbers: %s",
	      c.reason);
}

/* The seeded class through noisy live samples. */
static void test_class_seed(void)
{
	struct bw_class c;
	int i;

	/* A stored class holds through undetermined and too-few live samples ... */
	bw_class_seed(&c, BW_CLASS_DEEP, 3.8, 100);
	CHECK(c.cls == BW_CLASS_DEEP && c.stored && !bw_class_live(&c), "seeded deep");
	bw_class_update(&c, NAN, 1.0);
	bw_class_update(&c, 1.0, 1.0);
	bw_class_update(&c, 1.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && c.stored, "two contrary samples change nothing");
	/* ... and gives way once live evidence decides on its own. */
	for (i = 0; i < 3; i++)
		bw_class_update(&c, 1.0, 1.0);
	CHECK(c.cls == BW_CLASS_SHALLOW && !c.stored && bw_class_live(&c),
	      "live evidence: shallow (got %s)", bw_class_name(c.cls));
	/* Live evidence that agrees just takes over. */
	bw_class_seed(&c, BW_CLASS_DEEP, 3.8, 100);
	for (i = 0; i < 3; i++)
		bw_class_update(&c, 4.0, 1.0);
	CHECK(c.cls == BW_CLASS_DEEP && bw_class_live(&c), "agreeing evidence: live deep");
}

static void test_names(void)
{
	CHECK(!strcmp(bw_class_name(BW_CLASS_DEEP), "deep") &&
	      !strcmp(bw_class_name(BW_CLASS_SHALLOW), "shallow") &&
	      !strcmp(bw_class_name(BW_CLASS_UNKNOWN), "unknown") &&
	      !strcmp(bw_class_name((enum bw_class_id)7), "unknown"), "names");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_marks), UNIT(test_first_class_evidence), UNIT(test_undetermined),
		UNIT(test_hysteresis), UNIT(test_class_hysteresis), UNIT(test_stored_against_live), UNIT(test_class_seed),
		UNIT(test_names),
	};

	return unit_run("classify", tests, sizeof(tests) / sizeof(tests[0]));
}
