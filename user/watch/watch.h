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
 * On the light tier, the exact tier runs for slices: exact_slice_s of
 * every exact_period_s (0: never), the first slice BW_EXACT_FIRST_S at
 * least, so that a class is learned as soon as on the exact tier.
 */
#define BW_EXACT_PERIOD_S 20.0
#define BW_EXACT_SLICE_S 1.0
#define BW_EXACT_FIRST_S 3.0

struct bw_watch_opts {
	struct bw_core_opts core;
	double exact_period_s, exact_slice_s;
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

struct bw_watch {
	struct bw_watch_opts *o;
	struct bw_core *core;
	struct bw_core *xcore;		/* the exact tier's slices, beside the light tier, or NULL */
	struct bw_snap xprev;		/* its last snapshot */
	bool owner_said;		/* streams by cgroup: whose cgroup, said */
	bool x_on;			/* a slice is running */
	bool x_first;			/* the next slice is the first */
	__u64 x_next_ns;		/* the next slice event: a sample, an end or a start */
	__u64 x_end_ns;			/* the running (or last) slice's end */
	__u64 x_restart_ns;		/* when the next slice starts: a period after the last began */
	__u64 x_total_ns;		/* time the exact tier has run */
	__u64 start_ns;
	struct bw_bio *bio;		/* bio-based devices (user/load/bio.c), or NULL */
	struct bw_streams *st;		/* with --streams (user/load/streams.c), or NULL */
	struct bw_bc *bc;		/* with --bio-cache (user/load/biocache.c), or NULL */
	struct bw_snap prev;
	struct bw_watch_dev *devs;
	int ndevs;
	struct bw_stream_snap *sprev, *scur;
	int nsprev;
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
       BW_OPT_EXACT, BW_OPT_EXACT_PERIOD, BW_OPT_EXACT_SLICE, BW_OPT_BIO_CACHE };
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

#endif /* BLKWISE_WATCH_H */
