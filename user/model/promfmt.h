/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus exposition: the text format 0.0.4 and OpenMetrics 1.0.0, and
 * the blkwise metric families in them.  Pure: renders into a FILE.
 */
#ifndef BLKWISE_PROMFMT_H
#define BLKWISE_PROMFMT_H

#include "model/model.h"

enum bw_prom_type {
	BW_PROM_COUNTER, BW_PROM_GAUGE, BW_PROM_HISTOGRAM, BW_PROM_SUMMARY, BW_PROM_INFO,
};

struct bw_prom {
	FILE *f;
	bool om;		/* OpenMetrics */
};

#define BW_PROM_LABELS 512

/*
 * A family header.  name is the family's base name: a counter's samples
 * are name_total, an info's name_info; the writer names the family as
 * each format wants it.
 */
void bw_prom_family(struct bw_prom *p, const char *name, enum bw_prom_type t, const char *help);
/* {k="v",...} from NULL-terminated key, value pairs; values escaped; "" when none. */
void bw_prom_labels(char *buf, size_t len, ...) __attribute__((sentinel));
void bw_prom_u64(struct bw_prom *p, const char *sample, const char *labels, __u64 v);
void bw_prom_val(struct bw_prom *p, const char *sample, const char *labels, double v);
void bw_prom_eof(struct bw_prom *p);

/* Exported histogram bounds, in the BPF histograms' units. */
#define BW_EXPO_SEG_BOUNDS 9
extern const unsigned int bw_expo_seg_bounds[BW_EXPO_SEG_BOUNDS];
/* Requests below bound b (a bucket boundary) of a histogram. */
__u64 bw_hist_below(const __u64 *hist, unsigned int nbuckets, unsigned int b);

struct bw_expo_tune {
	__u64 actions[6];	/* by enum bw_policy_action: none, set, probe, keep, revert, repair */
	__u64 probes;
	double probe_s;
};

/* One device as the exporter publishes it. */
struct bw_expo_dev {
	const struct bw_snap_dev *cum;	/* cumulative counters */
	const struct bw_devinfo *info;
	double depth_mean;		/* NAN: no I/O in the interval */
	double p_eff;			/* NAN: undetermined */
	enum bw_class_id cls;
	double s1_s[BW_NR_OPS][BW_SIZE_CLASSES];	/* NAN: unknown */
	const char *s1_source;		/* "stored" if any S1 above is the store's, "live", "none" */
	const char *class_source;	/* cls from the store ("stored"), "live", "none" */
	double solo_work_s;
	__u64 solo_known;
	char sched[32];			/* "" when it has no scheduler file */
	long slice_idle_us;		/* -1: not bfq */
	const struct bw_expo_tune *tune;	/* NULL: not tuned */
};

/* Whether a device the exporter watches is there: its other series are left out while not. */
struct bw_expo_presence {
	const char *device;
	bool present;
};

/* Per-cgroup series (export --cgroups), selected and merged (bw_cg_rollup). */
struct bw_expo_cg {
	const struct bw_cg_row *rows;
	const char (*dev)[BW_NAME_LEN];	/* each row's device name */
	int n, omitted;
	__u64 no_room;			/* completions the full map did not count */
	const char *hierarchy;		/* "cgroup2", "blkio", NULL: none mounted */
};

struct bw_expo_self {
	const char *version, *commit, *libbpf, *attach;
	const struct bw_prog_stat *progs;
	int nprogs;
	bool bpf_stats;
	double sample_s, last_sample_unix;
	double rss_bytes, cpu_s, start_unix;
	double bpf_cpu_s;		/* blkwise's programs' CPU, estimated (user/model/cost.c) */
	double observed;		/* share of the last interval the light tier ran */
	double max_cpu;			/* the ceiling, a share of one CPU (0: none) */
	long open_fds;
	const struct bw_bc_snap *biocache;	/* NULL: not asked for (--bio-cache) */
	const struct bw_expo_presence *presence;	/* named devices, and any shown */
	const struct bw_expo_cg *cgroups;	/* NULL: not asked for (--cgroups) */
	int npresence;
};

/* Everything but the scrape counters and the end: rendered once per sample. */
void bw_expo_render(struct bw_prom *p, const struct bw_expo_self *s, const struct bw_expo_dev *d,
		    int n);
/* The scrape counters and, in OpenMetrics, the end: rendered per scrape. */
void bw_expo_render_scrapes(struct bw_prom *p, __u64 scrapes, double dur_sum, __u64 dur_count);

#endif /* BLKWISE_PROMFMT_H */
