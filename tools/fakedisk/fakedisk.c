// SPDX-License-Identifier: GPL-2.0
/*
 * fakedisk - a FUSE file that behaves like a disk of known parallelism.
 *
 * The file "disk" is meant to sit under a loop device with direct I/O on.
 * Every read/write is charged to one of P independent servers and answered
 * when the model says that server finished it.  dispatch=stripe (default)
 * routes by offset, RAID-0 style (a request waits for its own spindle even
 * when others idle); dispatch=any sends it to whichever server frees first,
 * a P-server FIFO queue like an SSD's channels (at depth >= P all P work).
 * The model is the ground truth blkwise's measurements are checked
 * against, so the daemon also publishes what it saw in "stats".
 *
 * Handler threads never sleep: they compute the finish time, queue the
 * request on a deadline heap and return.  Sleeping there would make
 * libfuse's thread count, not P, the parallelism limit.  Reply threads
 * wait for the earliest deadline and answer from there.
 */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_SEC	1000000000ULL
#define MIB		(1ULL << 20)
#define GIB		(1ULL << 30)

enum {
	INO_ROOT = FUSE_ROOT_ID,
	INO_DISK,
	INO_STATS,
	INO_RESET,
	INO_END,
};

static const char *const ino_names[INO_END] = {
	[INO_DISK] = "disk",
	[INO_STATS] = "stats",
	[INO_RESET] = "reset",
};

enum dispatch {
	DISPATCH_STRIPE,	/* RAID-0: spindle = (off / chunk) % P */
	DISPATCH_ANY,		/* P-server queue: the first server to free up */
};

static const char *const dispatch_names[] = {
	[DISPATCH_STRIPE] = "stripe",
	[DISPATCH_ANY] = "any",
};

struct config {
	unsigned int size_mb;
	unsigned int service_us;
	unsigned int parallel;
	unsigned int chunk_kb;
	unsigned int xfer_us_per_mib;
	unsigned int seek_us_per_gib;
	unsigned int seek_us;
	unsigned int max_background;
	unsigned int reply_threads;
	unsigned int fuse_mt;
	unsigned int wake_comp;
	unsigned int hold_mb;	/* requests below this offset (MiB) are hold requests */
	unsigned int hold_us;	/* their service time; 0: no hold requests */
	char *dispatch_opt;	/* -o dispatch=..., parsed into dispatch */
	enum dispatch dispatch;
	int show_help;
};

#define CFG_OPT(t, p) { t, offsetof(struct config, p), 0 }
static const struct fuse_opt cfg_opts[] = {
	CFG_OPT("size_mb=%u", size_mb),
	CFG_OPT("service_us=%u", service_us),
	CFG_OPT("parallel=%u", parallel),
	CFG_OPT("chunk_kb=%u", chunk_kb),
	CFG_OPT("xfer_us_per_mib=%u", xfer_us_per_mib),
	CFG_OPT("seek_us_per_gib=%u", seek_us_per_gib),
	CFG_OPT("seek_us=%u", seek_us),
	CFG_OPT("max_background=%u", max_background),
	CFG_OPT("reply_threads=%u", reply_threads),
	CFG_OPT("fuse_mt=%u", fuse_mt),
	CFG_OPT("wake_comp=%u", wake_comp),
	CFG_OPT("hold_mb=%u", hold_mb),
	CFG_OPT("hold_us=%u", hold_us),
	CFG_OPT("dispatch=%s", dispatch_opt),
	{ "-h", offsetof(struct config, show_help), 1 },
	{ "--help", offsetof(struct config, show_help), 1 },
	FUSE_OPT_END
};

/* A spindle (stripe) or one of P identical servers (any). */
struct spindle {
	uint64_t free_at;	/* when the current queue drains */
	uint64_t head;		/* local byte after the last request */
	uint64_t busy_ns;	/* service time of replied requests */
};

struct pending {
	uint64_t deadline;
	uint64_t start;
	fuse_req_t req;
	uint64_t off;
	uint32_t size;
	uint32_t spindle;
	int is_read;
	int hold;		/* a hold request (hold_mb, hold_us) */
};

struct counters {
	uint64_t requests, reads, writes, bytes, seeks;
	uint64_t inflight_max, inflight_area_ns, busy_ns;
	int64_t lag_sum_ns;	/* signed: a compensated reply can be early */
	uint64_t lag_max_ns, early_max_ns, replied;
	uint64_t hold_requests, hold_ns, starved_ns, starved_periods;
};

struct fakedisk {
	struct config cfg;
	uint64_t disk_bytes;
	struct fuse_session *se;

	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t wake;	/* new earliest deadline, or stop */
	int stop;
	struct pending *heap;
	size_t heap_len, heap_cap;
	struct spindle *spindles;
	uint64_t inflight;
	uint64_t epoch;		/* mount or last reset */
	uint64_t last_change;	/* last inflight change, for integrals */
	uint64_t wake_lag_ns;	/* running median of timer wake-up lateness */
	/* Starved periods (see hold_arrive): */
	uint64_t holds_out;	/* hold requests received, not replied */
	uint64_t starve_start;	/* start of the open period; 0: none */
	int hold_armed;		/* a hold request is out, no other reply since */
	struct counters c;
};

static struct fakedisk fd_state;

/* Zeroes served by every read; big reads reuse it through an iovec. */
#define ZERO_CHUNK	(256 * 1024)
static const char zero_chunk[ZERO_CHUNK];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts)) {
		perror("fakedisk: clock_gettime(CLOCK_MONOTONIC)");
		abort();
	}
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

/* A failed lock means memory corruption; carrying on would lie in stats. */
static void lock(struct fakedisk *d)
{
	int err = pthread_mutex_lock(&d->lock);

	if (err) {
		fprintf(stderr, "fakedisk: pthread_mutex_lock: %s\n",
			strerror(err));
		abort();
	}
}

static void unlock(struct fakedisk *d)
{
	int err = pthread_mutex_unlock(&d->lock);

	if (err) {
		fprintf(stderr, "fakedisk: pthread_mutex_unlock: %s\n",
			strerror(err));
		abort();
	}
}

/* ---- deadline heap (min-heap on deadline), caller holds the lock ---- */

static void heap_swap(struct pending *a, struct pending *b)
{
	struct pending t = *a;

	*a = *b;
	*b = t;
}

static int heap_push(struct fakedisk *d, const struct pending *p)
{
	size_t i;

	if (d->heap_len == d->heap_cap) {
		size_t cap = d->heap_cap ? 2 * d->heap_cap : 256;
		struct pending *h = realloc(d->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		d->heap = h;
		d->heap_cap = cap;
	}
	i = d->heap_len++;
	d->heap[i] = *p;
	while (i && d->heap[(i - 1) / 2].deadline > d->heap[i].deadline) {
		heap_swap(&d->heap[(i - 1) / 2], &d->heap[i]);
		i = (i - 1) / 2;
	}
	return i == 0;		/* 1: the new entry is the earliest */
}

static struct pending heap_pop(struct fakedisk *d)
{
	struct pending top = d->heap[0];
	size_t i = 0;

	d->heap[0] = d->heap[--d->heap_len];
	for (;;) {
		struct pending *h = d->heap;
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < d->heap_len && h[l].deadline < h[m].deadline)
			m = l;
		if (r < d->heap_len && h[r].deadline < h[m].deadline)
			m = r;
		if (m == i)
			break;
		heap_swap(&d->heap[i], &d->heap[m]);
		i = m;
	}
	return top;
}

/* ---- accounting, caller holds the lock ---- */

/* Integrate n(t) up to now before n changes (or before a snapshot). */
static void acct_advance(struct fakedisk *d, uint64_t now)
{
	uint64_t dt = now > d->last_change ? now - d->last_change : 0;

	d->c.inflight_area_ns += d->inflight * dt;
	if (d->inflight)
		d->c.busy_ns += dt;
	d->last_change = now;
}

static void acct_reset(struct fakedisk *d, uint64_t now)
{
	unsigned int i;

	memset(&d->c, 0, sizeof(d->c));
	if (d->starve_start)	/* an open period counts from the reset */
		d->starve_start = now;
	/* Requests still queued count as in flight since the reset. */
	d->c.inflight_max = d->inflight;
	for (i = 0; i < d->cfg.parallel; i++)
		d->spindles[i].busy_ns = 0;
	d->epoch = now;
	d->last_change = now;
}

/* ---- the disk model ---- */

static uint64_t service_ns(const struct config *cfg, uint32_t size,
			   uint64_t dist)
{
	uint64_t ns = cfg->service_us * NSEC_PER_USEC;

	ns += (uint64_t)cfg->xfer_us_per_mib * NSEC_PER_USEC * size / MIB;
	/* Double: dist * us * 1000 overflows 64 bits on multi-TiB disks. */
	ns += (uint64_t)((double)cfg->seek_us_per_gib * NSEC_PER_USEC *
			 dist / GIB);
	/* A head that moves at all settles first: a disk's fixed seek cost. */
	if (dist)
		ns += (uint64_t)cfg->seek_us * NSEC_PER_USEC;
	return ns;
}

/*
 * The server that frees first; among idle ones, the one idle longest, so
 * a light load spreads over all of them.  Requests are taken in arrival
 * order, so this is an exact FIFO P-server queue.  O(P), P <= 4096.
 */
static uint32_t first_free(const struct fakedisk *d)
{
	uint32_t i, best = 0;

	for (i = 1; i < d->cfg.parallel; i++)
		if (d->spindles[i].free_at < d->spindles[best].free_at)
			best = i;
	return best;
}

/*
 * Starved periods: the truth for a block layer that holds the other
 * requests back while a hold request is out (mq-deadline does so for
 * lower-priority requests while a real-time one is queued or in flight).
 * With closed-loop clients, which resubmit on every completion, such a
 * period runs from the moment the disk has room while a hold request is
 * out (the hold request's arrival when fewer than inflight_max requests
 * are then at the disk, else the first reply after it) to the reply of
 * the last hold request out: the disk's own edges, so a client slow to
 * resubmit does not stretch the period.  Caller holds the lock.
 */
static void hold_arrive(struct fakedisk *d, int hold, uint64_t now)
{
	if (!hold)
		return;
	d->c.hold_requests++;
	d->holds_out++;
	/* Others already off the disk (answered, not back) will be held: room now. */
	if (!d->starve_start && d->inflight + 1 < d->c.inflight_max)
		d->starve_start = now;
	else if (!d->starve_start)
		d->hold_armed = 1;
}

static void hold_reply(struct fakedisk *d, const struct pending *p, uint64_t now)
{
	if (!p->hold) {
		if (d->hold_armed && d->holds_out && !d->starve_start)
			d->starve_start = now;
		d->hold_armed = 0;
		return;
	}
	d->c.hold_ns += now > p->start ? now - p->start : 0;
	if (--d->holds_out)
		return;
	d->hold_armed = 0;
	if (!d->starve_start)
		return;
	d->c.starved_ns += now > d->starve_start ? now - d->starve_start : 0;
	d->c.starved_periods++;
	d->starve_start = 0;
}

/*
 * Charge a request to a server and queue its reply.  stripe: the server
 * is the offset's spindle, and seek distance is measured in the spindle's
 * own address space so a sequential stream striped over P spindles does
 * not seek on any of them.  any: the first server to free up; its head
 * moves in the disk's address space (each server remembers where its
 * last request ended).
 */
static void model_submit(struct fakedisk *d, fuse_req_t req, uint64_t off,
			 size_t size, int is_read)
{
	uint64_t chunk = (uint64_t)d->cfg.chunk_kb * 1024;
	uint64_t stripe = off / chunk;
	struct pending p = {
		.req = req, .off = off, .size = size, .is_read = is_read,
	};
	uint64_t local, now, dist;
	struct spindle *s;
	int earliest;

	lock(d);
	/* Read under the lock so the integrals never see time run backwards. */
	now = mono_ns();
	if (d->cfg.dispatch == DISPATCH_ANY) {
		p.spindle = first_free(d);
		local = off;
	} else {
		p.spindle = stripe % d->cfg.parallel;
		local = stripe / d->cfg.parallel * chunk + off % chunk;
	}
	s = &d->spindles[p.spindle];
	dist = local > s->head ? local - s->head : s->head - local;
	p.start = now > s->free_at ? now : s->free_at;
	p.hold = d->cfg.hold_us && off < (uint64_t)d->cfg.hold_mb * MIB;
	p.deadline = p.start + (p.hold ? d->cfg.hold_us * NSEC_PER_USEC :
				service_ns(&d->cfg, size, dist));
	hold_arrive(d, p.hold, now);
	earliest = heap_push(d, &p);
	if (earliest < 0)
		goto nomem;

	s->free_at = p.deadline;
	s->head = local + size;
	acct_advance(d, now);
	d->inflight++;
	if (d->inflight > d->c.inflight_max)
		d->c.inflight_max = d->inflight;
	d->c.requests++;
	if (is_read)
		d->c.reads++;
	else
		d->c.writes++;
	d->c.bytes += size;
	if (dist)
		d->c.seeks++;
	if (earliest)
		pthread_cond_signal(&d->wake);
	unlock(d);
	return;

nomem:
	unlock(d);
	fuse_reply_err(req, ENOMEM);
}

static void reply_read(struct fakedisk *d, const struct pending *p)
{
	struct iovec iov[64];
	size_t len = p->size, n = 0;

	if (p->off >= d->disk_bytes)
		len = 0;
	else if (len > d->disk_bytes - p->off)
		len = d->disk_bytes - p->off;
	/* 64 x 256 KiB covers FUSE's 1 MiB max_pages limit with room. */
	while (len && n < 64) {
		size_t l = len < ZERO_CHUNK ? len : ZERO_CHUNK;

		iov[n].iov_base = (void *)zero_chunk;
		iov[n++].iov_len = l;
		len -= l;
	}
	fuse_reply_iov(p->req, iov, n);
}

/*
 * A failed reply means the kernel already gave up on the request
 * (interrupted, or the connection is gone); there is nothing to undo.
 */
static void reply_one(struct fakedisk *d, const struct pending *p)
{
	if (p->is_read)
		reply_read(d, p);
	else
		fuse_reply_write(p->req, p->size);
}

/* Caller holds the lock; p has just left the heap. */
static void acct_reply(struct fakedisk *d, const struct pending *p,
		       uint64_t now)
{
	uint64_t from = p->start > d->epoch ? p->start : d->epoch;
	int64_t lag = (int64_t)(now - p->deadline);

	acct_advance(d, now);
	hold_reply(d, p, now);
	d->inflight--;
	if (p->deadline > from)
		d->spindles[p->spindle].busy_ns += p->deadline - from;
	d->c.replied++;
	d->c.lag_sum_ns += lag;
	if (lag > 0 && (uint64_t)lag > d->c.lag_max_ns)
		d->c.lag_max_ns = lag;
	if (lag < 0 && (uint64_t)-lag > d->c.early_max_ns)
		d->c.early_max_ns = -lag;
}

/*
 * Wake-up compensation.  A timed sleep ends late (VM timer interrupts,
 * scheduling: median ~0.1 ms idle, more on a loaded host), and every
 * reply would carry that on top of the model's service time: the disk
 * would look slower alone than its servers are.  So the reply thread
 * wakes early by the running median of its own lateness; replies then
 * leave on the deadline at the median.  Median, not mean, so the rare
 * multi-ms stall does not make the following replies early.  Estimated
 * with a +-1 us stochastic step per timed wake-up, clamped to 1 ms.  The
 * model (servers' busy time, free_at) is unchanged: only when the reply
 * leaves moves.  wake_comp=0 turns it off.
 */
#define WAKE_STEP_NS	1000ULL
#define WAKE_MAX_NS	1000000ULL

static void wake_learn(struct fakedisk *d, uint64_t target, uint64_t woke)
{
	if (woke > target + d->wake_lag_ns) {
		if (d->wake_lag_ns < WAKE_MAX_NS)
			d->wake_lag_ns += WAKE_STEP_NS;
	} else if (d->wake_lag_ns >= WAKE_STEP_NS) {
		d->wake_lag_ns -= WAKE_STEP_NS;
	}
}

/*
 * Sleep on a CLOCK_MONOTONIC condvar rather than clock_nanosleep: it is
 * the same absolute hrtimer sleep, but a handler queueing an earlier
 * deadline can wake us without a lost-wakeup window.
 */
static void *reply_thread(void *arg)
{
	struct fakedisk *d = arg;

	/* Default 50 us timer slack would show up as reply lag. */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		perror("fakedisk: prctl(PR_SET_TIMERSLACK), replies may lag");

	lock(d);
	while (!d->stop) {
		struct pending p;
		uint64_t now, due, early;

		if (!d->heap_len) {
			pthread_cond_wait(&d->wake, &d->lock);
			continue;
		}
		now = mono_ns();
		early = d->cfg.wake_comp ? d->wake_lag_ns : 0;
		due = d->heap[0].deadline > early ? d->heap[0].deadline - early : 0;
		if (due > now) {
			struct timespec ts = ns_to_ts(due);

			/* Lateness of this wake-up, against its own target. */
			if (pthread_cond_timedwait(&d->wake, &d->lock, &ts) ==
			    ETIMEDOUT)
				wake_learn(d, due, mono_ns());
			continue;
		}
		p = heap_pop(d);
		acct_reply(d, &p, now);
		unlock(d);
		reply_one(d, &p);
		lock(d);
	}
	unlock(d);
	return NULL;
}

/* ---- stats ---- */

struct snapshot {
	struct counters c;
	uint64_t now, elapsed_ns, inflight, wake_comp_ns;
	uint64_t *spindle_busy;
};

static int snapshot_take(struct fakedisk *d, struct snapshot *s)
{
	unsigned int i;

	s->spindle_busy = calloc(d->cfg.parallel, sizeof(uint64_t));
	if (!s->spindle_busy)
		return -ENOMEM;
	lock(d);
	s->now = mono_ns();
	acct_advance(d, s->now);
	s->c = d->c;
	if (d->starve_start && s->now > d->starve_start)	/* the open period so far */
		s->c.starved_ns += s->now - d->starve_start;
	s->inflight = d->inflight;
	s->wake_comp_ns = d->cfg.wake_comp ? d->wake_lag_ns : 0;
	s->elapsed_ns = s->now - d->epoch;
	for (i = 0; i < d->cfg.parallel; i++)
		s->spindle_busy[i] = d->spindles[i].busy_ns;
	/*
	 * Plus the part already served of requests not yet replied, so a
	 * snapshot taken under load is exact too (replied-only would lag by
	 * up to one service time per server).
	 */
	for (i = 0; i < d->heap_len; i++) {
		const struct pending *p = &d->heap[i];
		uint64_t from = p->start > d->epoch ? p->start : d->epoch;
		uint64_t to = p->deadline < s->now ? p->deadline : s->now;

		if (to > from)
			s->spindle_busy[p->spindle] += to - from;
	}
	unlock(d);
	return 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / b : 0.0;
}

static void json_u64_array(FILE *f, const char *name, const uint64_t *v,
			   unsigned int n)
{
	unsigned int i;

	fprintf(f, "\"%s\":[", name);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
	fprintf(f, "],\n");
}

static void json_write(FILE *f, const struct fakedisk *d,
		       const struct snapshot *s)
{
	const struct config *cfg = &d->cfg;
	const struct counters *c = &s->c;
	uint64_t busy_sum;
	unsigned int i;

	fprintf(f, "{\n\"requests\":%" PRIu64 ",\n\"reads\":%" PRIu64
		",\n\"writes\":%" PRIu64 ",\n\"bytes\":%" PRIu64
		",\n\"seeks\":%" PRIu64 ",\n",
		c->requests, c->reads, c->writes, c->bytes, c->seeks);
	fprintf(f, "\"inflight_now\":%" PRIu64 ",\n\"inflight_max\":%" PRIu64
		",\n\"inflight_area_ns\":%" PRIu64 ",\n\"busy_ns\":%" PRIu64
		",\n\"elapsed_ns\":%" PRIu64 ",\n",
		s->inflight, c->inflight_max, c->inflight_area_ns, c->busy_ns,
		s->elapsed_ns);
	json_u64_array(f, "spindle_busy_ns", s->spindle_busy, cfg->parallel);
	fprintf(f, "\"spindle_util\":[");
	for (i = 0; i < cfg->parallel; i++)
		fprintf(f, "%s%.4f", i ? "," : "",
			ratio(s->spindle_busy[i], s->elapsed_ns));
	fprintf(f, "],\n");
	for (i = 0, busy_sum = 0; i < cfg->parallel; i++)
		busy_sum += s->spindle_busy[i];
	fprintf(f, "\"busy_servers_avg\":%.4f,\n", ratio(busy_sum, c->busy_ns));
	fprintf(f, "\"inflight_avg\":%.4f,\n\"inflight_avg_busy\":%.4f,\n"
		"\"iops\":%.2f,\n\"reply_lag_avg_ns\":%.0f,\n"
		"\"reply_lag_max_ns\":%" PRIu64 ",\n"
		"\"reply_early_max_ns\":%" PRIu64 ",\n"
		"\"wake_comp_ns\":%" PRIu64 ",\n",
		ratio(c->inflight_area_ns, s->elapsed_ns),
		ratio(c->inflight_area_ns, c->busy_ns),
		ratio(c->requests * NSEC_PER_SEC, s->elapsed_ns),
		c->replied ? (double)c->lag_sum_ns / c->replied : 0.0,
		c->lag_max_ns, c->early_max_ns, s->wake_comp_ns);
	fprintf(f, "\"hold_requests\":%" PRIu64 ",\n\"hold_ns\":%" PRIu64
		",\n\"starved_ns\":%" PRIu64 ",\n\"starved_periods\":%" PRIu64 ",\n",
		c->hold_requests, c->hold_ns, c->starved_ns, c->starved_periods);
	fprintf(f, "\"dispatch\":\"%s\",\n", dispatch_names[cfg->dispatch]);
	fprintf(f, "\"size_mb\":%u,\n\"service_us\":%u,\n\"parallel\":%u,\n"
		"\"chunk_kb\":%u,\n\"xfer_us_per_mib\":%u,\n"
		"\"seek_us_per_gib\":%u,\n\"seek_us\":%u,\n\"max_background\":%u,\n"
		"\"reply_threads\":%u,\n\"fuse_mt\":%u,\n\"wake_comp\":%u,\n"
		"\"hold_mb\":%u,\n\"hold_us\":%u,\n\"pid\":%ld\n}\n",
		cfg->size_mb, cfg->service_us, cfg->parallel, cfg->chunk_kb,
		cfg->xfer_us_per_mib, cfg->seek_us_per_gib, cfg->seek_us,
		cfg->max_background,
		cfg->reply_threads, cfg->fuse_mt, cfg->wake_comp, cfg->hold_mb,
		cfg->hold_us, (long)getpid());
}

struct stats_buf {
	char *data;
	size_t len;
};

/* Rendered once per open so a reader paging through sees one instant. */
static struct stats_buf *stats_render(struct fakedisk *d)
{
	struct stats_buf *b = calloc(1, sizeof(*b));
	struct snapshot s;
	FILE *f;

	if (!b)
		return NULL;
	if (snapshot_take(d, &s))
		goto free_buf;
	f = open_memstream(&b->data, &b->len);
	if (!f)
		goto free_snap;
	json_write(f, d, &s);
	if (fclose(f))
		goto free_data;
	free(s.spindle_busy);
	return b;

free_data:
	free(b->data);
free_snap:
	free(s.spindle_busy);
free_buf:
	free(b);
	return NULL;
}

/* ---- FUSE operations ---- */

static void fill_stat(const struct fakedisk *d, fuse_ino_t ino,
		      struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	switch (ino) {
	case INO_ROOT:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		break;
	case INO_DISK:
		st->st_mode = S_IFREG | 0600;
		st->st_size = d->disk_bytes;
		st->st_blocks = d->disk_bytes / 512;
		break;
	case INO_STATS:
		/* Size 0 like /proc: direct_io reads go on until EOF. */
		st->st_mode = S_IFREG | 0444;
		break;
	case INO_RESET:
		st->st_mode = S_IFREG | 0200;
		break;
	}
}

static int ino_valid(fuse_ino_t ino)
{
	return ino >= INO_ROOT && ino < INO_END;
}

static void fd_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fakedisk *d = userdata;

	/* The kernel's default of 12 async requests would cap parallelism. */
	conn->max_background = d->cfg.max_background;
	conn->congestion_threshold = d->cfg.max_background * 3 / 4;
	if (!conn->congestion_threshold)
		conn->congestion_threshold = 1;
	if (!(conn->capable & FUSE_CAP_ASYNC_DIO))
		fprintf(stderr, "fakedisk: kernel lacks async DIO; loop will "
			"issue one request at a time\n");
	conn->want |= conn->capable & FUSE_CAP_ASYNC_DIO;
}

static void fd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { 0 };
	fuse_ino_t ino;

	if (parent != INO_ROOT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	for (ino = INO_DISK; ino < INO_END; ino++)
		if (!strcmp(name, ino_names[ino]))
			break;
	if (ino == INO_END) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = ino;
	e.attr_timeout = 1.0;
	e.entry_timeout = 1.0;
	fill_stat(fuse_req_userdata(req), ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fd_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (!ino_valid(ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_stat(fuse_req_userdata(req), ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

/* Accept O_TRUNC on "reset" (echo > reset) but never resize the disk. */
static void fd_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct fakedisk *d = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	if (!ino_valid(ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) && ino == INO_DISK &&
	    (uint64_t)attr->st_size != d->disk_bytes) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fill_stat(d, ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

static void fd_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fakedisk *d = fuse_req_userdata(req);
	char buf[512];
	size_t used = 0;
	fuse_ino_t i;

	(void)fi;
	if (ino != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (size > sizeof(buf))
		size = sizeof(buf);
	/* Entry i resumes at offset i; nothing here needs "." or "..". */
	for (i = INO_DISK + off; i < INO_END; i++) {
		struct stat st;
		size_t n;

		fill_stat(d, i, &st);
		n = fuse_add_direntry(req, buf + used, size - used,
				      ino_names[i], &st, i - INO_DISK + 1);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

static void fd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fakedisk *d = fuse_req_userdata(req);
	struct stats_buf *b;

	switch (ino) {
	case INO_DISK:
	case INO_RESET:
		fuse_reply_open(req, fi);
		return;
	case INO_STATS:
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			fuse_reply_err(req, EACCES);
			return;
		}
		b = stats_render(d);
		if (!b) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		fi->fh = (uintptr_t)b;
		fi->direct_io = 1;
		if (fuse_reply_open(req, fi) == -ENOENT) {
			free(b->data);
			free(b);
		}
		return;
	default:
		fuse_reply_err(req, ino == INO_ROOT ? EISDIR : ENOENT);
	}
}

static void fd_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stats_buf *b = (struct stats_buf *)(uintptr_t)fi->fh;

	if (ino == INO_STATS && b) {
		free(b->data);
		free(b);
	}
	fuse_reply_err(req, 0);
}

static void fd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fakedisk *d = fuse_req_userdata(req);
	struct stats_buf *b = (struct stats_buf *)(uintptr_t)fi->fh;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (ino == INO_DISK) {
		model_submit(d, req, off, size, 1);
		return;
	}
	if (ino != INO_STATS || !b) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if ((size_t)off >= b->len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > b->len - off)
		size = b->len - off;
	fuse_reply_buf(req, b->data + off, size);
}

static void fd_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fakedisk *d = fuse_req_userdata(req);

	(void)buf;
	(void)fi;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	switch (ino) {
	case INO_DISK:
		if ((uint64_t)off >= d->disk_bytes) {
			fuse_reply_err(req, ENOSPC);
			return;
		}
		if (size > d->disk_bytes - off)
			size = d->disk_bytes - off;
		model_submit(d, req, off, size, 0);
		return;
	case INO_RESET:
		lock(d);
		acct_reset(d, mono_ns());
		unlock(d);
		fuse_reply_write(req, size);
		return;
	default:
		fuse_reply_err(req, EBADF);
	}
}

/* Nothing is stored, so there is nothing to make durable. */
static void fd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void fd_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops fd_ops = {
	.init = fd_init,
	.lookup = fd_lookup,
	.getattr = fd_getattr,
	.setattr = fd_setattr,
	.readdir = fd_readdir,
	.open = fd_open,
	.release = fd_release,
	.read = fd_read,
	.write = fd_write,
	.flush = fd_flush,
	.fsync = fd_fsync,
};

/* ---- setup ---- */

static void usage(const char *prog)
{
	printf("usage: %s MOUNTPOINT [-f] [-o opt,...]\n\n"
	       "Serves MOUNTPOINT/disk (zeros, writes discarded), "
	       "MOUNTPOINT/stats (JSON truth)\n"
	       "and MOUNTPOINT/reset (write anything to zero the counters).\n\n"
	       "model options (-o):\n"
	       "    size_mb=N          disk size in MiB (1024)\n"
	       "    service_us=N       fixed service time per request (2000)\n"
	       "    parallel=N         servers P (spindles when striped) (1)\n"
	       "    dispatch=MODE      stripe: RAID-0 by offset; any: the first\n"
	       "                       server to free up (P-server queue) (stripe)\n"
	       "    chunk_kb=N         stripe chunk in KiB (64)\n"
	       "    xfer_us_per_mib=N  transfer cost per MiB of request (0)\n"
	       "    seek_us_per_gib=N  cost per GiB of head movement (0)\n"
	       "    seek_us=N          fixed cost of any head movement (0)\n"
	       "    max_background=N   FUSE async request limit (128)\n"
	       "    reply_threads=N    threads answering due requests (1)\n"
	       "    fuse_mt=0|1        libfuse multi-threaded receive loop (0)\n"
	       "    wake_comp=0|1      reply early by the median timer lateness (1)\n"
	       "    hold_mb=N          requests below N MiB are hold requests (0)\n"
	       "    hold_us=N          their service time instead; 0: none (0)\n\n",
	       prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

static int config_check(struct config *cfg)
{
	if (cfg->dispatch_opt) {
		if (!strcmp(cfg->dispatch_opt, "stripe")) {
			cfg->dispatch = DISPATCH_STRIPE;
		} else if (!strcmp(cfg->dispatch_opt, "any")) {
			cfg->dispatch = DISPATCH_ANY;
		} else {
			fprintf(stderr, "fakedisk: dispatch=%s: want stripe "
				"or any\n", cfg->dispatch_opt);
			return -1;
		}
	}
	if (!cfg->size_mb || !cfg->parallel || !cfg->chunk_kb ||
	    !cfg->max_background || !cfg->reply_threads) {
		fprintf(stderr, "fakedisk: size_mb, parallel, chunk_kb, "
			"max_background and reply_threads must be >= 1\n");
		return -1;
	}
	if (cfg->parallel > 4096 || cfg->reply_threads > 64 ||
	    cfg->max_background > 65535) {
		fprintf(stderr, "fakedisk: limits: parallel <= 4096, "
			"reply_threads <= 64, max_background <= 65535\n");
		return -1;
	}
	return 0;
}

static int state_init(struct fakedisk *d)
{
	pthread_condattr_t ca;
	int err;

	d->disk_bytes = (uint64_t)d->cfg.size_mb * MIB;
	d->spindles = calloc(d->cfg.parallel, sizeof(*d->spindles));
	if (!d->spindles) {
		fprintf(stderr, "fakedisk: out of memory for %u spindles\n",
			d->cfg.parallel);
		return -1;
	}
	err = pthread_mutex_init(&d->lock, NULL);
	if (!err)
		err = pthread_condattr_init(&ca);
	/* Deadlines are CLOCK_MONOTONIC so clock steps cannot move them. */
	if (!err)
		err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&d->wake, &ca);
	if (err) {
		fprintf(stderr, "fakedisk: pthread init: %s\n", strerror(err));
		return -1;
	}
	acct_reset(d, mono_ns());
	return 0;
}

static void reply_threads_stop(struct fakedisk *d, pthread_t *tids,
			       unsigned int n)
{
	unsigned int i;

	lock(d);
	d->stop = 1;
	pthread_cond_broadcast(&d->wake);
	unlock(d);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	/* The connection is gone; replying just frees the requests. */
	while (d->heap_len) {
		struct pending p = heap_pop(d);

		fuse_reply_err(p.req, EIO);
	}
}

static int reply_threads_start(struct fakedisk *d, pthread_t *tids,
			       unsigned int *started)
{
	unsigned int i;

	for (i = 0; i < d->cfg.reply_threads; i++) {
		int err = pthread_create(&tids[i], NULL, reply_thread, d);

		if (err) {
			fprintf(stderr, "fakedisk: pthread_create: %s\n",
				strerror(err));
			*started = i;
			return -1;
		}
	}
	*started = i;
	return 0;
}

static int serve(struct fakedisk *d, struct fuse_cmdline_opts *opts)
{
	struct fuse_loop_config *lcfg;
	pthread_t tids[64];
	unsigned int started = 0;
	int ret = -1;

	if (reply_threads_start(d, tids, &started))
		goto stop;
	/*
	 * Handlers never block, so one receiving thread keeps up (measured
	 * ~7.5k IOPS) and, unlike libfuse's pool, takes requests in the
	 * order loop submitted them; with the pool, ~1% of a sequential
	 * stream arrived swapped and showed up as seeks.
	 */
	if (!d->cfg.fuse_mt || opts->singlethread) {
		ret = fuse_session_loop(d->se);
		goto stop;
	}
	lcfg = fuse_loop_cfg_create();
	if (!lcfg) {
		fprintf(stderr, "fakedisk: fuse_loop_cfg_create failed\n");
		goto stop;
	}
	fuse_loop_cfg_set_clone_fd(lcfg, opts->clone_fd);
	fuse_loop_cfg_set_idle_threads(lcfg, opts->max_idle_threads);
	fuse_loop_cfg_set_max_threads(lcfg, opts->max_threads);
	ret = fuse_session_loop_mt(d->se, lcfg);
	fuse_loop_cfg_destroy(lcfg);
stop:
	reply_threads_stop(d, tids, started);
	return ret;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	struct fakedisk *d = &fd_state;
	int ret = 1;

	d->cfg = (struct config){
		.size_mb = 1024, .service_us = 2000, .parallel = 1,
		.chunk_kb = 64, .max_background = 128, .reply_threads = 1,
		.wake_comp = 1,
	};
	if (fuse_opt_parse(&args, &d->cfg, cfg_opts, NULL)) {
		fprintf(stderr, "fakedisk: bad -o option; see %s --help\n",
			argv[0]);
		goto out_args;
	}
	if (d->cfg.show_help) {
		usage(argv[0]);
		ret = 0;
		goto out_args;
	}
	if (config_check(&d->cfg))
		goto out_args;
	if (fuse_parse_cmdline(&args, &opts)) {
		fprintf(stderr, "fakedisk: cannot parse command line\n");
		goto out_args;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "fakedisk: no mountpoint; usage: %s DIR "
			"[-f] [-o opts]\n", argv[0]);
		goto out_opts;
	}
	if (state_init(d))
		goto out_opts;

	d->se = fuse_session_new(&args, &fd_ops, sizeof(fd_ops), d);
	if (!d->se) {
		fprintf(stderr, "fakedisk: fuse_session_new failed (unknown "
			"-o option?)\n");
		goto out_opts;
	}
	if (fuse_set_signal_handlers(d->se)) {
		fprintf(stderr, "fakedisk: cannot install signal handlers\n");
		goto out_session;
	}
	if (fuse_session_mount(d->se, opts.mountpoint)) {
		fprintf(stderr, "fakedisk: cannot mount on %s; is /dev/fuse "
			"there and the directory empty?\n", opts.mountpoint);
		goto out_signals;
	}
	if (fuse_daemonize(opts.foreground)) {
		fprintf(stderr, "fakedisk: fuse_daemonize failed\n");
		goto out_unmount;
	}
	ret = serve(d, &opts) ? 1 : 0;

out_unmount:
	fuse_session_unmount(d->se);
out_signals:
	fuse_remove_signal_handlers(d->se);
out_session:
	fuse_session_destroy(d->se);
out_opts:
	free(opts.mountpoint);
out_args:
	fuse_opt_free_args(&args);
	free(d->cfg.dispatch_opt);
	return ret;
}
