// SPDX-License-Identifier: GPL-2.0
/*
 * `blkwise analyze`: a trace of `blkwise record`, or a blktrace capture,
 * offline and unprivileged.  The figures over time are stat's own (the
 * replay rebuilds its counters; user/model/replay.h); on top, exact latency
 * percentiles, seeks, streams and the slowest requests.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/figures.h"
#include "model/replay.h"
#include "analyze/analyze.h"
#include "cmd/options.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_CSV };

/* The CSV tables: one per file, named as the JSON's arrays. */
enum table { T_INTERVALS, T_TOTALS, T_LATENCY, T_STREAMS, T_OUTLIERS, T_WHATIF, NR_TABLES };
static const char *const table_names[NR_TABLES] = {
	"intervals", "totals", "latency", "streams", "outliers", "what_if",
};

struct an_args {
	const char *file;
	enum fmt fmt;
	struct bw_replay_opts ro;
	int nnames;
	const char *names[BW_MAX_WATCH];
	bool all_intervals;
	const char *html, *perfetto;
	bool what_if;
	int table;		/* --table, or -1 */
	const char *csv_dir;
};

/* One CSV table being written: its header comes from its first row. */
struct csv_table {
	FILE *f;
	char *path;
	bool headed;
};

struct an_out {
	struct an_args *a;
	const struct bw_tsource *src;
	struct bw_json j;
	double t_open;		/* t of the interval object open in JSON, NAN none */
	bool any_tick;
	bool begun;		/* the header is out */
	struct bw_report *rep;	/* html / perfetto / what-if, or NULL */
	struct csv_table csv[NR_TABLES];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise analyze FILE [--format text|json|csv] [--table T] [--csv-dir DIR]\n"
		"                       [-d DEV]... [--from T] [--to T] [-i SECS] [--all]\n"
		"                       [--streams[=process|cgroup]]\n"
		"                       [--no-exact] [--html FILE] [--perfetto FILE] [--what-if-tune]\n"
		"FILE is a trace of blkwise record, or a blktrace capture: its name (NAME,\n"
		"for NAME.blktrace.0 ...) or one of its files.\n"
		"CSV: RFC 4180, the JSON's field names (nested ones joined by '.'), an empty\n"
		"cell where the JSON says null.  No root and no BPF needed.  Exit 1 when the\n"
		"file cannot be read (the message names the offset); a file cut short is\n"
		"analyzed up to its last whole record, with a warning.\n");
	bw_opts_help(f, BW_CMD_ANALYZE);
}

static int parse_time(const char *s, double *v, const char *what)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || !(*v >= 0) || isinf(*v)) {
		bw_err("bad %s '%s': give seconds from the trace's start", what, s);
		return -EINVAL;
	}
	return 0;
}

/* One of analyze's own options: 1 taken, 0 not its, -EINVAL on bad input. */
static int take_opt(void *opts, int c, const char *arg)
{
	struct an_args *a = opts;

	switch (c) {
	case 'f':
		if (!strcmp(arg, "text"))
			a->fmt = FMT_TEXT;
		else if (!strcmp(arg, "json"))
			a->fmt = FMT_JSON;
		else if (!strcmp(arg, "csv"))
			a->fmt = FMT_CSV;
		else {
			bw_err("bad --format '%s': give text, json or csv", arg);
			return -EINVAL;
		}
		return 1;
	case 'j':
		a->fmt = FMT_JSON;
		return 1;
	case 's':
		return bw_opt_streams_by(arg, &a->ro.streams_by) ? -EINVAL : 1;
	case 'd':
		if (a->nnames >= BW_MAX_WATCH) {
			bw_err("too many -d (at most %d)", BW_MAX_WATCH);
			return -EINVAL;
		}
		a->names[a->nnames++] = arg;
		return 1;
	case 'i':
		if (bw_parse_interval(arg, &a->ro.interval)) {
			bw_err("bad interval '%s': give seconds between 0.01 and 86400",
			       arg);
			return -EINVAL;
		}
		return 1;
	case 'a':
		a->all_intervals = true;
		return 1;
	case BW_OPT_FROM:
		if (parse_time(arg, &a->ro.from, "--from"))
			return -EINVAL;
		return 1;
	case BW_OPT_TO:
		if (parse_time(arg, &a->ro.to, "--to"))
			return -EINVAL;
		return 1;
	case BW_OPT_NO_EXACT:
		a->ro.exact = false;
		return 1;
	case BW_OPT_HTML:
		a->html = arg;
		return 1;
	case BW_OPT_PERFETTO:
		a->perfetto = arg;
		return 1;
	case BW_OPT_WHAT_IF:
		a->what_if = true;
		return 1;
	case BW_OPT_TABLE:
		for (a->table = 0; a->table < NR_TABLES; a->table++)
			if (!strcmp(arg, table_names[a->table]))
				break;
		if (a->table == NR_TABLES) {
			bw_err("bad --table '%s': give intervals, totals, latency, streams, "
			       "outliers or what_if", arg);
			return -EINVAL;
		}
		return 1;
	case BW_OPT_CSV_DIR:
		a->csv_dir = arg;
		return 1;
	default:
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct an_args *a)
{
	a->ro.exact = true;
	a->ro.interval = 1;
	a->table = -1;
	if (bw_opts_parse(argc, argv, BW_CMD_ANALYZE, usage, take_opt, a, NULL, NULL))
		return -EINVAL;
	if (optind >= argc) {
		bw_err("no trace file given; see --help");
		return -EINVAL;
	}
	a->file = argv[optind++];
	if (bw_opt_rest(argc, argv))
		return -EINVAL;
	if (a->ro.to > 0 && a->ro.to <= a->ro.from) {
		bw_err("--to %g is not after --from %g", a->ro.to, a->ro.from);
		return -EINVAL;
	}
	if (a->table >= 0 && a->fmt != FMT_CSV) {
		bw_err("--table is for --format csv");
		return -EINVAL;
	}
	if (a->fmt == FMT_CSV && a->table < 0)
		a->table = T_INTERVALS;
	if (a->table == T_WHATIF && !a->what_if) {
		bw_err("--table what_if needs --what-if-tune");
		return -EINVAL;
	}
	if (a->fmt == FMT_JSON)
		bw_json_errors = true;
	return 0;
}

/* -d names against the trace's own device table (another machine's). */
static int resolve_devices(struct an_args *a, const struct bw_tsource *src)
{
	unsigned int ma, mi;
	char c;
	int i;
	__u32 k;

	for (i = 0; i < a->nnames; i++) {
		const char *n = a->names[i];
		__u32 dev = 0;

		if (sscanf(n, "%u:%u%c", &ma, &mi, &c) == 2)
			dev = BW_MKDEV(ma, mi);
		for (k = 0; !dev && k < src->info->ndevs; k++) {
			const char *base = strncmp(n, "/dev/", 5) ? n : n + 5;

			if (!strcmp(src->devs[k].name, base))
				dev = src->devs[k].dev;
		}
		if (!dev) {
			bw_err("device '%s' is not in the trace's device table (give MAJ:MIN)", n);
			return -ENODEV;
		}
		a->ro.devs[a->ro.ndevs++] = dev;
	}
	return 0;
}

typedef void (*row_fn)(struct bw_json *j, const void *arg);

/* CSV: the header of table t, written by fn's row in header mode, once. */
static void csv_header(struct an_out *o, enum table t, row_fn fn, const void *arg)
{
	struct csv_table *c = &o->csv[t];
	struct bw_json j;

	if (!c->f || c->headed)
		return;
	bw_json_begin_csv(&j, c->f, true);
	fn(&j, arg);
	c->headed = true;
}

/* CSV: a row of table t, written by fn as JSON; the header from the first. */
static void csv_row(struct an_out *o, enum table t, row_fn fn, const void *arg)
{
	struct bw_json j;

	if (!o->csv[t].f)
		return;
	csv_header(o, t, fn, arg);
	bw_json_begin_csv(&j, o->csv[t].f, false);
	fn(&j, arg);
}

static void interval_row(struct bw_json *j, const void *arg)
{
	const struct bw_replay_tick *t = arg;

	bw_json_obj(j, NULL);
	bw_json_num(j, "t", t->t, 3);
	bw_json_num(j, "interval_s", t->iv->secs, 3);
	bw_render_json_dev(j, t->iv, t->cls, t->inflight);
	bw_json_close(j, '}');
}

static void text_header(const struct bw_tsource *src, const char *file);
static void json_header(struct bw_json *j, const struct bw_tsource *src, const char *file);

/* The header, once: at the first interval, or at the end when there was none. */
static void begin(struct an_out *o)
{
	if (o->begun)
		return;
	o->begun = true;
	if (o->a->fmt == FMT_JSON) {
		bw_json_begin(&o->j, stdout);
		bw_json_obj(&o->j, NULL);
		json_header(&o->j, o->src, o->a->file);
		bw_json_arr(&o->j, "intervals");
	} else if (o->a->fmt == FMT_TEXT) {
		text_header(o->src, o->a->file);
	}
}

static void on_tick(void *ctx, const struct bw_replay_tick *t)
{
	struct an_out *o = ctx;
	const struct bw_interval *iv = t->iv;
	bool active = bw_interval_active(iv);

	begin(o);
	if (o->rep)
		bw_report_tick(o->rep, t);
	if (bw_whatif_on(bw_report_whatif(o->rep)))
		bw_whatif_tick(bw_report_whatif(o->rep), t);
	csv_row(o, T_INTERVALS, interval_row, t);
	switch (o->a->fmt) {
	case FMT_JSON:
		if (o->t_open != t->t) {
			if (!isnan(o->t_open)) {
				bw_json_close(&o->j, ']');
				bw_json_close(&o->j, '}');
			}
			bw_json_obj(&o->j, NULL);
			bw_json_num(&o->j, "t", t->t, 3);
			bw_json_num(&o->j, "interval_s", iv->secs, 3);
			bw_json_arr(&o->j, "devices");
			o->t_open = t->t;
		}
		bw_render_json_dev(&o->j, iv, t->cls, t->inflight);
		break;
	case FMT_CSV:
		break;
	case FMT_TEXT:
		if (!active && !o->a->all_intervals)
			break;
		if (!o->any_tick) {
			printf("\nOver time (stat's figures per %.3g s interval; idle ones left out "
			       "unless --all)\n", o->a->ro.interval);
			bw_render_legend(stdout);
			printf("%8s ", "t_s");
			bw_render_header(stdout);
		}
		printf("%8.2f ", t->t);
		bw_render_row(stdout, iv, t->cls);
		break;
	}
	o->any_tick = true;
}

static void on_req(void *ctx, const struct bw_replay_req *r)
{
	struct an_out *o = ctx;

	if (o->rep)
		bw_report_req(o->rep, r);
}

static double ms(__u64 ns)
{
	return (double)ns / 1e6;
}

static void text_header(const struct bw_tsource *src, const char *file)
{
	const struct bw_tinfo *in = src->info;
	__u32 i;

	printf("Trace %s: from %s, kernel %s, host %s, %u CPUs, attach %s\n", file, in->source,
	       in->release[0] ? in->release : "?", in->hostname[0] ? in->hostname : "?",
	       in->ncpus, in->attach[0] ? in->attach : "?");
	for (i = 0; i < in->ndevs; i++) {
		const struct bw_tdev *d = &src->devs[i];

		printf("  %-10s %u:%-4u scheduler %s, nr_requests %u, hw queues %u, "
		       "max_sectors_kb %u, rotational %u\n", d->name, BW_MAJOR(d->dev),
		       BW_MINOR(d->dev), d->scheduler[0] ? d->scheduler : "?", d->nr_requests,
		       d->nr_hw_queues, d->max_sectors_kb, d->rotational);
	}
}

static void json_header(struct bw_json *j, const struct bw_tsource *src, const char *file)
{
	const struct bw_tinfo *in = src->info;
	__u32 i;

	bw_json_obj(j, "trace");
	bw_json_str(j, "file", file);
	bw_json_str(j, "source", in->source);
	bw_json_str(j, "kernel", in->release);
	bw_json_str(j, "host", in->hostname);
	bw_json_str(j, "clock", in->clock);
	bw_json_str(j, "attach", in->attach);
	bw_json_u64(j, "cpus", in->ncpus);
	bw_json_arr(j, "device_table");
	for (i = 0; i < in->ndevs; i++) {
		const struct bw_tdev *d = &src->devs[i];
		char mm[24];

		snprintf(mm, sizeof(mm), "%u:%u", BW_MAJOR(d->dev), BW_MINOR(d->dev));
		bw_json_obj(j, NULL);
		bw_json_str(j, "device", d->name);
		bw_json_str(j, "dev", mm);
		bw_json_str(j, "scheduler", d->scheduler);
		bw_json_str(j, "model", d->model);
		bw_json_u64(j, "size_sectors", d->size_sectors);
		bw_json_u64(j, "nr_requests", d->nr_requests);
		bw_json_u64(j, "nr_hw_queues", d->nr_hw_queues);
		bw_json_u64(j, "max_sectors_kb", d->max_sectors_kb);
		bw_json_u64(j, "logical_block_size", d->logical_block_size);
		bw_json_u64(j, "read_ahead_kb", d->read_ahead_kb);
		bw_json_u64(j, "nomerges", d->nomerges);
		bw_json_num(j, "slice_idle_us", d->slice_idle_us < 0 ? NAN : d->slice_idle_us, 0);
		bw_json_bool(j, "rotational", d->rotational);
		bw_json_close(j, '}');
	}
	bw_json_close(j, ']');
	bw_json_close(j, '}');
}

static void dist_fields(struct bw_json *j, const struct bw_xdist *x, bool exact)
{
	static const char *const names[BW_NR_PCTL] = { "p50_ms", "p90_ms", "p99_ms",
						       "p99_9_ms", "max_ms" };
	int p;

	bw_json_u64(j, "n", x->n);
	bw_json_num(j, "mean_ms", x->n ? x->sum / x->n / 1e6 : NAN, 6);
	bw_json_num(j, "min_ms", x->n ? ms(x->min) : NAN, 6);
	for (p = 0; p < BW_NR_PCTL; p++)
		bw_json_num(j, names[p], x->n ? ms(x->pct[p]) : NAN, 6);
	bw_json_bool(j, "exact", exact);
}

static void json_dist(struct bw_json *j, const char *key, const struct bw_xdist *x, bool exact)
{
	bw_json_obj(j, key);
	dist_fields(j, x, exact);
	bw_json_close(j, '}');
}

static void req_fields(struct bw_json *j, const struct bw_replay_req *r)
{
	bw_json_num(j, "c_s", r->c_ts / 1e9, 6);
	bw_json_str(j, "op", bw_op_names[r->op]);
	bw_json_u64(j, "sector", r->sector);
	bw_json_u64(j, "bytes", r->bytes);
	bw_json_u64(j, "pid", r->pid);
	bw_json_str(j, "comm", r->comm);
	bw_json_u64(j, "depth_at_issue", r->depth);
	bw_json_num(j, "q2d_ms", r->q_ts ? ms(r->d_ts - r->q_ts) : NAN, 6);
	bw_json_num(j, "d2c_ms", ms(r->c_ts - r->d_ts), 6);
	bw_json_num(j, "q2c_ms", r->q_ts ? ms(r->c_ts - r->q_ts) : NAN, 6);
	bw_json_u64(j, "error", (__u64)(__u32)r->error);
}

static void json_req(struct bw_json *j, const struct bw_replay_req *r)
{
	bw_json_obj(j, NULL);
	req_fields(j, r);
	bw_json_close(j, '}');
}

static void json_summary(struct an_out *o, const struct bw_replay *rp,
			 const struct bw_tsource *src)
{
	struct bw_json *j = &o->j;
	const struct bw_replay_stream *s;
	const struct bw_replay_dev *d;
	int i, n, op, l, k;

	bw_json_num(j, "span_s", bw_replay_span(rp), 6);
	bw_json_u64(j, "events", bw_replay_events(rp));
	bw_json_u64(j, "passes", bw_replay_passes(rp));
	bw_json_bool(j, "truncated", *src->truncated);
	bw_json_u64(j, "dropped_events", bw_hist_total(src->lost, src->info->ncpus));
	bw_json_arr(j, "dropped_per_cpu");
	for (i = 0; i < (int)src->info->ncpus; i++)
		bw_json_u64(j, NULL, src->lost[i]);
	bw_json_close(j, ']');
	bw_json_u64(j, "requests_abandoned", bw_replay_abandoned(rp));
	bw_json_u64(j, "idle_intervals_skipped", bw_replay_skipped(rp));
	n = bw_replay_devs(rp, &d);
	bw_json_arr(j, "devices");
	for (i = 0; i < n; i++) {
		bw_json_obj(j, NULL);
		bw_json_str(j, "device", d[i].name);
		bw_json_u64(j, "events", d[i].events);
		bw_json_u64(j, "requests", d[i].completed);
		bw_json_str(j, "class_at_end", bw_class_name(d[i].cls.cls));
		bw_json_arr(j, "total");
		bw_render_json_dev(j, &d[i].total, &d[i].cls, bw_replay_dev_inflight(&d[i]));
		bw_json_close(j, ']');
		bw_json_obj(j, "latency");
		for (op = 0; op < BW_NR_OPS; op++) {
			if (!d[i].lat[op][BW_LAT_D2C].n)
				continue;
			bw_json_obj(j, bw_op_names[op]);
			for (l = 0; l < BW_NR_LAT; l++)
				json_dist(j, bw_lat_names[l], &d[i].lat[op][l],
					  bw_replay_exact(rp));
			bw_json_close(j, '}');
		}
		bw_json_close(j, '}');
		bw_json_arr(j, "seek_log2_sectors");
		for (k = 0; k < BW_SEEK_BUCKETS; k++)
			bw_json_u64(j, NULL, d[i].seek[k]);
		bw_json_close(j, ']');
		bw_json_arr(j, "outliers");
		for (k = 0; k < d[i].nslow; k++)
			json_req(j, &d[i].slow[k]);
		bw_json_close(j, ']');
		bw_json_close(j, '}');
	}
	bw_json_close(j, ']');
	n = bw_replay_streams(rp, &s);
	bw_json_arr(j, "streams");
	for (i = 0; i < n; i++) {
		const char *dn = "?";
		int k2, nd = bw_replay_devs(rp, &d);

		for (k2 = 0; k2 < nd; k2++)
			if (d[k2].dev == s[i].key.dev)
				dn = d[k2].name;
		bw_render_json_stream(j, dn, &s[i].iv);
	}
	bw_json_close(j, ']');
	if (bw_whatif_on(bw_report_whatif(o->rep)))
		bw_whatif_json(bw_report_whatif(o->rep), j);
}

static const char *dev_name(const struct bw_replay *rp, __u32 dev)
{
	const struct bw_replay_dev *d;
	int i, n = bw_replay_devs(rp, &d);

	for (i = 0; i < n; i++)
		if (d[i].dev == dev)
			return d[i].name;
	return "?";
}

static void text_dist(const char *dev, int op, int l, const struct bw_xdist *x)
{
	int p;

	printf("%-10s %-7s %-4s %9llu %9.4f %9.4f", dev, bw_op_names[op], bw_lat_names[l],
	       (unsigned long long)x->n, x->sum / x->n / 1e6, ms(x->min));
	for (p = 0; p < BW_NR_PCTL; p++)
		printf(" %9.4f", ms(x->pct[p]));
	putchar('\n');
}

static void text_summary(const struct bw_replay *rp, const struct bw_tsource *src, bool exact)
{
	const struct bw_replay_stream *s;
	const struct bw_replay_dev *d;
	int i, n, op, l, k;
	bool by_cgroup;
	__u64 drops = bw_hist_total(src->lost, src->info->ncpus);

	n = bw_replay_devs(rp, &d);
	printf("\nLatency per device and op, ms (%s)\n", exact ? "exact, from the events" :
	       "one pass: each percentile its histogram bucket's lower bound, up to 0.4% "
	       "below the exact value; min and max exact");
	printf("%-10s %-7s %-4s %9s %9s %9s %9s %9s %9s %9s %9s\n", "Device", "op", "", "n",
	       "mean", "min", "p50", "p90", "p99", "p99.9", "max");
	for (i = 0; i < n; i++)
		for (op = 0; op < BW_NR_OPS; op++)
			for (l = 0; l < BW_NR_LAT; l++)
				if (d[i].lat[op][l].n)
					text_dist(d[i].name, op, l, &d[i].lat[op][l]);
	printf("\nWhole trace (stat's figures over %.3f s)\n", bw_replay_span(rp));
	bw_render_header(stdout);
	for (i = 0; i < n; i++)
		bw_render_row(stdout, &d[i].total, &d[i].cls);
	printf("\nMerges, requeues, losses\n");
	for (i = 0; i < n; i++) {
		printf("%-10s ", d[i].name);
		bw_fig_summary(stdout, &d[i].total);
		putchar('\n');
	}
	printf("\nSeek distance from the previous issue's end (sectors)\n");
	for (i = 0; i < n; i++) {
		printf("%-10s 0: %llu", d[i].name, (unsigned long long)d[i].seek[0]);
		for (k = 1; k < BW_SEEK_BUCKETS; k++)
			if (d[i].seek[k])
				printf(", %llu+: %llu", 1ULL << (k - 1),
				       (unsigned long long)d[i].seek[k]);
		putchar('\n');
	}
	k = bw_replay_streams(rp, &s);
	if (k) {
		by_cgroup = s[0].key.by == BW_STREAMS_CGROUP;
		printf("\nStreams (per %s and device, over the whole trace)\n",
		       by_cgroup ? "cgroup" : "process");
		bw_render_stream_header(stdout, by_cgroup);
		for (i = 0; i < k; i++)
			bw_render_stream_row(stdout, dev_name(rp, s[i].key.dev), &s[i].iv);
	}
	printf("\nSlowest requests (Q2C)\n%-10s %12s %-7s %12s %8s %8s %-16s %5s %9s %9s %9s\n",
	       "Device", "at_s", "op", "sector", "KiB", "pid", "comm", "depth", "q2d_ms",
	       "d2c_ms", "q2c_ms");
	for (i = 0; i < n; i++)
		for (k = 0; k < d[i].nslow; k++) {
			const struct bw_replay_req *r = &d[i].slow[k];

			printf("%-10s %12.6f %-7s %12llu %8.1f %8u %-16s %5u %9.4f %9.4f %9.4f\n",
			       d[i].name, r->c_ts / 1e9, bw_op_names[r->op],
			       (unsigned long long)r->sector, r->bytes / 1024.0, r->pid, r->comm,
			       r->depth, r->q_ts ? ms(r->d_ts - r->q_ts) : NAN,
			       ms(r->c_ts - r->d_ts), r->q_ts ? ms(r->c_ts - r->q_ts) : NAN);
		}
	printf("\n%llu events over %.3f s, %d passes; %llu dropped while recording%s\n",
	       (unsigned long long)bw_replay_events(rp), bw_replay_span(rp),
	       bw_replay_passes(rp), (unsigned long long)drops,
	       drops ? " (figures undercount: see dropped_per_cpu in --json)" : "");
}

/* The CSV tables after the replay: one row per device, distribution, stream, request. */
struct row_arg {
	const struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_replay_stream *s;
	int op, l, k;
};

static void totals_row(struct bw_json *j, const void *arg)
{
	const struct row_arg *r = arg;

	bw_json_obj(j, NULL);
	bw_json_num(j, "span_s", bw_replay_span(r->rp), 6);
	bw_json_u64(j, "events", r->d->events);
	bw_json_u64(j, "requests", r->d->completed);
	bw_json_str(j, "class_at_end", bw_class_name(r->d->cls.cls));
	bw_render_json_dev(j, &r->d->total, &r->d->cls, bw_replay_dev_inflight(r->d));
	bw_json_close(j, '}');
}

static void latency_row(struct bw_json *j, const void *arg)
{
	const struct row_arg *r = arg;

	bw_json_obj(j, NULL);
	bw_json_str(j, "device", r->d->name);
	bw_json_str(j, "op", bw_op_names[r->op]);
	bw_json_str(j, "latency", bw_lat_names[r->l]);
	dist_fields(j, &r->d->lat[r->op][r->l], bw_replay_exact(r->rp));
	bw_json_close(j, '}');
}

static void outlier_row(struct bw_json *j, const void *arg)
{
	const struct row_arg *r = arg;

	bw_json_obj(j, NULL);
	bw_json_str(j, "device", r->d->name);
	req_fields(j, &r->d->slow[r->k]);
	bw_json_close(j, '}');
}

static void stream_row(struct bw_json *j, const void *arg)
{
	const struct row_arg *r = arg;

	bw_render_json_stream(j, dev_name(r->rp, r->s->key.dev), &r->s->iv);
}

struct whatif_arg {
	const struct bw_whatif *rep;
	int i;
};

static void whatif_row(struct bw_json *j, const void *arg)
{
	const struct whatif_arg *w = arg;

	bw_whatif_decision_json(w->rep, j, w->i);
}

/* A table without rows still says its columns (from rows of nothing). */
static void empty_headers(struct an_out *o, const struct bw_replay *rp)
{
	static const struct bw_replay_dev none_dev;
	static const struct bw_replay_stream none_stream;
	static const struct bw_interval none_iv;
	static const struct bw_class none_cls;
	struct bw_replay_tick tick = { .d = &none_dev, .iv = &none_iv, .cls = &none_cls };
	struct row_arg r = { .rp = rp, .d = &none_dev, .s = &none_stream };

	csv_header(o, T_INTERVALS, interval_row, &tick);
	csv_header(o, T_TOTALS, totals_row, &r);
	csv_header(o, T_LATENCY, latency_row, &r);
	csv_header(o, T_OUTLIERS, outlier_row, &r);
	csv_header(o, T_STREAMS, stream_row, &r);
	csv_header(o, T_WHATIF, whatif_row, &(struct whatif_arg){ bw_report_whatif(o->rep), -1 });
}

static void csv_tables(struct an_out *o, const struct bw_replay *rp)
{
	struct row_arg r = { .rp = rp };
	const struct bw_replay_dev *d;
	const struct bw_replay_stream *s;
	int i, n = bw_replay_devs(rp, &d);

	for (i = 0; i < n; i++) {
		r.d = &d[i];
		csv_row(o, T_TOTALS, totals_row, &r);
		for (r.op = 0; r.op < BW_NR_OPS; r.op++)
			for (r.l = 0; d[i].lat[r.op][BW_LAT_D2C].n && r.l < BW_NR_LAT; r.l++)
				if (d[i].lat[r.op][r.l].n)
					csv_row(o, T_LATENCY, latency_row, &r);
		for (r.k = 0; r.k < d[i].nslow; r.k++)
			csv_row(o, T_OUTLIERS, outlier_row, &r);
	}
	n = bw_replay_streams(rp, &s);
	for (i = 0; i < n; i++) {
		r.s = &s[i];
		csv_row(o, T_STREAMS, stream_row, &r);
	}
	for (i = 0; i < bw_whatif_count(bw_report_whatif(o->rep)); i++)
		csv_row(o, T_WHATIF, whatif_row, &(struct whatif_arg){ bw_report_whatif(o->rep), i });
	empty_headers(o, rp);
}

/* The CSV files: --table's on stdout, or every table in --csv-dir. */
static int csv_open(struct an_out *o)
{
	struct an_args *a = o->a;
	int t;

	if (a->fmt == FMT_CSV)
		o->csv[a->table].f = stdout;
	if (!a->csv_dir)
		return 0;
	if (mkdir(a->csv_dir, 0777) && errno != EEXIST) {
		bw_err("%s: cannot create: %s", a->csv_dir, strerror(errno));
		return -1;
	}
	for (t = 0; t < NR_TABLES; t++) {
		struct csv_table *c = &o->csv[t];

		if (c->f || (t == T_WHATIF && !a->what_if))
			continue;
		if (asprintf(&c->path, "%s/%s.csv", a->csv_dir, table_names[t]) < 0) {
			c->path = NULL;
			bw_err("out of memory");
			return -1;
		}
		c->f = fopen(c->path, "w");
		if (!c->f) {
			bw_err("%s: cannot create: %s", c->path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int csv_close(struct an_out *o)
{
	int t, err = 0;

	for (t = 0; t < NR_TABLES; t++) {
		struct csv_table *c = &o->csv[t];

		if (c->f && c->f != stdout && (ferror(c->f) | fclose(c->f))) {
			bw_err("%s: writing failed", c->path);
			err = -1;
		}
		free(c->path);
	}
	return err;
}

/* After the replay: what was found; the exit code. */
static void finish_output(struct an_out *o, const struct bw_replay *rp, int err)
{
	const struct an_args *a = o->a;

	begin(o);
	if (a->fmt == FMT_JSON) {
		if (!isnan(o->t_open)) {
			bw_json_close(&o->j, ']');
			bw_json_close(&o->j, '}');
		}
		bw_json_close(&o->j, ']');
		json_summary(o, rp, o->src);
		if (err)
			bw_json_str(&o->j, "error", o->src->err);
		bw_json_close(&o->j, '}');
		bw_json_end(&o->j);
	} else if (a->fmt == FMT_TEXT) {
		if (bw_whatif_on(bw_report_whatif(o->rep)))
			bw_whatif_print(bw_report_whatif(o->rep), stdout);
		text_summary(rp, o->src, bw_replay_exact(rp));
	}
	csv_tables(o, rp);
	fflush(stdout);
}

/* By cgroup, as stat says it: where no request carried its bio's cgroup. */
static void say_owner(const struct an_args *a, const struct bw_replay *rp)
{
	__u64 bio, task;

	if (a->ro.streams_by != BW_STREAMS_CGROUP)
		return;
	bw_replay_owners(rp, &bio, &task);
	if (task && !bio)
		bw_warn("streams by cgroup: %s", BW_OWNER_TASK_NOTE);
}

/* --from at or past the trace's end: nothing to show, and said so. */
static bool past_end(const struct an_args *a, const struct bw_replay *rp)
{
	double end = bw_replay_trace_span(rp);

	if (bw_replay_events(rp) || !(a->ro.from > 0) || a->ro.from < end)
		return false;
	bw_err("--from %g is past the trace's end (its last event is %.6f s from its start)",
	       a->ro.from, end);
	return true;
}

static int analyze(struct an_args *a, struct bw_tsource *src)
{
	struct an_out o = { .a = a, .src = src, .t_open = NAN };
	struct bw_replay *rp = NULL;
	int err;

	err = resolve_devices(a, src);
	if (err)
		return BW_EXIT_USAGE;
	if (a->ro.streams_by == BW_STREAMS_CGROUP &&
	    (!strcmp(src->info->source, "blktrace") || src->info->rec_size < sizeof(struct bw_trec))) {
		bw_err("%s: --streams=cgroup: %s carries no cgroups", a->file,
		       strcmp(src->info->source, "blktrace") ?
		       "a trace of an older blkwise record" : "a blktrace capture");
		return BW_EXIT_RUNTIME;
	}
	a->ro.on_tick = on_tick;
	a->ro.ctx = &o;
	if (bw_report_open(&o.rep, a->html, a->perfetto, a->what_if, src, a->file) || csv_open(&o)) {
		csv_close(&o);
		bw_report_close(o.rep, NULL);
		return BW_EXIT_RUNTIME;
	}
	/* Every request handed on only to the pictures that draw them. */
	if (a->html || a->perfetto)
		a->ro.on_req = on_req;
	if (bw_replay_new(&rp, &a->ro, src)) {
		bw_err("out of memory");
		csv_close(&o);
		bw_report_close(o.rep, NULL);
		return BW_EXIT_RUNTIME;
	}
	err = bw_replay_run(rp);
	say_owner(a, rp);
	if (!err && past_end(a, rp)) {
		csv_close(&o);
		bw_report_close(o.rep, NULL);
		bw_replay_free(rp);
		return BW_EXIT_USAGE;
	}
	finish_output(&o, rp, err);
	if (csv_close(&o))
		err = -1;
	if (bw_report_close(o.rep, rp))
		err = -1;
	bw_replay_free(rp);
	if (err) {
		if (src->err[0])
			bw_err("%s", src->err);
		return BW_EXIT_RUNTIME;
	}
	if (*src->truncated)
		bw_warn("warning: %s", src->err);
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	struct an_args *a = calloc(1, sizeof(*a));
	struct bw_input in = {};
	struct bw_tsource src;
	int ret;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a)) {
		free(a);
		return BW_EXIT_USAGE;
	}
	ret = bw_input_open(&in, a->file, &src);
	if (!ret)
		ret = analyze(a, &src);
	bw_input_close(&in);
	free(a);
	return ret;
}
