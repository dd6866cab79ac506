// SPDX-License-Identifier: GPL-2.0
/*
 * `blkwise export`: a Prometheus exporter.
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
 * to read a map (CAP_BPF from 5.8, CAP_SYS_ADMIN before).
 */
#include <errno.h>
#include <dirent.h>
#include <dlfcn.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cap-ng.h>
#include <microhttpd.h>
#include "promfmt.h"
#include "tuner.h"
#include "options.h"
#include "version.h"

/*
 * libmicrohttpd is opened here, not linked: it brings GnuTLS and its
 * libraries, 2.4 MiB of resident memory every other subcommand would
 * carry for nothing.
 */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	typeof(MHD_start_daemon) *start_daemon;
	typeof(MHD_stop_daemon) *stop_daemon;
	typeof(MHD_create_response_from_buffer) *create_response_from_buffer;
	typeof(MHD_add_response_header) *add_response_header;
	typeof(MHD_queue_response) *queue_response;
	typeof(MHD_destroy_response) *destroy_response;
	typeof(MHD_lookup_connection_value) *lookup_connection_value;
} mhd;

static int mhd_open(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		bw_err("export needs %s: %s; install it with apt-get install libmicrohttpd12",
		       MHD_SONAME, dlerror());
		return -1;
	}
#define MHD_SYM(f) (*(void **)&mhd.f = dlsym(h, "MHD_" #f))
	if (!MHD_SYM(start_daemon) || !MHD_SYM(stop_daemon) ||
	    !MHD_SYM(create_response_from_buffer) || !MHD_SYM(add_response_header) ||
	    !MHD_SYM(queue_response) || !MHD_SYM(destroy_response) ||
	    !MHD_SYM(lookup_connection_value)) {
		bw_err("%s lacks a function export uses: %s", MHD_SONAME, dlerror());
		return -1;
	}
#undef MHD_SYM
	return 0;
}

#define DEFAULT_PORT "9796"
#define MAX_PROGS 32

struct export_args {
	struct bw_watch_opts w;
	struct bw_tuner_args t;
	bool tune;
	const char *listen;
	double interval;
	const char *user;
	bool bpf_stats;
	long max_conn;
};

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
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise export [-d DEV]... [-l [ADDR]:PORT] [-i SECS] [--user USER]\n"
		"                      [--state-dir DIR | --no-state] [--bpf-stats]\n"
		"                      [--max-connections N] [--bio-cache]\n"
		"                      [--tune [TUNE OPTIONS]] [-v] [--btf FILE] [--force-raw-tp]\n"
		"Serves the block layer's metrics to Prometheus: GET /metrics (text format, or\n"
		"OpenMetrics when the scraper asks for it) and / (links, build).\n");
	bw_opts_help(f, BW_CMD_EXPORT);
}

enum { OPT_USER = 256, OPT_BPF_STATS, OPT_MAX_CONN, OPT_TUNE, OPT_BIO_CACHE };

static int parse_args(int argc, char **argv, struct export_args *a)
{
	static const struct option opts[] = {
		BW_WATCH_LONGOPTS,
		BW_STATE_LONGOPTS,
		BW_TUNER_LONGOPTS,
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "user", required_argument, NULL, OPT_USER },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
		{ "tune", no_argument, NULL, OPT_TUNE },
		{ "bio-cache", no_argument, NULL, OPT_BIO_CACHE },
		{ "tune-window", required_argument, NULL, BW_OPT_TUNE_WINDOW },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool tune_opt = false;
	int c, err;

	bw_watch_opts_init(&a->w);
	bw_tuner_args_init(&a->t);
	a->listen = ":" DEFAULT_PORT;
	a->interval = 1.0;
	a->user = "nobody";
	a->max_conn = 64;
	while ((c = getopt_long(argc, argv, "d:l:i:njvh", opts, NULL)) != -1) {
		err = bw_watch_opt(&a->w, c, optarg);
		if (err < 0)
			return err;
		if (err)
			continue;
		if (c == BW_OPT_TUNE_WINDOW) {
			if (bw_tuner_set_window(&a->t, optarg))
				return -EINVAL;
			tune_opt = true;
			continue;
		}
		err = bw_tuner_opt(&a->t, c, optarg);
		if (err < 0)
			return err;
		if (err) {
			tune_opt = true;
			continue;
		}
		switch (c) {
		case 'l':
			a->listen = optarg;
			break;
		case 'i':
			if (bw_parse_interval(optarg, &a->interval) || a->interval < 0.1) {
				bw_err("bad interval '%s': give seconds between 0.1 and 86400", optarg);
				return -EINVAL;
			}
			break;
		case OPT_USER:
			a->user = optarg;
			break;
		case OPT_BPF_STATS:
			a->bpf_stats = true;
			break;
		case OPT_MAX_CONN:
			if (bw_parse_count(optarg, &a->max_conn) || a->max_conn > 4096) {
				bw_err("bad --max-connections '%s': give 1..4096", optarg);
				return -EINVAL;
			}
			break;
		case OPT_TUNE:
			a->tune = true;
			break;
		case OPT_BIO_CACHE:
			a->w.core.bio_cache = true;
			break;
		default:
			return bw_opt_other(c, usage);
		}
	}
	if (bw_opt_rest(argc, argv))
		return -EINVAL;
	if (tune_opt && !a->tune) {
		bw_err("tuner options need --tune");
		return -EINVAL;
	}
	if (a->tune)
		a->w.core.streams = true;	/* think time and sequential share */
	return 0;
}

/* ---- listening ---- */

/* "[ADDR]:PORT" into host (NULL: every address) and port; -EINVAL when malformed. */
static int split_listen(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *he;
	char *end;
	long p;

	if (!colon)
		return -EINVAL;
	he = colon;
	if (*h == '[') {
		if (he == h || he[-1] != ']')
			return -EINVAL;
		h++;
		he--;
	}
	if ((size_t)(he - h) >= hlen || strlen(colon + 1) >= plen)
		return -EINVAL;
	memcpy(host, h, he - h);
	host[he - h] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 1 || p > 65535)
		return -EINVAL;
	return 0;
}

static int bind_one(const struct addrinfo *ai)
{
	int one = 1, zero = 0;
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The listening socket; -EINVAL for a bad --listen (said), other -errno (said). */
static int open_listen(const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE |
				  AI_NUMERICSERV }, *res, *ai;
	char host[256], port[16];
	int fd = -EADDRNOTAVAIL, err;

	if (split_listen(spec, host, sizeof(host), port, sizeof(port))) {
		bw_err("bad --listen '%s': give [ADDR]:PORT, e.g. :%s, 127.0.0.1:%s or [::1]:%s",
		       spec, DEFAULT_PORT, DEFAULT_PORT, DEFAULT_PORT);
		return -EINVAL;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (err && !host[0]) {
		hints.ai_family = AF_INET;	/* no IPv6 here */
		err = getaddrinfo(NULL, port, &hints, &res);
	}
	if (err) {
		bw_err("bad --listen '%s': %s", spec, gai_strerror(err));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = bind_one(ai);
		if (fd >= 0 || fd == -EADDRINUSE)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		bw_err("cannot listen on %s: %s%s", spec, strerror(-fd),
		       fd == -EADDRINUSE ? " (another exporter there? give --listen)" : "");
	return fd;
}

/* ---- privileges ---- */

static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

/* Becomes user, keeping only what reading the held maps still needs. */
static int drop_privileges(const char *user)
{
	struct passwd *pw = getpwnam(user);
	int keep = -1, err, flags;

	if (!pw) {
		bw_err("--user %s: no such user; give an existing one (e.g. nobody)", user);
		return -EINVAL;
	}
	if (!pw->pw_uid) {
		bw_warn("--user %s: staying root with every capability", user);
		return 0;
	}
	if (!kernel_at_least(6, 5))	/* bpf() checks the caller's capability on map reads */
		keep = kernel_at_least(5, 8) ? CAP_BPF : CAP_SYS_ADMIN;
	capng_get_caps_process();
	flags = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	capng_clear(CAPNG_SELECT_BOTH);
	if (keep >= 0)
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, keep);
	/* Clearing the bounding set needs CAP_SETPCAP; without it, nothing is left to regain. */
	flags = CAPNG_DROP_SUPP_GRP | (flags ? CAPNG_CLEAR_BOUNDING : 0);
	err = capng_change_id(pw->pw_uid, pw->pw_gid, flags);
	if (err) {
		bw_err("becoming %s (capng_change_id: %d): %s", user, err, strerror(errno));
		return -EPERM;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (keep >= 0)
		bw_warn("running as %s, keeping only %s (this kernel's bpf() needs it to read maps)",
			user, keep == CAP_BPF ? "CAP_BPF" : "CAP_SYS_ADMIN");
	else
		bw_warn("running as %s, with no capabilities", user);
	return 0;
}

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

	for (i = 0; i < x->w.ndevs; i++) {
		const struct bw_watch_dev *s = &x->w.devs[i];
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
	char line[256], v[32];

	d->sched[0] = '\0';
	d->slice_idle_us = -1;
	if (bw_sysfs_get(name, "queue/scheduler", line, sizeof(line)))
		return;
	if (bw_parse_scheduler(line, d->sched, sizeof(d->sched)))
		snprintf(d->sched, sizeof(d->sched), "none");
	if (strcmp(d->sched, "bfq") ||
	    bw_sysfs_get(name, "queue/iosched/slice_idle_us", v, sizeof(v)))
		return;
	d->slice_idle_us = strtol(v, NULL, 10);
}

/* S1 per op and size class: live where learned, else the store's. */
static void solo_of(const struct bw_watch_dev *s, const struct bw_snap_dev *cum,
		    struct bw_expo_dev *d)
{
	int op, c;

	for (op = 0; op < BW_NR_OPS; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			__u64 n = cum->op[op].solo_ios[c];

			d->s1_s[op][c] = NAN;
			if (n >= bw_peff_default.min_solo)
				d->s1_s[op][c] = cum->op[op].solo_ns[c] / (double)n / 1e9;
			else if (s->has_stored && s->stored.s[op][c].learned)
				d->s1_s[op][c] = s->stored.s[op][c].mean_ns / 1e9;
		}
	}
}

static const struct bw_expo_tune *tune_of(struct export_ctx *x, __u32 dev)
{
	int i;

	for (i = 0; i < x->ntstats; i++)
		if (x->tstats[i].dev == dev && x->tstats[i].active)
			return &x->tune[i];
	return NULL;
}

static void fill_dev(struct export_ctx *x, const struct bw_watch_dev *s, double secs,
		     struct bw_expo_dev *d)
{
	const struct bw_snap_dev *cum = bw_snap_find(&x->w.prev, s->dev);
	struct export_dev *e = edev(x, s->dev);
	struct bw_interval iv;

	memset(d, 0, sizeof(*d));
	d->cum = cum;
	d->info = &s->info;
	bw_interval_compute(bw_snap_find(&x->last, s->dev), cum, secs, &bw_peff_default,
			    s->has_stored ? &s->stored : NULL, time(NULL), &iv);
	d->depth_mean = iv.depth_busy;
	d->p_eff = iv.p_eff;
	d->cls = s->cls.cls;
	solo_of(s, cum, d);
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

static int render(struct export_ctx *x, __u64 t0)
{
	struct bw_watch_dev **rows = calloc(x->w.ndevs ? x->w.ndevs : 1, sizeof(*rows));
	struct bw_expo_dev *d = calloc(x->w.ndevs ? x->w.ndevs : 1, sizeof(*d));
	double secs = (x->w.prev.ts_ns - x->last.ts_ns) / 1e9;
	struct bw_expo_self s = {
		.version = BW_VERSION, .commit = BW_COMMIT, .libbpf = libbpf_version_string(),
		.attach = bw_core_attach_mode(x->w.core), .start_unix = x->start_unix,
	};
	struct bw_bc_snap bc = {};
	char *text = NULL, *om = NULL;
	size_t tl = 0, ol = 0;
	int i, n = 0, nrows, err = -ENOMEM;

	if (!rows || !d)
		goto out;
	if (x->a->w.core.bio_cache && !bw_core_bio_cache(x->w.core, &bc))
		s.bio_cache = &bc;
	tuner_figures(x);
	nrows = bw_watch_rows(&x->w, rows);
	for (i = 0; i < nrows; i++)
		if (!rows[i]->iv.gone && bw_snap_find(&x->w.prev, rows[i]->dev))
			fill_dev(x, rows[i], secs, &d[n++]);
	s.nprogs = bw_core_prog_stats(x->w.core, x->progs, MAX_PROGS);
	if (s.nprogs < 0)
		s.nprogs = 0;
	s.progs = x->progs;
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
	if (x->w.prev.ts_ns - x->last.ts_ns + FRESH_NS >= (__u64)(x->a->interval * 1e9))
		err = snap_copy(&x->last, &x->w.prev);
	else
		err = 0;
out:
	bw_bc_snap_free(&bc);
	free(rows);
	free(d);
	return err;
}

/* ---- HTTP ---- */

static const char *const INDEX_FMT =
	"<!DOCTYPE html>\n<html><head><title>blkwise exporter</title></head><body>\n"
	"<h1>blkwise exporter</h1>\n<p>Block-layer metrics from BPF: service and queue time, "
	"depth, busy time, effective parallelism, device class.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a></li></ul>\n"
	"<p>version %s, commit %s, libbpf %s</p>\n</body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

static bool wants_om(struct MHD_Connection *c)
{
	const char *acc = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return acc && strstr(acc, "application/openmetrics-text");
}

static enum MHD_Result metrics(struct page *pg, struct MHD_Connection *c)
{
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
	return reply(c, MHD_HTTP_OK, om ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
		     "text/plain; version=0.0.4; charset=utf-8", buf, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	static const char nf[] = "not found: try /metrics\n", na[] = "read-only: GET or HEAD\n";
	char page[1024];
	int n;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", (void *)na,
			     sizeof(na) - 1, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/metrics"))
		return metrics(cls, c);
	if (strcmp(url, "/"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", (void *)nf, sizeof(nf) - 1,
			     MHD_RESPMEM_PERSISTENT);
	n = snprintf(page, sizeof(page), INDEX_FMT, BW_VERSION, BW_COMMIT, libbpf_version_string());
	return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, (size_t)n,
		     MHD_RESPMEM_MUST_COPY);
}

static struct MHD_Daemon *serve(struct export_ctx *x)
{
	return mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
				handle, &x->page,
				MHD_OPTION_LISTEN_SOCKET, x->listen_fd,
				MHD_OPTION_THREAD_POOL_SIZE, 2u,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)x->a->max_conn,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_END);
}

/* ---- the loop ---- */

/* Until the next tick, a scrape's request, or a signal (seen within 0.2 s). */
/* Histograms are extended every BW_REFRESH_NS of a long wait (bw_core_refresh). */
static void wait_tick(struct page *pg, __u64 due, struct bw_core *core)
{
	__u64 refresh = bw_now_ns() + BW_REFRESH_NS;

	pthread_mutex_lock(&pg->lock);
	while (!bw_exiting && pg->want_ns <= pg->sampled_ns) {
		__u64 now = bw_now_ns(), u = due < now + 200000000ULL ? due : now + 200000000ULL;
		struct timespec until = { .tv_sec = u / 1000000000ULL, .tv_nsec = u % 1000000000ULL };

		if (now >= due)
			break;
		if (now >= refresh) {
			pthread_mutex_unlock(&pg->lock);
			bw_core_refresh(core);
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
	double tick_s = x->tuner ? x->a->t.cfg.window_s / BW_TUNE_TICKS_PER_WINDOW : x->a->interval;
	__u64 tick = (__u64)(tick_s * 1e9), due = bw_now_ns() + tick;
	int err = 0, alive;

	while (!bw_exiting) {
		__u64 t0;

		wait_tick(&x->page, due, x->w.core);
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
		if (x->a->w.core.nr_watch && !alive) {
			bw_err("every exported device is gone");
			err = -ENODEV;
			break;
		}
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
	return snap_copy(&x->last, &x->w.prev);
}

int cmd_export(int argc, char **argv)
{
	struct export_args *a = calloc(1, sizeof(*a));
	struct export_ctx *x = calloc(1, sizeof(*x));
	struct MHD_Daemon *d = NULL;
	pthread_condattr_t ca;
	int ret = BW_EXIT_RUNTIME, err;

	if (!a || !x) {
		bw_err("out of memory");
		goto out_free;
	}
	x->a = a;
	x->listen_fd = x->stats_fd = -1;
	pthread_mutex_init(&x->page.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&x->page.cond, &ca);
	x->start_unix = now_unix();
	if (parse_args(argc, argv, a) || bw_watch_resolve(&x->w, &a->w) || !getpwnam(a->user)) {
		if (a->user && !getpwnam(a->user))
			bw_err("--user %s: no such user; give an existing one (e.g. nobody)", a->user);
		ret = BW_EXIT_USAGE;
		goto out;
	}
	x->listen_fd = open_listen(a->listen);
	if (x->listen_fd < 0) {
		ret = x->listen_fd == -EINVAL ? BW_EXIT_USAGE : BW_EXIT_RUNTIME;
		goto out;
	}
	bw_install_signals();
	if (start(x) || render(x, bw_now_ns()))
		goto out;
	x->page.on_demand = !x->tuner;
	/* After the BPF load, whose BTF parsing is the start-up peak. */
	if (mhd_open())
		goto out;
	d = serve(x);
	if (!d) {
		bw_err("cannot start the HTTP server on %s (libmicrohttpd)", a->listen);
		goto out;
	}
	if (drop_privileges(a->user))
		goto out;
	bw_warn("serving %s on %s/metrics (%s%s); SIGTERM to stop",
		a->w.core.nr_watch ? "the named devices" : "every device", a->listen,
		bw_core_attach_mode(x->w.core), x->tuner ? ", tuning" : "");
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
	free(x->ed);
out_free:
	free(x);
	free(a);
	return ret;
}
