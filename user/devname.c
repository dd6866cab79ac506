// SPDX-License-Identifier: GPL-2.0
/* Device names as /proc/partitions gives them, and argument parsing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blkwise.h"

/* Parses /proc/partitions ("major minor #blocks name"); returns entries read. */
int bw_parse_partitions(FILE *f, struct bw_part *out, int max)
{
	char line[256], name[BW_NAME_LEN];
	unsigned int major, minor;
	unsigned long long blocks;
	int n = 0;

	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %u %u %llu %31s", &major, &minor, &blocks, name) != 4)
			continue;
		out[n].dev = (major << 20) | minor;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		n++;
	}
	return n;
}

const struct bw_part *bw_part_by_name(const struct bw_part *p, int n, const char *name)
{
	int i;

	if (!strncmp(name, "/dev/", 5))
		name += 5;
	for (i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return &p[i];
	return NULL;
}

const struct bw_part *bw_part_by_dev(const struct bw_part *p, int n, __u32 dev)
{
	int i;

	for (i = 0; i < n; i++)
		if (p[i].dev == dev)
			return &p[i];
	return NULL;
}

/* Seconds, > 0 and <= 1 day; 0 on success, -EINVAL otherwise. */
int bw_parse_interval(const char *s, double *secs)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 86400)
		return -EINVAL;
	*secs = v;
	return 0;
}

/* A positive count; 0 on success, -EINVAL otherwise. */
int bw_parse_count(const char *s, long *count)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -EINVAL;
	*count = v;
	return 0;
}
