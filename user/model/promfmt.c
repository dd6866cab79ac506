// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics `blkwise export` serves, in the Prometheus text format 0.0.4
 * or OpenMetrics 1.0.0 (the format differs only in family names of
 * counters and infos, and the closing "# EOF").  Pure: no BPF, no
 * syscalls; dashboards/README.md is the reference of every name.
 *
 * Counters are printed as exact integers.  Histograms are a fixed subset
 * of the BPF side's log-linear buckets: three per octave, at bucket
 * boundaries, so every exported count is exact and a device costs a
 * bounded number of series whatever its latencies.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "model/promfmt.h"
#include "model/figures.h"
#include "model/bcrender.h"

static const char *const type_names[] = {
	[BW_PROM_COUNTER] = "counter", [BW_PROM_GAUGE] = "gauge",
	[BW_PROM_HISTOGRAM] = "histogram", [BW_PROM_SUMMARY] = "summary",
	[BW_PROM_INFO] = "info",
};

void bw_prom_family(struct bw_prom *p, const char *name, enum bw_prom_type t, const char *help)
{
	const char *suffix = "", *type = type_names[t];

	if (!p->om && t == BW_PROM_COUNTER)
		suffix = "_total";
	if (!p->om && t == BW_PROM_INFO) {
		suffix = "_info";
		type = "gauge";
	}
	fprintf(p->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

static size_t escape(char *out, size_t len, const char *v)
{
	size_t n = 0;

	for (; *v && n + 3 < len; v++) {
		if (*v == '\\' || *v == '"') {
			out[n++] = '\\';
			out[n++] = *v;
		} else if (*v == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *v;
		}
	}
	out[n] = '\0';
	return n;
}

void bw_prom_labels(char *buf, size_t len, ...)
{
	const char *k, *v;
	size_t n = 0;
	va_list ap;

	buf[0] = '\0';
	va_start(ap, len);
	while ((k = va_arg(ap, const char *)) && (v = va_arg(ap, const char *))) {
		int w = snprintf(buf + n, len - n, "%c%s=\"", n ? ',' : '{', k);

		if (w < 0 || (size_t)w + 3 >= len - n)
			break;
		n += (size_t)w;
		n += escape(buf + n, len - n - 2, v);
		buf[n++] = '"';
		buf[n] = '\0';
	}
	va_end(ap);
	if (n && n + 1 < len) {
		buf[n++] = '}';
		buf[n] = '\0';
	}
}

void bw_prom_u64(struct bw_prom *p, const char *sample, const char *labels, __u64 v)
{
	fprintf(p->f, "%s%s %llu\n", sample, labels, (unsigned long long)v);
}

void bw_prom_val(struct bw_prom *p, const char *sample, const char *labels, double v)
{
	if (isnan(v))
		fprintf(p->f, "%s%s NaN\n", sample, labels);
	else if (isinf(v))
		fprintf(p->f, "%s%s %sInf\n", sample, labels, v > 0 ? "+" : "-");
	else
		fprintf(p->f, "%s%s %.17g\n", sample, labels, v);
}

void bw_prom_eof(struct bw_prom *p)
{
	if (p->om)
		fputs("# EOF\n", p->f);
}

/* ---- histograms ---- */

const unsigned int bw_expo_seg_bounds[BW_EXPO_SEG_BOUNDS] = { 1, 2, 4, 8, 15, 31, 63, 127, 255 };

/*
 * Three per octave, 1, 1.375 and 1.625 x 2^m units from 2^3 to 2^23: all
 * bucket boundaries of bpf/hist.h (8, 11 and 13 eighths of an octave's
 * start).  Quantiles read from them with PromQL's linear interpolation
 * stay within about 22% of the exact ones even for sharp-edged
 * distributions, 2% typically; two per octave reached 33% (see
 * tests/unit/test_promfmt.c).
 */
__u64 bw_hist_below(const __u64 *hist, unsigned int nbuckets, unsigned int b)
{
	unsigned int i, end = bw_bucket(b, nbuckets);
	__u64 n = 0;

	for (i = 0; i < end; i++)
		n += hist[i];
	return n;
}

/* Labels of a device's (cg NULL) or a cgroup's series; le NULL: none. */
static void lat_labels(char *buf, size_t len, const char *dev, const char *cg, const char *op,
		       const char *le)
{
	if (cg && le)
		bw_prom_labels(buf, len, "device", dev, "cgroup", cg, "op", op, "le", le, NULL);
	else if (cg)
		bw_prom_labels(buf, len, "device", dev, "cgroup", cg, "op", op, NULL);
	else if (le)
		bw_prom_labels(buf, len, "device", dev, "op", op, "le", le, NULL);
	else
		bw_prom_labels(buf, len, "device", dev, "op", op, NULL);
}

static void le_labels(char *buf, size_t len, const char *dev, const char *op, const char *le)
{
	lat_labels(buf, len, dev, NULL, op, le);
}

/*
 * A latency histogram's samples: below[i] requests under bound i
 * (bw_expo_bound), count in all, their sum in ns.
 */
static void hist_lat_below(struct bw_prom *p, const char *name, const char *dev, const char *cg,
			   const char *op, const __u64 *below, __u64 count, __u64 sum_ns)
{
	char sample[96], l[BW_PROM_LABELS], le[32];
	int i;

	snprintf(sample, sizeof(sample), "%s_bucket", name);
	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++) {
		snprintf(le, sizeof(le), "%.9g", ldexp((double)bw_expo_bound(i), BW_LAT_SHIFT) / 1e9);
		lat_labels(l, sizeof(l), dev, cg, op, le);
		bw_prom_u64(p, sample, l, below[i]);
	}
	lat_labels(l, sizeof(l), dev, cg, op, "+Inf");
	bw_prom_u64(p, sample, l, count);
	lat_labels(l, sizeof(l), dev, cg, op, NULL);
	snprintf(sample, sizeof(sample), "%s_sum", name);
	bw_prom_val(p, sample, l, sum_ns / 1e9);
	snprintf(sample, sizeof(sample), "%s_count", name);
	bw_prom_u64(p, sample, l, count);
}

static void hist_lat(struct bw_prom *p, const char *name, const char *dev, const char *op,
		     const __u64 *hist, __u64 count, __u64 sum_ns)
{
	__u64 below[BW_EXPO_LAT_BOUNDS];
	int i;

	for (i = 0; i < BW_EXPO_LAT_BOUNDS; i++)
		below[i] = bw_hist_below(hist, BW_LAT_BUCKETS, bw_expo_bound(i));
	hist_lat_below(p, name, dev, NULL, op, below, count, sum_ns);
}

static void hist_seg(struct bw_prom *p, const char *dev, const char *op,
		     const struct bw_op_stats *o)
{
	char l[BW_PROM_LABELS], le[16];
	int i;

	for (i = 0; i < BW_EXPO_SEG_BOUNDS; i++) {
		snprintf(le, sizeof(le), "%u", bw_expo_seg_bounds[i]);
		le_labels(l, sizeof(l), dev, op, le);
		bw_prom_u64(p, "blkwise_segments_per_request_bucket", l,
			    bw_hist_below(o->hist_seg, BW_SEG_BUCKETS, bw_expo_seg_bounds[i] + 1));
	}
	le_labels(l, sizeof(l), dev, op, "+Inf");
	bw_prom_u64(p, "blkwise_segments_per_request_bucket", l, o->ios);
	bw_prom_labels(l, sizeof(l), "device", dev, "op", op, NULL);
	bw_prom_u64(p, "blkwise_segments_per_request_sum", l, o->segments);
	bw_prom_u64(p, "blkwise_segments_per_request_count", l, o->ios);
}

/* ---- per device families ---- */

static const char *dev_name(const struct bw_expo_dev *d)
{
	return d->info->name[0] ? d->info->name : d->cum->name;
}

/* An op is published once it has had I/O (or a requeue, or an error). */
static bool op_seen(const struct bw_op_stats *o)
{
	return o->ios || o->requeues || o->errors || o->merges;
}

/* A counter of every op (figures.h's op_off): one series per device and op. */
static void op_counter(struct bw_prom *p, const struct bw_figure *r, const struct bw_expo_dev *d,
		       int n)
{
	char sample[96], l[BW_PROM_LABELS];
	__u64 v;
	int i, op;

	snprintf(sample, sizeof(sample), "%s_total", r->prom);
	for (i = 0; i < n; i++) {
		for (op = 0; op < BW_NR_OPS; op++) {
			v = bw_fig_op_count(r, d[i].cum, op);
			if (!op_seen(&d[i].cum->op[op]) && !v)
				continue;
			bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "op",
				       bw_op_names[op], NULL);
			bw_prom_u64(p, sample, l, v);
		}
	}
}

/*
 * Where the kernel's stamps are a plug's (6.9+), service and queue time are
 * the timing slices' requests' (user/model/metrics.c, sampled_timing): the
 * histograms count those, and their _count stays below the requests'.
 */
static const struct bw_op_stats *timed(const struct bw_snap_dev *c, int op)
{
	return c->light && c->plug_clock && c->x_timed ? &c->xop[op] : &c->op[op];
}

static void hist_family(struct bw_prom *p, const struct bw_figure *r, const struct bw_expo_dev *d,
			int n)
{
	int i, op;

	for (i = 0; i < n; i++) {
		for (op = 0; op < BW_NR_OPS; op++) {
			const struct bw_op_stats *o = &d[i].cum->op[op];

			if (!op_seen(o))
				continue;
			if (r->special != BW_SP_SEG_HIST)
				o = timed(d[i].cum, op);
			if (r->special == BW_SP_SEG_HIST)
				hist_seg(p, dev_name(&d[i]), bw_op_names[op], o);
			else if (r->special == BW_SP_HIST_SERVICE)
				hist_lat(p, r->prom, dev_name(&d[i]), bw_op_names[op], o->hist_d2c,
					 o->ios, o->d2c_ns);
			else
				hist_lat(p, r->prom, dev_name(&d[i]), bw_op_names[op], o->hist_q2d,
					 o->q_ios, o->q2d_ns);
		}
	}
}

static const char *id_kind_name(enum bw_id_kind k)
{
	switch (k) {
	case BW_ID_WWID:
		return "wwid";
	case BW_ID_SERIAL:
		return "serial";
	case BW_ID_BACKING:
		return "backing";
	case BW_ID_PENDING:
		return "pending";
	default:
		return "devt";
	}
}

static void device_info(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	char l[BW_PROM_LABELS * 2];
	int i;

	for (i = 0; i < n; i++) {
		const struct bw_devinfo *di = d[i].info;

		bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "identity", di->id,
			       "identity_kind", id_kind_name(di->id_kind), "model", di->model,
			       "rotational", di->rotational ? "1" : "0", NULL);
		bw_prom_u64(p, "blkwise_device_info", l, 1);
	}
}

/* A per-device gauge or counter from one value per device; NAN ones are left out. */
static void dev_series(struct bw_prom *p, const struct bw_figure *r, const struct bw_expo_dev *d,
		       int n)
{
	char sample[96], l[BW_PROM_LABELS];
	int i;

	snprintf(sample, sizeof(sample), "%s%s", r->prom,
		 r->ptype == BW_PROM_COUNTER ? "_total" : "");
	for (i = 0; i < n; i++) {
		double v = r->cum(&d[i]);

		if (isnan(v))
			continue;
		bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), NULL);
		if (r->ptype == BW_PROM_COUNTER && v == floor(v) && v < 1e18)
			bw_prom_u64(p, sample, l, (__u64)v);
		else
			bw_prom_val(p, sample, l, v);
	}
}

static void solo_times(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	char l[BW_PROM_LABELS], size[16];
	int i, op, c;

	for (i = 0; i < n; i++) {
		for (op = 0; op < BW_NR_OPS; op++) {
			for (c = 0; c < BW_SIZE_CLASSES; c++) {
				if (isnan(d[i].s1_s[op][c]))
					continue;
				snprintf(size, sizeof(size), "%u", 4096u << c);
				bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "op",
					       bw_op_names[op], "size_bytes", size, NULL);
				bw_prom_val(p, "blkwise_solo_service_seconds", l, d[i].s1_s[op][c]);
			}
		}
	}
}

/* Where S1 and the class come from: the store (learned before a restart) or live. */
static void state_sources(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	char l[BW_PROM_LABELS];
	int i;

	for (i = 0; i < n; i++) {
		bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "s1_source",
			       d[i].s1_source ? d[i].s1_source : "none", "class_source",
			       d[i].class_source ? d[i].class_source : "none", NULL);
		bw_prom_u64(p, "blkwise_device_state_info", l, 1);
	}
}

static void classes(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	static const enum bw_class_id all[] = { BW_CLASS_DEEP, BW_CLASS_SHALLOW, BW_CLASS_UNKNOWN };
	char l[BW_PROM_LABELS];
	int i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++) {
			bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "class",
				       bw_class_name(all[k]), NULL);
			bw_prom_u64(p, "blkwise_device_class", l, d[i].cls == all[k]);
		}
	}
}

static void schedulers(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	char l[BW_PROM_LABELS];
	int i;

	for (i = 0; i < n; i++) {
		if (!d[i].sched[0])
			continue;
		bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "scheduler", d[i].sched,
			       NULL);
		bw_prom_u64(p, "blkwise_device_scheduler", l, 1);
	}
}

static void tune_decisions(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	static const char *const names[] = { NULL, "set", "probe", "keep", "revert", "repair" };
	char l[BW_PROM_LABELS];
	int i, a;

	for (i = 0; i < n; i++) {
		for (a = 1; d[i].tune && a < 6; a++) {
			bw_prom_labels(l, sizeof(l), "device", dev_name(&d[i]), "action", names[a],
				       NULL);
			bw_prom_u64(p, "blkwise_tune_decisions_total", l, d[i].tune->actions[a]);
		}
	}
}

/* The series of a figure of a shape of its own (figures.h). */
static void special(struct bw_prom *p, const struct bw_figure *r, const struct bw_expo_dev *d,
		    int n)
{
	switch (r->special) {
	case BW_SP_INFO:
		device_info(p, d, n);
		break;
	case BW_SP_HIST_SERVICE:
	case BW_SP_HIST_QUEUE:
	case BW_SP_SEG_HIST:
		hist_family(p, r, d, n);
		break;
	case BW_SP_SOLO:
		solo_times(p, d, n);
		break;
	case BW_SP_CLASS:
		classes(p, d, n);
		break;
	case BW_SP_SCHED:
		schedulers(p, d, n);
		break;
	case BW_SP_STATE:
		state_sources(p, d, n);
		break;
	case BW_SP_TUNE_ACTIONS:
		tune_decisions(p, d, n);
		break;
	default:
		break;
	}
}

/* The per-device families, in the table's order (figures.c). */
static void devices(struct bw_prom *p, const struct bw_expo_dev *d, int n)
{
	size_t i;

	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		/* blkwise_device_present: with the exporter's own figures (presence()). */
		if (!r->prom || r->special == BW_SP_PRESENT)
			continue;
		bw_prom_family(p, r->prom, r->ptype, r->help);
		if (r->cum)
			dev_series(p, r, d, n);
		else if (r->op_off)
			op_counter(p, r, d, n);
		else
			special(p, r, d, n);
	}
}

/* ---- the exporter itself ---- */

/* The exporter's figures that are one unlabelled number each. */
static void scalars(struct bw_prom *p, const struct bw_expo_self *s)
{
	const struct {
		const char *name;
		enum bw_prom_type t;
		const char *help;
		double v;
	} tab[] = {
		{ "blkwise_bpf_stats_enabled", BW_PROM_GAUGE,
		  "1 when the kernel counts BPF run time.", s->bpf_stats },
		{ "blkwise_exporter_sample_duration_seconds", BW_PROM_GAUGE,
		  "Time the last sample took: BPF maps read, metrics rendered.", s->sample_s },
		{ "blkwise_exporter_last_sample_timestamp_seconds", BW_PROM_GAUGE,
		  "When the last sample was taken.", s->last_sample_unix },
		{ "process_resident_memory_bytes", BW_PROM_GAUGE,
		  "Resident memory size in bytes.", s->rss_bytes },
		{ "process_cpu_seconds", BW_PROM_COUNTER,
		  "Total user and system CPU time spent in seconds.", s->cpu_s },
		{ "process_start_time_seconds", BW_PROM_GAUGE,
		  "Start time of the process since unix epoch in seconds.", s->start_unix },
		{ "process_open_fds", BW_PROM_GAUGE, "Number of open file descriptors.",
		  (double)s->open_fds },
		{ "blkwise_bpf_cpu_seconds", BW_PROM_COUNTER,
		  "CPU time of blkwise's BPF programs, estimated: each kind's price per event, "
		  "measured where the kernel's accounting was on, times its events since.",
		  s->bpf_cpu_s },
		{ "blkwise_observed_ratio", BW_PROM_GAUGE,
		  "Share of the last interval the light tier ran (under --max-cpu): the histograms "
		  "count the requests of that share; 1: all.", s->observed },
		{ "blkwise_max_cpu_ratio", BW_PROM_GAUGE,
		  "The CPU ceiling (--max-cpu), a share of one CPU; 0: none.", s->max_cpu },
	};
	char sample[96];
	unsigned int i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		bw_prom_family(p, tab[i].name, tab[i].t, tab[i].help);
		snprintf(sample, sizeof(sample), "%s%s", tab[i].name,
			 tab[i].t == BW_PROM_COUNTER ? "_total" : "");
		if (tab[i].v == floor(tab[i].v) && fabs(tab[i].v) < 1e15)
			bw_prom_u64(p, sample, "", (__u64)tab[i].v);
		else
			bw_prom_val(p, sample, "", tab[i].v);
	}
}

static void self(struct bw_prom *p, const struct bw_expo_self *s)
{
	char l[BW_PROM_LABELS];
	int i;

	bw_prom_family(p, "blkwise_build", BW_PROM_INFO, "Build of the exporter.");
	bw_prom_labels(l, sizeof(l), "version", s->version, "commit", s->commit, "libbpf",
		       s->libbpf, "attach", s->attach, NULL);
	bw_prom_u64(p, "blkwise_build_info", l, 1);
	bw_prom_family(p, "blkwise_bpf_run_seconds", BW_PROM_COUNTER,
		       "Run time of each BPF program (counted while BPF stats are on).");
	for (i = 0; i < s->nprogs; i++) {
		bw_prom_labels(l, sizeof(l), "program", s->progs[i].name, NULL);
		bw_prom_val(p, "blkwise_bpf_run_seconds_total", l, s->progs[i].run_ns / 1e9);
	}
	bw_prom_family(p, "blkwise_bpf_runs", BW_PROM_COUNTER,
		       "Runs of each BPF program (counted while BPF stats are on).");
	for (i = 0; i < s->nprogs; i++) {
		bw_prom_labels(l, sizeof(l), "program", s->progs[i].name, NULL);
		bw_prom_u64(p, "blkwise_bpf_runs_total", l, s->progs[i].run_cnt);
	}
	scalars(p, s);
}

/*
 * The per-cpu bio alloc cache, per bio_set, summed over CPUs; the method
 * label says how each count was made (exact: fentry/fexit; tracepoint:
 * block_bio_queue, which sees cache-flagged bios but no hits or misses).
 */
static void biocache(struct bw_prom *p, const struct bw_bc_snap *b)
{
	char l[BW_PROM_LABELS];
	int i, f;

	bw_prom_family(p, "blkwise_bio_cache_events", BW_PROM_COUNTER,
		       "Per-cpu bio alloc cache events by bio_set (hits, misses, ...; see "
		       "dashboards/README.md), with the method that counted them.");
	for (i = 0; i < b->nr; i++) {
		for (f = 0; f < BW_BC_NR; f++) {
			if (!bw_bc_field_shown(b->method, f))
				continue;
			bw_prom_labels(l, sizeof(l), "bio_set", b->sets[i].name, "event",
				       bw_bc_field_name(f), "method", bw_bc_method_name(b->method),
				       NULL);
			bw_prom_u64(p, "blkwise_bio_cache_events_total", l, b->sets[i].sum.v[f]);
		}
	}
}

static void presence(struct bw_prom *p, const struct bw_expo_self *s)
{
	const struct bw_figure *r = bw_fig_special(BW_SP_PRESENT);
	char l[BW_PROM_LABELS];
	int i;

	bw_prom_family(p, r->prom, r->ptype, r->help);
	for (i = 0; i < s->npresence; i++) {
		bw_prom_labels(l, sizeof(l), "device", s->presence[i].device, NULL);
		bw_prom_u64(p, "blkwise_device_present", l, s->presence[i].present);
	}
}

/* ---- per cgroup (export --cgroups) ---- */

static void cg_counter(struct bw_prom *p, const struct bw_expo_cg *c, const char *name,
		       bool bytes, const char *help)
{
	char sample[96], l[BW_PROM_LABELS];
	int i;

	bw_prom_family(p, name, BW_PROM_COUNTER, help);
	snprintf(sample, sizeof(sample), "%s_total", name);
	for (i = 0; i < c->n; i++) {
		const struct bw_cg_row *r = &c->rows[i];

		lat_labels(l, sizeof(l), c->dev[i], r->path, bw_op_names[r->op], NULL);
		bw_prom_u64(p, sample, l, bytes ? r->v.bytes : r->v.ios);
	}
}

static void cgroups(struct bw_prom *p, const struct bw_expo_cg *c)
{
	__u64 below[BW_EXPO_LAT_BOUNDS];
	char l[BW_PROM_LABELS];
	int i, b;

	bw_prom_family(p, "blkwise_cgroups", BW_PROM_INFO,
		       "Per-cgroup series: the hierarchy whose cgroups they name (that of the io "
		       "controller: cgroup2, or v1's blkio).");
	bw_prom_labels(l, sizeof(l), "hierarchy", c->hierarchy ? c->hierarchy : "none", NULL);
	bw_prom_u64(p, "blkwise_cgroups_info", l, 1);
	cg_counter(p, c, "blkwise_cgroup_requests", false,
		   "Completed requests, by the cgroup the kernel charged (the bio's blkg); a "
		   "request with no owner (a flush) under /.");
	cg_counter(p, c, "blkwise_cgroup_bytes", true,
		   "Bytes of completed requests, by the cgroup the kernel charged.");
	bw_prom_family(p, "blkwise_cgroup_service_seconds", BW_PROM_HISTOGRAM,
		       "Service time (D2C) by the cgroup the kernel charged, of requests with the "
		       "kernel's issue stamp.");
	for (i = 0; i < c->n; i++) {
		const struct bw_cg_row *r = &c->rows[i];
		__u64 run = 0;

		for (b = 0; b < BW_EXPO_LAT_BOUNDS; b++) {
			run += r->v.hist[b];
			below[b] = run;
		}
		hist_lat_below(p, "blkwise_cgroup_service_seconds", c->dev[i], r->path,
			       bw_op_names[r->op], below, r->v.timed, r->v.d2c_ns);
	}
	bw_prom_family(p, "blkwise_cgroups_omitted", BW_PROM_GAUGE,
		       "Cgroups with I/O left out by --cgroups-max (those with the fewest requests).");
	bw_prom_u64(p, "blkwise_cgroups_omitted", "", (__u64)c->omitted);
	bw_prom_family(p, "blkwise_cgroup_uncounted_requests", BW_PROM_COUNTER,
		       "Completions no cgroup series counted: the series map was full.");
	bw_prom_u64(p, "blkwise_cgroup_uncounted_requests_total", "", c->no_room);
}

void bw_expo_render(struct bw_prom *p, const struct bw_expo_self *s, const struct bw_expo_dev *d,
		    int n)
{
	self(p, s);
	presence(p, s);
	devices(p, d, n);
	if (s->biocache)
		biocache(p, s->biocache);
	if (s->cgroups)
		cgroups(p, s->cgroups);
}

void bw_expo_render_scrapes(struct bw_prom *p, __u64 scrapes, double dur_sum, __u64 dur_count)
{
	bw_prom_family(p, "blkwise_exporter_scrapes", BW_PROM_COUNTER,
		       "Scrapes of /metrics served, this one included.");
	bw_prom_u64(p, "blkwise_exporter_scrapes_total", "", scrapes);
	bw_prom_family(p, "blkwise_exporter_scrape_duration_seconds", BW_PROM_SUMMARY,
		       "Time to answer a scrape of /metrics, earlier ones.");
	bw_prom_val(p, "blkwise_exporter_scrape_duration_seconds_sum", "", dur_sum);
	bw_prom_u64(p, "blkwise_exporter_scrape_duration_seconds_count", "", dur_count);
	bw_prom_eof(p);
}
