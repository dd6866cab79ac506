// SPDX-License-Identifier: GPL-2.0
/*
 * The tuner's state file: the values it found before its first write, so
 * that its exit, a signal, or `blkwise tune --restore` after a SIGKILL puts
 * them back exactly.  Pure: FILE in, FILE out.
 *
 *	blkwise-tune 2
 *	pid 4242
 *	device loop3 7:3
 *	identity loop:/var/tmp/disk.img#254:0:1234
 *	scheduler mq-deadline
 *	slice_idle_us 8000
 *	low_latency 1
 *	strict_guarantees 0
 *
 * `identity` (the rest of its line) names the device the values were found
 * on, so that another device at the same dev_t is not given them.
 * `scheduler` and `low_latency` appear only when the tuner changed them,
 * `strict_guarantees` when it may change it.  Version 1 (no
 * strict_guarantees) is still read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/policy.h"

#define MAGIC "blkwise-tune"
#define VERSION 2

int bw_tunefile_format(FILE *f, const void *arg)
{
	const struct bw_tunefile_orig *o = arg;

	fprintf(f, MAGIC " %d\npid %d\ndevice %s %u:%u\n", VERSION, o->pid, o->name,
		BW_MAJOR(o->dev), BW_MINOR(o->dev));
	if (o->id[0])
		fprintf(f, "identity %s\n", o->id);
	if (o->sched[0])
		fprintf(f, "scheduler %s\n", o->sched);
	if (o->slice_idle_us >= 0)
		fprintf(f, "slice_idle_us %ld\n", o->slice_idle_us);
	if (o->low_latency >= 0)
		fprintf(f, "low_latency %ld\n", o->low_latency);
	if (o->strict_guarantees >= 0)
		fprintf(f, "strict_guarantees %ld\n", o->strict_guarantees);
	return ferror(f) ? -EIO : 0;
}

static int bad(char *why, size_t len, int line, const char *what)
{
	snprintf(why, len, "line %d: %s", line, what);
	return -EINVAL;
}

int bw_tunefile_parse(FILE *f, struct bw_tunefile_orig *o, char *why, size_t len)
{
	char line[BW_ID_LEN + 32], key[32], val[64], extra;
	unsigned int ma, mi;
	int n = 1, version;
	char *end;
	long v;

	memset(o, 0, sizeof(*o));
	o->slice_idle_us = -1;
	o->low_latency = -1;
	o->strict_guarantees = -1;
	if (bw_state_version(f, MAGIC, "tune state", VERSION, &version, why, len))
		return -EINVAL;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!strcmp(line, "\n"))
			continue;
		if (!strncmp(line, "identity ", 9) && version >= 2) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(o->id, sizeof(o->id), "%.*s", BW_ID_LEN - 1, line + 9);
			continue;
		}
		if (sscanf(line, "device %31s %u:%u %c", o->name, &ma, &mi, &extra) == 3) {
			o->dev = BW_MKDEV(ma, mi);
			continue;
		}
		if (sscanf(line, "%31s %63s %c", key, val, &extra) != 2)
			return bad(why, len, n, "not 'key value'");
		if (!strcmp(key, "scheduler")) {
			snprintf(o->sched, sizeof(o->sched), "%.31s", val);
			continue;
		}
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || *end || v < 0)
			return bad(why, len, n, "not a number >= 0");
		if (!strcmp(key, "pid"))
			o->pid = (int)v;
		else if (!strcmp(key, "slice_idle_us"))
			o->slice_idle_us = v;
		else if (!strcmp(key, "low_latency"))
			o->low_latency = v;
		else if (!strcmp(key, "strict_guarantees") && version >= 2)
			o->strict_guarantees = v;
		else
			return bad(why, len, n, "unknown key");
	}
	if (!o->name[0] || !o->dev)
		return bad(why, len, n, "no device line");
	return 0;
}

int bw_parse_scheduler(const char *line, char *out, size_t len)
{
	const char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b)
		return -EINVAL;
	snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	return 0;
}
