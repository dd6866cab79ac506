// SPDX-License-Identifier: GPL-2.0
/*
 * `blkwise tune`: live-tunes BFQ's dispatch idling (slice_idle_us) per
 * device from what the watch loop measures; the decisions are policy.c's.
 *
 * Safety, in the order it happens: every device is checked (scheduler,
 * lock, write permission) before anything is written; the BPF programs
 * load; the values found are saved to a state file under the run
 * directory (fsync'd) before the first write; they are put back on exit,
 * SIGINT, SIGTERM and SIGHUP, and by `blkwise tune --restore` after a
 * SIGKILL.  A lock file per device refuses a second tuner.  A value
 * changed behind our back is logged and respected: that device is left
 * alone until restart, and that value is not put back.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include "watch.h"
#include "policy.h"

#define RUN_DIR "/run/blkwise"
#define IDLE_ATTR "queue/iosched/slice_idle_us"
#define LL_ATTR "queue/iosched/low_latency"
#define SCHED_ATTR "queue/scheduler"
#define TICKS_PER_WINDOW 10
#define ONCE_MAX_WINDOWS 10

struct tune_args {
	struct bw_watch_opts w;
	struct bw_tune_cfg cfg;
	bool once, json, restore;
	const char *run_dir;
	const char *set_sched;	/* --set-scheduler */
	int low_latency;	/* --low-latency; -1: leave it */
};

struct tdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	bool active;		/* being tuned */
	bool hands_off;		/* changed behind our back: left alone */
	int lock_fd;
	struct bw_tune_orig orig;
	bool orig_saved;	/* the state file holds orig */
	struct bw_tune_state st;
	bool decided;		/* --once: a decision was taken */
};

struct tune_ctx {
	struct tune_args *a;
	struct bw_watch w;
	struct tdev *td;
	int ntd;
	__u64 t0;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkwise tune [-d DEV]... [-i SECS] [--once] [--dry-run]\n"
		"                    [--policy throughput|latency] [--json] [--state-dir DIR]\n"
		"                    [--run-dir DIR] [--set-scheduler bfq] [--low-latency 0|1]\n"
		"                    [--max-idle-us US]\n"
		"       blkwise tune --restore [-d DEV]... [--run-dir DIR]\n"
		"Sets BFQ's slice_idle_us per device from its measured parallelism and streams:\n"
		"0 on a deep device, about the streams' think time on a shallow one, probing\n"
		"briefly when the evidence is missing.  Every change is logged with its evidence;\n"
		"the values found are put back on exit.\n"
		"  -d, --device DEV     tune DEV (repeatable); default: every device on bfq\n"
		"  -i, --interval S     measurement window in seconds (default 1)\n"
		"      --once           decide from one window (probing if needed), leave the\n"
		"                       setting in place and exit (--restore puts it back)\n"
		"  -n, --dry-run        decide and log, write nothing\n"
		"      --policy P       throughput (default) or latency (idling must win by 20%%)\n"
		"  -j, --json           one JSON object per decision (JSON Lines)\n"
		"      --state-dir DIR  the S1 store (default " BW_STATE_DIR "); --no-state: none\n"
		"      --run-dir DIR    state of what was changed, and locks (default " RUN_DIR ")\n"
		"      --set-scheduler bfq  switch devices to bfq first (put back on exit)\n"
		"      --low-latency 0|1    set bfq's low_latency (put back on exit)\n"
		"      --max-idle-us US ceiling of a nonzero setting (default 8000, bfq's default)\n"
		"      --restore        put back what a tuner that did not exit cleanly changed\n"
		"  -v, --verbose        libbpf messages\n"
		"      --version        version, git commit and libbpf version\n");
}

enum { OPT_ONCE = 256, OPT_POLICY, OPT_RUN_DIR, OPT_SCHED, OPT_LL, OPT_MAX_IDLE, OPT_RESTORE };

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < lo || *v > hi ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct tune_args *a)
{
	static const struct option opts[] = {
		BW_WATCH_LONGOPTS,
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "json", no_argument, NULL, 'j' },
		{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
		{ "set-scheduler", required_argument, NULL, OPT_SCHED },
		{ "low-latency", required_argument, NULL, OPT_LL },
		{ "max-idle-us", required_argument, NULL, OPT_MAX_IDLE },
		{ "restore", no_argument, NULL, OPT_RESTORE },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	double secs;
	long v;
	int c, err;

	a->cfg = bw_tune_cfg_default;
	bw_watch_opts_init(&a->w);
	a->run_dir = RUN_DIR;
	a->low_latency = -1;
	while ((c = getopt_long(argc, argv, "d:i:njvh", opts, NULL)) != -1) {
		err = bw_watch_opt(&a->w, c, optarg);
		if (err < 0)
			return err;
		if (err)
			continue;
		switch (c) {
		case 'i':
			if (bw_parse_interval(optarg, &secs) || secs < 0.2) {
				bw_err("bad interval '%s': give seconds between 0.2 and 86400", optarg);
				return -EINVAL;
			}
			a->cfg.window_s = secs;
			a->cfg.probe_s = secs / 2;
			a->cfg.settle_s = secs / TICKS_PER_WINDOW;
			break;
		case OPT_ONCE:
			a->once = true;
			break;
		case 'n':
			a->cfg.dry_run = true;
			break;
		case OPT_POLICY:
			if (!strcmp(optarg, "throughput")) {
				a->cfg.policy = BW_POLICY_THROUGHPUT;
			} else if (!strcmp(optarg, "latency")) {
				a->cfg.policy = BW_POLICY_LATENCY;
			} else {
				bw_err("bad --policy '%s': give throughput or latency", optarg);
				return -EINVAL;
			}
			break;
		case 'j':
			a->json = true;
			bw_json_errors = true;
			break;
		case OPT_RUN_DIR:
			if (!optarg[0]) {
				bw_err("bad --run-dir '': give a directory");
				return -EINVAL;
			}
			a->run_dir = optarg;
			break;
		case OPT_SCHED:
			if (strcmp(optarg, "bfq")) {
				bw_err("bad --set-scheduler '%s': only bfq has the idling tune sets",
				       optarg);
				return -EINVAL;
			}
			a->set_sched = optarg;
			break;
		case OPT_LL:
			if (parse_long(optarg, 0, 1, &v)) {
				bw_err("bad --low-latency '%s': give 0 or 1", optarg);
				return -EINVAL;
			}
			a->low_latency = (int)v;
			break;
		case OPT_MAX_IDLE:
			if (parse_long(optarg, 1000, 1000000, &v)) {
				bw_err("bad --max-idle-us '%s': give 1000..1000000", optarg);
				return -EINVAL;
			}
			a->cfg.max_idle_us = (__u32)v;
			break;
		case OPT_RESTORE:
			a->restore = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		bw_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (a->restore && (a->once || a->cfg.dry_run || a->set_sched || a->low_latency >= 0)) {
		bw_err("--restore takes only -d and --run-dir");
		return -EINVAL;
	}
	a->w.core.streams = true;	/* think time and sequential share */
	return 0;
}

static void path_of(const struct tune_args *a, const char *name, const char *ext, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s/tune-%s%s", a->run_dir, name, ext);
}

static int sched_of(const char *name, char *sched, size_t len)
{
	char line[256];
	int err = bw_sysfs_get(name, SCHED_ATTR, line, sizeof(line));

	return err ?: bw_parse_scheduler(line, sched, len);
}

static int read_long(const char *name, const char *attr, long *v)
{
	char buf[64];
	int err = bw_sysfs_get(name, attr, buf, sizeof(buf));

	return err ?: parse_long(buf, 0, LONG_MAX, v);
}

static int write_long(const char *name, const char *attr, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return bw_sysfs_set(name, attr, buf);
}

/* Takes the device's lock; -EBUSY (saying by whom) when another tuner has it. */
static int take_lock(struct tune_ctx *x, struct tdev *t)
{
	char path[PATH_MAX];
	int fd;

	path_of(x->a, t->name, ".lock", path, sizeof(path));
	bw_make_dir(x->a->run_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		bw_err("%s: cannot create the lock %s: %s; tune needs root (or --run-dir DIR)",
		       t->name, path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		struct bw_tune_orig o;
		char why[100], sp[PATH_MAX];
		FILE *f;

		path_of(x->a, t->name, "", sp, sizeof(sp));
		f = fopen(sp, "r");
		if (!f || bw_tune_orig_parse(f, &o, why, sizeof(why)))
			o.pid = 0;
		if (f)
			fclose(f);
		bw_err("%s: another blkwise tune (pid %d) is tuning it; stop it first", t->name,
		       o.pid);
		close(fd);
		return -EBUSY;
	}
	t->lock_fd = fd;
	return 0;
}

/* The values this tuner will change, as they are now, where o has none yet. */
static int found_now(const struct tune_args *a, const struct tdev *t, struct bw_tune_orig *o)
{
	char sched[32];
	int err = sched_of(t->name, sched, sizeof(sched));

	if (!err && strcmp(sched, "bfq")) {
		if (!o->sched[0])
			snprintf(o->sched, sizeof(o->sched), "%s", sched);	/* we switch it */
		return 0;	/* bfq's own values go with bfq when it is put back */
	}
	if (!err && o->slice_idle_us < 0)
		err = read_long(t->name, IDLE_ATTR, &o->slice_idle_us);
	if (!err && a->low_latency >= 0 && o->low_latency < 0)
		err = read_long(t->name, LL_ATTR, &o->low_latency);
	if (err)
		bw_err("%s: cannot read its scheduler settings in /sys/block/%s/queue: %s", t->name,
		       t->name, strerror(-err));
	return err;
}

/* What the device has now, or what a tuner that died had found (kept: those are the originals). */
static int read_originals(struct tune_ctx *x, struct tdev *t)
{
	struct tune_args *a = x->a;
	char path[PATH_MAX], why[100];
	struct bw_tune_orig *o = &t->orig;
	FILE *f;

	path_of(a, t->name, "", path, sizeof(path));
	f = fopen(path, "r");
	if (f) {
		int err = bw_tune_orig_parse(f, o, why, sizeof(why));

		fclose(f);
		if (!err && o->dev == t->dev) {
			bw_warn("%s: %s was left by a tuner that did not exit cleanly (pid %d); "
				"keeping the values it found", t->name, path, o->pid);
			t->orig_saved = true;
			o->pid = getpid();
			/* What it did not touch is as it was: read it as we would. */
			return found_now(a, t, o);
		}
		bw_warn("%s: ignoring %s (%s)", t->name, path, err ? why : "another device");
	}
	memset(o, 0, sizeof(*o));
	o->pid = getpid();
	o->dev = t->dev;
	o->low_latency = -1;
	o->slice_idle_us = -1;
	snprintf(o->name, sizeof(o->name), "%s", t->name);
	return found_now(a, t, o);
}

/*
 * Before anything is written: bfq (or --set-scheduler), the lock, and
 * write permission on what will be written.  0, or -errno after saying why.
 */
static int preflight(struct tune_ctx *x, struct tdev *t, bool named)
{
	struct tune_args *a = x->a;
	char sched[32];
	const char *attrs[3];
	int i, n = 0, err;

	if (sched_of(t->name, sched, sizeof(sched))) {
		if (named)
			bw_err("%s: no %s: not a request-based device with a scheduler", t->name,
			       SCHED_ATTR);
		return -ENODEV;
	}
	if (strcmp(sched, "bfq") && !a->set_sched) {
		if (named)
			bw_err("%s: scheduler is %s; idling needs bfq (--set-scheduler bfq)",
			       t->name, sched);
		else
			bw_warn("%s: scheduler is %s; idling needs bfq (--set-scheduler bfq): "
				"left alone", t->name, sched);
		return -EOPNOTSUPP;
	}
	if (strcmp(sched, "bfq"))
		attrs[n++] = SCHED_ATTR;
	else
		attrs[n++] = IDLE_ATTR;
	if (a->low_latency >= 0 && !strcmp(sched, "bfq"))
		attrs[n++] = LL_ATTR;
	for (i = 0; i < n && !a->cfg.dry_run; i++) {
		err = bw_sysfs_writable(t->name, attrs[i]);
		if (err) {
			bw_err("%s: cannot write /sys/block/%s/%s: %s; tune needs root and a "
			       "writable sysfs", t->name, t->name, attrs[i], strerror(-err));
			return err;
		}
	}
	if (a->cfg.dry_run)
		return 0;
	err = take_lock(x, t);
	return err ?: read_originals(x, t);
}

/* The devices to tune: the named ones (all must pass), else every one on bfq. */
static int pick_devices(struct tune_ctx *x)
{
	struct bw_watch_opts *wo = &x->a->w;
	struct bw_devinfo di;
	__u32 devs[BW_MAX_WATCH];
	int i, n = 0, err;
	DIR *d;
	struct dirent *de;

	if (wo->core.nr_watch) {
		n = wo->core.nr_watch;
		memcpy(devs, wo->core.watch, n * sizeof(devs[0]));
	} else {
		d = opendir("/sys/block");
		while (d && (de = readdir(d)) && n < BW_MAX_WATCH)
			if (de->d_name[0] != '.' && !bw_dev_lookup(de->d_name, &devs[n]))
				n++;
		if (d)
			closedir(d);
	}
	x->td = calloc(n ? n : 1, sizeof(*x->td));
	if (!x->td)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct tdev *t = &x->td[x->ntd];

		if (bw_dev_probe(devs[i], &di) || (!wo->core.nr_watch && !bw_dev_present(&di)))
			continue;
		t->dev = devs[i];
		t->lock_fd = -1;
		snprintf(t->name, sizeof(t->name), "%s", di.name);
		err = preflight(x, t, wo->core.nr_watch > 0);
		if (err && wo->core.nr_watch)
			return err;
		if (err == -EOPNOTSUPP || err == -ENODEV)
			continue;
		if (err)
			return err;
		t->active = true;
		x->ntd++;
	}
	if (!x->ntd) {
		bw_err("no device to tune: none uses bfq (name one with -d, and "
		       "--set-scheduler bfq to switch it)");
		return -ENODEV;
	}
	return 0;
}

static const char *state_name(const struct tdev *t, char *buf, size_t len)
{
	snprintf(buf, len, "tune-%s", t->name);
	return buf;
}

/* Saves the originals (fsync'd), then switches scheduler and low_latency as asked. */
static int prepare(struct tune_ctx *x, struct tdev *t)
{
	struct tune_args *a = x->a;
	char fname[BW_NAME_LEN + 8];
	long cur;
	int err;

	if (!a->cfg.dry_run) {
		err = bw_state_write(a->run_dir, state_name(t, fname, sizeof(fname)),
				     bw_tune_orig_format, &t->orig);
		if (err) {
			bw_err("%s: cannot save the values found to %s/%s: %s; nothing was changed",
			       t->name, a->run_dir, fname, strerror(-err));
			return err;
		}
		t->orig_saved = true;
		err = a->set_sched ? bw_sysfs_set(t->name, SCHED_ATTR, a->set_sched) : 0;
		if (!err && a->low_latency >= 0)
			err = write_long(t->name, LL_ATTR, a->low_latency);
		if (err) {
			bw_err("%s: switching to bfq / setting low_latency: %s", t->name,
			       strerror(-err));
			return err;
		}
	}
	if (read_long(t->name, IDLE_ATTR, &cur)) {
		bw_err("%s: cannot read /sys/block/%s/%s", t->name, t->name, IDLE_ATTR);
		return -EIO;
	}
	bw_tune_init(&t->st, (__u32)cur);
	return 0;
}

/* Puts back what o says was there; skip_idle leaves slice_idle_us as someone set it. */
static int restore_orig(const struct bw_tune_orig *o, bool skip_idle, bool quiet)
{
	char sched[32];
	int err = 0, e;

	if (sched_of(o->name, sched, sizeof(sched))) {
		if (!quiet)
			bw_warn("%s: gone; nothing to put back", o->name);
		return -ENODEV;
	}
	if (!strcmp(sched, "bfq")) {
		if (o->slice_idle_us >= 0 && !skip_idle) {
			e = write_long(o->name, IDLE_ATTR, o->slice_idle_us);
			err = err ?: e;
		}
		if (o->low_latency >= 0) {
			e = write_long(o->name, LL_ATTR, o->low_latency);
			err = err ?: e;
		}
	}
	if (o->sched[0]) {
		e = bw_sysfs_set(o->name, SCHED_ATTR, o->sched);
		err = err ?: e;
	}
	if (err) {
		bw_err("%s: putting back the values found: %s", o->name, strerror(-err));
		return err;
	}
	if (quiet)
		return 0;
	if (o->sched[0])
		bw_warn("%s: put back scheduler %s", o->name, o->sched);
	if (o->slice_idle_us >= 0)
		bw_warn("%s: %s slice_idle_us %ld", o->name, skip_idle ?
			"left as someone else set it, not" : "put back", o->slice_idle_us);
	if (o->low_latency >= 0)
		bw_warn("%s: put back low_latency %ld", o->name, o->low_latency);
	return 0;
}

/* Ends tuning a device; put_back: restore and remove the state file (kept if that fails). */
static void release(struct tune_ctx *x, struct tdev *t, bool put_back)
{
	char path[PATH_MAX];
	int err;

	if (put_back && t->orig_saved) {
		err = restore_orig(&t->orig, t->hands_off, false);
		path_of(x->a, t->name, "", path, sizeof(path));
		if (!err || err == -ENODEV)
			unlink(path);
	}
	t->orig_saved = false;
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	t->lock_fd = -1;
	t->active = false;
}

/* `tune --restore`: every state file left by a tuner that is not running. */
static int restore_all(struct tune_args *a)
{
	char path[PATH_MAX], why[100];
	struct bw_tune_orig o;
	struct dirent *de;
	int n = 0, failed = 0, i;
	DIR *d = opendir(a->run_dir);
	FILE *f;

	if (!d) {
		if (errno == ENOENT) {
			bw_warn("nothing to restore: no %s", a->run_dir);
			return 0;
		}
		bw_err("reading %s: %s", a->run_dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		int lfd;

		if (strncmp(de->d_name, "tune-", 5) || (len > 5 && !strcmp(de->d_name + len - 5, ".lock")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", a->run_dir, de->d_name);
		f = fopen(path, "r");
		if (!f || bw_tune_orig_parse(f, &o, why, sizeof(why))) {
			bw_err("%s: not a tune state file (%s); left as is", path, f ? why :
			       strerror(errno));
			if (f)
				fclose(f);
			failed++;
			continue;
		}
		fclose(f);
		for (i = 0; i < a->w.core.nr_watch && a->w.core.watch[i] != o.dev; i++)
			;
		if (a->w.core.nr_watch && i == a->w.core.nr_watch)
			continue;
		snprintf(path, sizeof(path), "%s/%s.lock", a->run_dir, de->d_name);
		lfd = open(path, O_RDWR | O_CLOEXEC);
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB)) {
			bw_err("%s: blkwise tune (pid %d) is still running; stop it instead", o.name,
			       o.pid);
			close(lfd);
			failed++;
			continue;
		}
		if (restore_orig(&o, false, false)) {
			failed++;
		} else {
			snprintf(path, sizeof(path), "%s/%s", a->run_dir, de->d_name);
			unlink(path);
			n++;
		}
		if (lfd >= 0)
			close(lfd);
	}
	closedir(d);
	if (!n && !failed)
		bw_warn("nothing to restore in %s", a->run_dir);
	return failed ? -EIO : 0;
}

static const struct bw_watch_dev *watched(const struct tune_ctx *x, __u32 dev)
{
	int i;

	for (i = 0; i < x->w.ndevs; i++)
		if (x->w.devs[i].dev == dev)
			return &x->w.devs[i];
	return NULL;
}

/* A stream that BFQ would idle for: sync, and mostly sequential. */
static bool sync_seq(const struct bw_stream_interval *s)
{
	return s->sync_pct >= 90 && s->seq_pct >= 50;
}

static void observe(const struct tune_ctx *x, const struct bw_watch_dev *wd, __u32 idle_us,
		    struct bw_tune_obs *o)
{
	const struct bw_interval *iv = &wd->iv;
	double seq = 0, ios = 0;
	int i, op;

	memset(o, 0, sizeof(*o));
	o->secs = iv->secs;
	for (op = 0; op < BW_NR_OPS; op++) {
		o->ios += iv->ios[op];
		o->bytes += iv->bytes[op];
	}
	o->busy_s = isnan(iv->busy_pct) ? 0 : iv->busy_pct / 100 * iv->secs;
	o->p_eff = iv->p_eff;
	o->p_eff_why = iv->p_eff_why;
	o->solo_work_s = iv->solo_work_ns / 1e9;
	o->solo_known = iv->solo_known;
	o->depth = iv->depth_busy;
	o->s1_ms = iv->solo_ms;
	o->s1_source = iv->s1_source;
	o->cls = wd->cls.cls;
	o->cls_stored = wd->cls.stored;
	o->kb_per_rq = iv->kb_per_rq;
	o->idle_us = idle_us;
	o->think_p90_ms = NAN;
	for (i = 0; i < x->w.nstreams; i++) {
		const struct bw_stream_interval *s = &x->w.streams[i].s;

		if (s->dev != wd->dev)
			continue;
		o->streams++;
		if (!isnan(s->seq_pct)) {
			seq += s->seq_pct * s->ios;
			ios += s->ios;
		}
		if (!sync_seq(s))
			continue;
		o->sync_seq++;
		if (!isnan(s->think_p90_ms) && !(s->think_p90_ms <= o->think_p90_ms))
			o->think_p90_ms = s->think_p90_ms;
	}
	o->seq_pct = ios ? seq / ios : NAN;
}

static void stamp(char *buf, size_t len)
{
	time_t now = time(NULL);

	strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
}

static void json_win(struct bw_json *j, const char *key, const struct bw_tune_win *w)
{
	bw_json_obj(j, key);
	bw_json_num(j, "window_s", w->secs, 3);
	bw_json_u64(j, "ios", w->ios);
	bw_json_num(j, "mb_per_s", bw_tune_win_mbps(w), 3);
	bw_json_num(j, "p_eff", bw_tune_win_peff(w), 3);
	bw_json_num(j, "depth_mean_busy", bw_tune_win_depth(w), 3);
	bw_json_num(j, "s1_ms", w->s1_ms, 4);
	bw_json_str(j, "s1_source", w->s1_source);
	bw_json_str(j, "class", bw_class_name(w->cls));
	bw_json_str(j, "class_source", w->cls == BW_CLASS_UNKNOWN ? NULL :
		    w->cls_stored ? "stored" : "live");
	bw_json_u64(j, "streams", w->streams);
	bw_json_u64(j, "sync_sequential_streams", w->sync_seq);
	bw_json_num(j, "sequential_pct", w->ios ? w->seq_sum / w->ios : NAN, 1);
	bw_json_num(j, "think_p90_ms", w->think_p90_ms, 4);
	bw_json_u64(j, "slice_idle_us", w->idle_us);
	bw_json_close(j, '}');
}

/* One line per decision, with its evidence. */
static void log_decision(const struct tune_ctx *x, const struct tdev *t,
			 const struct bw_tune_decision *d, const char *action)
{
	const struct bw_tune_win *w = &d->win;
	char ts[32];

	stamp(ts, sizeof(ts));
	if (x->a->json) {
		struct bw_json j;

		bw_json_begin(&j, stdout);
		bw_json_obj(&j, NULL);
		bw_json_str(&j, "timestamp", ts);
		bw_json_str(&j, "device", t->name);
		bw_json_str(&j, "action", action);
		bw_json_bool(&j, "dry_run", x->a->cfg.dry_run);
		bw_json_u64(&j, "slice_idle_us_before", d->before);
		bw_json_u64(&j, "slice_idle_us_after", d->after);
		bw_json_str(&j, "why", d->why);
		json_win(&j, "evidence", w);
		if (d->action == BW_TUNE_KEEP || d->action == BW_TUNE_REVERT)
			json_win(&j, "compared_with", &d->base);
		bw_json_u64(&j, "probes", t->st.probes);
		bw_json_num(&j, "probe_cost_s", t->st.probe_cost_s, 2);
		bw_json_u64(&j, "changes", t->st.changes);
		bw_json_close(&j, '}');
		bw_json_end(&j);
		return;
	}
	printf("%s %s %s: slice_idle_us %u -> %u: %s\n    evidence: %.1f MB/s, P_eff %.2f, "
	       "depth %.2f, S1 %.3f ms (%s), class %s, streams %d (%d sync sequential), "
	       "think p90 %.3f ms; probes %d (%.1f s), changes %d\n", ts, t->name, action,
	       d->before, d->after, d->why, bw_tune_win_mbps(w), bw_tune_win_peff(w),
	       bw_tune_win_depth(w), w->s1_ms, w->s1_source ? w->s1_source : "-",
	       bw_class_name(w->cls), w->streams, w->sync_seq, w->think_p90_ms, t->st.probes,
	       t->st.probe_cost_s, t->st.changes);
	fflush(stdout);
}

/* Writes v, or in a dry run only says it would. */
static int apply(struct tune_ctx *x, struct tdev *t, __u32 v, double now)
{
	long cur;
	int err;

	if (x->a->cfg.dry_run) {
		if (!read_long(t->name, IDLE_ATTR, &cur))
			bw_tune_applied(&x->a->cfg, &t->st, (__u32)cur, now);
		return 0;
	}
	err = write_long(t->name, IDLE_ATTR, v);
	if (err) {
		bw_err("%s: writing %u to /sys/block/%s/%s: %s; leaving it alone", t->name, v,
		       t->name, IDLE_ATTR, strerror(-err));
		t->hands_off = true;
		return err;
	}
	bw_tune_applied(&x->a->cfg, &t->st, v, now);
	return 0;
}

/* Carries a decision out (or, in a dry run, only says it), and logs it. */
static void act(struct tune_ctx *x, struct tdev *t, struct bw_tune_decision *d, double now)
{
	char name[16];

	snprintf(name, sizeof(name), "%s%s", x->a->cfg.dry_run ? "would-" : "",
		 bw_tune_action_name(d->action));
	if (d->action != BW_TUNE_PROBE || !x->a->cfg.dry_run)
		apply(x, t, d->after, now);
	if (d->learned != BW_CLASS_UNKNOWN)
		bw_watch_learn_class(&x->w, t->dev, d->learned, d->learned_peff);
	log_decision(x, t, d, name);
	if (d->action != BW_TUNE_PROBE)
		t->decided = true;
}

static void tune_dev(struct tune_ctx *x, struct tdev *t, double now)
{
	const struct bw_watch_dev *wd = watched(x, t->dev);
	struct bw_tune_decision d;
	struct bw_tune_obs o;
	long cur;

	if (!wd || wd->row != BW_ROW_SHOW || !wd->shown) {
		bw_warn("%s: gone; no longer tuned", t->name);
		release(x, t, true);
		return;
	}
	if (t->hands_off)
		return;
	if (read_long(t->name, IDLE_ATTR, &cur)) {
		bw_warn("%s: %s is gone (scheduler changed behind our back?): leaving %s alone "
			"until restart", t->name, IDLE_ATTR, t->name);
		t->hands_off = true;
		return;
	}
	if ((__u32)cur != t->st.setting) {
		if (!x->a->cfg.dry_run) {
			bw_warn("%s: slice_idle_us changed behind our back (now %ld, we set %u): "
				"respecting it, leaving %s alone until restart", t->name, cur,
				t->st.setting, t->name);
			t->hands_off = true;
			return;
		}
		t->st.setting = (__u32)cur;
	}
	observe(x, wd, (__u32)cur, &o);
	if (bw_tune_step(&x->a->cfg, &t->st, &o, now, &d))
		act(x, t, &d, now);
}

/* What is known before any window: a class from the store. */
static void start_dev(struct tune_ctx *x, struct tdev *t)
{
	const struct bw_watch_dev *wd = watched(x, t->dev);
	struct bw_tune_decision d;

	if (!wd || !bw_tune_start(&x->a->cfg, &t->st, wd->cls.cls, wd->cls.stored, &d))
		return;
	act(x, t, &d, 0);
}

/* --once: every device decided, or given up on. */
static bool all_decided(const struct tune_ctx *x, double now)
{
	int i;

	for (i = 0; i < x->ntd; i++) {
		const struct tdev *t = &x->td[i];

		if (!t->active || t->hands_off || t->decided)
			continue;
		if (t->st.phase == BW_PH_MEASURE && now >= ONCE_MAX_WINDOWS * x->a->cfg.window_s)
			continue;	/* never enough I/O to judge: left as it is (said at exit) */
		if (t->st.phase == BW_PH_MEASURE && t->st.windows > 0 && !t->st.probes)
			continue;	/* judged: nothing to change */
		return false;
	}
	return true;
}

static int run(struct tune_ctx *x)
{
	__u64 tick = (__u64)(x->a->cfg.window_s / TICKS_PER_WINDOW * 1e9);
	int i, err = 0, active;

	while (!bw_exiting) {
		double now;

		err = bw_sleep_ns(tick);
		if (err)
			break;
		err = bw_watch_sample(&x->w);
		if (err < 0)
			break;
		err = 0;
		now = (bw_now_ns() - x->t0) / 1e9;
		for (i = 0, active = 0; i < x->ntd; i++) {
			if (!x->td[i].active)
				continue;
			tune_dev(x, &x->td[i], now);
			active += x->td[i].active;
		}
		if (!active) {
			bw_err("every tuned device is gone");
			return -ENODEV;
		}
		if (x->a->once && all_decided(x, now))
			break;
	}
	return err == -EINTR ? 0 : err;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_args *a = calloc(1, sizeof(*a));
	struct tune_ctx x = { .a = a };
	int i, err, ret = BW_EXIT_RUNTIME;

	if (!a) {
		bw_err("out of memory");
		return BW_EXIT_RUNTIME;
	}
	if (parse_args(argc, argv, a)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	if (bw_watch_resolve(&x.w, &a->w)) {
		ret = BW_EXIT_USAGE;
		goto out;
	}
	if (a->restore) {
		ret = restore_all(a) ? BW_EXIT_RUNTIME : 0;
		goto out;
	}
	bw_install_signals();
	if (bw_check_privileges() || pick_devices(&x))
		goto out;
	/* Watch what is tuned, nothing else; nothing is written before it is attached. */
	a->w.core.nr_watch = x.ntd;
	for (i = 0; i < x.ntd; i++) {
		a->w.core.watch[i] = x.td[i].dev;
		bw_watch_dev(&x.w, x.td[i].dev)->named = true;
	}
	if (bw_watch_start(&x.w))
		goto out;
	for (i = 0; i < x.ntd; i++)
		if (prepare(&x, &x.td[i]))
			goto out;
	x.t0 = bw_now_ns();
	bw_warn("tuning %d device%s (%s%s, window %.2f s); Ctrl-C to stop and put back", x.ntd,
		x.ntd == 1 ? "" : "s", a->cfg.policy == BW_POLICY_LATENCY ? "latency" : "throughput",
		a->cfg.dry_run ? ", dry run" : "", a->cfg.window_s);
	for (i = 0; i < x.ntd; i++)
		start_dev(&x, &x.td[i]);
	err = run(&x);
	bw_watch_save(&x.w);
	if (!err)
		ret = 0;
out:
	for (i = 0; i < x.ntd; i++) {
		struct tdev *t = &x.td[i];

		if (a->once && t->orig_saved && ret == 0) {
			if (!t->decided && !t->st.windows)
				bw_warn("%s: too little I/O to judge by in %d windows", t->name,
					ONCE_MAX_WINDOWS);
			bw_warn("%s: left at slice_idle_us %u; `blkwise tune --restore` puts back "
				"what was there", t->name, t->st.setting);
			release(&x, t, false);
		} else {
			release(&x, t, true);
		}
	}
	bw_watch_close(&x.w);
	free(x.td);
	free(a);
	return ret;
}
