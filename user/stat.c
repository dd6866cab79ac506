// SPDX-License-Identifier: GPL-2.0
/* `blkwise stat`: the live, iostat -x-like view. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "loader.h"

#define MAX_STREAMS 4096

struct stat_args {
	struct bw_core_opts core;
	double interval;
	long count;
	bool json;
	char names[BW_MAX_WATCH][BW_NAME_LEN];
};

/* Per device state that outlives one interval. */
struct dev_state {
	__u32 dev;
	char name[BW_NAME_LEN];
	bool gone;
	struct bw_class cls;
};

struct stat_ctx {
	struct stat_args *a;
	struct bw_core *core;
	struct bw_snap prev;
	struct dev_state *st;
	int nst;
	struct bw_stream_snap *sprev, *scur;
	int nsprev;
	struct bw_part parts[1024];
	int nparts;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise stat [-d DEV]... [-i SECS] [-c COUNT] [--json] [--streams]\n"
		"                    [--verbose] [--btf FILE] [--max-devices N]\n"
		"  -d, --device DEV   watch DEV (as in /proc/partitions; a partition folds\n"
		"                     into its disk); repeatable; default: every device\n"
		"  -i, --interval S   seconds per report (default 1)\n"
		"  -c, --count N      stop after N reports\n"
		"  -j, --json         one JSON object per interval (JSON Lines)\n"
		"  -s, --streams      also per-process streams (costs a hash lookup per I/O)\n"
		"  -v, --verbose      libbpf messages, map memory\n"
		"      --btf FILE     kernel BTF, when /sys/kernel/btf/vmlinux is missing\n"
		"      --max-devices N  device slots to size the maps for\n");
}

enum { OPT_BTF = 256, OPT_RAW_TP, OPT_MAX_DEV };

static int parse_args(int argc, char **argv, struct stat_args *a)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "streams", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "btf", required_argument, NULL, OPT_BTF },
		{ "force-raw-tp", no_argument, NULL, OPT_RAW_TP },
		{ "max-devices", required_argument, NULL, OPT_MAX_DEV },
		{}
	};
	long n;
	int c;

	a->interval = 1.0;
	while ((c = getopt_long(argc, argv, "d:i:c:jsvh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (a->core.nr_watch >= BW_MAX_WATCH) {
				bw_err("too many -d (at most %d)", BW_MAX_WATCH);
				return -EINVAL;
			}
			snprintf(a->names[a->core.nr_watch++], BW_NAME_LEN, "%s", optarg);
			break;
		case 'i':
			if (bw_parse_interval(optarg, &a->interval)) {
				bw_err("bad interval '%s': give seconds between 0.01 and 86400",
				       optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			if (bw_parse_count(optarg, &a->count)) {
				bw_err("bad count '%s': give a whole number > 0", optarg);
				return -EINVAL;
			}
			break;
		case 'j':
			a->json = true;
			bw_json_errors = true;
			break;
		case 's':
			a->core.streams = true;
			break;
		case 'v':
			a->core.verbose = true;
			break;
		case OPT_BTF:
			a->core.btf_path = optarg;
			break;
		case OPT_RAW_TP:
			a->core.force_raw_tp = true;
			break;
		case OPT_MAX_DEV:
			if (bw_parse_count(optarg, &n) || n > 1024) {
				bw_err("bad --max-devices '%s': give 1..1024", optarg);
				return -EINVAL;
			}
			a->core.max_devices = (int)n;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		bw_err("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* Names to dev_t; a partition is watched as its disk. */
static int resolve_devices(struct stat_ctx *x)
{
	struct stat_args *a = x->a;
	char disk[BW_NAME_LEN];
	int i, j;

	for (i = 0; i < a->core.nr_watch; i++) {
		const char *name = a->names[i];
		const struct bw_part *p;

		if (!strncmp(name, "/dev/", 5))
			name += 5;
		if (bw_disk_of(name, disk, sizeof(disk)) == 1)
			bw_warn("%s is a partition: watching its disk %s", name, disk);
		p = bw_part_by_name(x->parts, x->nparts, disk);
		if (!p) {
			bw_err("unknown device '%s': not in /proc/partitions (see lsblk)",
			       a->names[i]);
			return -ENODEV;
		}
		for (j = 0; j < i; j++)
			if (a->core.watch[j] == p->dev)
				break;
		a->core.watch[i] = p->dev;
		snprintf(a->names[i], BW_NAME_LEN, "%s", p->name);
		if (j < i) {	/* named twice: watch once */
			a->core.nr_watch--;
			i--;
		}
	}
	return 0;
}

static struct dev_state *dev_state(struct stat_ctx *x, __u32 dev)
{
	struct dev_state *s;
	int i;

	for (i = 0; i < x->nst; i++)
		if (x->st[i].dev == dev)
			return &x->st[i];
	s = realloc(x->st, (x->nst + 1) * sizeof(*s));
	if (!s)
		return NULL;
	x->st = s;
	s = &x->st[x->nst++];
	memset(s, 0, sizeof(*s));
	s->dev = dev;
	return s;
}

/* Names from /proc/partitions; a device no longer there is reported gone once. */
static int refresh_names(struct stat_ctx *x, struct bw_snap *cur)
{
	int i, alive = 0;

	x->nparts = bw_read_partitions(x->parts, 1024);
	if (x->nparts < 0)
		return x->nparts;
	for (i = 0; i < cur->nr; i++) {
		struct bw_snap_dev *d = &cur->devs[i];
		const struct bw_part *p = bw_part_by_dev(x->parts, x->nparts, d->dev);
		struct dev_state *s = dev_state(x, d->dev);

		if (!s)
			return -ENOMEM;
		if (p) {
			snprintf(s->name, sizeof(s->name), "%s", p->name);
			s->gone = false;
			alive++;
		} else if (!s->gone) {
			s->gone = true;
			if (!s->name[0])
				snprintf(s->name, sizeof(s->name), "%u:%u", d->dev >> 20,
					 d->dev & 0xfffff);
			bw_core_forget_dev(x->core, d->dev);
			bw_warn("%s: device gone; still watching the others", s->name);
		}
		memcpy(d->name, s->name, sizeof(d->name));
	}
	return alive;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct bw_snap_dev *)a)->name, ((const struct bw_snap_dev *)b)->name);
}

static const struct bw_snap_dev *find_dev(const struct bw_snap *s, __u32 dev)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	return NULL;
}

static const struct bw_stream *find_stream(const struct bw_stream_snap *v, int n,
					   const struct bw_stream_key *k)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].key.dev == k->dev && v[i].key.tgid == k->tgid)
			return &v[i].s;
	return NULL;
}

static void report_streams(struct stat_ctx *x, struct bw_json *j, __u64 now, double secs)
{
	struct bw_stream_snap *tmp;
	int i, n = bw_core_streams(x->core, x->scur, MAX_STREAMS, now);
	bool header = false;

	if (j)
		bw_json_arr(j, "streams");
	for (i = 0; i < n; i++) {
		const struct bw_stream_snap *s = &x->scur[i];
		const struct bw_part *p = bw_part_by_dev(x->parts, x->nparts, s->key.dev);
		struct bw_stream_interval si;

		bw_stream_compute(find_stream(x->sprev, x->nsprev, &s->key), &s->s, secs, &si);
		if (!si.ios)
			continue;
		si.dev = s->key.dev;
		si.tgid = s->key.tgid;
		if (j) {
			bw_render_json_stream(j, p ? p->name : "?", &si);
			continue;
		}
		if (!header) {
			bw_render_stream_header(stdout);
			header = true;
		}
		bw_render_stream_row(stdout, p ? p->name : "?", &si);
	}
	if (j)
		bw_json_close(j, ']');
	tmp = x->sprev;
	x->sprev = x->scur;
	x->scur = tmp;
	x->nsprev = n;
}

static void report(struct stat_ctx *x, struct bw_snap *cur)
{
	double secs = (cur->ts_ns - x->prev.ts_ns) / 1e9;
	struct bw_json j;
	char stamp[32];
	time_t t = time(NULL);
	int i;

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", localtime(&t));
	qsort(cur->devs, cur->nr, sizeof(cur->devs[0]), cmp_name);
	if (x->a->json) {
		bw_json_begin(&j, stdout);
		bw_json_obj(&j, NULL);
		bw_json_str(&j, "timestamp", stamp);
		bw_json_num(&j, "interval_s", secs, 3);
		bw_json_arr(&j, "devices");
	} else {
		printf("\n%s  interval %.3f s\n", stamp, secs);
		bw_render_header(stdout);
	}
	for (i = 0; i < cur->nr; i++) {
		const struct bw_snap_dev *d = &cur->devs[i];
		struct dev_state *s = dev_state(x, d->dev);
		struct bw_interval iv;

		if (!s)
			continue;
		bw_interval_compute(find_dev(&x->prev, d->dev), d, secs, &bw_peff_default, &iv);
		iv.gone = s->gone;
		bw_class_update(&s->cls, iv.p_eff, secs);
		if (x->a->json)
			bw_render_json_dev(&j, &iv, &s->cls, d->inflight);
		else
			bw_render_row(stdout, &iv, &s->cls);
	}
	if (x->a->json) {
		bw_json_close(&j, ']');
		if (x->a->core.streams)
			report_streams(x, &j, cur->ts_ns, secs);
		bw_json_close(&j, '}');
		bw_json_end(&j);
	} else {
		if (x->a->core.streams)
			report_streams(x, NULL, cur->ts_ns, secs);
		fflush(stdout);
	}
}

static int take(struct stat_ctx *x, struct bw_snap *s)
{
	int err = bw_core_snapshot(x->core, s);

	if (err)
		return err;
	return refresh_names(x, s);
}

static int run(struct stat_ctx *x)
{
	struct bw_snap cur = {};
	long n = 0;
	int alive, err = 0;

	alive = take(x, &x->prev);
	if (alive < 0)
		return alive;
	while (!bw_exiting) {
		err = bw_sleep_ns((__u64)(x->a->interval * 1e9));
		if (err && err != -EINTR)
			break;
		alive = take(x, &cur);
		if (alive < 0) {
			err = alive;
			break;
		}
		/* On a signal, report the partial interval so no completion is lost. */
		if (cur.ts_ns - x->prev.ts_ns > 1000000 || !bw_exiting)
			report(x, &cur);
		bw_snap_free(&x->prev);
		x->prev = cur;
		memset(&cur, 0, sizeof(cur));
		err = 0;
		if (x->a->core.nr_watch && !alive) {
			bw_err("every watched device is gone");
			err = -ENODEV;
			break;
		}
		if (x->a->count && ++n >= x->a->count)
			break;
	}
	bw_snap_free(&cur);
	return err == -EINTR ? 0 : err;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args *a = calloc(1, sizeof(*a));
	struct stat_ctx x = { .a = a };
	int err, ret = BW_EXIT_RUNTIME;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	x.nparts = bw_read_partitions(x.parts, 1024);
	if (x.nparts < 0)
		goto out;
	if (resolve_devices(&x)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	if (bw_check_privileges())
		goto out;
	if (a->core.streams) {
		x.sprev = calloc(MAX_STREAMS, sizeof(*x.sprev));
		x.scur = calloc(MAX_STREAMS, sizeof(*x.scur));
		if (!x.sprev || !x.scur) {
			bw_err("out of memory");
			goto out;
		}
	}
	bw_install_signals();
	if (bw_core_open(&x.core, &a->core))
		goto out;
	if (a->core.verbose)
		bw_core_print_memory(x.core, stderr);
	bw_warn("watching %s (%s); Ctrl-C to stop",
		a->core.nr_watch ? "the named devices" : "every device", bw_core_attach_mode(x.core));
	err = run(&x);
	if (!err)
		ret = 0;
out:
	bw_core_close(x.core);
	bw_snap_free(&x.prev);
	free(x.st);
	free(x.sprev);
	free(x.scur);
	free(a);
	return ret;
}
