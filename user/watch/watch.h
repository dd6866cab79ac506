/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The watch loop every live subcommand shares: device names and identities
 * from sysfs, which rows to show, per-interval figures, device classes,
 * streams, and the S1 store.  stat renders what it gives; tune decides.
 */
#ifndef BLKWISE_WATCH_H
#define BLKWISE_WATCH_H

#include "load/loader.h"

/* What a device's row shows this interval. */
enum bw_row { BW_ROW_HIDE, BW_ROW_SHOW, BW_ROW_GONE };

/*
 * On the light tier, the exact tier runs for a slice of every
 * exact_period_s (0: never): exact_slice_s long, or (0) as long as
 * exact_budget, a share of one CPU, pays at the last interval's rate of
 * I/O (user/watch/slices.c); a long slice at start and when a workload
 * moves.
 */
#define BW_EXACT_PERIOD_S 0.5
#define BW_EXACT_BUDGET 0.0025

struct bw_watch_opts {
	struct bw_core_opts core;
	double exact_period_s, exact_slice_s;
	double exact_budget;
	double max_cpu;		/* --max-cpu: a share of one CPU, 0: none */
	bool max_cpu_given;	/* on the command line, not a subcommand's default */
	bool no_state;
	const char *state_dir;
	int nr_names;
	char names[BW_MAX_WATCH][BW_NAME_LEN];	/* -d as given */
};

/* Per device state that outlives one interval. */
struct bw_watch_dev {
	__u32 dev;
	struct bw_devinfo info;
	__u64 id_read_ns;	/* when info's identity was last read (the sample's clock) */
	bool id_doubt;		/* live evidence contradicted what was learned under it */
	bool named;		/* given with -d: shown even without a size */
	bool shown;		/* present (sized, backed) when last looked at */
	bool dropped;		/* named, and gone since: not shown until present again */
	enum bw_row row;
	struct bw_class cls;
	bool has_stored;	/* stored holds the S1 store's values for info.id */
	struct bw_s1_dev stored;
	bool has_idle;		/* idle holds the store's idling verdict for info.id */
	struct bw_idle_rec idle;
	__u64 saved_solos[BW_NR_OPS][BW_SIZE_CLASSES];	/* live solos at the last save */
	/*
	 * The slot's solo counters when the device last went: an earlier
	 * appearance's samples, left out of this one's S1 (bw_watch_solo).
	 */
	__u64 solo_base_ios[BW_NR_OPS][BW_SIZE_CLASSES];
	__u64 solo_base_ns[BW_NR_OPS][BW_SIZE_CLASSES];
	bool moved_warned;	/* named, and its name now on another dev_t: said once */
	/* S1 the light tier estimated, where no exact tier measures it (bw_interval_solo_estimate) */
	__u64 lsolo_ios[BW_NR_OPS][BW_SIZE_CLASSES];
	__u64 lsolo_ns[BW_NR_OPS][BW_SIZE_CLASSES];
	struct bw_interval iv;	/* the last interval, valid when row != HIDE */
	struct bw_interval xiv;	/* the last exact slice's sample, valid when x_at_ns */
	__u64 x_at_ns;
	__s64 ds_merges;	/* diskstats' merges since the last sample, or -1 */
	__u64 inflight;
};

struct bw_watch_stream {
	const struct bw_watch_dev *dev;
	struct bw_stream_interval s;
};

/* What blkwise costs, and the ceiling's plan (user/watch/cost.c). */
struct bw_cost_state {
	struct bw_cost_model model;
	struct bw_cost_plan plan;	/* for the next interval */
	double bpf, user;		/* the last interval's, shares of one CPU */
	double bpf_s;			/* the programs' CPU since start, seconds (estimated) */
	double rate;			/* completions a second on every disk */
	bool rated;			/* rate measured (a second after start) */
	double sw_s, sw_s_at;		/* CPU spent attaching and detaching: since start, at at_ns */
	double sw_on_s[2];		/* the last attach's, light tier [1] and timing slice [0] */
	double light_share;		/* of the last interval the light tier ran */
	__u64 at_ns;			/* the last interval's end, and what was counted then: */
	double cpu_s;
	__u64 completions, light_ns, timing_ns, exact_ns;
	__u64 iv_ns, iv_light_ns;	/* and at the last interval's end */
	__u64 guard_ns;			/* the last check of the rate while the light tier ran */
	double iv_bpf_s, iv_cpu_s;
	/* A calibration window (the kernel's accounting held on while it lasts). */
	int stats_fd;
	struct bw_prog_stat *cal_a;
	int cal_n;
	__u64 cal_end_ns, cal_next_ns;
	bool cal_said;
};

struct bw_watch {
	struct bw_watch_opts *o;
	struct bw_core *core;
	/* Slices beside the light tier: timing and exact ones (user/watch/slices.c). */
	struct bw_core *xcore;		/* the exact tier for its slices, or NULL */
	bool t_on;			/* timing slices: the stamps are a plug's, the light tier times */
	struct bw_snap xprev;		/* the exact tier's snapshot at its slice's last sample */
	enum { BW_X_OFF, BW_X_ARMED, BW_X_ON, BW_X_DRAIN } x_state;
	__u64 x_len_ns;			/* an armed timing slice's length */
	bool x_exact;			/* the running slice is an exact one, else a timing one */
	int l_skip;			/* periods of a ceiling's cycle left without the light tier */
	bool x_urgent;			/* the next slice is an exact one: at start, after a move */
	__u64 x_next_ns;		/* the next slice event: a sample, an end or a start */
	__u64 x_end_ns;			/* the running slice's end of issues */
	__u64 x_drain_ns;		/* and of its drain at the latest */
	__u64 x_restart_ns;		/* when the next slice starts: a period after the last began */
	__u64 x_total_ns;		/* time the exact tier has run */
	__u64 x_urgent_ns;		/* when the last exact slice after a move began */
	__u64 x_exact_ns;		/* when the last exact slice began */
	__u64 t_left;			/* timed requests still out after the last drain */
	double x_share;			/* of each period a timing slice takes at the last rate */
	double x_rate;			/* completions per second at the last interval */
	double x_svc_ms;		/* the longest mean service time of its devices */
	__u64 t_total_ns;		/* time timing slices timed issues */
	__u64 t_on_ns;			/* when the running one began */
	__u64 l_total_ns;		/* time the light tier was attached, but the running stretch */
	__u64 l_on_ns;			/* when it was attached last */
	bool l_off;			/* detached: the ceiling's share of the period is spent */
	__u64 l_cycle_ns;		/* when this cycle of the light tier's began */
	struct bw_cost_state cost;
	bool owner_said;		/* streams by cgroup: whose cgroup, said */
	__u64 start_ns;
	struct bw_bio *bio;		/* bio-based devices (user/load/bio.c), or NULL */
	struct bw_streams *st;		/* with --streams (user/load/streams.c), or NULL */
	struct bw_bc *bc;		/* with --bio-cache (user/load/biocache.c), or NULL */
	struct bw_snap prev;
	struct bw_watch_dev *devs;
	int ndevs;
	struct bw_stream_snap *sprev, *scur;
	int nsprev;
	__u64 st_closed;		/* the streams' epoch the last take closed */
	struct bw_watch_stream *streams;	/* the last interval's, with I/O */
	int nstreams;
	struct bw_cgroups cgroups;
	struct bw_cgio *cg;		/* with cgroups (user/load/cgroups.c), or NULL */
	struct bw_cgroups cg_paths;	/* its ids, in the io controller's hierarchy */
	struct { __u64 id, since; } *cg_ids;	/* ids not found, since when */
	int ncg_ids;
	struct bw_cg_series *cg_buf;	/* the last read of its series */
	int cg_cap;
	struct bw_s1_store store;
	bool store_warned;
	bool dirty;		/* the store has something new to write */
	__u64 saved_at;
	double secs;		/* length of the last interval */
};

/*
 * The options every watching subcommand takes: -d, -v, --btf,
 * --force-raw-tp, --version; and those that learn S1 (stat, tune,
 * export) --state-dir and --no-state.  A subcommand passes what getopt
 * returns to bw_watch_opt first; the getopt values below are its.  Their
 * text, and getopt's tables, are cmd/options.c's.
 */
enum { BW_OPT_STATE_DIR = 1000, BW_OPT_NO_STATE, BW_OPT_BTF, BW_OPT_RAW_TP, BW_OPT_VERSION,
       BW_OPT_EXACT, BW_OPT_EXACT_PERIOD, BW_OPT_EXACT_SLICE, BW_OPT_BIO_CACHE,
       BW_OPT_EXACT_BUDGET, BW_OPT_MAX_CPU };
/* export's ceiling unless told otherwise: a share of one CPU (docs/export.md says why) */
#define BW_EXPORT_MAX_CPU 0.01
void bw_watch_opts_init(struct bw_watch_opts *o);
/* 1 when c was one of those (and is taken), 0 when not, -EINVAL on bad input. */
int bw_watch_opt(struct bw_watch_opts *o, int c, const char *arg);

/* Names to dev_t; 0, or -ENODEV after saying which (a usage error). */
int bw_watch_resolve(struct bw_watch *w, struct bw_watch_opts *o);
/*
 * Privileges, the S1 store, BPF load and attach (the core, then the objects
 * the options and devices ask for), the first snapshot; 0 or -errno.
 */
int bw_watch_start(struct bw_watch *w);
/* Per-cgroup series (export --cgroups), selected and merged (user/model/cgrollup.c). */
#define BW_CG_READ_MAX 16384
struct bw_cg_rows {
	struct bw_cg_row *rows;
	char (*names)[BW_NAME_LEN];	/* each row's device */
	int n, omitted;
	struct bw_cg_count counts;
	const char *hierarchy;		/* where the ids were found: "cgroup2", "blkio"; NULL: off */
};
/* out filled (n 0 without --cgroups); 0 or -ENOMEM.  Free with bw_cg_rows_free. */
int bw_watch_cgroups(struct bw_watch *w, const struct bw_cg_select *sel, struct bw_cg_rows *out);
void bw_cg_rows_free(struct bw_cg_rows *r);
/* Between samples more than BW_REFRESH_NS apart: keeps 32-bit histogram buckets from wrapping. */
int bw_watch_refresh(struct bw_watch *w);
/* Up to max loaded programs of every object; how many, or -errno. */
int bw_watch_prog_stats(const struct bw_watch *w, struct bw_prog_stat *out, int max);
/* The bio alloc cache (method BW_BC_OFF without --bio-cache); 0 or -errno. */
int bw_watch_biocache(const struct bw_watch *w, struct bw_bc_snap *s);
/*
 * Ends an interval: figures in every device's iv; how many named devices
 * are alive.  A device that goes is dropped (one BW_ROW_GONE interval,
 * then hidden) and what was learned under its identity goes to the store;
 * one that comes back on the same dev_t is identified afresh and shown
 * again, its counters going on from where they were.
 */
int bw_watch_sample(struct bw_watch *w);
/*
 * Device s's interval from since (a snapshot of this watch, kept by the
 * caller: export's spans -i however often it samples) to the last sample,
 * computed as the watch's own (store, identity, exact slices).
 */
void bw_watch_interval(const struct bw_watch *w, const struct bw_watch_dev *s,
		       const struct bw_snap *since, struct bw_interval *iv);
/*
 * Starts, samples or ends an exact slice when one is due; ns until the
 * next is due (UINT64_MAX: never).  The caller's wait calls it again then.
 */
__u64 bw_watch_slices(struct bw_watch *w);
/* The snapshot of dev that holds the exact tier's counters (solo samples), or NULL. */
const struct bw_snap_dev *bw_watch_exact_dev(const struct bw_watch *w, __u32 dev);
/* Learned S1 into the store, if anything is new. */
void bw_watch_save(struct bw_watch *w);
void bw_watch_close(struct bw_watch *w);
/* A class found otherwise (a tuner's probe): seeds the device's, and goes to the store. */
void bw_watch_learn_class(struct bw_watch *w, __u32 dev, enum bw_class_id cls, double p_eff);
/* The stored class is another device's (a check said so): not used any more this run. */
void bw_watch_drop_class(struct bw_watch *w, __u32 dev);
/* A probe's idling verdict for a device, into the store under its identity. */
void bw_watch_learn_idle(struct bw_watch *w, __u32 dev, __u32 idle_us, __u32 strict, double gain);
struct bw_watch_dev *bw_watch_dev(struct bw_watch *w, __u32 dev);
/* Solo samples and their service time, of the device's present appearance only. */
void bw_watch_solo(const struct bw_watch_dev *s, const struct bw_snap_dev *d, int op, int c,
		   __u64 *ios, __u64 *ns);
/* The devices to show, sorted by name, into out (bw_watch_ndevs long); how many. */
int bw_watch_rows(struct bw_watch *w, struct bw_watch_dev **out);
/*
 * What a consumer of the session reads (export): every device known, shown
 * or not (bw_watch_dev_at, 0 <= i < bw_watch_ndevs), the last sample's
 * cumulative snapshot, and how the programs are attached.
 */
int bw_watch_ndevs(const struct bw_watch *w);
const struct bw_watch_dev *bw_watch_dev_at(const struct bw_watch *w, int i);
const struct bw_snap *bw_watch_snapshot(const struct bw_watch *w);
const char *bw_watch_attach_mode(const struct bw_watch *w);
/* The last interval: its length, and its streams with I/O (*n of them). */
double bw_watch_secs(const struct bw_watch *w);
/* Which tier runs: "exact tier", "light tier", or the light tier with exact slices. */
const char *bw_watch_tier_text(const struct bw_watch *w, char *buf, size_t len);
const struct bw_watch_stream *bw_watch_streams(const struct bw_watch *w, int *n);
/* What blkwise cost over the last interval, and the ceiling's plan. */
const struct bw_cost_state *bw_watch_cost(const struct bw_watch *w);

#endif /* BLKWISE_WATCH_H */
