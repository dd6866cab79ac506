// SPDX-License-Identifier: GPL-2.0
/*
 * The S1 store: solo service times learned per device identity, op and
 * size class, so a restarted blkwise knows a device's parallelism before
 * the device is ever idle again.  Pure: parse and format a FILE, no other
 * system calls (the atomic file handling is in state.c).
 *
 * Format: text, one record a line, tab-separated, so it can be read and
 * repaired by hand.  Version 2 types each record; version 1 files (S1
 * records only, untyped) are still read:
 *
 *	blkwise-s1 4
 *	s1	loop:/var/tmp/disk.img	read	0	1234	2083112	1764570000
 *	class	loop:/var/tmp/disk.img	deep	3.812	1764570000
 *	idle	loop:/var/tmp/disk.img	0	0.580	1764570000	0
 *
 * s1: identity, op, size class, samples, mean ns, learned (unix s).
 * class: identity, deep or shallow, the P_eff it was decided on, learned.
 * idle (version 3): identity, the slice_idle_us a probe measured faster
 * for sync sequential streams, its gain over the other setting, learned;
 * from version 4, strict_guarantees (1 where a repair won with it, at that
 * slice_idle_us, once BFQ had stopped idling).
 *
 * Anything else (another first line, a short or malformed record, an
 * unknown op, a class out of range) makes the whole file "damaged": the
 * caller reports it once and ignores it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

#define MAGIC "blkwise-s1"
#define VERSION 4

void bw_s1_store_free(struct bw_s1_store *s)
{
	free(s->r);
	free(s->c);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int op_by_name(const char *name)
{
	int op;

	for (op = 0; op < BW_NR_OPS; op++)
		if (!strcmp(bw_op_names[op], name))
			return op;
	return -1;
}

struct bw_s1_rec *bw_s1_store_find(const struct bw_s1_store *s, const char *id, int op, int cls)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].op == op && s->r[i].cls == cls && !strcmp(s->r[i].id, id))
			return &s->r[i];
	return NULL;
}

/* An identity a record cannot hold: a tab or newline would break the line. */
static bool bad_id(const char *id)
{
	return strpbrk(id, "\t\n") || strlen(id) >= BW_ID_LEN;
}

/*
 * A new zeroed element at the end of an array of n of cap elements of size
 * bytes, grown by doubling from first; NULL when out of memory.
 */
static void *append(void **arr, int *n, int *cap, size_t size, int first)
{
	char *a = *arr;

	if (*n == *cap) {
		int c = *cap ? *cap * 2 : first;

		a = realloc(a, c * size);
		if (!a)
			return NULL;
		*arr = a;
		*cap = c;
	}
	memset(a + (size_t)*n * size, 0, size);
	return a + (size_t)(*n)++ * size;
}

/* Adds or replaces; identities with a tab or newline cannot be stored. */
int bw_s1_store_put(struct bw_s1_store *s, const char *id, int op, int cls, const struct bw_s1 *v)
{
	struct bw_s1_rec *r = bw_s1_store_find(s, id, op, cls);

	if (bad_id(id) || op < 0 || op >= BW_NR_OPS ||
	    cls < 0 || cls >= BW_SIZE_CLASSES)
		return -EINVAL;
	if (!r) {
		r = append((void **)&s->r, &s->n, &s->cap, sizeof(*r), 64);
		if (!r)
			return -ENOMEM;
		snprintf(r->id, sizeof(r->id), "%s", id);
		r->op = op;
		r->cls = cls;
	}
	r->v = *v;
	return 0;
}

/* Every record of one identity into a per-(op, class) table; how many. */
int bw_s1_store_get(const struct bw_s1_store *s, const char *id, struct bw_s1_dev *out)
{
	int i, n = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < s->n; i++) {
		if (strcmp(s->r[i].id, id))
			continue;
		out->s[s->r[i].op][s->r[i].cls] = s->r[i].v;
		n++;
	}
	return n;
}

/* Takes every record of src that dst lacks or holds with an older learned time. */
int bw_s1_store_merge(struct bw_s1_store *dst, const struct bw_s1_store *src)
{
	int i, err;

	for (i = 0; i < src->n; i++) {
		const struct bw_s1_rec *r = &src->r[i];
		const struct bw_s1_rec *mine = bw_s1_store_find(dst, r->id, r->op, r->cls);

		if (mine && mine->v.learned >= r->v.learned)
			continue;
		err = bw_s1_store_put(dst, r->id, r->op, r->cls, &r->v);
		if (err)
			return err;
	}
	for (i = 0; i < src->nc; i++) {
		const struct bw_cls_rec *r = &src->c[i], *mine = bw_s1_store_class(dst, r->id);

		if (mine && mine->learned >= r->learned)
			continue;
		err = bw_s1_store_put_class(dst, r->id, r->cls, r->p_eff, r->learned);
		if (err)
			return err;
	}
	for (i = 0; i < src->nv; i++) {
		const struct bw_idle_rec *r = &src->v[i], *mine = bw_s1_store_idle(dst, r->id);

		if (mine && mine->learned >= r->learned)
			continue;
		err = bw_s1_store_put_idle(dst, r->id, r->idle_us, r->strict, r->gain, r->learned);
		if (err)
			return err;
	}
	return 0;
}

const struct bw_cls_rec *bw_s1_store_class(const struct bw_s1_store *s, const char *id)
{
	int i;

	for (i = 0; i < s->nc; i++)
		if (!strcmp(s->c[i].id, id))
			return &s->c[i];
	return NULL;
}

int bw_s1_store_put_class(struct bw_s1_store *s, const char *id, enum bw_class_id cls,
			  double p_eff, __s64 learned)
{
	struct bw_cls_rec *r = (struct bw_cls_rec *)bw_s1_store_class(s, id);

	if (bad_id(id) || cls == BW_CLASS_UNKNOWN ||
	    !(p_eff >= 0))
		return -EINVAL;
	if (!r) {
		r = append((void **)&s->c, &s->nc, &s->capc, sizeof(*r), 16);
		if (!r)
			return -ENOMEM;
		snprintf(r->id, sizeof(r->id), "%s", id);
	}
	r->cls = cls;
	r->p_eff = p_eff;
	r->learned = learned;
	return 0;
}

const struct bw_idle_rec *bw_s1_store_idle(const struct bw_s1_store *s, const char *id)
{
	int i;

	for (i = 0; i < s->nv; i++)
		if (!strcmp(s->v[i].id, id))
			return &s->v[i];
	return NULL;
}

int bw_s1_store_put_idle(struct bw_s1_store *s, const char *id, __u32 idle_us, __u32 strict,
			 double gain, __s64 learned)
{
	struct bw_idle_rec *r = (struct bw_idle_rec *)bw_s1_store_idle(s, id);

	if (bad_id(id) || !(gain >= 0) || learned <= 0 || strict > 1 || (strict && !idle_us))
		return -EINVAL;
	if (!r) {
		r = append((void **)&s->v, &s->nv, &s->capv, sizeof(*r), 16);
		if (!r)
			return -ENOMEM;
		snprintf(r->id, sizeof(r->id), "%s", id);
	}
	r->idle_us = idle_us;
	r->strict = strict;
	r->gain = gain;
	r->learned = learned;
	return 0;
}

static int cmp_learned_desc(const void *a, const void *b)
{
	const struct bw_s1_rec *x = a, *y = b;

	return (x->v.learned < y->v.learned) - (x->v.learned > y->v.learned);
}

/* Keeps the max most recently learned records. */
void bw_s1_store_prune(struct bw_s1_store *s, int max)
{
	if (s->n <= max)
		return;
	qsort(s->r, s->n, sizeof(s->r[0]), cmp_learned_desc);
	s->n = max;
}

static int bad(char *why, size_t len, int line, const char *what)
{
	snprintf(why, len, "line %d: %s", line, what);
	return -EINVAL;
}

/* One "s1" record's fields (after the type in version 2). */
static int parse_s1(const char *rest, struct bw_s1_store *s, char *why, size_t len, int n)
{
	char id[BW_ID_LEN], opname[16], extra;
	unsigned long long samples, mean;
	long long learned;
	int cls, op;

	if (sscanf(rest, "%255[^\t]\t%15[^\t]\t%d\t%llu\t%llu\t%lld %c", id, opname, &cls,
		   &samples, &mean, &learned, &extra) != 6)
		return bad(why, len, n, "not 'identity op class samples mean_ns learned'");
	op = op_by_name(opname);
	if (op < 0)
		return bad(why, len, n, "unknown op");
	if (cls < 0 || cls >= BW_SIZE_CLASSES)
		return bad(why, len, n, "size class out of range");
	if (!samples || !mean || learned <= 0)
		return bad(why, len, n, "zero samples, mean or time");
	if (bw_s1_store_put(s, id, op, cls, &(struct bw_s1){ .samples = samples, .mean_ns = mean,
							  .learned = learned }))
		return bad(why, len, n, "cannot store the record");
	return 0;
}

static int parse_class(const char *rest, struct bw_s1_store *s, char *why, size_t len, int n)
{
	char id[BW_ID_LEN], name[16], extra;
	long long learned;
	enum bw_class_id cls;
	double p_eff;

	if (sscanf(rest, "%255[^\t]\t%15[^\t]\t%lf\t%lld %c", id, name, &p_eff, &learned,
		   &extra) != 4)
		return bad(why, len, n, "not 'class identity deep|shallow p_eff learned'");
	if (!strcmp(name, "deep"))
		cls = BW_CLASS_DEEP;
	else if (!strcmp(name, "shallow"))
		cls = BW_CLASS_SHALLOW;
	else
		return bad(why, len, n, "class is neither deep nor shallow");
	if (learned <= 0 || bw_s1_store_put_class(s, id, cls, p_eff, learned))
		return bad(why, len, n, "bad P_eff or time");
	return 0;
}

static int parse_idle(const char *rest, struct bw_s1_store *s, char *why, size_t len, int n,
		      int version)
{
	char id[BW_ID_LEN], extra;
	unsigned int idle_us, strict = 0;
	long long learned;
	double gain;
	int got;

	if (version >= 4)
		got = sscanf(rest, "%255[^\t]\t%u\t%lf\t%lld\t%u %c", id, &idle_us, &gain,
			     &learned, &strict, &extra) - 1;
	else
		got = sscanf(rest, "%255[^\t]\t%u\t%lf\t%lld %c", id, &idle_us, &gain, &learned,
			     &extra);
	if (got != 4)
		return bad(why, len, n, version >= 4 ?
			   "not 'idle identity slice_idle_us gain learned strict'" :
			   "not 'idle identity slice_idle_us gain learned'");
	if (bw_s1_store_put_idle(s, id, idle_us, strict, gain, learned))
		return bad(why, len, n, "bad gain, time or strict");
	return 0;
}

int bw_s1_store_parse(FILE *f, struct bw_s1_store *s, char *why, size_t len)
{
	char line[BW_ID_LEN + 128];
	int n = 0, version, err;

	if (bw_state_version(f, MAGIC, "S1 state", VERSION, &version, why, len))
		return -EINVAL;
	n++;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f))
			return bad(why, len, n, "line too long");
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (version == 1)
			err = parse_s1(line, s, why, len, n);
		else if (!strncmp(line, "s1\t", 3))
			err = parse_s1(line + 3, s, why, len, n);
		else if (!strncmp(line, "class\t", 6))
			err = parse_class(line + 6, s, why, len, n);
		else if (version >= 3 && !strncmp(line, "idle\t", 5))
			err = parse_idle(line + 5, s, why, len, n, version);
		else
			err = bad(why, len, n, "unknown record type");
		if (err)
			return err;
	}
	if (ferror(f)) {
		snprintf(why, len, "read error");
		return -EIO;
	}
	return 0;
}

int bw_s1_store_format(FILE *f, const struct bw_s1_store *s)
{
	int i;

	fprintf(f, MAGIC " %d\n# s1\tidentity\top\tsize_class\tsamples\tmean_ns\tlearned_unix\n"
		"# class\tidentity\tdeep|shallow\tp_eff\tlearned_unix\n"
		"# idle\tidentity\tslice_idle_us\tgain\tlearned_unix\tstrict_guarantees\n", VERSION);
	for (i = 0; i < s->n; i++) {
		const struct bw_s1_rec *r = &s->r[i];

		fprintf(f, "s1\t%s\t%s\t%d\t%llu\t%llu\t%lld\n", r->id, bw_op_names[r->op], r->cls,
			(unsigned long long)r->v.samples, (unsigned long long)r->v.mean_ns,
			(long long)r->v.learned);
	}
	for (i = 0; i < s->nc; i++)
		fprintf(f, "class\t%s\t%s\t%.3f\t%lld\n", s->c[i].id, bw_class_name(s->c[i].cls),
			s->c[i].p_eff, (long long)s->c[i].learned);
	for (i = 0; i < s->nv; i++)
		fprintf(f, "idle\t%s\t%u\t%.3f\t%lld\t%u\n", s->v[i].id, s->v[i].idle_us,
			s->v[i].gain, (long long)s->v[i].learned, s->v[i].strict);
	return ferror(f) ? -EIO : 0;
}
