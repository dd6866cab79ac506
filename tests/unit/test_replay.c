// SPDX-License-Identifier: GPL-2.0
/*
 * The replay on synthetic traces of known shape: exact percentiles, P_eff
 * and class through stat's code, streams; and blktrace captures of the same
 * requests, in both byte orders, giving the same figures.
 */
#include <stdlib.h>
#include "unit.h"
#include "model/replay.h"
#include "btrec.h"

#define DEV ((7u << 20) | 9)
#define US 1000ULL
#define MS 1000000ULL

struct evbuf {
	struct bw_trec *ev;
	int n, cap;
};

static void add(struct evbuf *b, __u8 type, __u64 ts, __u64 rq, __u64 sector, __u32 pid)
{
	struct bw_trec *e;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->ev = realloc(b->ev, b->cap * sizeof(*b->ev));
	}
	e = &b->ev[b->n++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->ts = ts;
	e->rq = rq;
	e->sector = sector;
	e->dev = DEV;
	e->bytes = 4096;
	e->pid = pid;
	e->nr_seg = 1;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct bw_trec *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* A memory source over b, sorted by time. */
struct memsrc {
	struct evbuf *b;
	int i;
	struct bw_tinfo info;
	__u64 lost[1];
	struct bw_tcgroups cgroups;
	bool trunc;
	char err[64];
};

static int mem_next(void *ctx, const struct bw_trec **ev)
{
	struct memsrc *m = ctx;

	if (m->i >= m->b->n)
		return 0;
	*ev = &m->b->ev[m->i++];
	return 1;
}

static int mem_rewind(void *ctx)
{
	((struct memsrc *)ctx)->i = 0;
	return 0;
}

static void mem_source(struct memsrc *m, struct evbuf *b, struct bw_tsource *s)
{
	memset(m, 0, sizeof(*m));
	qsort(b->ev, b->n, sizeof(*b->ev), cmp_ts);
	m->b = b;
	m->info.ncpus = 1;
	s->next = mem_next;
	s->rewind = mem_rewind;
	s->ctx = m;
	s->info = &m->info;
	s->devs = NULL;
	s->lost = m->lost;
	s->cgroups = &m->cgroups;
	s->truncated = &m->trunc;
	s->err = m->err;
}

/*
 * 1000 requests alone, one after another: D2C of request i is i us (1..1000),
 * Q (allocation) 10 us before D.  Exact p50 = 500 us, p90 = 900, p99 = 990.
 */
static void serial_trace(struct evbuf *b, bool by_sector)
{
	__u64 t = 1 * MS;
	int i;

	for (i = 1; i <= 1000; i++) {
		__u64 rq = by_sector ? 0 : 0xffff888000000000ULL + (i % 7) * 256;

		add(b, BW_EV_QUEUE, t, rq, i * 8, 100);
		add(b, BW_EV_ISSUE, t + 10 * US, rq, i * 8, 100);
		b->ev[b->n - 1].alloc_ns = by_sector ? 0 : t;
		add(b, BW_EV_COMPLETE, t + 10 * US + i * US, rq, i * 8, 0);
		b->ev[b->n - 1].alloc_ns = by_sector ? 0 : t;
		t += 10 * US + i * US + 50 * US;
	}
}

static void run(struct bw_tsource *src, bool exact, const struct bw_replay_dev **d,
		struct bw_replay **rp, void (*on_tick)(void *, const struct bw_replay_tick *),
		void *ctx)
{
	struct bw_replay_opts o = { .interval = 1, .exact = exact, .on_tick = on_tick,
				    .ctx = ctx };

	CHECK(!bw_replay_new(rp, &o, src), "new");
	CHECK(!bw_replay_run(*rp), "run: %s", src->err);
	CHECK(bw_replay_devs(*rp, d) == 1, "one device");
}

static void test_exact_percentiles(void)
{
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_xdist *x;

	serial_trace(&b, false);
	mem_source(&m, &b, &src);
	run(&src, true, &d, &rp, NULL, NULL);
	x = &d->lat[BW_OP_READ][BW_LAT_D2C];
	CHECK(x->n == 1000, "n %llu", (unsigned long long)x->n);
	CHECK(x->pct[0] == 500 * US, "p50 %llu", (unsigned long long)x->pct[0]);
	CHECK(x->pct[1] == 900 * US, "p90 %llu", (unsigned long long)x->pct[1]);
	CHECK(x->pct[2] == 990 * US, "p99 %llu", (unsigned long long)x->pct[2]);
	CHECK(x->pct[3] == 999 * US && x->pct[4] == 1000 * US, "p99.9 and max");
	CHECK(x->min == 1 * US, "min");
	x = &d->lat[BW_OP_READ][BW_LAT_Q2C];
	CHECK(x->pct[0] == 510 * US, "Q2C p50 %llu", (unsigned long long)x->pct[0]);
	CHECK(d->lat[BW_OP_READ][BW_LAT_Q2D].pct[2] == 10 * US, "Q2D p99");
	CHECK(bw_replay_passes(rp) == 1, "refined over the values kept: %d passes",
	      bw_replay_passes(rp));
	CHECK(bw_replay_exact(rp), "exact");
	CHECK(d->completed == 1000, "counted once over all passes: %llu",
	      (unsigned long long)d->completed);
	/* Alone every time: every request is a solo sample, P_eff undefined at depth 1. */
	CHECK(d->total.solo_ios == 1000, "solo samples %llu", (unsigned long long)d->total.solo_ios);
	CHECK(isnan(d->total.p_eff) && !strcmp(d->total.p_eff_code, "-L<1.5"), "P_eff: %s",
	      d->total.p_eff_code);
	CHECK_NEAR(d->total.svc_mean_ms, 0.5005, 1e-9, "mean D2C through metrics.c");
	CHECK(d->total.seg_per_rq == 1, "segments recorded: %g", d->total.seg_per_rq);
	bw_replay_free(rp);
	free(b.ev);
}

/*
 * A latency over 4.29 s is not kept in memory: the refining rounds are
 * passes over the source, with the same exact result.
 */
static void test_exact_by_passes(void)
{
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_xdist *x;
	__u64 t;

	serial_trace(&b, false);
	t = b.ev[b.n - 1].ts + MS;
	add(&b, BW_EV_ISSUE, t, 0x77, 9999 * 8, 100);
	add(&b, BW_EV_COMPLETE, t + 5000 * MS, 0x77, 9999 * 8, 0);
	mem_source(&m, &b, &src);
	run(&src, true, &d, &rp, NULL, NULL);
	x = &d->lat[BW_OP_READ][BW_LAT_D2C];
	CHECK(x->n == 1001, "n %llu", (unsigned long long)x->n);
	CHECK(bw_replay_passes(rp) >= 2, "refined in extra passes: %d", bw_replay_passes(rp));
	CHECK(bw_replay_exact(rp), "exact");
	/* Ranks of 1001: p50 the 501st (501 us), p90 the 901st, p99 the 991st. */
	CHECK(x->pct[0] == 501 * US, "p50 %llu", (unsigned long long)x->pct[0]);
	CHECK(x->pct[1] == 901 * US, "p90 %llu", (unsigned long long)x->pct[1]);
	CHECK(x->pct[2] == 991 * US, "p99 %llu", (unsigned long long)x->pct[2]);
	CHECK(x->pct[4] == 5000 * MS, "max");
	bw_replay_free(rp);
	free(b.ev);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * 30000 requests alone, their service times spread from 1 ns to 300 ms
 * with a third of them within one 64 us window (more values than a chunk
 * of kept values holds): every percentile is the nearest-rank value of the
 * sorted service times, kept values refined in memory.
 */
static void test_exact_many_windows(void)
{
	__u64 v[30000], t = 1 * MS, seed = 7;
	const int n = (int)(sizeof(v) / sizeof(v[0]));
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_xdist *x;
	int i, p;

	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = i % 3 ? 1 + (seed >> 33) % (300 * MS) : 3 * MS + (seed >> 40) % 65536;
		add(&b, BW_EV_ISSUE, t, 0xffff888000000000ULL + (i % 5) * 256, i * 8, 100);
		add(&b, BW_EV_COMPLETE, t + v[i], 0xffff888000000000ULL + (i % 5) * 256, i * 8, 0);
		t += v[i] + 10 * US;
	}
	mem_source(&m, &b, &src);
	run(&src, true, &d, &rp, NULL, NULL);
	qsort(v, n, sizeof(v[0]), cmp_u64);
	x = &d->lat[BW_OP_READ][BW_LAT_D2C];
	CHECK(x->n == (__u64)n, "n %llu", (unsigned long long)x->n);
	CHECK(bw_replay_passes(rp) == 1 && bw_replay_exact(rp), "exact from kept values");
	for (p = 0; p < BW_NR_PCTL; p++) {
		double r = ceil(bw_pctls[p] * n - 1e-9);
		__u64 want = v[(int)r - 1];

		CHECK(x->pct[p] == want, "pct %g: %llu, sorted %llu", bw_pctls[p],
		      (unsigned long long)x->pct[p], (unsigned long long)want);
	}
	bw_replay_free(rp);
	free(b.ev);
}

/* One pass: every percentile from its bucket, below the exact one by under 0.4%. */
static void test_one_pass_percentiles(void)
{
	static const __u64 want[BW_NR_PCTL] = { 500 * US, 900 * US, 990 * US, 999 * US, 1000 * US };
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_xdist *x;
	int p;

	serial_trace(&b, false);
	mem_source(&m, &b, &src);
	run(&src, false, &d, &rp, NULL, NULL);
	CHECK(bw_replay_passes(rp) == 1, "one pass: %d", bw_replay_passes(rp));
	x = &d->lat[BW_OP_READ][BW_LAT_D2C];
	for (p = 0; p < BW_NR_PCTL; p++)
		CHECK(x->pct[p] <= want[p] && x->pct[p] >= want[p] - want[p] / 256,
		      "pct %d: %llu, exact %llu", p, (unsigned long long)x->pct[p],
		      (unsigned long long)want[p]);
	CHECK(x->pct[BW_NR_PCTL - 1] == 1000 * US, "max exact");
	/* All Q2D alike: the bucket's bound, raised to the min, is exact. */
	CHECK(d->lat[BW_OP_READ][BW_LAT_Q2D].pct[0] == 10 * US, "Q2D p50 %llu",
	      (unsigned long long)d->lat[BW_OP_READ][BW_LAT_Q2D].pct[0]);
	bw_replay_free(rp);
	free(b.ev);
}

struct ticks {
	double peff[64];
	enum bw_class_id cls[64];
	int n;
};

static void on_tick(void *ctx, const struct bw_replay_tick *t)
{
	struct ticks *k = ctx;

	if (k->n < 64) {
		k->peff[k->n] = t->iv->p_eff;
		k->cls[k->n++] = t->cls->cls;
	}
}

/*
 * A 4-way device: 0.5 s of solo 1 ms requests (S1 = 1 ms), then 6 s of four
 * always in flight, each 1 ms: N / T_b = 4 per ms, so P_eff = 4 and the
 * device is deep, by stat's own code.
 */
static void test_peff_four_way(void)
{
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	struct ticks k = {};
	__u64 t = 0, rq = 1;	/* a first event at time 0, too */
	int i, lane;

	for (i = 0; i < 400; i++, t += 1250 * US) {
		add(&b, BW_EV_ISSUE, t, rq, i * 8, 1);
		add(&b, BW_EV_COMPLETE, t + MS, rq++, i * 8, 1);
	}
	t = 600 * MS;
	for (i = 0; i < 6000; i++, t += MS)
		for (lane = 0; lane < 4; lane++) {
			add(&b, BW_EV_ISSUE, t + lane * 10, rq, rq * 8, 1);
			add(&b, BW_EV_COMPLETE, t + lane * 10 + MS - 40, rq, rq * 8, 1);
			rq++;
		}
	mem_source(&m, &b, &src);
	run(&src, false, &d, &rp, on_tick, &k);
	CHECK(k.n >= 6, "ticks %d", k.n);
	CHECK_NEAR(k.peff[3], 4.0, 0.02, "P_eff at depth 4");
	/* The first second: 400 solo requests (0.4 s busy) and 0.4 s at depth 4. */
	CHECK_NEAR(k.peff[0], 2000 * 1.0 / 800, 0.02, "P_eff of a mixed interval");
	CHECK(d->cls.cls == BW_CLASS_DEEP, "class deep: %s", d->cls.reason);
	bw_replay_free(rp);
	free(b.ev);
}

struct depths {
	int n, over;
	double worst;	/* largest mean depth while busy seen */
};

static void on_depth(void *ctx, const struct bw_replay_tick *t)
{
	struct depths *k = ctx;

	if (isnan(t->iv->depth_busy))
		return;
	k->n++;
	if (t->iv->depth_busy > t->iv->depth_max + 1e-9)
		k->over++;
	if (t->iv->depth_busy > k->worst)
		k->worst = t->iv->depth_busy;
}

/*
 * Eight lanes, each a request of 3.3 ms issued as the last completes,
 * looked at every 1 ms: the service time of a request is spread over the
 * intervals it was in flight in, so no interval's mean depth while busy
 * exceeds its max (8), as it did when each took its whole D2C.
 */
static void test_depth_split_intervals(void)
{
	struct bw_replay_opts o = { .interval = 0.001, .on_tick = on_depth };
	struct evbuf b = {};
	struct depths k = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	__u64 rq = 1, t;
	int i, lane;

	o.ctx = &k;
	for (lane = 0; lane < 8; lane++)
		for (i = 0, t = lane * 100 * US; i < 60; i++, t += 3300 * US, rq++) {
			add(&b, BW_EV_ISSUE, t, rq, rq * 8, 1);
			add(&b, BW_EV_COMPLETE, t + 3300 * US - 1, rq, rq * 8, 1);
		}
	mem_source(&m, &b, &src);
	CHECK(!bw_replay_new(&rp, &o, &src), "new");
	CHECK(!bw_replay_run(rp), "run: %s", src.err);
	CHECK(k.n >= 150, "busy intervals %d", k.n);
	CHECK(k.over == 0, "%d of %d intervals with mean depth over the max (worst %g)", k.over,
	      k.n, k.worst);
	CHECK_NEAR(k.worst, 8.0, 1e-3, "depth 8 while all eight are in flight");
	bw_replay_free(rp);
	free(b.ev);
}

/* Streams: one process, sequential, 50 us think time between its requests. */
static void test_stream(void)
{
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const struct bw_replay_stream *s;
	__u64 t = 0;
	int i;

	add(&b, BW_EV_COMM, 0, 0, 0, 42);
	memcpy(b.ev[0].comm, "reader", 7);
	for (i = 0; i < 500; i++) {
		add(&b, BW_EV_QUEUE, t + 1, 0x1000, 8 * i, 42);
		add(&b, BW_EV_ISSUE, t + 2, 0x1000, 8 * i, 42);
		add(&b, BW_EV_COMPLETE, t + 100 * US, 0x1000, 8 * i, 0);
		t += 150 * US;
	}
	mem_source(&m, &b, &src);
	run(&src, false, &d, &rp, NULL, NULL);
	CHECK(bw_replay_streams(rp, &s) == 1, "one stream");
	CHECK(!strcmp(s->iv.comm, "reader"), "comm %s", s->iv.comm);
	CHECK(s->iv.ios == 500, "ios %llu", (unsigned long long)s->iv.ios);
	CHECK_NEAR(s->iv.think_ms, 0.05, 0.001, "think time");
	CHECK_NEAR(s->iv.seq_pct, 99.8, 1e-9, "sequential but the first");
	CHECK(!s->iv.deep, "shallow stream");
	bw_replay_free(rp);
	free(b.ev);
}

/*
 * One process (a flusher) submits two cgroups' writes, interleaved, each a
 * sequential run: one stream by process, two by cgroup, named by the
 * trace's cgroup table (one of them not in it: an id), each the same
 * figures a single process's stream of them would have.
 */
static void test_stream_by_cgroup(void)
{
	struct bw_tcg names[] = { { 7, "/a" } };
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	struct bw_replay_opts o = { .interval = 1, .streams_by = BW_STREAMS_CGROUP };
	const struct bw_replay_stream *s;
	__u64 t = 0, bio, task;
	int i, n;

	for (i = 0; i < 400; i++) {
		__u64 cg = i % 2 ? 9 : 7, sector = (i % 2 ? 1 << 20 : 0) + 8 * (i / 2);

		add(&b, BW_EV_QUEUE, t + 1, 0x1000, sector, 42);
		b.ev[b.n - 1].cgroup = cg;
		b.ev[b.n - 1].xflags = cg == 9 ? BW_X_OWNER_TASK : 0;
		add(&b, BW_EV_ISSUE, t + 2, 0x1000, sector, 42);
		add(&b, BW_EV_COMPLETE, t + 100 * US, 0x1000, sector, 0);
		t += 150 * US;
	}
	mem_source(&m, &b, &src);
	m.cgroups.e = names;
	m.cgroups.n = 1;
	CHECK(!bw_replay_new(&rp, &o, &src) && !bw_replay_run(rp), "run");
	n = bw_replay_streams(rp, &s);
	CHECK(n == 2, "two streams by cgroup: %d", n);
	for (i = 0; i < n; i++) {
		CHECK(s[i].iv.by_cgroup && s[i].iv.ios == 200, "cgroup %llu: %llu requests",
		      (unsigned long long)s[i].iv.cgroup_id, (unsigned long long)s[i].iv.ios);
		CHECK_NEAR(s[i].iv.seq_pct, 99.5, 1e-9, "each cgroup's run sequential but its first");
	}
	CHECK(s[0].iv.cgroup_id == 7 && !strcmp(s[0].iv.cgroup, "/a"), "named by the table");
	CHECK(s[1].iv.cgroup_id == 9 && !s[1].iv.cgroup, "not in the table: an id");
	bw_replay_owners(rp, &bio, &task);
	CHECK(bio == 200 && task == 200, "owners: %llu from the blkg, %llu from the task",
	      (unsigned long long)bio, (unsigned long long)task);
	bw_replay_free(rp);
	o.streams_by = BW_STREAMS_PROCESS;
	m.i = 0;
	CHECK(!bw_replay_new(&rp, &o, &src) && !bw_replay_run(rp), "run by process");
	n = bw_replay_streams(rp, &s);
	CHECK(n == 1 && s[0].iv.ios == 400 && !s[0].iv.by_cgroup && s[0].iv.tgid == 42,
	      "by process: one stream of 400 (%d streams)", n);
	CHECK(s[0].iv.seq_pct < 1, "its requests jump between the two runs: %.1f%% sequential",
	      s[0].iv.seq_pct);
	bw_replay_free(rp);
	free(b.ev);
}

/* The serial trace as blktrace would have written it, split over two CPU files. */
static void put_bt(FILE *f, bool swap, __u64 ts, __u32 act, __u64 sector, __u32 pid, __u32 cpu)
{
	bt_put(f, swap, (struct bt_rec){ .time = ts, .sector = sector, .bytes = 4096,
					 .action = act | (1u << 3) << 16,	/* BLK_TC_SYNC, a read */
					 .pid = pid, .device = DEV, .cpu = cpu }, NULL);
}

static void test_blktrace(void)
{
	int order;

	for (order = 0; order < 2; order++) {
		char *buf[2] = {};
		size_t len[2];
		FILE *w[2], *rd[2];
		const char *names[2] = { "t.blktrace.0", "t.blktrace.1" };
		struct bw_btreader *bt;
		struct bw_tsource src;
		struct bw_replay *rp;
		const struct bw_replay_dev *d;
		char err[256];
		__u64 t = 1 * MS;
		int i;

		w[0] = open_memstream(&buf[0], &len[0]);
		w[1] = open_memstream(&buf[1], &len[1]);
		for (i = 1; i <= 1000; i++) {
			/* Q on the submitting CPU, D and C wherever. */
			put_bt(w[i % 2], order, t, 1, i * 8, 100, i % 2);
			put_bt(w[i % 2], order, t + 10 * US, 7, i * 8, 100, i % 2);
			put_bt(w[(i / 3) % 2], order, t + 10 * US + i * US, 8, i * 8, 0, (i / 3) % 2);
			t += 10 * US + i * US + 50 * US;
		}
		fclose(w[0]);
		fclose(w[1]);
		rd[0] = fmemopen(buf[0], len[0], "r");
		rd[1] = fmemopen(buf[1], len[1], "r");
		CHECK(bw_bt_magic(buf[0], len[0]), "magic, order %d", order);
		CHECK(!bw_bt_open(&bt, rd, names, 2, err, sizeof(err)), "open: %s", err);
		bw_bt_source(bt, &src);
		run(&src, true, &d, &rp, NULL, NULL);
		CHECK(d->lat[BW_OP_READ][BW_LAT_D2C].n == 1000, "order %d: all requests", order);
		CHECK(d->lat[BW_OP_READ][BW_LAT_D2C].pct[0] == 500 * US, "order %d: D2C p50", order);
		CHECK(d->lat[BW_OP_READ][BW_LAT_Q2C].pct[2] == 1000 * US, "order %d: Q2C p99 %llu",
		      order, (unsigned long long)d->lat[BW_OP_READ][BW_LAT_Q2C].pct[2]);
		CHECK(d->lat[BW_OP_READ][BW_LAT_Q2D].max == 10 * US, "order %d: Q2D", order);
		/* blktrace records no segment counts: unknown, not 0. */
		CHECK(isnan(d->total.seg_per_rq), "order %d: seg/rq %g", order,
		      d->total.seg_per_rq);
		bw_replay_free(rp);
		bw_bt_close(bt);
		/* A record cut in two: read up to it, said truncated. */
		fclose(rd[0]);
		rd[0] = fmemopen(buf[0], len[0] - 20, "r");
		fseek(rd[1], 0, SEEK_SET);
		CHECK(!bw_bt_open(&bt, rd, names, 2, err, sizeof(err)), "open cut: %s", err);
		bw_bt_source(bt, &src);
		run(&src, false, &d, &rp, NULL, NULL);
		CHECK(*src.truncated && strstr(err, "truncated at offset"), "cut: %s", err);
		bw_replay_free(rp);
		bw_bt_close(bt);
		/* Not blktrace at all: refused, naming the offset. */
		fclose(rd[0]);
		memset(buf[0] + 48 * 5, 0x55, 4);
		rd[0] = fmemopen(buf[0], len[0], "r");
		fseek(rd[1], 0, SEEK_SET);
		CHECK(!bw_bt_open(&bt, rd, names, 2, err, sizeof(err)), "open");
		bw_bt_source(bt, &src);
		CHECK(!bw_replay_new(&rp, &(struct bw_replay_opts){ .interval = 1 }, &src), "new");
		CHECK(bw_replay_run(rp) < 0 && strstr(err, "not a blktrace record") &&
		      strstr(err, "at offset 240"), "damage: %s", err);
		bw_replay_free(rp);
		bw_bt_close(bt);
		fclose(rd[0]);
		fclose(rd[1]);
		free(buf[0]);
		free(buf[1]);
	}
}

/*
 * Lost completions: A's completion never recorded, then an empty flush
 * write on A's request structure, never issued, completes (allocated after
 * A's issue); then B, issued on it again.  The flush write is counted as
 * the live side counts it (an fsync write, not a request with A's issue),
 * A's completion lost, and nothing left in flight.
 */
static void test_outlived_entry(void)
{
	struct evbuf b = {};
	struct memsrc m;
	struct bw_tsource src;
	struct bw_replay *rp;
	const struct bw_replay_dev *d;
	const __u64 rq = 0xffff888000001000ULL;
	const struct bw_op_pcpu *w;

	add(&b, BW_EV_ISSUE, 100 * US, rq, 8, 1);
	b.ev[b.n - 1].alloc_ns = 90 * US;
	add(&b, BW_EV_COMPLETE, 300 * US, rq, 0, 0);
	b.ev[b.n - 1].alloc_ns = 250 * US;
	b.ev[b.n - 1].flags = 1;	/* REQ_OP_WRITE */
	b.ev[b.n - 1].bytes = 0;
	b.ev[b.n - 1].nr_seg = 0;
	b.ev[b.n - 1].xflags = BW_X_EMPTY_FLUSH;
	add(&b, BW_EV_ISSUE, 400 * US, rq, 16, 1);
	b.ev[b.n - 1].alloc_ns = 390 * US;
	add(&b, BW_EV_COMPLETE, 450 * US, rq, 16, 0);
	b.ev[b.n - 1].alloc_ns = 390 * US;
	mem_source(&m, &b, &src);
	run(&src, false, &d, &rp, NULL, NULL);
	w = &d->acc.op[BW_OP_WRITE];
	CHECK(d->acc.fsync_writes == 1, "fsync writes %llu", (unsigned long long)d->acc.fsync_writes);
	CHECK(w->ios == 0 && w->q_ios == 0, "the flush write is no request of A's: ios %llu",
	      (unsigned long long)w->ios);
	CHECK(d->acc.lost == 1, "A's completion lost: %llu", (unsigned long long)d->acc.lost);
	CHECK(d->acc.op[BW_OP_READ].ios == 1 && d->acc.op[BW_OP_READ].d2c_ns == 50 * US,
	      "B counted with its own issue");
	CHECK(d->acc.unmatched == 0, "nothing unmatched");
	CHECK(bw_replay_dev_inflight(d) == 0, "nothing left in flight");
	bw_replay_free(rp);
	free(b.ev);
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_exact_percentiles),
		UNIT(test_one_pass_percentiles),
		UNIT(test_exact_by_passes),
		UNIT(test_exact_many_windows),
		UNIT(test_peff_four_way),
		UNIT(test_stream),
		UNIT(test_stream_by_cgroup),
		UNIT(test_blktrace),
		UNIT(test_depth_split_intervals),
		UNIT(test_outlived_entry),
	};

	return unit_run("replay", t, sizeof(t) / sizeof(t[0]));
}
