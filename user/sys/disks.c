// SPDX-License-Identifier: GPL-2.0
/*
 * The disks in /sys/block, walked in one place for every caller: the
 * loaders (which devices get a slot, how big the request table is), the
 * tuner (which devices may be tuned) and record (its device table).
 */
#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/policy.h"
#include "sys/sys.h"

int bw_disks_walk(void (*fn)(const char *disk, void *arg), void *arg)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/sys/block");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (fn)
			fn(de->d_name, arg);
		n++;
	}
	closedir(d);
	return n;
}

struct dev_list {
	__u32 *out;
	int n, max;
};

static void add_dev(const char *disk, void *arg)
{
	struct dev_list *l = arg;
	unsigned int major, minor;
	char path[300];
	FILE *f;

	if (l->n >= l->max)
		return;
	snprintf(path, sizeof(path), "/sys/block/%s/dev", disk);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, "%u:%u", &major, &minor) == 2)
		l->out[l->n++] = BW_MKDEV(major, minor);
	fclose(f);
}

int bw_list_disks(__u32 *out, int max)
{
	struct dev_list l = { .out = out, .max = max };

	bw_disks_walk(add_dev, &l);
	return l.n;
}

int bw_watched_or_all(int nr, const __u32 *watch, __u32 *out, int max)
{
	if (!nr)
		return bw_list_disks(out, max);
	if (nr > max)
		nr = max;
	memcpy(out, watch, nr * sizeof(*out));
	return nr;
}

struct disk_names {
	char (*v)[64];
	int n, cap;
};

static void add_name(const char *disk, void *arg)
{
	struct disk_names *l = arg;
	void *p;

	if (l->n == l->cap) {
		p = realloc(l->v, (l->cap ? 2 * l->cap : 64) * sizeof(*l->v));
		if (!p)
			return;
		l->v = p;
		l->cap = l->cap ? 2 * l->cap : 64;
	}
	snprintf(l->v[l->n++], sizeof(l->v[0]), "%s", disk);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * Completions of every disk since boot, as /proc/diskstats counts them
 * (reads, writes, discards, flushes), partitions left out (a name not in
 * /sys/block, read once a call): what the light tier's programs run for,
 * watched or not.  0 when unreadable.
 */
__u64 bw_disks_completions(void)
{
	static struct disk_names l;
	static __u64 listed_ns;
	static char buf[65536];
	unsigned long long f[4];
	char line[512], name[64];
	__u64 n = 0, now = bw_now_ns();
	FILE *fp;
	int k;

	/* The disks' names, listed again every 10 s: a 1024-device host has 1024 of them. */
	if (!listed_ns || now - listed_ns > 10000000000ULL) {
		l.n = 0;
		bw_disks_walk(add_name, &l);
		qsort(l.v, l.n, sizeof(*l.v), name_cmp);
		listed_ns = now;
	}
	fp = fopen("/proc/diskstats", "r");
	if (fp)
		setvbuf(fp, buf, _IOFBF, sizeof(buf));
	while (fp && fgets(line, sizeof(line), fp)) {
		memset(f, 0, sizeof(f));
		k = sscanf(line, "%*u %*u %63s %llu %*u %*u %*u %llu %*u %*u %*u %*u %*u %*u %llu "
			   "%*u %*u %*u %llu", name, &f[0], &f[1], &f[2], &f[3]);
		if (k < 3 || !bsearch(name, l.v, l.n, sizeof(*l.v), name_cmp))
			continue;	/* a partition: its disk counts it */
		n += f[0] + f[1] + f[2] + f[3];
	}
	if (fp)
		fclose(fp);
	return n;
}

int bw_count_disks(void)
{
	int n = bw_disks_walk(NULL, NULL);

	return n < 0 ? 16 : n;
}

int bw_disk_hw_queues(const char *disk)
{
	char path[300];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/block/%s/mq", disk);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * A disk's active scheduler (the bracketed name of queue/scheduler, "none"
 * where it brackets none) into sched, and BFQ's slice_idle_us into
 * *idle_us where BFQ is the one (else -1).  0, or -errno where
 * queue/scheduler cannot be read (a bio-based device has none).  The one
 * reader of both for the tuner, the exporter and the recording's header.
 */
int bw_disk_sched(const char *disk, char *sched, size_t len, long *idle_us)
{
	char line[256], v[32];
	int err;

	*idle_us = -1;
	err = bw_sysfs_get(disk, "queue/scheduler", line, sizeof(line));
	if (err)
		return err;
	if (bw_parse_scheduler(line, sched, len))
		snprintf(sched, len, "none");
	if (!strcmp(sched, "bfq") && !bw_sysfs_get(disk, "queue/iosched/slice_idle_us", v, sizeof(v)))
		*idle_us = strtol(v, NULL, 10);
	return 0;
}

static void bfq_listed(const char *disk, void *arg)
{
	char line[256];
	bool *found = arg;

	if (*found || bw_sysfs_get(disk, "queue/scheduler", line, sizeof(line)))
		return;
	*found = strstr(line, "bfq") != NULL;
}

/* Whether modules.dep of the running kernel lists a bfq module. */
static bool bfq_module(void)
{
	char path[320], line[512];
	struct utsname u;
	bool found = false;
	FILE *f;

	if (uname(&u))
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "kernel/block/bfq.ko", 19);
	fclose(f);
	return found;
}

/*
 * Whether this kernel can offer BFQ: listed by a disk's queue/scheduler
 * (built in, or already loaded), or a module modprobe (and the kernel's own
 * request_module on a switch) can load.  Read from sysfs and one file of
 * /lib/modules, once per start: no request to a watched device.
 */
bool bw_bfq_available(void)
{
	bool found = false;

	bw_disks_walk(bfq_listed, &found);
	if (found || !access("/sys/module/bfq", F_OK))
		return true;
	return bfq_module();
}
