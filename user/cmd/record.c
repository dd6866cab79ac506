// SPDX-License-Identifier: GPL-2.0
/* `blkwise record`: every request event of the watched devices into a trace file. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "watch/watch.h"
#include "model/trace.h"
#include "model/policy.h"
#include "cmd/options.h"

#define RING_DEFAULT (16u << 20)

struct record_args {
	struct bw_watch_opts w;
	const char *out;
	double duration;
	__u64 max_size;
	__u64 ring;
};

/* Cgroups named in the file so far; an id not found tried again a second on. */
#define CG_SLOTS 4096

struct cg_seen {
	__u64 id;
	__s64 tried;		/* 0: named; else when its path was last not found */
};

struct recorder {
	struct bw_twriter *tw;
	struct record_args *a;
	__u64 *drops;
	int ncpus;
	__u32 stop;		/* why the loop ends, enum bw_tend_reason */
	int werr;
	struct bw_cgroups cgroups;	/* v2 ids to paths, as stat's streams by cgroup */
	struct cg_seen *cg;		/* CG_SLOTS of them */
	__u64 cg_last;			/* the last id named: most events need no lookup */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise record [-d DEV]... -o FILE [--duration SECS] [--max-size SIZE]\n"
		"                      [--buffer SIZE] [--verbose] [--btf FILE] [--force-raw-tp]\n"
		"Events: Q (block_io_start, else getrq), insert, D, C, requeue, request\n"
		"and bio merges, 72 bytes each; Q, I, G and bio merges carry the cgroup they\n"
		"are charged to.  Ring-buffer drops are counted per CPU, in the file and on\n"
		"stderr.  SIGINT and SIGTERM close the file cleanly; a file\n"
		"cut short by a crash stays readable up to its last whole record.\n");
	bw_opts_help(f, BW_CMD_RECORD);
}

/* One of record's own options: 1 taken, 0 not its, -EINVAL on bad input. */
static int take_opt(void *opts, int c, const char *arg)
{
	struct record_args *a = opts;

	switch (c) {
	case 'o':
		a->out = arg;
		return 1;
	case 't':
		if (bw_parse_interval(arg, &a->duration)) {
			bw_err("bad duration '%s': give seconds between 0.01 and 86400", arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_MAX_SIZE:
		if (bw_parse_size(arg, &a->max_size) || a->max_size < 4096) {
			bw_err("bad --max-size '%s': give a size of at least 4K (K, M, G)",
			       arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_BUFFER:
		if (bw_parse_size(arg, &a->ring) || a->ring < 65536 ||
		    a->ring > (1u << 30) || (a->ring & (a->ring - 1))) {
			bw_err("bad --buffer '%s': give a power of two from 64K to 1G", arg);
			return -EINVAL;
		}
		return 1;
	default:
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	a->ring = RING_DEFAULT;
	bw_watch_opts_init(&a->w);
	if (bw_opts_parse(argc, argv, BW_CMD_RECORD, usage, take_opt, a, &a->w, NULL) ||
	    bw_opt_rest(argc, argv))
		return -EINVAL;
	if (!a->out) {
		bw_err("no output file: give -o FILE");
		return -EINVAL;
	}
	return 0;
}

static __u32 sysfs_u32(const char *disk, const char *attr, __u32 dflt)
{
	__u64 v;

	return bw_read_sysfs_u64(disk, attr, &v) ? dflt : (__u32)v;
}

/* A device's row of the header: names and queue settings at start. */
static void describe(__u32 dev, struct bw_tdev *t)
{
	struct bw_devinfo di;
	long idle;
	int hwqs;

	memset(t, 0, sizeof(*t));
	t->dev = dev;
	if (bw_dev_probe(dev, &di)) {
		snprintf(t->name, sizeof(t->name), "%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
		t->slice_idle_us = -1;
		return;
	}
	bw_dev_identify(&di, false);	/* the model; no request to the device */
	snprintf(t->name, sizeof(t->name), "%s", di.name);
	snprintf(t->model, sizeof(t->model), "%s", di.model);
	t->rotational = di.rotational;
	t->size_sectors = di.size_sectors;
	if (bw_disk_sched(di.name, t->scheduler, sizeof(t->scheduler), &idle))
		snprintf(t->scheduler, sizeof(t->scheduler), "?");
	t->nr_requests = sysfs_u32(di.name, "queue/nr_requests", 0);
	t->max_sectors_kb = sysfs_u32(di.name, "queue/max_sectors_kb", 0);
	t->logical_block_size = sysfs_u32(di.name, "queue/logical_block_size", 0);
	t->read_ahead_kb = sysfs_u32(di.name, "queue/read_ahead_kb", 0);
	t->nomerges = sysfs_u32(di.name, "queue/nomerges", 0);
	hwqs = bw_disk_hw_queues(di.name);
	t->nr_hw_queues = hwqs < 0 ? 0 : hwqs;
	t->slice_idle_us = (__s32)idle;
}

/* The devices of the header: the named ones, else every disk. */
static int device_table(const struct bw_core_opts *o, struct bw_tdev **out)
{
	struct bw_tdev *t = calloc(BW_TRACE_MAX_DEVS, sizeof(*t));
	__u32 devs[BW_TRACE_MAX_DEVS];
	int i, n;

	if (!t)
		return -ENOMEM;
	n = bw_watched_or_all(o->nr_watch, o->watch, devs, BW_TRACE_MAX_DEVS);
	for (i = 0; i < n; i++)
		describe(devs[i], &t[i]);
	*out = t;
	return n;
}

static void fill_info(struct bw_tinfo *in, int ncpus, int ndevs, struct bw_rec *r)
{
	struct utsname u;
	struct timespec rt;

	memset(in, 0, sizeof(*in));
	clock_gettime(CLOCK_REALTIME, &rt);
	in->start_ns = bw_now_ns();
	in->start_unix_ns = (__u64)rt.tv_sec * 1000000000ULL + rt.tv_nsec;
	snprintf(in->clock, sizeof(in->clock), "monotonic");
	if (!uname(&u)) {
		snprintf(in->release, sizeof(in->release), "%.63s", u.release);
		snprintf(in->hostname, sizeof(in->hostname), "%.63s", u.nodename);
	}
	snprintf(in->source, sizeof(in->source), "blkwise");
	snprintf(in->attach, sizeof(in->attach), "%s", bw_rec_attach_mode(r));
	in->ncpus = ncpus;
	in->ndevs = ndevs;
	in->rec_size = sizeof(struct bw_trec);
	in->flags = (bw_rec_io_start(r) ? BW_TINFO_Q_IO_START : 0) | BW_TINFO_INSERTS;
}

/*
 * The first event carrying a cgroup puts the cgroup's path in the file
 * (bw_tw_cgroup) ahead of it: analyze names a stream by cgroup by it.  A
 * cgroup gone before it was looked up stays an id.
 */
static int name_cgroup(struct recorder *rc, __u64 id)
{
	__u32 i = (__u32)((id * 0x9e3779b97f4a7c15ULL) >> 52) & (CG_SLOTS - 1), n;
	const char *path;
	__s64 now;

	if (!id || id == rc->cg_last || !rc->cg)
		return 0;
	for (n = 0; n < CG_SLOTS && rc->cg[i].id && rc->cg[i].id != id; n++)
		i = (i + 1) & (CG_SLOTS - 1);
	if (n == CG_SLOTS)
		return 0;	/* full: the rest stay ids */
	now = time(NULL);
	if (rc->cg[i].id == id && (!rc->cg[i].tried || rc->cg[i].tried == now))
		goto named;
	rc->cg[i].id = id;
	rc->cg[i].tried = now;
	path = bw_cgroup_path(&rc->cgroups, id);
	if (!path)
		return 0;
	rc->cg[i].tried = 0;
	if (bw_tw_cgroup(rc->tw, id, path))
		return -1;
named:
	if (!rc->cg[i].tried)
		rc->cg_last = id;
	return 0;
}

static int on_event(void *ctx, const struct bw_trec *ev)
{
	struct recorder *rc = ctx;

	if (rc->stop)
		return 0;
	if (name_cgroup(rc, ev->cgroup) || bw_tw_event(rc->tw, ev)) {
		rc->werr = errno ?: EIO;
		rc->stop = BW_END_ERROR;
		return 0;
	}
	if (rc->a->max_size && rc->tw->off + rc->tw->n * sizeof(*ev) >= rc->a->max_size)
		rc->stop = BW_END_MAX_SIZE;
	return 0;
}

static void report_drops(const struct recorder *rc)
{
	__u64 dropped = bw_hist_total(rc->drops, rc->ncpus);
	char line[512];
	int i, len = 0;

	if (!dropped)
		return;
	for (i = 0; i < rc->ncpus && len < (int)sizeof(line) - 32; i++)
		if (rc->drops[i])
			len += snprintf(line + len, sizeof(line) - len, " cpu%d=%llu", i,
					(unsigned long long)rc->drops[i]);
	bw_warn("ring buffer full: %llu events dropped (%s ); a larger --buffer may help",
		(unsigned long long)dropped, line);
}

static int run(struct recorder *rc, struct bw_rec *r)
{
	__u64 start = bw_now_ns(), last = start, now;
	int n;

	while (!rc->stop) {
		if (bw_exiting) {
			rc->stop = BW_END_SIGNAL;
			break;
		}
		n = bw_rec_poll(r, 50);
		if (n < 0) {
			bw_err("reading the ring buffer: %s", strerror(-n));
			rc->stop = BW_END_ERROR;
			return n;
		}
		now = bw_now_ns();
		if (rc->a->duration && now - start >= (__u64)(rc->a->duration * 1e9))
			rc->stop = BW_END_DURATION;
		if (now - last < 1000000000ULL)
			continue;
		last = now;
		/* Once a second: the drops so far, and what is buffered, on disk. */
		if (!bw_rec_drops(r, rc->drops) &&
		    (bw_tw_lost(rc->tw, now, rc->drops) || fflush(rc->tw->f))) {
			rc->werr = errno ?: EIO;
			rc->stop = BW_END_ERROR;
		}
	}
	/* Drain what the ring buffer still holds, then close the file. */
	while (rc->stop != BW_END_ERROR && bw_rec_poll(r, 0) > 0)
		;
	return 0;
}

static int record(struct record_args *a)
{
	struct recorder rc = { .a = a };
	struct bw_tdev *devs = NULL;
	struct bw_rec *r = NULL;
	struct bw_tinfo info;
	FILE *f = NULL;
	int err, ndevs;

	err = bw_check_privileges();
	if (err)
		return err;
	rc.tw = malloc(sizeof(*rc.tw));
	if (!rc.tw)
		return -ENOMEM;
	err = bw_rec_open(&r, &a->w.core, (__u32)a->ring, on_event, &rc);
	if (err)
		goto out;
	rc.ncpus = bw_rec_ncpus(r);
	rc.drops = calloc(rc.ncpus, sizeof(*rc.drops));
	rc.cg = calloc(CG_SLOTS, sizeof(*rc.cg));
	ndevs = device_table(&a->w.core, &devs);
	if (!rc.drops || !rc.cg || ndevs < 0) {
		err = -ENOMEM;
		goto out;
	}
	f = fopen(a->out, "w");
	if (!f) {
		err = -errno;
		bw_err("%s: cannot create: %s", a->out, strerror(errno));
		goto out;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	fill_info(&info, rc.ncpus, ndevs, r);
	if (bw_tw_begin(rc.tw, f, &info, devs)) {
		err = -errno;
		bw_err("%s: writing the header: %s", a->out, strerror(errno));
		goto out;
	}
	bw_warn("recording %s into %s (%s); Ctrl-C to stop",
		a->w.core.nr_watch ? "the named devices" : "every device", a->out,
		bw_rec_attach_mode(r));
	err = run(&rc, r);
	bw_rec_drops(r, rc.drops);
	if (bw_tw_end(rc.tw, bw_now_ns(), rc.drops, rc.stop) && !rc.werr)
		rc.werr = errno ?: EIO;
	if (fclose(f) && !rc.werr)
		rc.werr = errno ?: EIO;
	f = NULL;
	if (rc.werr) {
		bw_err("%s: writing: %s; the file holds what was written before", a->out,
		       strerror(rc.werr));
		err = -rc.werr;
	}
	report_drops(&rc);
	bw_warn("%llu events (%llu bytes) in %s%s", (unsigned long long)rc.tw->events,
		(unsigned long long)rc.tw->off, a->out,
		rc.stop == BW_END_MAX_SIZE ? "; stopped at --max-size" : "");
out:
	if (f)
		fclose(f);
	bw_rec_close(r);
	free(devs);
	free(rc.drops);
	free(rc.cg);
	bw_cgroups_free(&rc.cgroups);
	free(rc.tw);
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct record_args *a = calloc(1, sizeof(*a));
	struct bw_watch w = {};
	int ret = BW_EXIT_RUNTIME;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a) || bw_watch_resolve(&w, &a->w)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	bw_install_signals();
	if (!record(a))
		ret = 0;
out:
	bw_watch_close(&w);
	free(a);
	return ret;
}
