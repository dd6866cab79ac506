// SPDX-License-Identifier: GPL-2.0
/*
 * `blkwise export`: a Prometheus exporter (its command line: user/cmd/export.c;
 * the HTTP library's shim: mhd.c; the listening socket: listen.c; the drop
 * of privileges: privs.c).
 *
 * One thread samples: every -i seconds, and when a scrape asks, it reads
 * the BPF maps through the watch loop (every tick of the tuner with
 * --tune) and renders the whole page, in both formats, into memory; a
 * pointer swap under a mutex publishes it.  libmicrohttpd's threads serve
 * scrapes from the last page: a scrape copies bytes and never reads BPF
 * itself; scrapes arriving within 50 ms share one sample, so any number
 * of scrapers costs at most 20 samples a second, and the sampler is never
 * blocked for longer than a memcpy.
 *
 * Privileges: the listening socket is bound, the BPF programs loaded and
 * attached, and (with --tune) the sysfs files it tunes opened, all as
 * root; then it becomes --user (nobody) with no capabilities, where held
 * map fds suffice (6.5 and later), else keeping only what bpf() asks for
 * to read a map (CAP_BPF, before 6.5).
 */
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include "model/promfmt.h"
#include "export/export.h"
#include "version.h"

#define MAX_PROGS 32

/*
 * What scrapes read: the last page, in both formats, and the scrape
 * counters.  A scrape that finds the page older than FRESH_NS asks the
 * sampler for a new one and waits for it (want_ns), so what Prometheus
 * stores at a scrape's time was sampled then, and rate() is not skewed by
 * the age of a page; any number of scrapes in one FRESH_NS share one
 * sample.  With --tune the sampler's own tick is fresh enough, and the
 * tuner's windows keep their rhythm.
 */
#define FRESH_NS 50000000ULL
#define SCRAPE_WAIT_NS 1000000000ULL

struct page {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* CLOCK_MONOTONIC: a scrape's want, or a new page */
	char *text, *om;
	size_t text_len, om_len;
	__u64 sampled_ns;	/* when the page's sample was taken */
	__u64 want_ns;		/* a scrape waits for a page sampled after this */
	bool on_demand;		/* scrapes may ask for a sample */
	__u64 scrapes;
	double dur_sum;
	__u64 dur_count;
};

struct export_dev {
	__u32 dev;
	double solo_work_s;
	__u64 solo_known;
};

struct export_ctx {
	struct export_args *a;
	struct bw_watch w;
	struct bw_tuner *tuner;
	struct page page;
	struct bw_snap last;		/* at the previous render */
	struct export_dev *ed;
	int ned;
	int listen_fd, stats_fd;
	double start_unix;
	struct bw_prog_stat progs[MAX_PROGS];
	struct bw_tuner_dev_stats tstats[BW_MAX_WATCH];
	struct bw_expo_tune tune[BW_MAX_WATCH];
	int ntstats;
	struct bw_webcfg *tls;		/* the TLS settings served, from the start */
	struct bw_webcfg *web;		/* users and headers: replaced on SIGHUP */
	pthread_rwlock_t web_lock;
	pthread_mutex_t conn_lock;
	struct conn *conns;		/* open connections, for the header deadline */
};

/* ---- the page ---- */

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void process_figures(struct bw_expo_self *s)
{
	unsigned long long utime = 0, stime = 0;
	long pages = 0, tck = sysconf(_SC_CLK_TCK);
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	struct dirent *de;
	DIR *d;

	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		       &stime);
	if (f)
		fclose(f);
	s->cpu_s = (double)(utime + stime) / (double)(tck > 0 ? tck : 100);
	f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%*s %ld", &pages) != 1)
		pages = 0;
	if (f)
		fclose(f);
	s->rss_bytes = (double)pages * (double)sysconf(_SC_PAGESIZE);
	s->open_fds = 0;
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d)))
		s->open_fds += de->d_name[0] != '.';
	if (d) {
		closedir(d);
		s->open_fds--;	/* the one reading it */
	}
}

static bool stats_on(const struct export_ctx *x)
{
	char buf[8] = "";
	FILE *f;

	if (x->stats_fd >= 0)
		return true;
	f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	if (f && !fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	if (f)
		fclose(f);
	return buf[0] == '1';
}

static struct export_dev *edev(struct export_ctx *x, __u32 dev)
{
	struct export_dev *n;
	int i;

	for (i = 0; i < x->ned; i++)
		if (x->ed[i].dev == dev)
			return &x->ed[i];
	n = realloc(x->ed, (x->ned + 1) * sizeof(*n));
	if (!n)
		return NULL;
	x->ed = n;
	memset(&n[x->ned], 0, sizeof(*n));
	n[x->ned].dev = dev;
	return &n[x->ned++];
}

/* Solo-equivalent work, summed over every sample (each with the S1 it had). */
static void accumulate(struct export_ctx *x)
{
	int i;

	for (i = 0; i < bw_watch_ndevs(&x->w); i++) {
		const struct bw_watch_dev *s = bw_watch_dev_at(&x->w, i);
		struct export_dev *e;

		if (s->row != BW_ROW_SHOW)
			continue;
		e = edev(x, s->dev);
		if (!e)
			continue;
		e->solo_work_s += s->iv.solo_work_ns / 1e9;
		e->solo_known += s->iv.solo_known;
	}
}

static void sched_of(const char *name, struct bw_expo_dev *d)
{
	long idle;

	if (bw_disk_sched(name, d->sched, sizeof(d->sched), &idle))
		d->sched[0] = '\0';
	d->slice_idle_us = idle;
}

/* S1 per op and size class: live where learned, else the store's. */
static void solo_of(const struct bw_watch_dev *s, const struct bw_snap_dev *cum,
		    struct bw_expo_dev *d)
{
	int op, c;

	d->s1_source = NULL;
	for (op = 0; op < BW_NR_OPS; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			__u64 n = 0, ns = 0;

			if (cum)
				bw_watch_solo(s, cum, op, c, &n, &ns);
			d->s1_s[op][c] = NAN;
			if (n >= bw_peff_default.min_solo) {
				d->s1_s[op][c] = ns / (double)n / 1e9;
				d->s1_source = d->s1_source ?: "live";
			} else if (s->has_stored && s->stored.s[op][c].learned) {
				d->s1_s[op][c] = s->stored.s[op][c].mean_ns / 1e9;
				d->s1_source = "stored";
			}
		}
	}
	d->class_source = s->cls.cls == BW_CLASS_UNKNOWN ? NULL :
			  s->cls.stored ? "stored" : "live";
}

static const struct bw_expo_tune *tune_of(struct export_ctx *x, __u32 dev)
{
	int i;

	for (i = 0; i < x->ntstats; i++)
		if (x->tstats[i].dev == dev && x->tstats[i].active)
			return &x->tune[i];
	return NULL;
}

static void fill_dev(struct export_ctx *x, const struct bw_watch_dev *s, struct bw_expo_dev *d)
{
	const struct bw_snap_dev *cum = bw_snap_find(bw_watch_snapshot(&x->w), s->dev);
	struct export_dev *e = edev(x, s->dev);
	struct bw_interval iv;

	memset(d, 0, sizeof(*d));
	d->cum = cum;
	d->info = &s->info;
	/* Since the last page that closed an interval: -i at least (render()). */
	bw_watch_interval(&x->w, s, &x->last, &iv);
	d->depth_mean = iv.depth_busy;
	d->p_eff = iv.p_eff;
	d->cls = s->cls.cls;
	solo_of(s, bw_watch_exact_dev(&x->w, s->dev), d);
	d->solo_work_s = e ? e->solo_work_s : 0;
	d->solo_known = e ? e->solo_known : 0;
	sched_of(s->info.name, d);
	d->tune = tune_of(x, s->dev);
}

static int snap_copy(struct bw_snap *dst, const struct bw_snap *src)
{
	struct bw_snap_dev *devs = malloc((src->nr ? src->nr : 1) * sizeof(*devs));

	if (!devs)
		return -ENOMEM;
	memcpy(devs, src->devs, src->nr * sizeof(*devs));
	bw_snap_free(dst);
	*dst = *src;
	dst->devs = devs;
	return 0;
}

static void tuner_figures(struct export_ctx *x)
{
	int i;

	x->ntstats = x->tuner ? bw_tuner_stats(x->tuner, x->tstats, BW_MAX_WATCH) : 0;
	for (i = 0; i < x->ntstats; i++) {
		memcpy(x->tune[i].actions, x->tstats[i].actions, sizeof(x->tune[i].actions));
		x->tune[i].probes = x->tstats[i].probes;
		x->tune[i].probe_s = x->tstats[i].probe_s;
	}
}

static int render_one(bool om, const struct bw_expo_self *s, const struct bw_expo_dev *d, int n,
		      char **buf, size_t *len)
{
	struct bw_prom p = { .om = om };

	p.f = open_memstream(buf, len);
	if (!p.f)
		return -ENOMEM;
	bw_expo_render(&p, s, d, n);
	return fclose(p.f) ? -ENOMEM : 0;
}

static void publish(struct page *pg, char *text, size_t tl, char *om, size_t ol, __u64 t0)
{
	char *ot, *oo;

	pthread_mutex_lock(&pg->lock);
	ot = pg->text;
	oo = pg->om;
	pg->text = text;
	pg->text_len = tl;
	pg->om = om;
	pg->om_len = ol;
	pg->sampled_ns = t0;
	pthread_cond_broadcast(&pg->cond);
	pthread_mutex_unlock(&pg->lock);
	free(ot);
	free(oo);
}

static int cmp_presence(const void *a, const void *b)
{
	return strcmp(((const struct bw_expo_presence *)a)->device,
		      ((const struct bw_expo_presence *)b)->device);
}

/*
 * Into p (ndevs long): the named devices, and every other one shown since
 * the start, each present while its series are on the page; how many.
 */
static int presence_of(const struct export_ctx *x, struct bw_expo_presence *p)
{
	int i, n = 0;

	for (i = 0; i < bw_watch_ndevs(&x->w); i++) {
		const struct bw_watch_dev *s = bw_watch_dev_at(&x->w, i);

		if (!s->info.name[0] || (!s->named && s->row == BW_ROW_HIDE && !s->dropped))
			continue;
		p[n].device = s->info.name;
		p[n++].present = s->row == BW_ROW_SHOW;
	}
	qsort(p, n, sizeof(*p), cmp_presence);
	return n;
}

static int render(struct export_ctx *x, __u64 t0)
{
	const struct bw_snap *cur = bw_watch_snapshot(&x->w);
	const struct bw_cost_state *cost = bw_watch_cost(&x->w);
	int nd = bw_watch_ndevs(&x->w) ?: 1;
	struct bw_watch_dev **rows = calloc(nd, sizeof(*rows));
	struct bw_expo_dev *d = calloc(nd, sizeof(*d));
	struct bw_expo_presence *pr = calloc(nd, sizeof(*pr));
	struct bw_expo_self s = {
		.version = BW_VERSION, .commit = BW_COMMIT, .libbpf = libbpf_version_string(),
		.attach = bw_watch_attach_mode(&x->w), .start_unix = x->start_unix,
	};
	struct bw_bc_snap bc = {};
	struct bw_cg_rows cg = {};
	struct bw_expo_cg ecg;
	char *text = NULL, *om = NULL;
	size_t tl = 0, ol = 0;
	int i, n = 0, nrows, err = -ENOMEM;

	if (!rows || !d || !pr)
		goto out;
	if (x->a->w.core.biocache && !bw_watch_biocache(&x->w, &bc))
		s.biocache = &bc;
	if (x->a->w.core.cgroups && !bw_watch_cgroups(&x->w, &x->a->cg, &cg)) {
		ecg = (struct bw_expo_cg){ .rows = cg.rows, .dev = (const char (*)[BW_NAME_LEN])cg.names,
					   .n = cg.n, .omitted = cg.omitted,
					   .no_room = cg.counts.no_room, .hierarchy = cg.hierarchy };
		s.cgroups = &ecg;
	}
	tuner_figures(x);
	nrows = bw_watch_rows(&x->w, rows);
	for (i = 0; i < nrows; i++)
		if (!rows[i]->iv.gone && bw_snap_find(cur, rows[i]->dev))
			fill_dev(x, rows[i], &d[n++]);
	s.presence = pr;
	s.npresence = presence_of(x, pr);
	s.nprogs = bw_watch_prog_stats(&x->w, x->progs, MAX_PROGS);
	if (s.nprogs < 0)
		s.nprogs = 0;
	s.progs = x->progs;
	s.bpf_cpu_s = cost->bpf_s;
	s.observed = cost->light_share;
	s.max_cpu = x->a->w.max_cpu;
	s.bpf_stats = stats_on(x);
	process_figures(&s);
	s.last_sample_unix = now_unix();
	s.sample_s = (bw_now_ns() - t0) / 1e9;
	err = render_one(false, &s, d, n, &text, &tl) ?: render_one(true, &s, d, n, &om, &ol);
	if (err) {
		free(text);
		free(om);
		goto out;
	}
	publish(&x->page, text, tl, om, ol, t0);
	/* The interval figures span at least -i, however often scrapes come. */
	if (cur->ts_ns - x->last.ts_ns + FRESH_NS >= (__u64)(x->a->interval * 1e9))
		err = snap_copy(&x->last, cur);
	else
		err = 0;
out:
	bw_bc_snap_free(&bc);
	bw_cg_rows_free(&cg);
	free(rows);
	free(d);
	free(pr);
	return err;
}

/* ---- HTTP ---- */

static const char *const INDEX_FMT =
	"<!DOCTYPE html>\n<html><head><title>blkwise exporter</title></head><body>\n"
	"<h1>blkwise exporter</h1>\n<p>Block-layer metrics from BPF: service and queue time, "
	"depth, busy time, effective parallelism, device class.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a></li></ul>\n"
	"<p>version %s, commit %s, libbpf %s</p>\n</body></html>\n";

/*
 * Connections: a request's header must be in within HEADER_TIMEOUT_S of
 * the connection's last activity (TLS handshake included), so idle and
 * slow clients leave quickly; a client that made an authorized request
 * may keep its connection open between scrapes for KEEPALIVE_TIMEOUT_S.
 * Each address holds at most --max-per-ip connections, and all of them
 * at most --max-connections, polled with epoll, so thousands of idle
 * sockets cost no scrape anything.
 */
#define HEADER_TIMEOUT_S 5u
#define KEEPALIVE_TIMEOUT_S 120u
/*
 * libmicrohttpd's timeout counts from the last byte: a client trickling
 * a header a byte at a time never meets it.  So a connection that has not
 * brought a whole request HEADER_DEADLINE_NS after it was accepted is shut
 * down by the sampler's thread (reap_slow()).
 */
#define HEADER_DEADLINE_NS (10 * 1000000000ULL)

struct conn {
	struct conn *next, **pprev;
	int fd;
	__u64 accepted_ns;
	bool served;		/* a request came whole: the deadline is met */
};
#define THREADS 2u

static void add_headers(struct export_ctx *x, struct MHD_Response *r)
{
	int i;

	for (i = 0; x->web && i < x->web->nheaders; i++)
		mhd.add_response_header(r, x->web->header_name[i], x->web->header_value[i]);
}

/* Called with web_lock held for reading. */
static enum MHD_Result reply(struct export_ctx *x, struct MHD_Connection *c, unsigned int code,
			     const char *type, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	add_headers(x, r);
	if (code == MHD_HTTP_UNAUTHORIZED)
		ret = mhd.queue_basic_auth_fail_response(c, "blkwise", r);
	else
		ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

static bool wants_om(struct MHD_Connection *c)
{
	const char *acc = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return acc && strstr(acc, "application/openmetrics-text");
}

static enum MHD_Result metrics(struct export_ctx *x, struct MHD_Connection *c)
{
	struct page *pg = &x->page;
	bool om = wants_om(c);
	__u64 t0 = bw_now_ns();
	struct bw_prom p = { .om = om };
	char *buf = NULL;
	size_t len = 0;

	p.f = open_memstream(&buf, &len);
	if (!p.f)
		return MHD_NO;
	pthread_mutex_lock(&pg->lock);
	if (pg->on_demand && t0 - pg->sampled_ns > FRESH_NS) {
		struct timespec until;
		__u64 u = t0 + SCRAPE_WAIT_NS;

		until.tv_sec = u / 1000000000ULL;
		until.tv_nsec = u % 1000000000ULL;
		if (pg->want_ns < t0)
			pg->want_ns = t0;
		pthread_cond_broadcast(&pg->cond);
		while (pg->sampled_ns < t0 &&
		       pthread_cond_timedwait(&pg->cond, &pg->lock, &until) != ETIMEDOUT)
			;
	}
	if (om ? pg->om : pg->text)
		fwrite(om ? pg->om : pg->text, 1, om ? pg->om_len : pg->text_len, p.f);
	pg->scrapes++;
	bw_expo_render_scrapes(&p, pg->scrapes, pg->dur_sum, pg->dur_count);
	pthread_mutex_unlock(&pg->lock);
	if (fclose(p.f)) {
		free(buf);
		return MHD_NO;
	}
	pthread_mutex_lock(&pg->lock);
	pg->dur_sum += (bw_now_ns() - t0) / 1e9;
	pg->dur_count++;
	pthread_mutex_unlock(&pg->lock);
	return reply(x, c, MHD_HTTP_OK, om ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
		     "text/plain; version=0.0.4; charset=utf-8", buf, len, MHD_RESPMEM_MUST_FREE);
}

/* Basic auth against the users of the web config (none: everyone). */
static bool authorized(struct export_ctx *x, struct MHD_Connection *c)
{
	char *user, *password = NULL;
	bool ok;

	if (!x->web || !x->web->nusers)
		return true;
	user = mhd.basic_auth_get_username_password(c, &password);
	ok = bw_webcfg_auth(x->web, user, password);
	if (password) {
		explicit_bzero(password, strlen(password));
		mhd.free(password);
	}
	if (user)
		mhd.free(user);
	return ok;
}

/*
 * The client certificate, where the policy verifies one: the handshake
 * already refused what connection_notify() asked GnuTLS to refuse; this
 * checks the outcome again as libmicrohttpd's manual shows (the session
 * from MHD_get_connection_info, gnutls_certificate_verify_peers2).
 */
static bool client_cert_ok(struct export_ctx *x, struct MHD_Connection *c)
{
	enum bw_client_auth a = x->tls ? x->tls->client_auth : BW_NO_CLIENT_CERT;
	const union MHD_ConnectionInfo *ci;
	unsigned int n = 0, status = 0;

	if (a != BW_VERIFY_CLIENT_CERT_IF_GIVEN && a != BW_REQUIRE_AND_VERIFY_CLIENT_CERT)
		return true;
	ci = mhd.get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	if (!gt.certificate_get_peers(ci->tls_session, &n) || !n)
		return a == BW_VERIFY_CLIENT_CERT_IF_GIVEN;
	return !gt.certificate_verify_peers2(ci->tls_session, &status) && !status;
}

static void header_met(struct export_ctx *x, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(c,
		MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;

	if (!k)
		return;
	pthread_mutex_lock(&x->conn_lock);
	k->served = true;
	pthread_mutex_unlock(&x->conn_lock);
}

static enum MHD_Result route(struct export_ctx *x, struct MHD_Connection *c, const char *url,
			     const char *method)
{
	static const char nf[] = "not found: try /metrics\n", na[] = "read-only: GET or HEAD\n",
			  ua[] = "unauthorized\n", fb[] = "client certificate refused\n";
	char page[1024];
	int n;

	if (!client_cert_ok(x, c))
		return reply(x, c, MHD_HTTP_FORBIDDEN, "text/plain", (void *)fb, sizeof(fb) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (!authorized(x, c))
		return reply(x, c, MHD_HTTP_UNAUTHORIZED, "text/plain", (void *)ua, sizeof(ua) - 1,
			     MHD_RESPMEM_PERSISTENT);
	/* A client that got this far may keep its connection between scrapes. */
	mhd.set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, KEEPALIVE_TIMEOUT_S);
	header_met(x, c);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(x, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", (void *)na,
			     sizeof(na) - 1, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/metrics"))
		return metrics(x, c);
	if (strcmp(url, "/"))
		return reply(x, c, MHD_HTTP_NOT_FOUND, "text/plain", (void *)nf, sizeof(nf) - 1,
			     MHD_RESPMEM_PERSISTENT);
	n = snprintf(page, sizeof(page), INDEX_FMT, BW_VERSION, BW_COMMIT, libbpf_version_string());
	return reply(x, c, MHD_HTTP_OK, "text/html; charset=utf-8", page, (size_t)n,
		     MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	struct export_ctx *x = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req;
	pthread_rwlock_rdlock(&x->web_lock);
	ret = route(x, c, url, method);
	pthread_rwlock_unlock(&x->web_lock);
	return ret;
}

/*
 * A new TLS session, before its handshake: the client certificate policy
 * of client_auth_type, as Go's crypto/tls applies it.  GnuTLS refuses the
 * handshake when a required certificate is missing or, where verified,
 * does not chain to client_ca_file.
 */
static void client_cert_policy(struct export_ctx *x, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t s;

	ci = mhd.get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return;
	s = ci->tls_session;
	switch (x->tls->client_auth) {
	case BW_NO_CLIENT_CERT:
		gt.certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
		break;
	case BW_REQUEST_CLIENT_CERT:
		gt.certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
		break;
	case BW_REQUIRE_ANY_CLIENT_CERT:
		gt.certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
		break;
	case BW_VERIFY_CLIENT_CERT_IF_GIVEN:
		gt.session_set_verify_cert(s, NULL, 0);
		gt.certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
		break;
	case BW_REQUIRE_AND_VERIFY_CLIENT_CERT:
		gt.session_set_verify_cert(s, NULL, 0);
		gt.certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
		break;
	}
}

/*
 * Plain HTTP: a request line with a control or non-ASCII byte, already
 * there when the connection is accepted, is answered 400 and closed at
 * once rather than left to the header timeout (libmicrohttpd waits for a
 * line end that binary garbage may never send).  The bytes are only
 * peeked at: libmicrohttpd reads a good request as usual.
 */
static void refuse_garbage(struct MHD_Connection *c)
{
	static const char bad[] = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
				  "Content-Type: text/plain\r\nContent-Length: 20\r\n\r\n"
				  "bad request line\r\n\r\n";
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(c,
		MHD_CONNECTION_INFO_CONNECTION_FD);
	unsigned char b[512];
	ssize_t n, i;

	if (!ci)
		return;
	n = recv(ci->connect_fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
	for (i = 0; i < n && b[i] != '\n'; i++) {
		if ((b[i] >= 0x20 && b[i] < 0x7f) || b[i] == '\r' || b[i] == '\t')
			continue;
		if (send(ci->connect_fd, bad, sizeof(bad) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			return;
		shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
}

/* A connection into the list reap_slow() walks; out of it before libmicrohttpd closes its fd. */
static void conn_track(struct export_ctx *x, struct MHD_Connection *c, void **sock_ctx,
		       bool open)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *k = *sock_ctx;

	pthread_mutex_lock(&x->conn_lock);
	if (!open && k) {
		*k->pprev = k->next;
		if (k->next)
			k->next->pprev = k->pprev;
		free(k);
		*sock_ctx = NULL;
	} else if (open && (ci = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) &&
		   (k = calloc(1, sizeof(*k)))) {
		k->fd = ci->connect_fd;
		k->accepted_ns = bw_now_ns();
		k->next = x->conns;
		k->pprev = &x->conns;
		if (x->conns)
			x->conns->pprev = &k->next;
		x->conns = k;
		*sock_ctx = k;
	}
	pthread_mutex_unlock(&x->conn_lock);
}

/* Connections past HEADER_DEADLINE_NS without a whole request: shut down. */
static void reap_slow(struct export_ctx *x)
{
	__u64 now = bw_now_ns();
	struct conn *k;

	pthread_mutex_lock(&x->conn_lock);
	for (k = x->conns; k; k = k->next) {
		if (k->served || now - k->accepted_ns < HEADER_DEADLINE_NS)
			continue;
		shutdown(k->fd, SHUT_RDWR);
		k->served = true;	/* once */
	}
	pthread_mutex_unlock(&x->conn_lock);
}

/*
 * TLS: a first byte that does not open a handshake record (22) is closed
 * at once; GnuTLS would wait for the rest of a record its header may make
 * 64 KiB long.
 */
static void refuse_non_tls(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(c,
		MHD_CONNECTION_INFO_CONNECTION_FD);
	unsigned char b;

	if (ci && recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && b != 22)
		shutdown(ci->connect_fd, SHUT_RDWR);
}

static void connection_notify(void *cls, struct MHD_Connection *c, void **sock_ctx,
			      enum MHD_ConnectionNotificationCode code)
{
	struct export_ctx *x = cls;

	conn_track(x, c, sock_ctx, code == MHD_CONNECTION_NOTIFY_STARTED);
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	if (x->tls && x->tls->tls) {
		refuse_non_tls(c);
		client_cert_policy(x, c);
	} else {
		refuse_garbage(c);
	}
}

/*
 * libmicrohttpd's own messages (a connection limit reached, a TLS
 * handshake that failed, a socket error) go to stderr as warnings, at most
 * LOG_BURST a minute: any client can cause one, and none may flood the log.
 */
#define LOG_BURST 10u

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static __u64 minute_ns;
	static unsigned int said, held;
	__u64 now = bw_now_ns();
	char msg[256];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
		msg[--n] = '\0';
	pthread_mutex_lock(&lock);
	if (now - minute_ns >= 60000000000ULL) {
		if (held)
			bw_warn("http: %u more message(s) not shown (at most %u a minute)", held, LOG_BURST);
		minute_ns = now;
		said = held = 0;
	}
	if (said < LOG_BURST) {
		said++;
		bw_warn("http: %s", msg);
	} else {
		held++;
	}
	pthread_mutex_unlock(&lock);
}

static struct MHD_Daemon *serve(struct export_ctx *x)
{
	const struct bw_webcfg *t = x->tls;
	char prio[256];
	struct MHD_OptionItem o[16] = {
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, x },	/* first: MHD warns otherwise */
		{ MHD_OPTION_LISTEN_SOCKET, x->listen_fd, NULL },
		{ MHD_OPTION_THREAD_POOL_SIZE, THREADS, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, x->a->max_conn, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, x->a->max_per_ip, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, HEADER_TIMEOUT_S, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connection_notify, x },
	};
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	int n = 7;

	if (t && t->tls) {
		flags |= MHD_USE_TLS;
		bw_webcfg_priorities(t, prio, sizeof(prio));
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, t->cert_pem };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, t->key_pem };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, prio };
		if (t->ca_pem)
			o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, t->ca_pem };
	}
	o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return mhd.start_daemon(flags, 0, NULL, NULL, handle, x, MHD_OPTION_ARRAY, o,
				MHD_OPTION_END);
}

/* ---- the web config ---- */

/* Read while root: the key file is commonly root's alone. */
static int web_load(struct export_ctx *x)
{
	const char *path = x->a->web_config;
	struct bw_webcfg *c;
	char why[512];

	if (!path)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (bw_webcfg_load(path, c, why, sizeof(why)) ||
	    bw_webcfg_read_files(c, path, why, sizeof(why))) {
		bw_err("--web.config.file %s", why);
		bw_webcfg_free(c);
		free(c);
		return -EINVAL;
	}
	x->tls = x->web = c;
	return 0;
}

/* The certificate, its key and the client CA as GnuTLS takes them: said with the file's line. */
static int tls_check(struct export_ctx *x)
{
	const struct bw_webcfg *t = x->tls;
	gnutls_certificate_credentials_t cr;
	gnutls_datum_t cert, key, ca;
	int err;

	if (!t || !t->tls)
		return 0;
	if (gt.certificate_allocate_credentials(&cr) < 0)
		return -ENOMEM;
	cert = (gnutls_datum_t){ (unsigned char *)t->cert_pem, strlen(t->cert_pem) };
	key = (gnutls_datum_t){ (unsigned char *)t->key_pem, strlen(t->key_pem) };
	err = gt.certificate_set_x509_key_mem(cr, &cert, &key, GNUTLS_X509_FMT_PEM);
	if (err < 0) {
		bw_err("--web.config.file %s:%d: cert_file %s, key_file %s: %s", x->a->web_config,
		       t->cert_line, t->cert_file, t->key_file, gt.strerror(err));
		goto out;
	}
	if (t->ca_pem) {
		ca = (gnutls_datum_t){ (unsigned char *)t->ca_pem, strlen(t->ca_pem) };
		err = gt.certificate_set_x509_trust_mem(cr, &ca, GNUTLS_X509_FMT_PEM);
		if (err <= 0) {
			bw_err("--web.config.file %s:%d: client_ca_file %s: %s", x->a->web_config,
			       t->cert_line, t->client_ca_file,
			       err < 0 ? gt.strerror(err) : "no certificate in it");
			err = -EINVAL;
			goto out;
		}
	}
	err = 0;
out:
	gt.certificate_free_credentials(cr);
	return err ? -EINVAL : 0;
}

static volatile sig_atomic_t reload_asked;

static void on_hup(int sig)
{
	(void)sig;
	reload_asked = 1;
}

/*
 * SIGHUP: the file again, as --user.  Users and headers apply to the next
 * request; TLS settings only at a restart (the key was read as root).  A
 * file that does not parse changes nothing.
 */
static void web_reload(struct export_ctx *x)
{
	struct bw_webcfg *c = calloc(1, sizeof(*c)), *old;
	char why[512];

	reload_asked = 0;
	if (!c)
		return;
	if (bw_webcfg_load(x->a->web_config, c, why, sizeof(why))) {
		bw_warn("SIGHUP: --web.config.file %s; keeping the settings in force", why);
		free(c);
		return;
	}
	if (bw_webcfg_tls_differs(c, x->tls))
		bw_warn("SIGHUP: %s: TLS settings changed; they apply at a restart "
			"(users and headers re-read)", x->a->web_config);
	pthread_rwlock_wrlock(&x->web_lock);
	old = x->web;
	x->web = c;
	pthread_rwlock_unlock(&x->web_lock);
	if (old != x->tls) {
		bw_webcfg_free(old);
		free(old);
	}
	bw_warn("SIGHUP: re-read %s: %d basic auth user(s), %d header(s)", x->a->web_config,
		c->nusers, c->nheaders);
}

/* ---- the loop ---- */

/* Until the next tick, a scrape's request, or a signal (seen within 0.2 s). */
/* Histograms are extended every BW_REFRESH_NS of a long wait (bw_watch_refresh). */
static void wait_tick(struct export_ctx *x, __u64 due)
{
	__u64 refresh = bw_now_ns() + BW_REFRESH_NS;
	struct page *pg = &x->page;

	pthread_mutex_lock(&pg->lock);
	while (!bw_exiting && pg->want_ns <= pg->sampled_ns) {
		__u64 slice, now, u;
		struct timespec until;

		pthread_mutex_unlock(&pg->lock);
		slice = bw_watch_slices(&x->w);
		pthread_mutex_lock(&pg->lock);
		now = bw_now_ns();
		u = due < now + 200000000ULL ? due : now + 200000000ULL;

		if (now >= due)
			break;
		if (slice < u - now)
			u = now + slice;
		until.tv_sec = u / 1000000000ULL;
		until.tv_nsec = u % 1000000000ULL;
		reap_slow(x);
		if (reload_asked) {
			pthread_mutex_unlock(&pg->lock);
			web_reload(x);
			pthread_mutex_lock(&pg->lock);
			continue;
		}
		if (now >= refresh) {
			pthread_mutex_unlock(&pg->lock);
			bw_watch_refresh(&x->w);
			pthread_mutex_lock(&pg->lock);
			refresh = now + BW_REFRESH_NS;
			continue;
		}
		pthread_cond_timedwait(&pg->cond, &pg->lock, &until);
	}
	pthread_mutex_unlock(&pg->lock);
}

static int run(struct export_ctx *x)
{
	double tick_s = x->tuner ? x->a->t.cfg.window_s / BW_POLICY_TICKS_PER_WINDOW : x->a->interval;
	__u64 tick = (__u64)(tick_s * 1e9), due = bw_now_ns() + tick;
	bool none_said = false;
	int err = 0, alive;

	while (!bw_exiting) {
		__u64 t0;

		wait_tick(x, due);
		if (bw_exiting)
			break;
		t0 = bw_now_ns();
		if (t0 >= due)
			due += tick * ((t0 - due) / tick + 1);
		alive = bw_watch_sample(&x->w);
		if (alive < 0) {
			err = alive;
			break;
		}
		accumulate(x);
		if (x->tuner && bw_tuner_tick(x->tuner) <= 0)
			bw_warn("every tuned device is gone; exporting on");
		err = render(x, t0);
		if (err)
			break;
		/* Serving on: Prometheus keeps the target up, and a device of the name may return. */
		if (x->a->w.core.nr_watch && !alive && !none_said)
			bw_warn("every exported device is gone; serving on until one returns");
		none_said = x->a->w.core.nr_watch && !alive;
	}
	return err == -EINTR ? 0 : err;
}

static int start(struct export_ctx *x)
{
	struct export_args *a = x->a;
	int err;

	if (a->tune) {
		/* The tuner limits the watch to what it tunes; the exporter shows all it was asked. */
		int nr = a->w.core.nr_watch;
		__u32 *keep = malloc(sizeof(a->w.core.watch));

		if (!keep)
			return -ENOMEM;
		memcpy(keep, a->w.core.watch, sizeof(a->w.core.watch));
		err = bw_tuner_open(&x->tuner, &a->t, &x->w, &a->w);
		a->w.core.nr_watch = nr;
		memcpy(a->w.core.watch, keep, sizeof(a->w.core.watch));
		free(keep);
		if (err)
			return err;
	}
	err = bw_watch_start(&x->w);
	if (err)
		return err;
	if (x->tuner) {
		err = bw_tuner_prepare(x->tuner);
		if (err)
			return err;
		bw_tuner_begin(x->tuner);
	}
	if (a->bpf_stats) {
		x->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (x->stats_fd < 0) {
			bw_err("--bpf-stats: %s", strerror(errno));
			return -errno;
		}
	}
	return snap_copy(&x->last, bw_watch_snapshot(&x->w));
}

int bw_export(struct export_args *a)
{
	struct export_ctx *x = calloc(1, sizeof(*x));
	struct MHD_Daemon *d = NULL;
	pthread_condattr_t ca;
	int ret = BW_EXIT_RUNTIME, err;

	if (!x) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	x->a = a;
	x->listen_fd = x->stats_fd = -1;
	pthread_mutex_init(&x->page.lock, NULL);
	pthread_rwlock_init(&x->web_lock, NULL);
	pthread_mutex_init(&x->conn_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&x->page.cond, &ca);
	x->start_unix = now_unix();
	if (bw_watch_resolve(&x->w, &a->w) || !getpwnam(a->user)) {
		if (a->user && !getpwnam(a->user))
			bw_err("--user %s: no such user; give an existing one (e.g. nobody)", a->user);
		ret = BW_EXIT_USAGE;
		goto out;
	}
	err = web_load(x);
	if (err) {
		ret = err == -EINVAL ? BW_EXIT_USAGE : BW_EXIT_RUNTIME;
		goto out;
	}
	x->listen_fd = bw_listen_open(a->listen);
	if (x->listen_fd < 0) {
		ret = x->listen_fd == -EINVAL ? BW_EXIT_USAGE : BW_EXIT_RUNTIME;
		goto out;
	}
	bw_listen_fit_nofile(a);
	bw_install_signals();
	if (a->web_config)
		sigaction(SIGHUP, &(struct sigaction){ .sa_handler = on_hup }, NULL);
	if (start(x) || render(x, bw_now_ns()))
		goto out;
	x->page.on_demand = !x->tuner;
	bw_privs_keep_store(a);
	/* After the BPF load, whose BTF parsing is the start-up peak. */
	if (bw_mhd_open(x->tls && x->tls->tls))
		goto out;
	if (tls_check(x)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	d = serve(x);
	if (!d) {
		bw_err("cannot start the HTTP%s server on %s (libmicrohttpd)",
		       x->tls && x->tls->tls ? "S" : "", a->listen);
		goto out;
	}
	if (bw_privs_drop(a->user))
		goto out;
	bw_warn("serving %s on %s://%s/metrics (%s%s%s); SIGTERM to stop",
		a->w.core.nr_watch ? "the named devices" : "every device",
		x->tls && x->tls->tls ? "https" : "http", a->listen,
		bw_watch_attach_mode(&x->w), x->tuner ? ", tuning" : "",
		x->web && x->web->nusers ? ", basic auth" : "");
	if (!bw_bfq_available())
		bw_warn("the class says whether idling helps, but %s", BW_NO_BFQ);
	err = run(x);
	bw_watch_save(&x->w);
	if (!err)
		ret = 0;
out:
	if (d)
		mhd.stop_daemon(d);
	if (x->tuner)
		bw_tuner_close(x->tuner, false);
	bw_watch_close(&x->w);
	bw_snap_free(&x->last);
	if (x->listen_fd >= 0)
		close(x->listen_fd);
	if (x->stats_fd >= 0)
		close(x->stats_fd);
	free(x->page.text);
	free(x->page.om);
	if (x->web != x->tls) {
		bw_webcfg_free(x->web);
		free(x->web);
	}
	if (x->tls) {
		bw_webcfg_free(x->tls);
		free(x->tls);
	}
	free(x->ed);
	free(x);
	return ret;
}
