/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Replaying a trace into the figures `stat` shows: the events of a file
 * rebuild, per device, the very counters bpf/core.bpf.c keeps (struct
 * bw_snap_dev, struct bw_stream), and the same pure code (metrics.c,
 * classify.c, hist.c) turns them into intervals, P_eff and classes: one
 * definition, two sources.  On top, what only events give: exact
 * percentiles, seek distances, outliers.  Pure: no BPF, no system calls.
 *
 * Memory is bounded whatever the trace's length: requests in flight, a
 * capped stream table, fixed histograms.  Exact percentiles are a radix
 * select: each round narrows the bucket that holds the rank 4096-fold.  Up
 * to BW_RP_KEEP_VALUES latencies (each under 4.29 s) the rounds run over
 * pass 1's values kept in memory (2 bytes each, grouped by their top 16
 * bits, so a round reads only the groups its buckets span); past that, over
 * the file again, one pass a round, so the source must rewind.
 */
#ifndef BLKWISE_REPLAY_H
#define BLKWISE_REPLAY_H

#include "model/model.h"
#include "model/trace.h"
#include "stall.h"
#include "streams.h"

enum bw_lat { BW_LAT_Q2D, BW_LAT_D2C, BW_LAT_Q2C, BW_NR_LAT };
extern const char *const bw_lat_names[BW_NR_LAT];

#define BW_NR_PCTL 5
extern const double bw_pctls[BW_NR_PCTL];	/* 0.5 0.9 0.99 0.999 1 */
#define BW_SEEK_BUCKETS 48			/* log2 of sectors, bucket 0: sequential */
#define BW_OUTLIERS 10
#define BW_RP_MAX_STREAMS 4096
#define BW_RP_KEEP_VALUES (48ULL << 20)	/* 192 MiB of latencies at most */

/* A request the way it completed, with its context. */
struct bw_replay_req {
	__u32 dev;
	__u32 pid;
	char comm[BW_COMM_LEN];
	int op;
	__u64 sector;
	__u32 bytes;
	__u32 depth;		/* in flight on the device after its D */
	__s32 error;
	__u64 q_ts, d_ts, c_ts;	/* q_ts 0: unknown; relative to the trace's start */
};

/* Exact latency distribution of one series. */
struct bw_xdist {
	__u64 n;
	__u64 min, max;
	double sum;
	__u64 pct[BW_NR_PCTL];	/* ns, exact (nearest rank) */
	__u32 *h;		/* pass-1 histogram */
	int tfirst, tcount;	/* its percentiles still being narrowed */
	__u32 *win;		/* pass 1's values, while they fit: by top 16 bits (replay.c) */
};

struct bw_replay_stream {
	struct bw_skey key;		/* by process or by cgroup, as stat's (bpf/streams.h) */
	struct bw_stream s;
	struct bw_stream_interval iv;	/* over the whole trace */
	struct bw_stream prev;		/* at the last interval's end */
	struct bw_stream_interval tick;	/* the last interval */
	__u64 max_all;			/* its greatest depth over the whole trace */
};

struct bw_replay_dev {
	__u32 dev;
	char name[BW_NAME_LEN];
	const struct bw_tdev *info;	/* the header's row, or NULL */
	struct bw_dev_pcpu acc;		/* cumulative, as one CPU of the BPF side keeps it */
	struct bw_op_stats ext[BW_NR_OPS];	/* acc's histograms extended (snap.c) */
	struct bw_snap_dev prev;	/* at the last interval's end */
	struct bw_interval total;	/* the whole trace through metrics.c */
	struct bw_class cls;
	struct bw_xdist lat[BW_NR_OPS][BW_NR_LAT];
	__u64 seek[BW_SEEK_BUCKETS];	/* distance from the previous D's end */
	__u64 last_end;
	__u64 events, completed;
	struct bw_replay_req slow[BW_OUTLIERS];	/* slowest Q2C (D2C when Q unknown) */
	int nslow;
	struct bw_dev_shared sh;	/* the in-flight word of bpf/flight.h, replayed */
	__u64 epoch;		/* intervals closed: the epoch of acc's maximum depth */
	__u64 sum_d;		/* the D times of those in flight: their open area (bw_flight_area) */
	__u64 max_depth_all;
	struct bw_stall stall;		/* dispatch stalls (bpf/stall.h), replayed */
	__u64 tick_events;		/* events at the last interval's end */
	bool idle_ok;			/* idle_iv holds an idle interval's figures */
	struct bw_interval idle_iv;
};

/* One device over one interval, as stat would have reported it. */
struct bw_replay_tick {
	const struct bw_replay_dev *d;
	double t;		/* interval start, s from the trace's start */
	const struct bw_interval *iv;
	const struct bw_class *cls;
	__u64 inflight;
	const struct bw_stream_interval *const *streams;	/* with I/O in it */
	int nstreams;
};

struct bw_replay_opts {
	double interval;	/* s; default 1 */
	double from, to;	/* s from the trace's start; to <= 0: the end */
	int ndevs;		/* filter; 0: every device */
	__u32 devs[BW_MAX_WATCH];
	bool exact;		/* extra passes for exact percentiles */
	enum bw_stream_by streams_by;	/* streams by process (the default) or cgroup */
	void (*on_tick)(void *ctx, const struct bw_replay_tick *t);
	void (*on_req)(void *ctx, const struct bw_replay_req *r);
	void *ctx;
};

struct bw_replay;

int bw_replay_new(struct bw_replay **out, const struct bw_replay_opts *o,
		  const struct bw_tsource *src);
/* Every pass; 0, or -1 with the source's message in src->err. */
int bw_replay_run(struct bw_replay *rp);
void bw_replay_free(struct bw_replay *rp);

/* Results, after run. */
int bw_replay_devs(const struct bw_replay *rp, const struct bw_replay_dev **devs);
int bw_replay_streams(const struct bw_replay *rp, const struct bw_replay_stream **s);
const char *bw_replay_comm(const struct bw_replay *rp, __u32 pid);
/* Whether Qs took their stream by cgroup from the bio's blkg (bio), from the task (task). */
void bw_replay_owners(const struct bw_replay *rp, __u64 *bio, __u64 *task);
double bw_replay_span(const struct bw_replay *rp);	/* s covered */
__u64 bw_replay_dev_inflight(const struct bw_replay_dev *d);	/* at the end */
/* s from the trace's start to its last event, whatever --from and --to. */
double bw_replay_trace_span(const struct bw_replay *rp);
__u64 bw_replay_events(const struct bw_replay *rp);
int bw_replay_passes(const struct bw_replay *rp);
/* Percentiles exact (else each its histogram bucket's bound, up to 0.4% below). */
bool bw_replay_exact(const struct bw_replay *rp);
/* Requests the table could not follow (never completed, evicted). */
__u64 bw_replay_abandoned(const struct bw_replay *rp);
/* Idle intervals of long gaps (over 100 intervals) not emitted one by one. */
__u64 bw_replay_skipped(const struct bw_replay *rp);

#endif /* BLKWISE_REPLAY_H */
