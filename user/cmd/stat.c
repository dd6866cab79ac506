// SPDX-License-Identifier: GPL-2.0
/* `blkwise stat`: the live, iostat -x-like view. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "watch/watch.h"
#include "model/bcrender.h"
#include "cmd/options.h"
#include "load/vioload.h"

struct stat_args {
	struct bw_watch_opts w;
	double interval;
	long count;
	bool json;
	bool hide_idle;		/* -z */
	bool virtio;		/* --virtio: bpf/virtio.bpf.c */
	struct bw_vio *vio;
	struct bw_vio_stats vio_prev[BW_VIO_MAX_DEVS];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise stat [-d DEV]... [-i SECS] [-c COUNT] [-z] [--json]\n"
		"                    [--exact | --exact-period SECS [--exact-slice SECS]\n"
		"                      [--exact-budget PCT] [--max-cpu PCT]]\n"
		"                    [--streams[=process|cgroup]]\n"
		"                    [--state-dir DIR | --no-state] [--verbose] [--btf FILE]\n"
		"                    [--max-devices N] [--bio-cache] [--virtio] [--force-raw-tp]\n");
	bw_opts_help(f, BW_CMD_STAT);
}

/* One of stat's own options: 1 taken, 0 not its, -EINVAL on bad input. */
static int take_opt(void *opts, int c, const char *arg)
{
	struct stat_args *a = opts;
	long n;

	switch (c) {
	case 'i':
		if (bw_parse_interval(arg, &a->interval)) {
			bw_err("bad interval '%s': give seconds between 0.01 and 86400",
			       arg);
			return -EINVAL;
		}
		return 1;
	case 'c':
		if (bw_parse_count(arg, &a->count)) {
			bw_err("bad count '%s': give a whole number > 0", arg);
			return -EINVAL;
		}
		return 1;
	case 'z':
		a->hide_idle = true;
		return 1;
	case 'j':
		a->json = true;
		bw_json_errors = true;
		return 1;
	case 's':
		a->w.core.streams = true;
		return bw_opt_streams_by(arg, &a->w.core.streams_by) ? -EINVAL : 1;
	case BW_OPT_MAX_DEV:
		if (bw_parse_count(arg, &n) || n > 1024) {
			bw_err("bad --max-devices '%s': give 1..1024", arg);
			return -EINVAL;
		}
		a->w.core.max_devices = (int)n;
		return 1;
	case BW_OPT_VIRTIO:
		a->virtio = true;
		return 1;
	default:
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct stat_args *a)
{
	a->interval = 1.0;
	bw_watch_opts_init(&a->w);
	if (bw_opts_parse(argc, argv, BW_CMD_STAT, usage, take_opt, a, &a->w, NULL) ||
	    bw_opt_rest(argc, argv))
		return -EINVAL;
	return 0;
}

static void report_streams(struct bw_watch *w, struct bw_json *j)
{
	bool header = false;
	int i, n;
	const struct bw_watch_stream *st = bw_watch_streams(w, &n);

	if (j)
		bw_json_arr(j, "streams");
	for (i = 0; i < n; i++) {
		const struct bw_watch_stream *s = &st[i];
		const char *name = s->dev && s->dev->info.name[0] ? s->dev->info.name : "?";

		if (j) {
			bw_render_json_stream(j, name, &s->s);
			continue;
		}
		if (!header) {
			bw_render_stream_header(stdout,
						w->o->core.streams_by == BW_STREAMS_CGROUP);
			header = true;
		}
		bw_render_stream_row(stdout, name, &s->s);
	}
	if (j)
		bw_json_close(j, ']');
}

/* The bio cache's counts since start (--bio-cache). */
static void report_biocache(struct bw_watch *w, struct bw_json *j)
{
	struct bw_bc_snap b;

	if (bw_watch_biocache(w, &b)) {
		bw_warn("reading the bio cache counts failed");
		b.method = BW_BC_OFF;
	}
	if (j)
		bw_bc_render_json(j, &b);
	else
		bw_bc_render_text(stdout, &b);
	bw_bc_snap_free(&b);
}

/*
 * What blkwise cost over the interval (shares of one CPU) and, under a
 * ceiling, the share of it the light tier ran: JSON's "cost", or on the
 * table's interval line where the light tier did not run throughout.
 */
static void report_cost(const struct bw_watch *w, struct bw_json *j)
{
	const struct bw_cost_state *c = bw_watch_cost(w);

	if (!j) {
		if (c->light_share < 0.995)
			printf("  light tier %.1f%% of the time (--max-cpu %g%%)", c->light_share * 100,
			       w->o->max_cpu * 100);
		return;
	}
	bw_json_obj(j, "cost");
	bw_json_num(j, "cpu_share", c->bpf + c->user, 5);
	bw_json_num(j, "bpf_share", c->bpf, 5);
	bw_json_num(j, "user_share", c->user, 5);
	bw_json_num(j, "light_share", c->light_share, 4);
	bw_json_num(j, "max_cpu_share", w->o->max_cpu > 0 ? w->o->max_cpu : NAN, 5);
	bw_json_num(j, "completions_per_s", c->rate, 1);
	bw_json_obj(j, "ns_per_event");
	bw_json_num(j, "always", c->model.ns[BW_COST_ALWAYS], 1);
	bw_json_num(j, "timing", c->model.ns[BW_COST_TIMING], 1);
	bw_json_num(j, "exact", c->model.ns[BW_COST_EXACT], 1);
	bw_json_close(j, '}');
	bw_json_bool(j, "bpf_measured", c->model.measured[BW_COST_ALWAYS]);
	bw_json_close(j, '}');
}

/* --virtio: a virtio disk's ring buffers since the last report, into its interval. */
static void fill_virtio(struct stat_args *a, struct bw_interval *iv)
{
	struct bw_vio_stats cur;
	int idx = bw_vio_index(iv->name);

	if (idx < 0 || bw_vio_read(a->vio, idx, &cur)) {
		bw_vio_interval(NULL, NULL, iv);
		return;
	}
	bw_vio_interval(&a->vio_prev[idx], &cur, iv);
	a->vio_prev[idx] = cur;
}

static void report(struct stat_args *a, struct bw_watch *w, struct bw_watch_dev **rows)
{
	static bool legend_shown;
	struct bw_json j;
	char stamp[32];
	time_t t = time(NULL);
	int i, n = bw_watch_rows(w, rows);

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", localtime(&t));
	if (a->json) {
		bw_json_begin(&j, stdout);
		bw_json_obj(&j, NULL);
		bw_json_str(&j, "timestamp", stamp);
		bw_json_num(&j, "interval_s", bw_watch_secs(w), 3);
		report_cost(w, &j);
		bw_json_arr(&j, "devices");
	} else {
		if (!legend_shown)
			bw_render_legend(stdout);
		legend_shown = true;
		printf("\n%s  interval %.3f s", stamp, bw_watch_secs(w));
		report_cost(w, NULL);
		putchar('\n');
		bw_render_header(stdout);
	}
	for (i = 0; i < n; i++) {
		const struct bw_watch_dev *s = rows[i];

		if (a->virtio && !s->iv.gone)
			fill_virtio(a, &rows[i]->iv);
		if (a->hide_idle && !s->iv.gone && !bw_interval_active(&s->iv))
			continue;
		if (a->json)
			bw_render_json_dev(&j, &s->iv, &s->cls, s->inflight);
		else
			bw_render_row(stdout, &s->iv, &s->cls);
	}
	if (a->json) {
		bw_json_close(&j, ']');
		if (a->w.core.streams)
			report_streams(w, &j);
		if (a->w.core.biocache)
			report_biocache(w, &j);
		bw_json_close(&j, '}');
		bw_json_end(&j);
	} else {
		for (i = 0; a->virtio && i < n; i++)
			bw_render_virtio_row(stdout, &rows[i]->iv);
		if (a->w.core.streams)
			report_streams(w, NULL);
		if (a->w.core.biocache)
			report_biocache(w, NULL);
		fflush(stdout);
	}
}

/*
 * One interval, extending the histograms every BW_REFRESH_NS of it and
 * running the exact tier's slices when due.
 */
static int sleep_interval(struct bw_watch *w, __u64 ns)
{
	__u64 end = bw_now_ns() + ns, refresh = bw_now_ns() + BW_REFRESH_NS;
	int err;

	for (;;) {
		__u64 now = bw_now_ns(), slice = bw_watch_slices(w), wait;

		if (now >= end)
			return 0;
		if (now >= refresh) {
			bw_watch_refresh(w);
			refresh = now + BW_REFRESH_NS;
		}
		wait = end - now;
		if (refresh - now < wait)
			wait = refresh - now;
		if (slice < wait)
			wait = slice;
		err = bw_sleep_ns(wait);
		if (err)
			return err;
	}
}

static int run(struct stat_args *a, struct bw_watch *w)
{
	struct bw_watch_dev **rows = NULL;
	long n = 0;
	int alive, err = 0;
	__u64 t0;

	while (!bw_exiting) {
		err = sleep_interval(w, (__u64)(a->interval * 1e9));
		if (err && err != -EINTR)
			break;
		t0 = bw_watch_snapshot(w)->ts_ns;
		alive = bw_watch_sample(w);
		if (alive < 0) {
			err = alive;
			break;
		}
		free(rows);
		rows = calloc(bw_watch_ndevs(w) ?: 1, sizeof(*rows));
		if (!rows) {
			err = -ENOMEM;
			break;
		}
		/* On a signal, report the partial interval so no completion is lost. */
		if (bw_watch_snapshot(w)->ts_ns - t0 > 1000000 || !bw_exiting)
			report(a, w, rows);
		err = 0;
		if (a->w.core.nr_watch && !alive) {
			bw_err("every watched device is gone");
			err = -ENODEV;
			break;
		}
		if (a->count && ++n >= a->count)
			break;
	}
	bw_watch_save(w);
	free(rows);
	return err == -EINTR ? 0 : err;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args *a = calloc(1, sizeof(*a));
	struct bw_watch w = {};
	char tbuf[96];
	const char *tier;
	int ret = BW_EXIT_RUNTIME;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	if (bw_watch_resolve(&w, &a->w)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	bw_install_signals();
	if (bw_watch_start(&w))
		goto out;
	if (a->virtio) {
		if (bw_vio_open(&a->vio))
			goto out;
		if (bw_vio_why(a->vio))
			bw_warn("virtio descriptor counts off: %s", bw_vio_why(a->vio));
	}
	tier = bw_watch_tier_text(&w, tbuf, sizeof(tbuf));
	if (a->w.core.verbose && strncmp(tier, "exact", 5))
		bw_warn("light tier: busy time from the kernel's io_ticks; %s",
			strcmp(tier, "light tier") ?
				"S1, P_eff, the class, depth and dispatch stalls sampled by "
				"the exact tier's slices (marked ~)" :
				"S1, P_eff, the class, depth and dispatch stalls need --exact");
	bw_warn("watching %s (%s, %s); Ctrl-C to stop",
		a->w.core.nr_watch ? "the named devices" : "every device",
		bw_watch_attach_mode(&w), tier);
	if (!bw_bfq_available())
		bw_warn("the class says whether idling helps, but %s", BW_NO_BFQ);
	if (!run(a, &w))
		ret = 0;
out:
	bw_vio_close(a->vio);
	bw_watch_close(&w);
	free(a);
	return ret;
}
