// SPDX-License-Identifier: GPL-2.0
/*
 * Device class from effective parallelism.  Deep when the median of the
 * last BW_CLASS_WIN determined P_eff samples is >= 2.0, shallow when
 * <= 1.4; between the two the class holds (hysteresis).  A first class
 * needs MIN_SAMPLES samples and MIN_SECONDS of evidence; a change needs
 * DWELL consecutive samples pointing the same way, so one odd interval
 * never flips it.  Undetermined intervals change nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

#define DEEP_AT BW_DEEP_AT
#define SHALLOW_AT BW_SHALLOW_AT
#define MIN_SAMPLES 3
#define MIN_SECONDS 3.0
#define DWELL 3

const char *bw_class_name(enum bw_class_id cls)
{
	switch (cls) {
	case BW_CLASS_SHALLOW:
		return "shallow";
	case BW_CLASS_DEEP:
		return "deep";
	default:
		return "unknown";
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double window_median(const struct bw_class *c)
{
	double v[BW_CLASS_WIN];

	memcpy(v, c->win, sizeof(v));
	qsort(v, c->nwin, sizeof(v[0]), cmp_double);
	if (c->nwin % 2)
		return v[c->nwin / 2];
	return (v[c->nwin / 2 - 1] + v[c->nwin / 2]) / 2;
}

void bw_class_update(struct bw_class *c, double p_eff, double secs)
{
	enum bw_class_id target;

	if (isnan(p_eff))
		return;
	c->win[c->head] = p_eff;
	c->head = (c->head + 1) % BW_CLASS_WIN;
	if (c->nwin < BW_CLASS_WIN)
		c->nwin++;
	c->evidence_s += secs;
	c->median = window_median(c);
	target = c->median >= DEEP_AT ? BW_CLASS_DEEP :
		 c->median <= SHALLOW_AT ? BW_CLASS_SHALLOW : c->cls;
	/* A stored class holds until live evidence is enough for one of its own. */
	if (c->stored && c->nwin >= MIN_SAMPLES && c->evidence_s >= MIN_SECONDS) {
		c->stored = false;
		if (target != c->cls)
			c->cls = BW_CLASS_UNKNOWN;
	}
	if (c->cls == BW_CLASS_UNKNOWN) {
		if (target != BW_CLASS_UNKNOWN && c->nwin >= MIN_SAMPLES &&
		    c->evidence_s >= MIN_SECONDS)
			c->cls = target;
	} else if (c->stored) {
		c->pending = 0;
	} else if (target != c->cls) {
		if (++c->pending >= DWELL) {
			c->cls = target;
			c->pending = 0;
		}
	} else {
		c->pending = 0;
	}
	snprintf(c->reason, sizeof(c->reason),
		 "median P_eff %.2f of last %d samples, %.1f s of evidence; "
		 "deep at >= %.1f, shallow at <= %.1f", c->median, c->nwin, c->evidence_s,
		 DEEP_AT, SHALLOW_AT);
}

/* A class known from before (the store): used until live evidence decides. */
void bw_class_seed(struct bw_class *c, enum bw_class_id cls, double p_eff, __s64 learned)
{
	memset(c, 0, sizeof(*c));
	if (cls == BW_CLASS_UNKNOWN)
		return;
	c->cls = cls;
	c->stored = true;
	c->stored_p_eff = p_eff;
	c->stored_learned = learned;
}

bool bw_class_live(const struct bw_class *c)
{
	return c->cls != BW_CLASS_UNKNOWN && !c->stored;
}
