// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup series as the exporter publishes them (export --cgroups):
 * each cgroup's path cut to a depth (its I/O counted in its ancestor at
 * that depth), only those under a path, rows of one (device, op, path)
 * merged, at most a number of cgroups (those with the most requests), in
 * the order of path, device and op.  Pure.
 */
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

/* path cut to its first depth components ("/" stays "/"); depth 0: as is. */
void bw_cg_cut(char *path, int depth)
{
	char *p = path;
	int i;

	if (depth <= 0)
		return;
	for (i = 0; i < depth && p; i++)
		p = strchr(p + 1, '/');
	if (p && p != path)
		*p = '\0';
}

/* Whether path is under (or is) top. */
bool bw_cg_under(const char *path, const char *top)
{
	size_t n;

	if (!top || !strcmp(top, "/"))
		return true;
	n = strlen(top);
	while (n > 1 && top[n - 1] == '/')
		n--;
	return !strncmp(path, top, n) && (path[n] == '\0' || path[n] == '/');
}

void bw_cg_val_add(struct bw_cg_val *t, const struct bw_cg_val *v)
{
	int b;

	t->ios += v->ios;
	t->bytes += v->bytes;
	t->timed += v->timed;
	t->d2c_ns += v->d2c_ns;
	for (b = 0; b <= BW_EXPO_LAT_BOUNDS; b++)
		t->hist[b] += v->hist[b];
}

static int cmp_row(const void *a, const void *b)
{
	const struct bw_cg_row *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->op - y->op;
}

/* Requests per path (rows sorted by path), for the cap. */
struct cg_total {
	const char *path;
	__u64 ios;
};

static int cmp_total(const void *a, const void *b)
{
	const struct cg_total *x = a, *y = b;

	if (x->ios != y->ios)
		return x->ios > y->ios ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int cap_cgroups(struct bw_cg_row *r, int n, int max, int *omitted)
{
	struct cg_total *t = calloc(n ? n : 1, sizeof(*t));
	int i, j, nt = 0, kept = 0;

	*omitted = 0;
	if (!t)
		return n;
	for (i = 0; i < n; i++) {
		if (!nt || strcmp(t[nt - 1].path, r[i].path))
			t[nt++].path = r[i].path;
		t[nt - 1].ios += r[i].v.ios;
	}
	if (max <= 0 || nt <= max) {
		free(t);
		return n;
	}
	qsort(t, nt, sizeof(*t), cmp_total);
	for (i = 0; i < n; i++) {
		for (j = 0; j < max; j++)
			if (!strcmp(t[j].path, r[i].path))
				break;
		if (j < max)
			r[kept++] = r[i];
	}
	*omitted = nt - max;
	free(t);
	return kept;
}

int bw_cg_rollup(struct bw_cg_row *r, int n, const struct bw_cg_select *sel, int *omitted)
{
	int i, m = 0;

	for (i = 0; i < n; i++) {
		if (!bw_cg_under(r[i].path, sel->under))
			continue;
		bw_cg_cut(r[i].path, sel->depth);
		r[m++] = r[i];
	}
	qsort(r, m, sizeof(*r), cmp_row);
	for (i = 0, n = 0; i < m; i++) {
		if (n && !cmp_row(&r[n - 1], &r[i]))
			bw_cg_val_add(&r[n - 1].v, &r[i].v);
		else
			r[n++] = r[i];
	}
	return cap_cgroups(r, n, sel->max, omitted);
}
