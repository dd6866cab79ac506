/* SPDX-License-Identifier: GPL-2.0 */
/* blkwise user space: the per-device snapshot every subcommand consumes. */
#ifndef BLKWISE_H
#define BLKWISE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "core.h"

#define BW_NAME_LEN 32
#define BW_MAX_WATCH 256

struct bw_class;
struct bw_json;

/* Exit codes: usage errors and runtime errors. */
#define BW_EXIT_USAGE 2
#define BW_EXIT_RUNTIME 1

/* Cumulative counters of one device, summed over CPUs and slots. */
struct bw_snap_dev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct bw_op_stats op[BW_NR_OPS];
	__u64 busy_ns;		/* closed periods plus the open one */
	__u64 inflight;		/* at read time */
	__u64 max_depth;	/* over the epoch just closed */
	__u64 unmatched;
	__u64 untracked;
	__u64 lost;
};

struct bw_snap {
	__u64 ts_ns;		/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns */
	int nr;
	struct bw_snap_dev *devs;
};

/* One device over one interval: what stat prints and export publishes. */
struct bw_interval {
	__u32 dev;
	char name[BW_NAME_LEN];
	double secs;
	__u64 ios[BW_NR_OPS];
	__u64 bytes[BW_NR_OPS];
	__u64 errors, merges, requeues, q_ios;
	__u64 svc_hist_samples, queue_hist_samples;	/* histogram totals */
	__u64 unmatched, untracked, lost;	/* events we could not pair, cumulative */
	__u64 lost_now;		/* lost completions detected this interval */
	double r_per_s, w_per_s, d_per_s, f_per_s;
	double r_mb_per_s, w_mb_per_s;
	double svc_mean_ms, svc_p50_ms, svc_p99_ms;
	double queue_mean_ms, total_mean_ms;
	double depth_busy;	/* mean in flight while busy: sum(D2C) / busy */
	__u64 depth_max;
	double busy_pct;
	double seg_per_rq, kb_per_rq;
	double merges_per_s, requeues_per_s;
	double solo_ms;		/* solo service of the interval's dominant (op, class) */
	__u64 solo_ios;		/* solo samples behind the S1 values used */
	double p_eff;		/* NAN when undetermined */
	const char *p_eff_why;	/* why undetermined, or NULL */
	double s1_coverage;	/* share of completions whose S1 was known */
	bool gone;
};

/* Tunables of the P_eff definition (see DESIGN.md and README). */
struct bw_peff_params {
	double min_depth;	/* L needed for P_eff to be defined */
	__u64 min_solo;		/* solo samples for a class's S1 to count */
	double min_coverage;	/* share of completions with known S1 */
	__u64 min_ios;		/* completions in the interval */
};

extern const struct bw_peff_params bw_peff_default;
extern const char *const bw_op_names[BW_NR_OPS];

/* metrics.c (pure) */
void bw_interval_compute(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			 double secs, const struct bw_peff_params *pp, struct bw_interval *out);
void bw_op_stats_add(struct bw_op_stats *dst, const struct bw_op_stats *src);
void bw_op_stats_sub(struct bw_op_stats *dst, const struct bw_op_stats *a,
		     const struct bw_op_stats *b);

/* One stream (device, process) over one interval. */
struct bw_stream_interval {
	__u32 dev;
	__u32 tgid;
	char comm[16];
	double ios_per_s;
	double depth;		/* mean requests outstanding (Q..C) while it has any */
	__u64 depth_max;
	double think_ms;	/* mean gap from its last completion to its next Q */
	double seq_pct;		/* requests starting where the previous ended */
	double seek_kb;		/* mean distance from the previous request's end */
	double sync_pct;
	bool deep;
	__u64 ios;
};
/* busy_ns of both must already include their open period (bw_core_streams). */
void bw_stream_compute(const struct bw_stream *prev, const struct bw_stream *cur, double secs,
		       struct bw_stream_interval *o);

/* render.c (pure) */
void bw_render_header(FILE *f);
void bw_render_row(FILE *f, const struct bw_interval *iv, const struct bw_class *cls);
void bw_render_json_dev(struct bw_json *j, const struct bw_interval *iv,
			const struct bw_class *cls, __u64 inflight);
void bw_render_stream_header(FILE *f);
void bw_render_stream_row(FILE *f, const char *dev, const struct bw_stream_interval *s);
void bw_render_json_stream(struct bw_json *j, const char *dev, const struct bw_stream_interval *s);

/* hist.c (pure) */
double bw_hist_percentile(const __u64 *hist, unsigned int nbuckets, double p);
__u64 bw_hist_total(const __u64 *hist, unsigned int nbuckets);
void bw_bucket_bounds(unsigned int idx, double *lo, double *hi);

/* devname.c (pure parsing; the reader passes the file) */
struct bw_part {
	__u32 dev;
	char name[BW_NAME_LEN];
};
int bw_parse_partitions(FILE *f, struct bw_part *out, int max);
const struct bw_part *bw_part_by_name(const struct bw_part *p, int n, const char *name);
const struct bw_part *bw_part_by_dev(const struct bw_part *p, int n, __u32 dev);
int bw_parse_interval(const char *s, double *secs);
int bw_parse_count(const char *s, long *count);

/* classify.c (pure): deep / shallow / unknown, with hysteresis */
enum bw_class_id { BW_CLASS_UNKNOWN, BW_CLASS_SHALLOW, BW_CLASS_DEEP };
#define BW_CLASS_WIN 5
struct bw_class {
	enum bw_class_id cls;
	double win[BW_CLASS_WIN];	/* last determined P_eff samples */
	int nwin, head;
	double evidence_s;		/* seconds of determined samples */
	int pending;			/* consecutive samples against cls */
	double median;
	char reason[200];
};
void bw_class_update(struct bw_class *c, double p_eff, double secs);
const char *bw_class_name(enum bw_class_id cls);

/* json.c (pure): a small streaming JSON writer */
struct bw_json {
	FILE *f;
	int depth;
	bool need_comma[16];
};
void bw_json_begin(struct bw_json *j, FILE *f);
void bw_json_obj(struct bw_json *j, const char *key);
void bw_json_arr(struct bw_json *j, const char *key);
void bw_json_close(struct bw_json *j, char c);
void bw_json_num(struct bw_json *j, const char *key, double v, int prec);
void bw_json_u64(struct bw_json *j, const char *key, __u64 v);
void bw_json_str(struct bw_json *j, const char *key, const char *v);
void bw_json_bool(struct bw_json *j, const char *key, bool v);
void bw_json_end(struct bw_json *j);

/* util.c */
extern bool bw_json_errors;
void bw_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__u64 bw_now_ns(void);
int bw_read_partitions(struct bw_part *out, int max);
int bw_disk_of(const char *name, char *disk, size_t len);
int bw_check_privileges(void);
int bw_read_sysfs_u64(const char *disk, const char *attr, __u64 *val);

/* Signals: set by the handler, polled by the loops. */
extern volatile int bw_exiting;
void bw_install_signals(void);
int bw_sleep_ns(__u64 ns);

int cmd_stat(int argc, char **argv);

#endif /* BLKWISE_H */
