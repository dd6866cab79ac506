/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tuner's policy: from what one device showed over a window to the BFQ
 * idling setting it should have.  Pure (no BPF, no system calls): tune.c
 * feeds it observations and applies what it answers; the unit tests feed
 * it recorded sequences.
 */
#ifndef BLKWISE_POLICY_H
#define BLKWISE_POLICY_H

#include "model/model.h"

enum bw_policy_policy { BW_POLICY_THROUGHPUT, BW_POLICY_LATENCY };

struct bw_policy_cfg {
	enum bw_policy_policy policy;
	__u32 max_idle_us;	/* ceiling of a nonzero setting (BFQ's default 8000) */
	__u32 min_idle_us;	/* floor of a nonzero setting */
	__u32 strict_idle_us;	/* the least nonzero setting with strict_guarantees, sequential */
	double window_s;	/* one measurement window */
	double settle_s;	/* left out after every change: BFQ finishes its slice */
	double trial_settle_s;	/* left out before a strict_guarantees trial's window */
	double repair_patience_s; /* a repair's trial goes on until a window wins, this long */
	double repair_retry_s;	/* a repair that lost once is tried again this long after */
	double probe_s;		/* a probe's measured part */
	double probe_every_s;	/* at most one probe per device this often ... */
	double dwell_s;		/* ... and no two changes closer than this, but for a probe's end */
	double gain;		/* a throughput difference smaller than this share is a tie */
	__u64 min_ios;		/* completions a window needs to count */
	bool dry_run;		/* probes are announced, never run */
	bool no_strict;		/* never set BFQ's strict_guarantees */
};

extern const struct bw_policy_cfg bw_policy_cfg_default;

/* One interval of one device, as the watch loop measured it. */
struct bw_policy_obs {
	double secs;
	__u64 ios;
	double bytes;
	double busy_s;		/* busy time */
	double p_eff;		/* NAN when undetermined */
	const char *p_eff_why;
	double solo_work_s;	/* solo-equivalent work (sum of S1 over known completions) */
	__u64 solo_known;	/* completions whose S1 was known */
	double depth;		/* mean in flight while busy */
	double s1_ms;
	const char *s1_source;
	enum bw_class_id cls;	/* the device's class, with its hysteresis */
	bool cls_stored;	/* cls is the store's, not yet confirmed live */
	int streams;		/* with I/O in the interval */
	int sync_seq;		/* of those: sync and mostly sequential */
	int sync_rand;		/* of those: sync and mostly random */
	double seq_pct;		/* share of sequential requests, all streams */
	double think_p90_ms;	/* the largest p90 think time of the sync sequential ones */
	double kb_per_rq;
	__u32 idle_us;		/* slice_idle_us in force during the interval */
	bool rotational;	/* queue/rotational: BFQ serves it as a spindle */
};

/* A window: observations added up. */
struct bw_policy_win {
	double secs, bytes, busy_s;
	__u64 ios;
	double work_s;		/* solo-equivalent work: P_eff over the window is work / busy */
	__u64 known;		/* completions whose S1 was known */
	double depth_sum;	/* sum of depth * busy_s */
	double seq_sum;		/* sum of seq_pct * ios */
	double kb_sum;		/* sum of kb_per_rq * ios */
	double think_p90_ms;	/* max over the window */
	double rate2_sum;	/* sum over its ticks of bytes^2 / secs: their spread */
	int ticks;		/* observations added */
	int streams, sync_seq, sync_rand;	/* max over the window */
	double s1_ms;
	const char *s1_source;
	enum bw_class_id cls;	/* the last one */
	bool cls_stored;
	__u32 idle_us;
	bool rotational;
};

/* What the workload looks like, to notice when it changes. */
struct bw_policy_sig {
	int streams, sync_seq;
	int seq_tenths;		/* sequential share in tenths */
	int size_class;		/* log2 of KiB per request */
};

/*
 * BW_PH_STRICT: strict_guarantees on, measured from trial_settle_s after the
 * switch against the window before: one window for random sync reads; once
 * BFQ stopped idling, window after window until one wins or
 * repair_patience_s has passed.
 */
enum bw_policy_phase { BW_PH_MEASURE, BW_PH_PROBE, BW_PH_STRICT };

struct bw_policy_state {
	enum bw_policy_phase phase;
	__u32 setting;		/* what we believe is in force */
	__u32 strict;		/* strict_guarantees believed in force (0 or 1) */
	/* The last window BFQ idled in (depth ~1 under 2+ sync sequential streams). */
	struct bw_policy_win idled;
	struct bw_policy_sig idled_sig;	/* the workload then */
	bool has_idled;
	int lost_n;		/* windows in a row with idling set and BFQ not idling */
	bool after_probe;	/* a probe of 0 went back to idling, and BFQ has not idled since */
	int probe_damage;	/* repairs of what a probe of 0 left */
	/* The last strict_guarantees trial: on what workload, when, and whether it won. */
	bool strict_tried, strict_won;
	double strict_at;
	double strict_idled_mbps;	/* a repair's: the rate BFQ idled at before (NAN: unknown) */
	bool strict_repair;	/* the trial is a repair (BFQ had stopped idling) */
	__u32 strict_from_us;	/* the setting before strict_guarantees went on */
	__u32 strict_back_us;	/* where a trial that loses goes: strict_from_us, or 0 */
	int strict_lost_n;	/* trials lost in a row on that workload */
	struct bw_policy_sig strict_sig;
	int repairs;
	double settle_until;
	double last_change;	/* -1: never */
	double last_probe;	/* -1: never */
	struct bw_policy_win win;	/* the window being filled */
	struct bw_policy_win base;	/* the window before a probe */
	__u32 probe_from, probe_to;
	/* The last probe's verdict and the workload it was taken on. */
	bool has_verdict;
	__u32 verdict;
	struct bw_policy_sig verdict_sig;
	bool verdict_stored;	/* the store's: holds for any 2+ sync sequential streams */
	bool verdict_clear;	/* decided by more than gain (not a tie) */
	/* The store's verdict for this device, until a window it applies to takes it. */
	bool has_stored;
	__u32 stored_us;
	bool stored_strict;	/* with strict_guarantees: a repair won */
	double stored_gain, stored_age_s;
	struct bw_policy_sig sig;	/* the workload, as it has held for two windows */
	bool has_sig;
	struct bw_policy_sig cand_sig;	/* a change seen once, not yet held */
	int cand_n;
	/*
	 * Why what the store holds for the device is in doubt (its identity
	 * may name another device), until live evidence or a probe checks it;
	 * NULL: no doubt.
	 */
	const char *doubt;
	bool checking;		/* the probe in progress is the check of that doubt */
	const char *check_doubt;	/* the doubt being checked */
	int check_ties;		/* checks of it that settled nothing, so far */
	double probe_s;		/* the probe in progress: its length before stretching */
	int changes, probes;
	int windows;		/* full windows judged */
	double probe_cost_s;	/* seconds spent on probed settings */
};

enum bw_policy_action {
	BW_POLICY_NONE,
	BW_POLICY_SET,		/* a decision: set after */
	BW_POLICY_PROBE,		/* try after for a probe */
	BW_POLICY_KEEP,		/* probe over: after (the probed setting) stays */
	BW_POLICY_REVERT,		/* probe over: back to after (the setting before) */
	BW_POLICY_REPAIR,		/* BFQ stopped idling: strict_guarantees on, for a trial */
	BW_POLICY_NR_ACTIONS
};

struct bw_policy_decision {
	enum bw_policy_action action;
	__u32 before, after;
	__u32 strict_before, strict_after;	/* strict_guarantees */
	char why[512];
	struct bw_policy_win win;	/* the evidence */
	struct bw_policy_win base;	/* for a probe's end: the window it is compared with */
	double resolution;	/* a probe's end: the relative difference the windows resolve */
	enum bw_class_id learned;	/* a probe's end: the class P_eff showed, or UNKNOWN */
	bool dropped;		/* a check's end: the store's beliefs were wrong here */
	double learned_peff;
	/* A probe's end decided by throughput under 2+ sync sequential streams, for the store. */
	bool verdict_learned;
	__u32 verdict_us;
	__u32 verdict_strict;	/* strict_guarantees with it: a repair won */
	double verdict_gain;
};

void bw_policy_init(struct bw_policy_state *st, __u32 setting);
/*
 * At start, before any window, on a device BFQ serves as a spindle or
 * not (queue/rotational); true when d holds a decision.
 */
bool bw_policy_start(const struct bw_policy_cfg *cfg, struct bw_policy_state *st, enum bw_class_id cls,
		   bool stored, bool rotational, struct bw_policy_decision *d);
/*
 * The store's idling verdict for the device (bw_idle_rec), learned age_s
 * ago: a hypothesis the first window with 2+ sync sequential streams
 * takes as a probe's verdict, measured again like one.  With strict (a
 * repair won: BFQ had stopped idling), strict_guarantees goes on at start.
 */
void bw_policy_seed_verdict(struct bw_policy_state *st, __u32 idle_us, __u32 strict, double gain,
			  double age_s);
/*
 * What the store holds for the device (class, S1 or idling verdict) may be
 * another device's, for the reason why (a string that outlives st): it
 * starts decisions as before, and is checked within the first windows with
 * two or more streams competing.
 */
void bw_policy_doubt(struct bw_policy_state *st, const char *why);
/* Adds one interval ending at t (seconds); true when d holds something to do or say. */
bool bw_policy_step(const struct bw_policy_cfg *cfg, struct bw_policy_state *st,
		  const struct bw_policy_obs *o, double t, struct bw_policy_decision *d);
/*
 * The setting is v, strict_guarantees strict, from time t on (written, or
 * left as they were in a dry run).
 */
void bw_policy_applied(const struct bw_policy_cfg *cfg, struct bw_policy_state *st, __u32 v,
		     __u32 strict, double t);
const char *bw_policy_action_name(enum bw_policy_action a);
double bw_policy_win_mbps(const struct bw_policy_win *w);
double bw_policy_win_peff(const struct bw_policy_win *w);
double bw_policy_win_depth(const struct bw_policy_win *w);
/* The window as evidence, one line (no newline), "-" for what is unknown. */
void bw_policy_win_evidence(char *buf, size_t len, const struct bw_policy_win *w);
const char *bw_policy_strict_note(const struct bw_policy_decision *d);
/* An interval of a device and its streams (those with I/O on it) as an observation. */
#define BW_POLICY_MAX_STREAMS 4096
void bw_policy_observe(const struct bw_interval *iv, const struct bw_class *cls,
		     const struct bw_stream_interval *const *streams, int nstreams, __u32 idle_us,
		     struct bw_policy_obs *o);
/* The nonzero setting for streams whose p90 think time is think_ms. */
__u32 bw_policy_idle_for(const struct bw_policy_cfg *cfg, double think_ms);

/* tunefile.c (pure): what a tuner changed, so it can be put back after a crash. */
struct bw_tunefile_orig {
	int pid;		/* the tuner that wrote it */
	char name[BW_NAME_LEN];
	__u32 dev;
	char id[BW_ID_LEN];	/* the device's identity (bw_pick_identity); "" if unknown */
	char sched[32];		/* the scheduler before, when the tuner changed it; "" if not */
	long slice_idle_us;	/* before; -1 if untouched */
	long low_latency;	/* before; -1 if untouched */
	long strict_guarantees;	/* before; -1 if untouched */
};
int bw_tunefile_format(FILE *f, const void *orig);
int bw_tunefile_parse(FILE *f, struct bw_tunefile_orig *o, char *why, size_t len);
/* "none [mq-deadline] bfq" -> "mq-deadline"; -EINVAL without brackets. */
int bw_parse_scheduler(const char *line, char *out, size_t len);

#endif /* BLKWISE_POLICY_H */
