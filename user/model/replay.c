// SPDX-License-Identifier: GPL-2.0
/*
 * A trace replayed into stat's counters, and what only events give (see
 * replay.h).  The per-event rules are bpf/core.bpf.c's, written again for
 * events that come from a file: on_issue, on_complete, on_requeue, the
 * merges and the streams' on_queue / stream_done, with a request named by
 * its address (our traces) or by device and sector (blktrace's).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "model/replay.h"
#include "streams.h"
#include "complete.h"
#include "flight.h"

const char *const bw_lat_names[BW_NR_LAT] = { "q2d", "d2c", "q2c" };
const double bw_pctls[BW_NR_PCTL] = { 0.5, 0.9, 0.99, 0.999, 1.0 };

#define REQ_SYNC_BIT (1u << 11)	/* __REQ_SYNC: REQ_OP_BITS (8) + 3 since 4.10 */
#define XH_SUB_BITS 8
#define XH_SUB (1u << XH_SUB_BITS)
#define XH_BUCKETS (XH_SUB + (64 - XH_SUB_BITS) * XH_SUB)
#define REFINE 4096u
#define RQ_MIN_CAP (1u << 10)	/* grows with what is in flight; small stays cached */
#define RQ_MAX_CAP (1u << 22)
#define STALE_NS (60ULL * 1000000000ULL)
#define SLOTS_STREAM (2 * BW_RP_MAX_STREAMS)
#define SLOTS_COMM 16384
#define MAX_IDLE_TICKS 100

/* A request in flight (or queued): the per-request state BPF keeps by tag. */
struct rp_rq {
	__u64 a, b;		/* key: (rq, 0) or (sector, by_sector()); (0, 0) empty */
	__u64 q_ts;		/* stream Q time */
	__u64 d_ts;		/* when issued, if issued */
	__u64 last_ts;
	__u64 sid;		/* its stream's id: tgid, or cgroup (bw_skey) */
	__u32 tgid;
	__u32 depth;
	__u32 stream;		/* the stream holding it: its index + 1, 0 for none */
	__u16 dev;		/* index into rp->devs */
	__u8 issued;		/* D seen and not yet C or requeue */
	__u8 waiting;		/* inserted or requeued, not yet issued (bpf/stall.h) */
};

struct rp_comm {
	__u32 pid;
	char comm[BW_COMM_LEN];
};

/*
 * One exact percentile being narrowed: [lo, lo + width * REFINE) in REFINE
 * cells; width is a power of two (a bucket's width, divided by REFINE).
 */
struct rp_target {
	struct bw_xdist *x;
	int pctl;
	__u64 lo, width, rank;	/* rank: 1-based within [lo, ...) */
	__u32 shift;		/* log2(width) */
	__u32 *cells;
	bool done;
};

struct bw_replay {
	struct bw_replay_opts o;
	const struct bw_tsource *src;
	__u64 owner_bio, owner_task;	/* Qs whose cgroup is the bio's blkg's, the task's */
	struct bw_replay_dev *devs;
	int ndevs, devs_cap;
	int last_dev;
	struct rp_rq *rq;
	__u32 rq_cap, rq_n;
	struct bw_replay_stream *streams;
	int nstreams;
	__u32 last_stream;	/* the last Q's stream, index + 1: a burst's Qs skip the hash */
	__u32 *stream_slot;	/* index + 1 */
	struct rp_comm *comms;
	__u64 t0, from_ns, to_ns, next_tick, tick_ns, last_ts;
	__u64 seen_ts;		/* the last event's time, in the window or not */
	__u64 events, abandoned, stream_overflow, skipped_ticks;
	bool started, full;
	bool by_sector;		/* some request was keyed by sector (bio Q, blktrace) */
	bool no_segments;	/* the source does not carry segment counts (blktrace) */
	bool exact;		/* every percentile narrowed to its value */
	bool keep;		/* pass 1 keeps its latencies for the refining rounds */
	bool no_inserts;	/* the source did not record inserts: no dispatch stalls */
	bool q_clock;		/* Q from block_io_start: queue time from it, as stat's */
	__u64 kept;
	__u16 *arena;		/* their chunks (keep_value) */
	size_t arena_used;	/* in __u16 */
	int passes;
	struct rp_target *targets;
	int ntargets;
	struct bw_stream_interval **tick_streams;
	struct bw_snap_dev scratch;
};

static __u32 ilog2_64(__u64 v)
{
	return 63 - __builtin_clzll(v);
}

/* splitmix64's finalizer: request addresses share their low bits. */
static __u64 mix(__u64 a, __u64 b)
{
	__u64 x = a ^ (b * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Requests: open addressing, linear probing, backward-shift delete. */

static struct rp_rq *rq_find(struct bw_replay *rp, __u64 a, __u64 b)
{
	__u32 mask = rp->rq_cap - 1, i = (__u32)mix(a, b) & mask;

	for (;; i = (i + 1) & mask) {
		struct rp_rq *e = &rp->rq[i];

		if (e->a == a && e->b == b)
			return e;
		if (!e->a && !e->b)
			return NULL;
	}
}

static void rq_del(struct bw_replay *rp, struct rp_rq *e)
{
	__u32 mask = rp->rq_cap - 1, i = (__u32)(e - rp->rq), j = i, home;

	for (;;) {
		j = (j + 1) & mask;
		if (!rp->rq[j].a && !rp->rq[j].b)
			break;
		home = (__u32)mix(rp->rq[j].a, rp->rq[j].b) & mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			rp->rq[i] = rp->rq[j];
			i = j;
		}
	}
	memset(&rp->rq[i], 0, sizeof(rp->rq[i]));
	rp->rq_n--;
}

static struct rp_rq *rq_put(struct bw_replay *rp, __u64 a, __u64 b);

static int rq_grow(struct bw_replay *rp, __u32 cap)
{
	struct rp_rq *old = rp->rq;
	__u32 i, n = rp->rq_cap;

	rp->rq = calloc(cap, sizeof(*rp->rq));
	if (!rp->rq) {
		rp->rq = old;
		return -ENOMEM;
	}
	rp->rq_cap = cap;
	rp->rq_n = 0;
	for (i = 0; i < n; i++)
		if (old[i].a || old[i].b)
			*rq_put(rp, old[i].a, old[i].b) = old[i];
	free(old);
	return 0;
}

/* Entries idle for a minute belong to requests whose end we never saw. */
static void rq_sweep(struct bw_replay *rp, __u64 now)
{
	__u32 i = 0;

	while (i < rp->rq_cap) {
		struct rp_rq *e = &rp->rq[i];

		if ((e->a || e->b) && e->last_ts + STALE_NS < now) {
			rp->abandoned++;
			rq_del(rp, e);	/* may shift another entry into i: look again */
			continue;
		}
		i++;
	}
}

static struct rp_rq *rq_put(struct bw_replay *rp, __u64 a, __u64 b)
{
	__u32 mask, i;

	if ((rp->rq_n + 1) * 2 > rp->rq_cap) {
		if (rp->rq_cap < RQ_MAX_CAP && !rq_grow(rp, rp->rq_cap * 2))
			return rq_put(rp, a, b);
		rq_sweep(rp, rp->last_ts);
		if ((rp->rq_n + 1) * 4 > rp->rq_cap * 3)
			return NULL;
	}
	mask = rp->rq_cap - 1;
	for (i = (__u32)mix(a, b) & mask; rp->rq[i].a || rp->rq[i].b; i = (i + 1) & mask)
		;
	memset(&rp->rq[i], 0, sizeof(rp->rq[i]));
	rp->rq[i].a = a;
	rp->rq[i].b = b;
	rp->rq_n++;
	return &rp->rq[i];
}

/*
 * Find (a, b), or put it in the empty slot the search ended on: one probe
 * sequence where a find and a put would take two.  *made: it was put.
 */
static struct rp_rq *rq_get(struct bw_replay *rp, __u64 a, __u64 b, bool *made)
{
	__u32 mask = rp->rq_cap - 1, i = (__u32)mix(a, b) & mask;
	struct rp_rq *e;

	for (;; i = (i + 1) & mask) {
		e = &rp->rq[i];
		if (e->a == a && e->b == b) {
			*made = false;
			return e;
		}
		if (!e->a && !e->b)
			break;
	}
	*made = true;
	if ((rp->rq_n + 1) * 2 > rp->rq_cap)	/* to grow first: rq_put's way */
		return rq_put(rp, a, b);
	e->a = a;
	e->b = b;
	rp->rq_n++;
	return e;
}

/* Devices */

static struct bw_replay_dev *dev_of(struct bw_replay *rp, __u32 dev)
{
	struct bw_replay_dev *d;
	__u32 i;

	if (rp->last_dev >= 0 && rp->devs[rp->last_dev].dev == dev)
		return &rp->devs[rp->last_dev];
	for (i = 0; i < (__u32)rp->ndevs; i++) {
		if (rp->devs[i].dev == dev) {
			rp->last_dev = i;
			return &rp->devs[i];
		}
	}
	if (rp->o.ndevs) {
		for (i = 0; i < (__u32)rp->o.ndevs && rp->o.devs[i] != dev; i++)
			;
		if (i == (__u32)rp->o.ndevs)
			return NULL;
	}
	if (rp->ndevs >= BW_TRACE_MAX_DEVS)
		return NULL;
	if (rp->ndevs == rp->devs_cap) {	/* nobody holds a device across events */
		d = realloc(rp->devs, 2 * rp->devs_cap * sizeof(*d));
		if (!d)
			return NULL;
		rp->devs = d;
		rp->devs_cap *= 2;
	}
	d = &rp->devs[rp->ndevs];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	snprintf(d->name, sizeof(d->name), "%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
	for (i = 0; i < rp->src->info->ndevs; i++) {
		if (rp->src->devs[i].dev == dev) {
			d->info = &rp->src->devs[i];
			snprintf(d->name, sizeof(d->name), "%s", d->info->name);
		}
	}
	rp->last_dev = rp->ndevs;
	return &rp->devs[rp->ndevs++];
}

/* Requests in flight on d: its in-flight word's count (bpf/flight.h). */
__u64 bw_replay_dev_inflight(const struct bw_replay_dev *d)
{
	return d->sh.word & BW_INFLIGHT_MASK;
}

/* d's cumulative figures as the BPF side's are read: its one CPU summed. */
static void replay_snap(struct bw_replay_dev *d, struct bw_snap_dev *s)
{
	memset(s, 0, sizeof(*s));
	s->dev = d->dev;
	memcpy(s->name, d->name, sizeof(d->name));
	bw_snap_add_pcpu(s, &d->acc, 1, 0, d->ext);
}

/* Processes */

static struct rp_comm *comm_slot(const struct bw_replay *rp, __u32 pid)
{
	return &rp->comms[(mix(pid, 7) & (SLOTS_COMM - 1))];
}

const char *bw_replay_comm(const struct bw_replay *rp, __u32 pid)
{
	static const char unknown[BW_COMM_LEN] = "?";
	const struct rp_comm *c = comm_slot(rp, pid);

	return c->pid == pid && c->comm[0] ? c->comm : unknown;
}

static struct bw_replay_stream *stream_get(struct bw_replay *rp, __u32 dev, __u64 id, bool make)
{
	__u32 i = (__u32)mix(dev, id) & (SLOTS_STREAM - 1), idx;
	struct bw_replay_stream *s;

	for (;; i = (i + 1) & (SLOTS_STREAM - 1)) {
		idx = rp->stream_slot[i];
		if (!idx)
			break;
		s = &rp->streams[idx - 1];
		if (s->key.dev == dev && s->key.id == id)
			return s;
	}
	if (!make)
		return NULL;
	if (rp->nstreams >= BW_RP_MAX_STREAMS) {
		rp->stream_overflow++;
		return NULL;
	}
	s = &rp->streams[rp->nstreams++];
	memset(s, 0, sizeof(*s));
	s->key.dev = dev;
	s->key.by = rp->o.streams_by;
	s->key.id = id;
	if (s->key.by == BW_STREAMS_PROCESS)
		snprintf(s->s.comm, sizeof(s->s.comm), "%s", bw_replay_comm(rp, (__u32)id));
	rp->stream_slot[i] = rp->nstreams;
	return s;
}

/* The stream holding e, as stream_get(d's device, e's stream id) finds it. */
static struct bw_replay_stream *held_stream(struct bw_replay *rp, const struct bw_replay_dev *d,
				       const struct rp_rq *e)
{
	struct bw_replay_stream *s = &rp->streams[e->stream - 1];

	if (s->key.dev == d->dev && s->key.id == e->sid)
		return s;
	return stream_get(rp, d->dev, e->sid, false);
}

/* Who a Q's stream is: its process, or the cgroup it is charged to. */
static __u64 stream_id(const struct bw_replay *rp, const struct bw_trec *ev)
{
	return rp->o.streams_by == BW_STREAMS_CGROUP ? ev->cgroup : ev->pid;
}

/* A request its stream held leaves it (completed or not): bpf/streams.h's rule. */
static void stream_done(struct bw_replay *rp, struct bw_replay_dev *d, struct rp_rq *e, __u64 now,
			__u32 bytes, bool completed)
{
	struct bw_replay_stream *st = held_stream(rp, d, e);

	e->stream = 0;
	if (st)
		bw_stream_leave(&st->s, e->q_ts, now, bytes, completed);
}

/* streams.bpf.c's on_queue: the submitter is current, the request joins its stream. */
static void stream_queue(struct bw_replay *rp, struct bw_replay_dev *d, struct rp_rq *e,
			 const struct bw_trec *ev)
{
	struct bw_replay_stream *st = NULL;
	__u64 now = ev->ts, id = stream_id(rp, ev);

	if (e->stream)
		stream_done(rp, d, e, now, 0, false);
	if (rp->last_stream) {
		st = &rp->streams[rp->last_stream - 1];
		if (st->key.dev != d->dev || st->key.id != id)
			st = NULL;
	}
	if (!st)
		st = stream_get(rp, d->dev, id, true);
	if (!st)
		return;
	rp->last_stream = (__u32)(st - rp->streams) + 1;
	e->tgid = ev->pid;
	e->sid = id;
	if (ev->xflags & BW_X_OWNER_TASK)
		rp->owner_task++;
	else
		rp->owner_bio++;
	e->q_ts = now;
	e->stream = rp->last_stream;
	bw_stream_enter(&st->s, now, ev->sector, ev->bytes,
			(ev->flags & REQ_SYNC_BIT) || bw_op_of(ev->flags) == BW_OP_READ, d->epoch);
	if ((st->s.word & BW_INFLIGHT_MASK) > st->max_all)
		st->max_all = st->s.word & BW_INFLIGHT_MASK;
}

/* Exact percentiles */

static __u32 xh_bucket(__u64 v)
{
	__u32 m;

	if (v < XH_SUB)
		return (__u32)v;
	m = ilog2_64(v);
	return XH_SUB + (m - XH_SUB_BITS) * XH_SUB + (__u32)((v >> (m - XH_SUB_BITS)) & (XH_SUB - 1));
}

static void xh_bounds(__u32 idx, __u64 *lo, __u64 *width)
{
	__u32 m, sub;

	if (idx < XH_SUB) {
		*lo = idx;
		*width = 1;
		return;
	}
	m = (idx - XH_SUB) / XH_SUB + XH_SUB_BITS;
	sub = (idx - XH_SUB) % XH_SUB;
	*width = 1ULL << (m - XH_SUB_BITS);
	*lo = (XH_SUB + sub) * *width;
}

/* A refining round: v counted in the cells of x's open targets. */
static bool x_refine(struct bw_replay *rp, const struct bw_xdist *x, __u64 v)
{
	bool in = false;
	int i;

	for (i = x->tfirst; i < x->tfirst + x->tcount; i++) {
		struct rp_target *t = &rp->targets[i];
		__u64 off = v - t->lo;	/* below lo: wraps past the span */

		if ((off >> t->shift) < REFINE && !t->done) {
			t->cells[off >> t->shift]++;
			in = true;
		}
	}
	return in;
}

/*
 * Kept values: a value's top 16 bits pick its window, its low 16 bits are
 * kept, in a chain of chunks per window (each twice its predecessor's
 * size, up to CHUNK_MAX), so a refining round reads only the windows its
 * buckets span.  Chunks come from one arena mapped once, with huge pages
 * where the kernel allows, and are never freed one by one.
 */
#define WIN_BITS 16
#define NWIN (1u << (32 - WIN_BITS))
#define CHUNK_HDR 4		/* __u16s: the older chunk's offset (2), count, capacity */
#define CHUNK_MIN 8u
#define CHUNK_MAX 4096u
#define ARENA_LEN ((size_t)BW_RP_KEEP_VALUES * 2 * sizeof(__u16))

static __u32 chunk_prev(const __u16 *c)
{
	return c[0] | (__u32)c[1] << 16;
}

static void drop_values(struct bw_replay *rp)
{
	int d, op, l;

	rp->keep = false;
	for (d = 0; d < rp->ndevs; d++)
		for (op = 0; op < BW_NR_OPS; op++)
			for (l = 0; l < BW_NR_LAT; l++) {
				free(rp->devs[d].lat[op][l].win);
				rp->devs[d].lat[op][l].win = NULL;
			}
	if (rp->arena)
		munmap(rp->arena, ARENA_LEN);
	rp->arena = NULL;
}

/* A chunk of cap values after the window's chunk at prev (0: none); 0 when the arena is full. */
static __u32 new_chunk(struct bw_replay *rp, __u32 prev, __u32 cap)
{
	__u32 at;
	__u16 *c;

	if (!rp->arena) {
		void *p = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED)
			return 0;
		madvise(p, ARENA_LEN, MADV_HUGEPAGE);	/* a hint: without it, 4 KiB pages */
		rp->arena = p;
		rp->arena_used = CHUNK_HDR;	/* offset 0 means none */
	}
	if ((rp->arena_used + CHUNK_HDR + cap) * sizeof(__u16) > ARENA_LEN)
		return 0;
	at = (__u32)rp->arena_used;
	c = rp->arena + at;
	c[0] = (__u16)prev;
	c[1] = (__u16)(prev >> 16);
	c[2] = 0;
	c[3] = (__u16)(cap - 1);
	rp->arena_used += CHUNK_HDR + cap;
	return at;
}

/* Pass 1 keeps v for the refining rounds; false when it cannot (then none is kept). */
static bool keep_value(struct bw_replay *rp, struct bw_xdist *x, __u64 v)
{
	__u32 w = (__u32)(v >> WIN_BITS), at, cap;
	__u16 *c;

	if (v > UINT32_MAX || rp->kept >= BW_RP_KEEP_VALUES)
		return false;
	if (!x->win && !(x->win = calloc(NWIN, sizeof(*x->win))))
		return false;
	at = x->win[w];
	c = at ? rp->arena + at : NULL;	/* no arena may be mapped yet */
	if (!c || c[2] == c[3] + 1u) {
		cap = at ? (c[3] + 1u) * 2 : CHUNK_MIN;
		at = new_chunk(rp, at, cap < CHUNK_MAX ? cap : CHUNK_MAX);
		if (!at)
			return false;
		x->win[w] = at;
		c = rp->arena + at;
	}
	c[CHUNK_HDR + c[2]++] = (__u16)v;
	rp->kept++;
	return true;
}

static void x_add(struct bw_replay *rp, struct bw_xdist *x, __u64 v)
{
	if (!rp->full) {
		x_refine(rp, x, v);
		return;
	}
	if (rp->keep && !keep_value(rp, x, v))
		drop_values(rp);
	if (!x->h) {
		x->h = calloc(XH_BUCKETS, sizeof(*x->h));
		if (!x->h)
			return;
		x->min = v;
	}
	if (v < x->min)
		x->min = v;
	if (v > x->max)
		x->max = v;
	x->n++;
	x->sum += (double)v;
	x->h[xh_bucket(v)]++;
}

static __u64 rank_of(__u64 n, double p)
{
	double r = ceil(p * (double)n - 1e-9);

	return r < 1 ? 1 : (__u64)r;
}

/*
 * After pass 1: each percentile from its histogram bucket's lower bound
 * (below the true value by under 1/XH_SUB, 0.4%; exact under XH_SUB ns and
 * for the max).  With targets, the ones still to narrow are planned.
 */
static int n_targets(struct bw_xdist *x, struct rp_target *targets, int n)
{
	__u64 cum, rank, lo, w;
	__u32 i;
	int p;

	x->tfirst = n;
	for (p = 0; x->h && p < BW_NR_PCTL; p++) {
		rank = rank_of(x->n, bw_pctls[p]);
		if (rank >= x->n) {
			x->pct[p] = x->max;
			continue;
		}
		for (i = 0, cum = 0; cum + x->h[i] < rank; i++)
			cum += x->h[i];
		xh_bounds(i, &lo, &w);
		x->pct[p] = lo > x->min ? lo : x->min;
		if (w == 1 || !targets)
			continue;
		targets[n++] = (struct rp_target){
			.x = x, .pctl = p, .lo = lo, .rank = rank - cum,
			.width = (w + REFINE - 1) / REFINE,
			.shift = ilog2_64((w + REFINE - 1) / REFINE),
		};
	}
	x->tcount = n - x->tfirst;
	return n;
}

static int plan_targets(struct bw_replay *rp, bool refine)
{
	int d, op, l, p, n = 0;

	if (refine) {
		rp->targets = calloc((size_t)rp->ndevs * BW_NR_OPS * BW_NR_LAT * BW_NR_PCTL,
				     sizeof(*rp->targets));
		if (!rp->targets && rp->ndevs)
			return -ENOMEM;
	}
	for (d = 0; d < rp->ndevs; d++)
		for (op = 0; op < BW_NR_OPS; op++)
			for (l = 0; l < BW_NR_LAT; l++)
				n = n_targets(&rp->devs[d].lat[op][l], rp->targets, n);
	rp->ntargets = n;
	for (p = 0; p < n; p++) {
		rp->targets[p].cells = calloc(REFINE, sizeof(__u32));
		if (!rp->targets[p].cells)
			return -ENOMEM;
	}
	return 0;
}

/* After a refining pass: narrow each target to its cell; true while any is open. */
static bool narrow_targets(struct bw_replay *rp)
{
	bool open = false;
	int i;

	for (i = 0; i < rp->ntargets; i++) {
		struct rp_target *t = &rp->targets[i];
		__u64 cum = 0;
		__u32 c;

		if (t->done)
			continue;
		for (c = 0; c < REFINE - 1 && cum + t->cells[c] < t->rank; c++)
			cum += t->cells[c];
		t->lo += (__u64)c * t->width;
		t->rank -= cum;
		t->x->pct[t->pctl] = t->lo;
		if (t->width == 1) {
			t->done = true;
			continue;
		}
		t->width = (t->width + REFINE - 1) / REFINE;
		t->shift = ilog2_64(t->width);
		memset(t->cells, 0, REFINE * sizeof(__u32));
		open = true;
	}
	return open;
}

/* The kept values of window w through x's open targets. */
static void refine_window(struct bw_replay *rp, const struct bw_xdist *x, __u32 w)
{
	__u32 at, i;

	for (at = x->win[w]; at; at = chunk_prev(rp->arena + at)) {
		const __u16 *c = rp->arena + at;

		for (i = 0; i < c[2]; i++)
			x_refine(rp, x, (__u64)w << WIN_BITS | c[CHUNK_HDR + i]);
	}
}

/* One round over the windows x's open targets span, each window once. */
static void refine_dist(struct bw_replay *rp, const struct bw_xdist *x)
{
	__u32 lo[BW_NR_PCTL], hi[BW_NR_PCTL], w, next = 0;
	int i, n = 0;

	for (i = x->tfirst; i < x->tfirst + x->tcount; i++) {
		const struct rp_target *t = &rp->targets[i];
		__u64 end = t->lo + t->width * REFINE - 1;

		if (t->done || t->lo > UINT32_MAX)
			continue;
		lo[n] = (__u32)(t->lo >> WIN_BITS);
		hi[n++] = (__u32)((end < UINT32_MAX ? end : UINT32_MAX) >> WIN_BITS);
	}
	/* Windows in ascending order: the lowest not yet read among the spans. */
	for (;;) {
		__u32 best = UINT32_MAX;
		bool any = false;

		for (i = 0; i < n; i++) {
			w = lo[i] > next ? lo[i] : next;
			if (w <= hi[i] && w <= best) {
				best = w;
				any = true;
			}
		}
		if (!any)
			break;
		refine_window(rp, x, best);
		if (best == UINT32_MAX >> WIN_BITS)
			break;
		next = best + 1;
	}
}

/* The refining rounds over the values pass 1 kept: no pass over the file. */
static void refine_kept(struct bw_replay *rp)
{
	int d, op, l;

	do {
		for (d = 0; d < rp->ndevs; d++)
			for (op = 0; op < BW_NR_OPS; op++)
				for (l = 0; l < BW_NR_LAT; l++) {
					struct bw_xdist *x = &rp->devs[d].lat[op][l];

					if (x->tcount && x->win)
						refine_dist(rp, x);
				}
	} while (narrow_targets(rp));
}

static __u64 req_lat(const struct bw_replay_req *r)
{
	return r->c_ts - (r->q_ts ? r->q_ts : r->d_ts);
}

/* Would r be among the slowest kept? */
static bool slow_enough(const struct bw_replay_dev *d, const struct bw_replay_req *r)
{
	return d->nslow < BW_OUTLIERS || req_lat(r) > req_lat(&d->slow[BW_OUTLIERS - 1]);
}

/* Outliers: the slowest, kept sorted, slowest first. */
static void keep_outlier(struct bw_replay_dev *d, const struct bw_replay_req *r)
{
	__u64 lat = req_lat(r);
	int i;

	if (!slow_enough(d, r))
		return;
	if (d->nslow == BW_OUTLIERS)
		d->nslow--;
	for (i = d->nslow; i > 0 && req_lat(&d->slow[i - 1]) < lat; i--)
		d->slow[i] = d->slow[i - 1];
	d->slow[i] = *r;
	d->nslow++;
}

/* Events */

static __u64 sat_add(__u64 a, __u64 b)
{
	return a > ~0ULL - b ? ~0ULL : a + b;
}

static __u64 rel(const struct bw_replay *rp, __u64 ts)
{
	return ts > rp->t0 ? ts - rp->t0 : 0;
}

/*
 * The second half of a by-sector key: the device and the op, so a read and
 * a write in flight at one sector stay apart (seen in a real blktrace).
 */
static __u64 by_sector(const struct bw_trec *ev)
{
	return (__u64)ev->dev | 1ULL << 32 | (__u64)bw_op_of(ev->flags) << 33;
}

/* The request an event is about: by address, else by (device, sector, op). */
static struct rp_rq *req_of(struct bw_replay *rp, const struct bw_trec *ev, __u16 di, bool make)
{
	__u64 sb = by_sector(ev);
	struct rp_rq *e, *bio;
	bool made;

	if (!ev->rq) {
		if (!make) {
			e = rq_find(rp, ev->sector, sb);
		} else {
			e = rq_get(rp, ev->sector, sb, &made);
			rp->by_sector |= made;
		}
	} else if (make && !rp->by_sector) {
		e = rq_get(rp, ev->rq, 0, &made);
		if (!made)
			goto out;
	} else {
		e = rq_find(rp, ev->rq, 0);
		if (e || !make)
			goto out;
		/* A request first seen by address may have been queued as a bio (getrq). */
		bio = rp->by_sector ? rq_find(rp, ev->sector, sb) : NULL;
		e = rq_put(rp, ev->rq, 0);
		if (e && bio && (bio = rq_find(rp, ev->sector, sb))) {
			struct rp_rq keep = *bio;

			rq_del(rp, bio);
			e = rq_find(rp, ev->rq, 0);
			keep.a = ev->rq;
			keep.b = 0;
			*e = keep;
		}
	}
	if (!e)
		return NULL;
	if (make && !e->last_ts)
		e->dev = di;
out:
	if (e)
		e->last_ts = ev->ts;
	return e;
}

static void issue(struct bw_replay *rp, struct bw_replay_dev *d, struct rp_rq *e,
		  const struct bw_trec *ev)
{
	__u64 depth, now = ev->ts, dist, end = ev->sector + (ev->bytes >> 9);
	bool lost = e->issued;

	/* Issued again while in flight: its completion never reached us. */
	if (lost) {
		d->acc.lost++;
		d->sum_d -= e->d_ts;
	}
	d->sum_d += now;
	e->d_ts = now;
	e->issued = 1;
	depth = bw_flight_enter(&d->sh, &d->acc, now, e->a ^ e->b, d->epoch,
				lost ? BW_D_INC - 1 : BW_D_INC, true, true);
	e->depth = depth;
	if (depth > d->max_depth_all)
		d->max_depth_all = depth;
	if (!rp->full)
		return;
	dist = ev->sector > d->last_end ? ev->sector - d->last_end : d->last_end - ev->sector;
	d->seek[dist ? (ilog2_64(dist) + 1 < BW_SEEK_BUCKETS ? ilog2_64(dist) + 1 :
			BW_SEEK_BUCKETS - 1) : 0]++;
	d->last_end = end;
}

/*
 * e leaves flight at now (bpf/flight.h): true when it was alone from D to
 * C.  lost: its C never came, a later request's found its entry.
 */
static bool leave_flight(struct bw_replay_dev *d, const struct rp_rq *e, __u64 now, bool lost)
{
	if (bw_replay_dev_inflight(d))
		d->sum_d -= e->d_ts;
	if (lost) {
		bw_flight_outlived(&d->sh, &d->acc, now, e->a ^ e->b, true, true);
		return false;
	}
	return bw_flight_leave(&d->sh, &d->acc, now, e->a ^ e->b, true, true);
}

static void complete(struct bw_replay *rp, struct bw_replay_dev *d, struct rp_rq *e,
		     const struct bw_trec *ev)
{
	int op = (int)bw_op_of(ev->flags);
	struct bw_op_pcpu *os = &d->acc.op[op];
	__u64 now = ev->ts, d_ts, d2c, q0, q2d, q2c;
	bool solo, queued;
	__u32 cls;

	if (ev->xflags & BW_X_PARTIAL) {
		bw_count_partial(os, ev->bytes);
		return;
	}
	if (e && e->stream)
		stream_done(rp, d, e, now, ev->bytes, true);
	/* Not issued itself; the entry is an earlier request's, whose C was lost. */
	if (e && e->issued && bw_rq_outlived(e->d_ts, ev->alloc_ns)) {
		leave_flight(d, e, now, true);
		e->issued = 0;
	}
	if (!e || !e->issued) {
		bw_count_unissued(&d->acc, ev->xflags & BW_X_EMPTY_FLUSH);
		if (e)
			rq_del(rp, e);
		return;
	}
	d_ts = e->d_ts;
	solo = leave_flight(d, e, now, false);
	d2c = now > d_ts ? now - d_ts : 0;
	/* Q: stat's origin (bw_q_origin); the Q event where no stamp was recorded. */
	q0 = bw_q_origin(rp->q_clock, e->q_ts, ev->alloc_ns ? ev->alloc_ns : e->q_ts);
	d->completed++;
	x_add(rp, &d->lat[op][BW_LAT_D2C], d2c);
	queued = bw_queue_times(q0, d_ts, now, &q2d, &q2c);
	if (queued) {
		x_add(rp, &d->lat[op][BW_LAT_Q2D], q2d);
		x_add(rp, &d->lat[op][BW_LAT_Q2C], q2c);
	}
	if (rp->full) {
		struct bw_replay_req r = {
			.dev = d->dev, .pid = e->tgid, .op = op, .sector = ev->sector,
			.bytes = ev->bytes, .depth = e->depth, .error = ev->error,
			.q_ts = queued ? rel(rp, q0) : 0, .d_ts = rel(rp, d_ts),
			.c_ts = rel(rp, now),
		};

		/* The name only for the few that are kept or handed on. */
		if (rp->o.on_req || slow_enough(d, &r)) {
			memcpy(r.comm, bw_replay_comm(rp, e->tgid), BW_COMM_LEN);
			keep_outlier(d, &r);
			if (rp->o.on_req)
				rp->o.on_req(rp->o.ctx, &r);
		}
		cls = bw_count_final(os, ev->error, ev->bytes, ev->nr_seg, q0, d_ts, d2c, now, true);
		if (solo)
			bw_count_solo(os, cls, d2c);
	}
	rq_del(rp, e);
}

static void merged(struct bw_replay *rp, struct bw_replay_dev *d, const struct bw_trec *ev)
{
	struct rp_rq *e, *front;
	__u64 sb = by_sector(ev);

	bw_count_merge(&d->acc, ev->flags);
	if (ev->type == BW_EV_RQ_MERGE) {
		e = req_of(rp, ev, 0, false);
		if (e && e->stream)
			stream_done(rp, d, e, ev->ts, 0, false);
		if (e)
			rq_del(rp, e);
		return;
	}
	if (ev->rq)
		return;
	/* A bio queued by sector (blktrace) that joined a request is not one itself. */
	e = rq_find(rp, ev->sector, sb);
	if (e && !e->issued) {
		if (e->stream)
			stream_done(rp, d, e, ev->ts, 0, false);
		rq_del(rp, e);
	}
	/* In front: the request now starts at the bio's sector. */
	if (ev->type == BW_EV_FRONTMERGE) {
		front = rq_find(rp, ev->sector + (ev->bytes >> 9), sb);
		if (front && !front->issued) {
			struct rp_rq keep = *front;

			rq_del(rp, front);
			front = rq_put(rp, ev->sector, sb);
			if (front) {
				keep.a = ev->sector;
				*front = keep;
			}
		}
	}
}

static void requeue(struct bw_replay_dev *d, struct rp_rq *e, const struct bw_trec *ev)
{
	bw_count_requeue(&d->acc, ev->flags);
	if (!e || !e->issued) {
		d->acc.unmatched++;
		return;
	}
	e->issued = 0;
	leave_flight(d, e, ev->ts, false);
}

static void queued(struct bw_replay *rp, struct bw_replay_dev *d, const struct bw_trec *ev)
{
	struct rp_rq *e;

	if (ev->rq)
		e = rq_find(rp, ev->rq, 0);
	else
		e = rq_find(rp, ev->sector, by_sector(ev));
	/* In flight under the same sector, or blktrace's G and I after its Q. */
	if (e && (e->issued || (ev->type != BW_EV_QUEUE && e->q_ts)))
		return;
	if (e)
		e->last_ts = ev->ts;
	else
		e = req_of(rp, ev, (__u16)(d - rp->devs), true);
	/* Adopted from the bio's getrq: queued already. */
	if (!e || e->issued || (e->q_ts && ev->type != BW_EV_QUEUE))
		return;
	if (rp->full)
		stream_queue(rp, d, e, ev);
	else
		e->q_ts = ev->ts;
}

/*
 * Dispatch stalls, as bpf/stall.bpf.h keeps them and with bpf/stall.h's
 * rule: e started waiting (inserted or requeued), or stopped (was) and the
 * in-flight count may have moved; evaluated at now.
 */
static void stall_wait(struct bw_replay_dev *d, struct rp_rq *e, __u64 now)
{
	if (!e || e->issued || e->waiting)
		return;
	e->waiting = 1;
	d->stall.waiting++;
	bw_stall_eval(&d->stall, bw_replay_dev_inflight(d), now);
}

static void stall_moved(struct bw_replay_dev *d, bool was_waiting, __u64 now)
{
	if (was_waiting && d->stall.waiting)
		d->stall.waiting--;
	d->stall.max_depth = d->max_depth_all;
	bw_stall_eval(&d->stall, bw_replay_dev_inflight(d), now);
}

/* The stall figures of the snapshot at end: the open episode counts so far. */
static void stall_snap(const struct bw_replay *rp, const struct bw_replay_dev *d, __u64 end,
		       struct bw_snap_dev *s)
{
	s->stall_unknown = rp->no_inserts;
	s->stall_ns = d->stall.ns;
	s->stalls = d->stall.episodes;
	if (d->stall.start && end > d->stall.start)
		s->stall_ns += end - d->stall.start;
}

/* What the source did not record is unknown, not 0. */
static void unknowns(const struct bw_replay *rp, struct bw_interval *iv)
{
	if (rp->no_segments)
		iv->seg_per_rq = NAN;
}

/* Whose figures iv are: as stat names a stream (watch.c's sample_streams). */
static void stream_name(const struct bw_replay *rp, const struct bw_replay_stream *st,
			struct bw_stream_interval *iv)
{
	iv->dev = st->key.dev;
	if (st->key.by == BW_STREAMS_CGROUP) {
		iv->by_cgroup = true;
		iv->cgroup_id = st->key.id;
		iv->cgroup = bw_tcgroup_path(rp->src->cgroups, st->key.id);
	} else {
		iv->tgid = (__u32)st->key.id;
	}
}

/* A device's streams over the interval ending at end: those with I/O in it. */
static int tick_streams(struct bw_replay *rp, const struct bw_replay_dev *d, __u64 end, double secs)
{
	int i, n = 0;

	for (i = 0; i < rp->nstreams; i++) {
		struct bw_replay_stream *st = &rp->streams[i];
		struct bw_stream s;

		if (st->key.dev != d->dev)
			continue;
		s = st->s;
		if ((s.word & BW_INFLIGHT_MASK) && end > s.busy_start)
			s.busy_ns += end - s.busy_start;
		bw_stream_compute(&st->prev, &s, d->epoch, secs, &st->tick);
		stream_name(rp, st, &st->tick);
		st->prev = s;
		if (st->tick.ios)
			rp->tick_streams[n++] = &st->tick;
	}
	return n;
}

/* The in-flight requests' time since issue at end (core.c's open_areas). */
static __u64 open_area(const struct bw_replay_dev *d, __u64 end)
{
	__u64 all = bw_replay_dev_inflight(d) * end;

	return bw_replay_dev_inflight(d) && all > d->sum_d ? all - d->sum_d : 0;
}

/* Close the interval ending at end for every device. */
static void tick(struct bw_replay *rp, __u64 end)
{
	double secs = (double)(end - (rp->next_tick - rp->tick_ns)) / 1e9;
	double t = (double)(rel(rp, rp->next_tick - rp->tick_ns)) / 1e9;
	int i;

	for (i = 0; i < rp->ndevs; i++) {
		struct bw_replay_dev *d = &rp->devs[i];
		struct bw_replay_tick tk = { .d = d, .t = t, .iv = &d->idle_iv, .cls = &d->cls };
		struct bw_snap_dev *now = &rp->scratch;
		struct bw_interval iv;

		/* Idle since an idle interval: the same figures, without the copies. */
		if (d->idle_ok && d->events == d->tick_events && !bw_replay_dev_inflight(d)) {
			d->idle_iv.secs = secs;
			if (rp->o.on_tick)
				rp->o.on_tick(rp->o.ctx, &tk);
			continue;
		}
		tk.iv = &iv;
		tk.nstreams = tick_streams(rp, d, end, secs);
		tk.streams = (const struct bw_stream_interval *const *)rp->tick_streams;
		replay_snap(d, now);
		if (bw_replay_dev_inflight(d) && end > d->sh.busy_start)
			now->busy_ns += end - d->sh.busy_start;
		now->open_area_ns = open_area(d, end);
		now->max_depth = bw_epoch_max_of(&d->acc.max, d->epoch);
		now->inflight = bw_replay_dev_inflight(d);
		stall_snap(rp, d, end, now);
		tk.inflight = bw_replay_dev_inflight(d);
		bw_interval_compute(&d->prev, now, secs, &bw_peff_default, NULL, 0, &iv);
		unknowns(rp, &iv);
		bw_class_update(&d->cls, iv.p_eff, secs);
		if (rp->o.on_tick)
			rp->o.on_tick(rp->o.ctx, &tk);
		d->idle_ok = d->events == d->tick_events && !bw_replay_dev_inflight(d);
		d->idle_iv = iv;
		d->tick_events = d->events;
		d->prev = *now;
		d->epoch++;	/* a new epoch: its maximum set by its first D */
	}
}

static void event(struct bw_replay *rp, const struct bw_trec *ev)
{
	struct bw_replay_dev *d;
	struct rp_rq *e;
	bool was;

	if (!rp->started) {
		rp->started = true;
		if (!rp->t0 || rp->t0 > ev->ts)
			rp->t0 = ev->ts;
		rp->next_tick = sat_add(sat_add(rp->t0, rp->from_ns), rp->tick_ns);
	}
	if (ev->type == BW_EV_COMM) {
		struct rp_comm *c = comm_slot(rp, ev->pid);

		c->pid = ev->pid;
		memcpy(c->comm, ev->comm, sizeof(c->comm));
		c->comm[BW_COMM_LEN - 1] = '\0';
		return;
	}
	if (ev->ts > rp->seen_ts)
		rp->seen_ts = ev->ts;
	if (rel(rp, ev->ts) < rp->from_ns || (rp->to_ns && rel(rp, ev->ts) >= rp->to_ns))
		return;
	while (rp->full && ev->ts >= rp->next_tick) {
		tick(rp, rp->next_tick);
		if (rp->next_tick > ~0ULL - rp->tick_ns) {	/* the end of time: no more */
			rp->next_tick = ~0ULL;
			break;
		}
		rp->next_tick += rp->tick_ns;
		/*
		 * A gap of more than MAX_IDLE_TICKS intervals (a long pause, or a
		 * damaged timestamp): its idle intervals are not emitted one by one.
		 */
		if (ev->ts >= rp->next_tick &&
		    (ev->ts - rp->next_tick) / rp->tick_ns >= MAX_IDLE_TICKS) {
			__u64 skip = (ev->ts - rp->next_tick) / rp->tick_ns;

			rp->skipped_ticks += skip;
			rp->next_tick += skip * rp->tick_ns;
		}
	}
	d = dev_of(rp, ev->dev);
	if (!d)
		return;
	rp->events++;
	rp->last_ts = ev->ts;
	d->events++;
	switch (ev->type) {
	case BW_EV_QUEUE:
	case BW_EV_GETRQ:
		queued(rp, d, ev);
		break;
	case BW_EV_INSERT:
		queued(rp, d, ev);
		if (ev->rq)
			stall_wait(d, req_of(rp, ev, (__u16)(d - rp->devs), true), ev->ts);
		break;
	case BW_EV_ISSUE:
		e = req_of(rp, ev, (__u16)(d - rp->devs), true);
		was = e && e->waiting;
		if (e) {
			e->waiting = 0;
			issue(rp, d, e, ev);
		}
		stall_moved(d, was, ev->ts);
		break;
	case BW_EV_COMPLETE:
		e = req_of(rp, ev, 0, false);
		was = e && e->waiting && !(ev->xflags & BW_X_PARTIAL);
		complete(rp, d, e, ev);
		stall_moved(d, was, ev->ts);
		break;
	case BW_EV_REQUEUE:
		e = req_of(rp, ev, 0, false);
		requeue(d, e, ev);
		stall_moved(d, false, ev->ts);
		stall_wait(d, e, ev->ts);
		break;
	case BW_EV_RQ_MERGE:
		e = req_of(rp, ev, 0, false);
		was = e && e->waiting;
		merged(rp, d, ev);
		stall_moved(d, was, ev->ts);
		break;
	case BW_EV_BACKMERGE:
	case BW_EV_FRONTMERGE:
		merged(rp, d, ev);
		break;
	}
}

static void reset_pass(struct bw_replay *rp)
{
	int i;

	memset(rp->rq, 0, rp->rq_cap * sizeof(*rp->rq));
	rp->rq_n = 0;
	rp->started = false;
	rp->t0 = rp->src->info->start_ns;
	rp->events = 0;
	for (i = 0; i < rp->ndevs; i++) {
		struct bw_replay_dev *d = &rp->devs[i];

		memset(&d->sh, 0, sizeof(d->sh));
		d->sum_d = 0;
		memset(&d->stall, 0, sizeof(d->stall));
	}
}

static int pass(struct bw_replay *rp)
{
	const struct bw_trec *ev;
	int rc;

	reset_pass(rp);
	if (rp->passes && rp->src->rewind(rp->src->ctx))
		return -1;
	rp->passes++;
	while ((rc = rp->src->next(rp->src->ctx, &ev)) > 0)
		event(rp, ev);
	return rc;
}

/* The whole trace through metrics.c, and each stream's figures. */
static void totals(struct bw_replay *rp)
{
	double span = bw_replay_span(rp);
	int i;

	for (i = 0; i < rp->ndevs; i++) {
		struct bw_replay_dev *d = &rp->devs[i];
		struct bw_snap_dev end;

		replay_snap(d, &end);

		if (bw_replay_dev_inflight(d) && rp->last_ts > d->sh.busy_start)
			end.busy_ns += rp->last_ts - d->sh.busy_start;
		end.open_area_ns = open_area(d, rp->last_ts);
		end.inflight = bw_replay_dev_inflight(d);
		end.max_depth = d->max_depth_all;
		stall_snap(rp, d, rp->last_ts, &end);
		bw_interval_compute(NULL, &end, span, &bw_peff_default, NULL, 0, &d->total);
		unknowns(rp, &d->total);
	}
	for (i = 0; i < rp->nstreams; i++) {
		struct bw_stream s = rp->streams[i].s;

		if ((s.word & BW_INFLIGHT_MASK) && rp->last_ts > s.busy_start)
			s.busy_ns += rp->last_ts - s.busy_start;
		bw_stream_compute(NULL, &s, 0, span, &rp->streams[i].iv);
		rp->streams[i].iv.depth_max = rp->streams[i].max_all;
		stream_name(rp, &rp->streams[i], &rp->streams[i].iv);
	}
}

int bw_replay_run(struct bw_replay *rp)
{
	struct bw_replay_dev *saved;
	__u64 events, last, t0;
	int rc, i;

	rp->full = true;
	rc = pass(rp);
	if (rc < 0)
		return -1;
	if (rp->last_ts > rp->next_tick - rp->tick_ns + 1000000)
		tick(rp, rp->last_ts);
	totals(rp);
	if (plan_targets(rp, rp->o.exact))
		return -1;
	if (!rp->o.exact)
		return 0;
	if (rp->keep) {
		if (rp->ntargets)
			refine_kept(rp);
		rp->exact = true;
		drop_values(rp);
		return 0;
	}
	/* Refining passes only pair requests again: keep pass 1's counters. */
	saved = malloc(rp->ndevs * sizeof(*saved) + 1);
	if (!saved)
		return -1;
	memcpy(saved, rp->devs, rp->ndevs * sizeof(*saved));
	events = rp->events;
	last = rp->last_ts;
	t0 = rp->t0;
	rp->full = false;
	while (rp->ntargets) {
		rc = pass(rp);
		if (rc < 0 || !narrow_targets(rp))
			break;
	}
	rp->exact = rc >= 0;
	for (i = 0; i < rp->ndevs; i++) {
		memcpy(saved[i].lat, rp->devs[i].lat, sizeof(saved[i].lat));
		rp->devs[i] = saved[i];
	}
	rp->events = events;
	rp->last_ts = last;
	rp->t0 = t0;
	free(saved);
	return rc < 0 ? -1 : 0;
}

int bw_replay_new(struct bw_replay **out, const struct bw_replay_opts *o,
		  const struct bw_tsource *src)
{
	struct bw_replay *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->o = *o;
	rp->src = src;
	rp->last_dev = -1;
	rp->no_segments = !strcmp(src->info->source, "blktrace");
	/* Q from block_io_start once meant no insert events, until they were recorded too. */
	rp->no_inserts = (src->info->flags & BW_TINFO_Q_IO_START) &&
			 !(src->info->flags & BW_TINFO_INSERTS);
	rp->keep = o->exact;
	rp->q_clock = src->info->flags & BW_TINFO_Q_IO_START;
	if (!(rp->o.interval > 0))
		rp->o.interval = 1.0;
	rp->tick_ns = (__u64)(rp->o.interval * 1e9);
	rp->from_ns = o->from > 0 ? (__u64)(o->from * 1e9) : 0;
	rp->to_ns = o->to > 0 ? (__u64)(o->to * 1e9) : 0;
	rp->rq_cap = RQ_MIN_CAP;
	rp->rq = calloc(rp->rq_cap, sizeof(*rp->rq));
	rp->devs_cap = 2;
	rp->devs = calloc(rp->devs_cap, sizeof(*rp->devs));
	rp->streams = calloc(BW_RP_MAX_STREAMS, sizeof(*rp->streams));
	rp->stream_slot = calloc(SLOTS_STREAM, sizeof(*rp->stream_slot));
	rp->comms = calloc(SLOTS_COMM, sizeof(*rp->comms));
	rp->tick_streams = calloc(BW_RP_MAX_STREAMS, sizeof(*rp->tick_streams));
	if (!rp->rq || !rp->devs || !rp->streams || !rp->stream_slot || !rp->comms ||
	    !rp->tick_streams) {
		bw_replay_free(rp);
		return -ENOMEM;
	}
	*out = rp;
	return 0;
}

void bw_replay_free(struct bw_replay *rp)
{
	int i, op, l;

	if (!rp)
		return;
	for (i = 0; rp->devs && i < rp->ndevs; i++)
		for (op = 0; op < BW_NR_OPS; op++)
			for (l = 0; l < BW_NR_LAT; l++) {
				free(rp->devs[i].lat[op][l].h);
				free(rp->devs[i].lat[op][l].win);
			}
	for (i = 0; i < rp->ntargets; i++)
		free(rp->targets[i].cells);
	free(rp->targets);
	free(rp->rq);
	free(rp->devs);
	free(rp->streams);
	free(rp->stream_slot);
	free(rp->comms);
	free(rp->tick_streams);
	if (rp->arena)
		munmap(rp->arena, ARENA_LEN);
	free(rp);
}

int bw_replay_devs(const struct bw_replay *rp, const struct bw_replay_dev **devs)
{
	*devs = rp->devs;
	return rp->ndevs;
}

int bw_replay_streams(const struct bw_replay *rp, const struct bw_replay_stream **s)
{
	*s = rp->streams;
	return rp->nstreams;
}

double bw_replay_span(const struct bw_replay *rp)
{
	__u64 start = rp->t0 + rp->from_ns;

	return rp->last_ts > start ? (double)(rp->last_ts - start) / 1e9 : 0;
}

double bw_replay_trace_span(const struct bw_replay *rp)
{
	return rp->seen_ts > rp->t0 ? (double)(rp->seen_ts - rp->t0) / 1e9 : 0;
}

__u64 bw_replay_events(const struct bw_replay *rp)
{
	return rp->events;
}

bool bw_replay_exact(const struct bw_replay *rp)
{
	return rp->exact;
}

int bw_replay_passes(const struct bw_replay *rp)
{
	return rp->passes;
}

__u64 bw_replay_skipped(const struct bw_replay *rp)
{
	return rp->skipped_ticks;
}

__u64 bw_replay_abandoned(const struct bw_replay *rp)
{
	return rp->abandoned;
}

void bw_replay_owners(const struct bw_replay *rp, __u64 *bio, __u64 *task)
{
	*bio = rp->owner_bio;
	*task = rp->owner_task;
}
