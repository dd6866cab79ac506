/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model: the per-device snapshot every subcommand consumes, the figures
 * of an interval, and the types of the pure code (user/model/).  No libbpf,
 * no system calls: what includes this can be unit-tested without root.
 */
#ifndef BLKWISE_MODEL_H
#define BLKWISE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "core.h"
#include "biocache.h"
#include "virtio.h"
#include "cgroups.h"

#define BW_NAME_LEN 32
#define BW_MAX_WATCH 256

struct bw_class;
struct bw_json;

/* Exit codes: usage errors and runtime errors. */
#define BW_EXIT_USAGE 2
#define BW_EXIT_RUNTIME 1

/* struct bw_op_pcpu summed over CPUs, every field 64-bit (bpf/core.h). */
struct bw_op_stats {
	BW_OP_FIELDS(__u64);
};

/*
 * What /sys/block/DEV/stat counts per op (reads, writes, discards,
 * flushes: diskstats' groups, blkwise's first four ops), cumulative since
 * the device appeared: the counts of a light tier that runs for a share of
 * the time (--max-cpu).
 */
struct bw_dstat {
	__u64 ios[BW_NR_OPS];
	__u64 bytes[BW_NR_OPS];
	__u64 merges[BW_NR_OPS];
};

/* Cumulative counters of one device, summed over CPUs and slots. */
struct bw_snap_dev {
	__u32 dev;
	char name[BW_NAME_LEN];
	struct bw_op_stats op[BW_NR_OPS];
	__u64 busy_ns;		/* closed periods plus the open one */
	bool busy_unknown;	/* not measured: no BPF atomic fetch-and-add (< 5.12) */
	__u64 inflight;		/* at read time */
	__u64 max_depth;	/* over the epoch just closed */
	__u64 unmatched;
	__u64 untracked;
	__u64 lost;
	__u64 fsync_writes;	/* empty PREFLUSH writes: completed as writes, never issued */
	__u64 open_area_ns;	/* requests in flight at read time: their time since issue */
	__u64 stall_ns;		/* dispatch stalls (bpf/stall.h), with the open episode */
	__u64 stalls;		/* their episodes */
	bool stall_unknown;	/* not measured: no insert events (before 5.12, or a recording) */
	bool light;		/* the light tier: busy, solo, depth and stalls not measured */
	__u64 nostamp;		/* light: final completions without the kernel's issue stamp */
	__u64 fallback;		/* light: the issue program times this device (nonzero) */
	/* diskstats' io_ticks at the read (user/watch), the light tier's busy time */
	__u64 io_ticks_ms;
	bool io_ticks_known;
	__u64 appearance;	/* which appearance of the device io_ticks counts for */
	/*
	 * Light tier: the kernel's stamps come from a plug's cached clock (6.9+),
	 * so service and queue time are those of the requests its timing
	 * slices timed (xop: their count and timing fields, cumulative).
	 */
	bool plug_clock;
	bool x_timed;		/* xop is read */
	/*
	 * Counts, bytes and merges are diskstats' (ds, replacing op's for the
	 * first four ops): the light tier runs for a share of the time.
	 * light_ios: what its own counts were, every op (a P_eff estimate's
	 * size mix is its, scaled to the counts).
	 */
	bool counts_ds;
	__u64 light_ios;
	struct bw_dstat ds;	/* diskstats' at the read (user/watch), with ds_known */
	bool ds_known;
	struct bw_op_stats xop[BW_NR_OPS];
};

struct bw_snap {
	__u64 ts_ns;		/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns */
	int nr;
	int cap;		/* entries of devs */
	struct bw_snap_dev *devs;
};

/*
 * Why busy periods, solo service times (S1), P_eff, the class and depth are
 * not measured on a kernel without BPF atomic fetch-and-add: P_eff's reason,
 * and the words the tests skip those checks with there (busy time then
 * comes from the kernel's io_ticks).
 */
/* One line: tests/lib.sh reads it from here. */
#define BW_NO_FETCH_WHY "this kernel has no BPF atomic fetch-and-add (Linux 5.12 or later): no busy periods, solo service times or depth"

/* One device over one interval: what stat prints and export publishes. */
struct bw_interval {
	__u32 dev;
	char name[BW_NAME_LEN];
	const char *identity;	/* stable identity (set by the caller), or NULL */
	const char *identity_note;	/* why it may not be stable, or NULL */
	const char *slaves;	/* space-separated names (set by the caller), or NULL */
	const char *holders;
	bool bio_based;		/* measured from bio queue to completion */
	double secs;
	__u64 ios[BW_NR_OPS];
	__u64 bytes[BW_NR_OPS];
	__u64 q_ios;
	/*
	 * Every op's figures summed, passthrough included: errors, merges,
	 * requeues and figures.h's other counters of every op.
	 */
	struct bw_op_stats sum;
	__s64 merges_diskstats;	/* diskstats' merges over the interval (set by the caller), or -1 */
	__u64 svc_hist_samples, queue_hist_samples;	/* histogram totals */
	__u64 unmatched, untracked, lost;	/* events left unpaired, cumulative */
	__u64 lost_now;		/* lost completions detected this interval */
	double r_per_s, w_per_s, d_per_s, f_per_s;
	double r_mb_per_s, w_mb_per_s;
	double svc_mean_ms, svc_p50_ms, svc_p99_ms;
	double queue_mean_ms, total_mean_ms;
	__u64 fsync_writes;	/* empty flush writes, in ios[BW_OP_WRITE] (diskstats counts them) */
	double depth_busy;	/* mean in flight while busy: bw_flight_area / busy */
	__u64 depth_max;
	bool depth_max_unknown;	/* not measured before 5.12, as busy time */
	double busy_pct;
	const char *busy_source;	/* "exact" (the in-flight word), "io_ticks" (diskstats), NULL */
	double seg_per_rq, kb_per_rq;
	__u64 segments;		/* physical segments of the interval's requests */
	__u64 hist_seg[BW_SEG_BUCKETS];	/* requests by segment count (bpf/hist.h) */
	bool virtio;		/* stat --virtio: the four below are shown */
	__s64 vio_indirect, vio_direct;	/* ring buffers added by kind, -1: not known */
	__s64 vio_descs;	/* their descriptors (in indirect tables or the ring), -1 */
	double indirect_share;	/* vio_indirect over both, NAN when not known */
	double stall_s;		/* dispatch stalls in the interval (docs/design.md); NAN: unknown */
	double stall_share;	/* stall_s over busy time, at most 1; NAN: unknown */
	__u64 stall_episodes;
	bool stall_unknown;
	double solo_ms;		/* solo service of the interval's dominant (op, class) */
	__u64 solo_ios;		/* solo samples behind the S1 values used */
	const char *s1_source;	/* "live", "stored", or NULL when unknown */
	double s1_age_s;	/* a stored S1's age; NAN when live */
	double p_eff;		/* NAN when undetermined */
	const char *p_eff_why;	/* why undetermined, or NULL */
	const char *p_eff_code;	/* the same, short, for the table */
	double s1_coverage;	/* share of completions whose S1 was known */
	double solo_work_ns;	/* sum over them of S1: solo-equivalent work done */
	__u64 solo_known;	/* completions whose S1 was known */
	bool light;		/* from the light tier: what needs the exact tier is not measured */
	/*
	 * Light tier with exact slices: depth, stalls, S1 and P_eff are the
	 * last slice's sample (bw_interval_sampled), taken sample_age_s ago
	 * over sample_s seconds; exact_share is the share of time the exact
	 * tier has run since start.
	 */
	bool sampled;
	double sample_age_s, sample_s, exact_share;
	/*
	 * Where depth and P_eff come from: "exact" (the exact tier), "sampled"
	 * (an exact slice within the interval), "estimated" (the light tier:
	 * Little's law, requests x service time over busy time from io_ticks,
	 * and P_eff = N x S1 over that busy time), or NULL (not known).
	 */
	const char *depth_source, *p_eff_source;
	/*
	 * Where service and queue time come from: "issue" (the exact tier),
	 * "stamp" or "issue_fallback" (the light tier), "sampled" (the light
	 * tier where the kernel's stamps are a plug's cached clock: the exact
	 * slices' requests, timing_share of the interval's).
	 */
	const char *timing_source;
	double timing_share;
	double stamp_plugged_share;	/* light: completions whose issue stamp was a plug's clock */
	bool gone;
};

/* A solo service time learned earlier, as the S1 store keeps it. */
struct bw_s1 {
	__u64 samples;
	__u64 mean_ns;
	__s64 learned;		/* unix seconds; 0: none */
	bool estimated;		/* the light tier's (bw_interval_solo_estimate), not the store's */
};

struct bw_s1_dev {
	struct bw_s1 s[BW_NR_OPS][BW_SIZE_CLASSES];
};

/* Tunables of the P_eff definition (see docs/design.md). */
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
			 double secs, const struct bw_peff_params *pp, const struct bw_s1_dev *stored,
			 __s64 now_unix, struct bw_interval *out);
/*
 * What only the exact tier measures (depth, stalls, S1, P_eff), from x, an
 * exact slice's interval taken age_s ago, into o, a light one; share is
 * the exact tier's share of time.  Busy time stays o's (io_ticks).
 */
void bw_interval_sampled(struct bw_interval *o, const struct bw_interval *x, double age_s,
			 double share);
/*
 * Share of completions whose issue stamp was a plug's cached clock above
 * which service time from the stamps is not trusted (marked, tests/test_light.sh).
 */
#define BW_PLUGGED_TRUST 0.01
/* The service time's mark in the table: '~' sampled, '!' untrusted stamps, else 0. */
char bw_timing_mark(const struct bw_interval *iv);
/*
 * Whether a device's workload moved from interval a to b: its completion
 * rate, mean request size or depth (Little's: rate x service time over
 * busy time) changed by a factor of BW_MOVED or more, or it started or
 * stopped doing I/O.  Intervals of under BW_MOVED_MIN_IOS completions are
 * idle to it.
 */
#define BW_MOVED 1.5
#define BW_MOVED_MIN_IOS 20
bool bw_workload_moved(const struct bw_interval *a, const struct bw_interval *b);
/* Completions per second, every op. */
double bw_interval_rate(const struct bw_interval *iv);
/*
 * Where no exact tier measures S1 (before 5.12, or no slices): an interval
 * whose requests were alone on the device (Little's depth at most
 * BW_SOLO_DEPTH, its busy time from io_ticks) gives S1 samples of its
 * mean service time, per op, for the size class that holds nine tenths of
 * the op's requests.  Added to ios and ns ([op][class]).
 */
#define BW_SOLO_DEPTH 1.1
void bw_interval_solo_estimate(const struct bw_snap_dev *prev, const struct bw_snap_dev *cur,
			       const struct bw_interval *iv, __u64 ios[BW_NR_OPS][BW_SIZE_CLASSES],
			       __u64 ns[BW_NR_OPS][BW_SIZE_CLASSES]);

/*
 * A virtio disk's ring buffers between two reads of its counts
 * (bpf/virtio.bpf.c), into out's vio_* and indirect_share; cur NULL: not
 * known (the object off, not a virtio disk).
 */
void bw_vio_interval(const struct bw_vio_stats *prev, const struct bw_vio_stats *cur,
		     struct bw_interval *out);
/* The integral of requests in flight over an interval, ns (the rule stat and analyze share). */
__u64 bw_flight_area(__u64 d2c, __u64 open_start, __u64 open_end);
/* Why P_eff is undetermined, each reason once (metrics.c): JSON's text, the table's code, the legend's words. */
enum bw_peff_why_id {
	BW_WHY_IDLE, BW_WHY_FEW, BW_WHY_SHALLOW, BW_WHY_NO_S1, BW_WHY_LIGHT, BW_WHY_NOFETCH, BW_WHY_N
};
struct bw_peff_why {
	const char *text, *code, *legend;
};
extern const struct bw_peff_why bw_peff_whys[BW_WHY_N];
void bw_render_legend(FILE *f);
bool bw_interval_active(const struct bw_interval *iv);
void bw_op_stats_add(struct bw_op_stats *dst, const struct bw_op_stats *src);
void bw_op_stats_sub(struct bw_op_stats *dst, const struct bw_op_stats *a,
		     const struct bw_op_stats *b);

/* snap.c (pure): a device's entry in a snapshot (added if new), a slot's per-CPU sums. */
struct bw_snap_dev *bw_snap_dev_get(struct bw_snap *s, __u32 dev, int cap);
void bw_snap_add_pcpu(struct bw_snap_dev *d, const struct bw_dev_pcpu *pcpu, int ncpus,
		      __u64 closed_epoch, struct bw_op_stats *ext);
/* ext extended from one slot's 32-bit buckets, nothing added anywhere. */
void bw_pcpu_extend(const struct bw_dev_pcpu *pcpu, int ncpus, struct bw_op_stats *ext);
/*
 * The light tier's own timed requests of a slot (struct bw_dev_xpcpu per
 * CPU) into ops' timing fields (BW_NR_OPS), histograms extended in ext.
 */
void bw_xtime_add(struct bw_op_stats *ops, const struct bw_dev_xpcpu *x, int ncpus,
		  struct bw_op_stats *ext);
/* A slot's per-CPU op figures only, summed into ops (BW_NR_OPS), histograms extended in ext. */
void bw_pcpu_add_ops(struct bw_op_stats *ops, const struct bw_dev_pcpu *pcpu, int ncpus,
		     struct bw_op_stats *ext);
void bw_snap_free(struct bw_snap *s);
/* A device's counters in a snapshot, or NULL. */
const struct bw_snap_dev *bw_snap_find(const struct bw_snap *s, __u32 dev);

/* One stream (device, process) over one interval. */
struct bw_stream_interval {
	__u32 dev;
	__u32 tgid;		/* by process */
	char comm[16];		/* by process: its name at its first Q */
	bool by_cgroup;
	__u64 cgroup_id;	/* by cgroup: the v2 id */
	const char *cgroup;	/* by cgroup: its path, or NULL once gone */
	double ios_per_s;
	double depth;		/* mean requests outstanding (Q..C) while it has any */
	__u64 depth_max;
	double think_ms;	/* mean gap from its last completion to its next Q */
	double think_p90_ms;	/* its p90 (+inf: beyond 8 ms) */
	double seq_pct;		/* requests starting where the previous ended */
	double seek_kb;		/* mean distance from the previous request's end */
	double sync_pct;
	bool deep;
	__u64 ios;
	__u64 bytes;		/* of the requests completed */
};
/* Streams by cgroup where no request carried a cgroup of its own (said once). */
#define BW_OWNER_TASK_NOTE								\
	"requests carry no cgroup of their own here (no blkg, or the io controller is on "	\
	"cgroup v1): each is charged to the submitting task's cgroup v2, a buffered "	\
	"write to the flusher's"

/*
 * busy_ns of both must already include their open period (bw_streams_read);
 * closed is the epoch the interval's read closed (bw_epoch_max_of).
 */
void bw_stream_compute(const struct bw_stream *prev, const struct bw_stream *cur, __u64 closed,
		       double secs, struct bw_stream_interval *o);

/* render.c (pure) */
void bw_render_header(FILE *f);
void bw_render_row(FILE *f, const struct bw_interval *iv, const struct bw_class *cls);
void bw_render_virtio_row(FILE *f, const struct bw_interval *iv);
void bw_render_json_dev(struct bw_json *j, const struct bw_interval *iv,
			const struct bw_class *cls, __u64 inflight);
void bw_render_stream_header(FILE *f, bool by_cgroup);
void bw_render_stream_row(FILE *f, const char *dev, const struct bw_stream_interval *s);
void bw_render_json_stream(struct bw_json *j, const char *dev, const struct bw_stream_interval *s);

/* hist.c (pure) */
double bw_hist_percentile(const __u64 *hist, unsigned int nbuckets, double p);
__u64 bw_hist_total(const __u64 *hist, unsigned int nbuckets);
/* A 64-bit count read back as a 32-bit sum that moved by less than 2^32. */
__u64 bw_extend32(__u64 prev, __u32 sum);
void bw_bucket_bounds(unsigned int idx, double *lo, double *hi);

/* devname.c (pure parsing; the reader passes the file) */
#define BW_MKDEV(ma, mi) (((__u32)(ma) << 20) | (__u32)(mi))
#define BW_MAJOR(d) ((unsigned int)((d) >> 20))
#define BW_MINOR(d) ((unsigned int)((d) & 0xfffff))
#define BW_ID_LEN 256
#define BW_REL_LEN 256

enum bw_id_kind { BW_ID_DEVT, BW_ID_WWID, BW_ID_SERIAL, BW_ID_BACKING, BW_ID_PENDING };

struct bw_devinfo {
	__u32 dev;
	__u32 disk;		/* the whole disk: dev unless a partition */
	char name[BW_NAME_LEN];	/* uevent DEVNAME */
	bool exists;		/* /sys/dev/block/M:m is there */
	bool partition;
	bool is_loop;
	bool has_backing;	/* false for an unbound loop device */
	bool rotational;
	__u64 size_sectors;
	char model[64];
	/* One appearance of the device: a new one re-reads its identity. */
	__u64 diskseq;		/* the disk's sequence number (5.15+), else 0 */
	__u64 ino;		/* its sysfs directory's inode: new when re-created */
	char backing[BW_ID_LEN];	/* a loop device's backing file, as bound */
	__u64 offset;		/* and its offset */
	/* Read once per appearance (bw_dev_identify), never per interval. */
	bool identified;
	enum bw_id_kind id_kind;	/* BW_ID_PENDING: the serial is still to read */
	char id[BW_ID_LEN];
	bool bio_based;		/* no request queue of its own (no mq/ in sysfs) */
	__u64 ds_merges;	/* /sys/block/DEV/stat's merges (rrqm + wrqm + drqm), cumulative */
	__u64 ds_ticks_ms;	/* and its io_ticks, cumulative */
	bool ds_merges_known;	/* both read */
	struct bw_dstat ds;	/* and all it counts (valid with ds_merges_known) */
	char slaves[BW_REL_LEN];	/* the disk's slaves/ (what it is stacked on), space-separated */
	char holders[BW_REL_LEN];	/* its holders/ (what is stacked on it) */
};
int bw_parse_uevent(FILE *f, struct bw_devinfo *di);
enum bw_id_kind bw_pick_identity(const char *wwid, const char *serial, const char *backing,
				 __u64 offset, const char *file_id, __u32 dev, char *out, size_t len);
const char *bw_id_note(enum bw_id_kind k);
/*
 * Whether the identity may name another device than the one a belief was
 * stored under: a dev_t, or a backing file without its birth time (a file
 * replaced at the same path, on FUSE say, can get the same device and inode).
 */
bool bw_id_ambiguous(enum bw_id_kind k, const char *id);
bool bw_dev_present(const struct bw_devinfo *di);
int bw_parse_stat(const char *line, __u64 *merges, __u64 *io_ticks_ms);
/* The same line's completions and bytes per op (diskstats' four groups), into ds. */
int bw_parse_dstat(const char *line, struct bw_dstat *ds);
bool bw_dev_same_appearance(const struct bw_devinfo *a, const struct bw_devinfo *b);
void bw_dev_keep_identity(struct bw_devinfo *di, const struct bw_devinfo *was);
#define BW_ID_RECHECK_S 600
bool bw_id_recheck_due(enum bw_id_kind k, double age_s, bool had_io, bool doubt, bool seq);
int bw_parse_interval(const char *s, double *secs);
int bw_parse_count(const char *s, long *count);
int bw_parse_size(const char *s, __u64 *bytes);

/* classify.c (pure): deep / shallow / unknown, with hysteresis */
enum bw_class_id { BW_CLASS_UNKNOWN, BW_CLASS_SHALLOW, BW_CLASS_DEEP };
#define BW_CLASS_WIN 5
#define BW_DEEP_AT 2.0		/* P_eff at or above: deep */
#define BW_SHALLOW_AT 1.4	/* P_eff at or below: shallow */
struct bw_class {
	enum bw_class_id cls;
	double win[BW_CLASS_WIN];	/* last determined P_eff samples */
	int nwin, head;
	double evidence_s;		/* seconds of determined samples */
	int pending;			/* consecutive samples against cls */
	double median;
	char reason[200];
	bool stored;			/* cls came from the store; live evidence not yet enough */
	double stored_p_eff;
	__s64 stored_learned;
};
void bw_class_update(struct bw_class *c, double p_eff, double secs);
void bw_class_seed(struct bw_class *c, enum bw_class_id cls, double p_eff, __s64 learned);
/* Live evidence enough for a first class of its own: worth storing. */
bool bw_class_live(const struct bw_class *c);
const char *bw_class_name(enum bw_class_id cls);

/*
 * json.c (pure): a small streaming JSON writer.  Its CSV mode writes the
 * same calls as CSV rows (RFC 4180): each top-level object is a row, a
 * field's column is its JSON path (nested keys joined by '.'), an array of
 * values is one cell of space-separated values, null an empty cell; the
 * header mode writes the column names of one row instead of its values.
 */
enum bw_json_mode { BW_JSON, BW_CSV_HEADER, BW_CSV_ROW };
struct bw_json {
	FILE *f;
	int depth;
	bool need_comma[16];
	enum bw_json_mode mode;
	const char *path[16];	/* CSV: the key of each open object or array */
	bool cell_open;		/* CSV: an array's cell is being written */
	bool row_started;
};
void bw_json_begin(struct bw_json *j, FILE *f);
void bw_json_begin_csv(struct bw_json *j, FILE *f, bool header);
void bw_json_obj(struct bw_json *j, const char *key);
void bw_json_arr(struct bw_json *j, const char *key);
void bw_json_close(struct bw_json *j, char c);
void bw_json_num(struct bw_json *j, const char *key, double v, int prec);
void bw_json_u64(struct bw_json *j, const char *key, __u64 v);
void bw_json_str(struct bw_json *j, const char *key, const char *v);
void bw_json_bool(struct bw_json *j, const char *key, bool v);
void bw_json_end(struct bw_json *j);

/* s1store.c (pure): the S1 store's records and file format */
struct bw_s1_rec {
	char id[BW_ID_LEN];
	int op, cls;
	struct bw_s1 v;
};
/* A device's class, as the store keeps it. */
struct bw_cls_rec {
	char id[BW_ID_LEN];
	enum bw_class_id cls;
	double p_eff;		/* the median P_eff it was decided on */
	__s64 learned;
};
/*
 * A device's idling verdict: the idle setting a probe measured faster for
 * two or more sync sequential streams (0, or the nonzero setting it
 * tried), or strict_guarantees with idling where a repair won (BFQ had
 * stopped idling), by how much, and when.
 */
struct bw_idle_rec {
	char id[BW_ID_LEN];
	__u32 idle_us;
	__u32 strict;		/* 1: strict_guarantees with idle_us */
	double gain;		/* the winner's throughput over the loser's, less 1 */
	__s64 learned;
};
struct bw_s1_store {
	struct bw_s1_rec *r;
	int n, cap;
	struct bw_cls_rec *c;
	int nc, capc;
	struct bw_idle_rec *v;
	int nv, capv;
};
void bw_s1_store_free(struct bw_s1_store *s);
struct bw_s1_rec *bw_s1_store_find(const struct bw_s1_store *s, const char *id, int op, int cls);
int bw_s1_store_put(struct bw_s1_store *s, const char *id, int op, int cls, const struct bw_s1 *v);
int bw_s1_store_get(const struct bw_s1_store *s, const char *id, struct bw_s1_dev *out);
int bw_s1_store_merge(struct bw_s1_store *dst, const struct bw_s1_store *src);
int bw_s1_store_put_class(struct bw_s1_store *s, const char *id, enum bw_class_id cls,
			  double p_eff, __s64 learned);
const struct bw_cls_rec *bw_s1_store_class(const struct bw_s1_store *s, const char *id);
int bw_s1_store_put_idle(struct bw_s1_store *s, const char *id, __u32 idle_us, __u32 strict,
			 double gain, __s64 learned);
const struct bw_idle_rec *bw_s1_store_idle(const struct bw_s1_store *s, const char *id);
void bw_s1_store_prune(struct bw_s1_store *s, int max);
/* A state file's first line: MAGIC and a version from 1 to max (user/model/statefile.c). */
int bw_state_version(FILE *f, const char *magic, const char *what, int max, int *version,
		     char *why, size_t len);
int bw_s1_store_parse(FILE *f, struct bw_s1_store *s, char *why, size_t len);
int bw_s1_store_format(FILE *f, const struct bw_s1_store *s);

/*
 * The per-cpu bio alloc cache (bpf/biocache.bpf.c), counted since load:
 * exact where fentry/fexit load, else what block_bio_queue shows.
 */
enum bw_bc_method { BW_BC_OFF, BW_BC_TRACEPOINT, BW_BC_EXACT };

struct bw_bc_set {
	__u64 bs;			/* struct bio_set address; 0: bios of no set */
	char name[48];			/* its symbol, from /proc/kallsyms, else the address */
	struct bw_bc_stats sum;		/* over CPUs */
	struct bw_bc_stats *cpu;	/* ncpus entries */
};

struct bw_bc_snap {
	enum bw_bc_method method;
	const char *why;		/* why not exact ("" when exact) */
	int ncpus;
	int nr;
	struct bw_bc_set *sets;
};
void bw_bc_snap_free(struct bw_bc_snap *s);

/* A loaded program's run time and count (counted while BPF stats are on). */
struct bw_prog_stat {
	char name[64];
	__u64 run_ns;
	__u64 run_cnt;
};

/*
 * cost.c (pure): what blkwise's programs and process cost, and the shares
 * a CPU ceiling leaves the light tier and the slices.  Until measured, a
 * kind's price is its default: what make bench measures on a 2-vCPU VM
 * with the kernel's accounting on (which adds to every run), rounded up.
 */
enum bw_cost_kind {
	BW_COST_ALWAYS,		/* attached throughout: per completion, on every device */
	BW_COST_TIMING,		/* a timing slice's Q and issue programs: per request timed */
	BW_COST_EXACT,		/* the exact tier's: per request an exact slice saw */
	BW_COST_OTHER,		/* not counted (the optional objects' other programs) */
	BW_COST_KINDS,
};
#define BW_COST_ALWAYS_NS 250.0
#define BW_COST_TIMING_NS 450.0
#define BW_COST_EXACT_NS 800.0
#define BW_COST_MIN_EVENTS 1000
/*
 * What attaching and detaching cost blkwise's own CPU, a pair of each (the
 * kernel patches every tracepoint's call sites: in a VM, milliseconds),
 * until measured.
 */
#define BW_COST_SWITCH_S 0.001
#define BW_COST_MAX_CYCLE 40	/* periods: the longest a duty cycle gets */
struct bw_cost_model {
	double ns[BW_COST_KINDS];	/* price per event */
	bool measured[BW_COST_KINDS];
	double sw_light_s;		/* the light tier on and off again, CPU seconds */
	double sw_timing_s;		/* a timing slice's programs on and off again */
	bool sw_light_seen, sw_timing_seen;
};
/* What a ceiling leaves, for the periods (period_s) that follow. */
struct bw_cost_plan {
	double light_share;	/* of each cycle the light tier is attached */
	double slice_budget;	/* share of one CPU the slices may take */
	int cycle;		/* periods a cycle lasts: the light tier on once, slices once */
};
struct bw_cost_in {
	double ceiling;		/* of one CPU; 0: none */
	double rate;		/* completions a second on every device */
	double user;		/* the process's own share, switching left out */
	double budget;		/* what the slices may take without a ceiling */
	double min_timing;	/* of a period, the shortest timing slice (0: none needed) */
	double period_s;
};
enum bw_cost_kind bw_cost_kind_of(const char *prog);
void bw_cost_init(struct bw_cost_model *m);
void bw_cost_learn(struct bw_cost_model *m, const struct bw_prog_stat *a,
		   const struct bw_prog_stat *b, int n);
/* The share of one CPU events[] of each kind cost over secs. */
double bw_cost_cpu(const struct bw_cost_model *m, const double events[BW_COST_KINDS], double secs);
void bw_cost_switched(struct bw_cost_model *m, bool light, double pair_s);
void bw_cost_plan(const struct bw_cost_model *m, const struct bw_cost_in *in,
		  struct bw_cost_plan *p);

/* cgrollup.c: per-cgroup series for the exporter (export --cgroups) */
#define BW_CG_PATH_LEN 256
struct bw_cg_row {
	__u32 dev;
	int op;
	char path[BW_CG_PATH_LEN];	/* "/" for the root, and for I/O with no owner */
	struct bw_cg_val v;
};
struct bw_cg_select {
	int depth;		/* components of a path kept; 0: all */
	const char *under;	/* only cgroups at or under this path; NULL: all */
	int max;		/* cgroups published at most; 0: no limit */
};
/* v added into t: the sum of two CPUs', or of two cgroups merged. */
void bw_cg_val_add(struct bw_cg_val *t, const struct bw_cg_val *v);
/* path cut to its first depth components; depth 0: as is. */
void bw_cg_cut(char *path, int depth);
bool bw_cg_under(const char *path, const char *top);
/*
 * The n rows selected, cut and merged in place; how many remain.  Beyond
 * sel->max cgroups those with fewer requests are left out: how many in
 * *omitted.
 */
int bw_cg_rollup(struct bw_cg_row *r, int n, const struct bw_cg_select *sel, int *omitted);

#endif /* BLKWISE_MODEL_H */
