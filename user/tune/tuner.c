// SPDX-License-Identifier: GPL-2.0
/*
 * The tuner (see tuner.h): live-tunes BFQ's dispatch idling (slice_idle_us,
 * and strict_guarantees where BFQ stops idling although idling is set) per
 * device from what the caller's watch loop measures; the decisions are
 * policy.c's.
 *
 * Safety, in the order it happens: every device is checked (privileges,
 * scheduler, lock, write permission) before anything is written; the
 * caller loads the BPF programs; the values found are saved to a state
 * file under the run directory (fsync'd) before the first write; they are
 * put back at bw_tuner_close (the caller's exit, SIGINT, SIGTERM, SIGHUP),
 * and by `blkwise tune --restore` after a SIGKILL.  A lock file per device
 * refuses a second tuner.  A value changed behind our back is logged and
 * respected: that device is left alone until restart, and that value is
 * not put back.
 *
 * Every sysfs file it writes, and the state file, is opened in
 * bw_tuner_prepare and written through that descriptor from then on, so
 * the caller may drop its privileges after it.  An empty state file is
 * one a tuner could not remove once it had put everything back: nothing
 * to put back.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "tune/tuner.h"

#define IDLE_ATTR "queue/iosched/slice_idle_us"
#define LL_ATTR "queue/iosched/low_latency"
#define STRICT_ATTR "queue/iosched/strict_guarantees"
#define SCHED_ATTR "queue/scheduler"
#define ONCE_MAX_WINDOWS 10

/* The sysfs files a tuner writes, by index into tdev.fd. */
enum { F_IDLE, F_LL, F_STRICT, F_SCHED, F_NR };
static const char *const attr_of[F_NR] = { IDLE_ATTR, LL_ATTR, STRICT_ATTR, SCHED_ATTR };
static const int no_fd[F_NR] = { -1, -1, -1, -1 };

struct tdev {
	__u32 dev;
	char name[BW_NAME_LEN];
	char id[BW_ID_LEN];	/* its identity when picked */
	bool active;		/* being tuned */
	bool hands_off;		/* changed behind our back: left alone */
	bool foreign[F_NR];	/* which value was changed behind our back: not put back */
	int lock_fd;
	int state_fd;		/* the state file, to empty where it cannot be removed */
	int fd[F_NR];		/* what it writes, opened in prepare; -1: not open */
	struct bw_tunefile_orig orig;
	bool orig_saved;	/* the state file holds orig */
	struct bw_policy_state st;
	bool decided;		/* --once: a decision was taken */
	bool idle_seeded;	/* the store's idling verdict handed to the policy (or none) */
	__u64 actions[BW_POLICY_NR_ACTIONS];	/* decisions, dry runs' would-* too */
};

struct bw_tuner {
	struct bw_tuner_args a;
	struct bw_watch *w;
	struct tdev *td;
	int ntd;
	__u64 t0;
	double now;		/* seconds since bw_tuner_begin, at the last tick */
};

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < lo || *v > hi ? -EINVAL : 0;
}

void bw_tuner_args_init(struct bw_tuner_args *a)
{
	memset(a, 0, sizeof(*a));
	a->cfg = bw_policy_cfg_default;
	a->run_dir = BW_TUNER_RUN_DIR;
	a->low_latency = -1;
}

int bw_tuner_set_window(struct bw_tuner_args *a, const char *arg)
{
	double secs;

	if (bw_parse_interval(arg, &secs) || secs < 0.2) {
		bw_err("bad interval '%s': give seconds between 0.2 and 86400", arg);
		return -EINVAL;
	}
	a->cfg.window_s = secs;
	a->cfg.probe_s = secs / 2;
	a->cfg.settle_s = secs / BW_POLICY_TICKS_PER_WINDOW;
	return 0;
}

static int opt_policy(struct bw_tuner_args *a, const char *arg)
{
	if (!strcmp(arg, "throughput")) {
		a->cfg.policy = BW_POLICY_THROUGHPUT;
	} else if (!strcmp(arg, "latency")) {
		a->cfg.policy = BW_POLICY_LATENCY;
	} else {
		bw_err("bad --policy '%s': give throughput or latency", arg);
		return -EINVAL;
	}
	return 1;
}

static int opt_number(struct bw_tuner_args *a, int c, const char *arg)
{
	__u32 *field = &a->cfg.strict_idle_us;
	const char *name = "strict-idle-us";
	long v;

	if (c == BW_OPT_MAX_IDLE) {
		field = &a->cfg.max_idle_us;
		name = "max-idle-us";
	}
	if (c == BW_OPT_LL) {
		if (parse_long(arg, 0, 1, &v)) {
			bw_err("bad --low-latency '%s': give 0 or 1", arg);
			return -EINVAL;
		}
		a->low_latency = (int)v;
		return 1;
	}
	if (parse_long(arg, 1000, 1000000, &v)) {
		bw_err("bad --%s '%s': give 1000..1000000", name, arg);
		return -EINVAL;
	}
	*field = (__u32)v;
	return 1;
}

static int tuner_opt(struct bw_tuner_args *a, int c, const char *arg)
{
	switch (c) {
	case 'n':
		a->cfg.dry_run = true;
		return 1;
	case 'j':
		a->json = true;
		return 1;
	case BW_OPT_POLICY:
		return opt_policy(a, arg);
	case BW_OPT_RUN_DIR:
		if (!arg[0]) {
			bw_err("bad --run-dir '': give a directory");
			return -EINVAL;
		}
		a->run_dir = arg;
		return 1;
	case BW_OPT_SCHED:
		if (strcmp(arg, "bfq")) {
			bw_err("bad --set-scheduler '%s': only bfq has the idling tune sets", arg);
			return -EINVAL;
		}
		a->set_sched = arg;
		return 1;
	case BW_OPT_NO_STRICT:
		a->cfg.no_strict = true;
		return 1;
	case BW_OPT_LL:
	case BW_OPT_MAX_IDLE:
	case BW_OPT_STRICT_IDLE:
		return opt_number(a, c, arg);
	case BW_OPT_TUNE_WINDOW:
		return bw_tuner_set_window(a, arg) ?: 1;
	default:
		return 0;
	}
}

int bw_tuner_opt(struct bw_tuner_args *a, int c, const char *arg)
{
	int err = tuner_opt(a, c, arg);

	if (err > 0)
		a->given = true;
	return err;
}

static void path_of(const char *run_dir, const char *name, const char *ext, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s/tune-%s%s", run_dir, name, ext);
}

/* An empty state file: its tuner put everything back but could not remove it. */
static bool empty_state(FILE *f)
{
	struct stat sb;

	return !fstat(fileno(f), &sb) && !sb.st_size;
}

static int sched_of(const char *name, char *sched, size_t len)
{
	long idle;

	return bw_disk_sched(name, sched, len, &idle);
}

static int read_long(const char *name, const char *attr, long *v)
{
	char buf[64];
	int err = bw_sysfs_get(name, attr, buf, sizeof(buf));

	return err ?: parse_long(buf, 0, LONG_MAX, v);
}

/*
 * Writes val to attr through fd (opened in prepare), or by path when fd is
 * not open.  Where the file fd names is gone (the scheduler changed behind
 * our back) the path is what is written, as before fds were kept.
 */
static int put(int fd, const char *name, const char *attr, const char *val)
{
	size_t n = strlen(val);
	ssize_t w;
	int err;

	if (fd < 0)
		return bw_sysfs_set(name, attr, val);
	w = pwrite(fd, val, n, 0);
	if (w >= 0)
		return (size_t)w == n ? 0 : -EIO;
	err = -errno;
	if (err != -ENODEV && err != -ENOENT)
		return err;
	return bw_sysfs_set(name, attr, val) ? err : 0;
}

static int write_long(int fd, const char *name, const char *attr, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return put(fd, name, attr, buf);
}

/* Takes the device's lock; -EBUSY (saying by whom) when another tuner has it. */
static int take_lock(struct bw_tuner *x, struct tdev *t)
{
	char path[PATH_MAX];
	int fd;

	path_of(x->a.run_dir, t->name, ".lock", path, sizeof(path));
	bw_make_dir(x->a.run_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		bw_err("%s: cannot create the lock %s: %s; tune needs root (or --run-dir DIR)",
		       t->name, path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		struct bw_tunefile_orig o;
		char why[100], sp[PATH_MAX];
		FILE *f;

		path_of(x->a.run_dir, t->name, "", sp, sizeof(sp));
		f = fopen(sp, "r");
		if (!f || bw_tunefile_parse(f, &o, why, sizeof(why)))
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
static int found_now(const struct bw_tuner *x, const struct tdev *t, struct bw_tunefile_orig *o)
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
	if (!err && x->a.low_latency >= 0 && o->low_latency < 0)
		err = read_long(t->name, LL_ATTR, &o->low_latency);
	if (!err && !x->a.cfg.no_strict && o->strict_guarantees < 0)
		err = read_long(t->name, STRICT_ATTR, &o->strict_guarantees);
	if (err)
		bw_err("%s: cannot read its scheduler settings in /sys/block/%s/queue: %s", t->name,
		       t->name, strerror(-err));
	return err;
}

/*
 * What the device has now, or what a tuner that died had found (kept:
 * those are the originals).  An empty state file is no state file.
 */
static int read_originals(struct bw_tuner *x, struct tdev *t)
{
	char path[PATH_MAX], why[100];
	struct bw_tunefile_orig *o = &t->orig;
	FILE *f;

	path_of(x->a.run_dir, t->name, "", path, sizeof(path));
	f = fopen(path, "r");
	if (f && empty_state(f)) {
		fclose(f);
		unlink(path);
		f = NULL;
	}
	if (f) {
		int err = bw_tunefile_parse(f, o, why, sizeof(why));

		fclose(f);
		/* The same device: its dev_t, and its identity where the file has one. */
		if (!err && o->dev == t->dev && (!o->id[0] || !strcmp(o->id, t->id))) {
			bw_warn("%s: %s was left by a tuner that did not exit cleanly (pid %d); "
				"keeping the values it found", t->name, path, o->pid);
			t->orig_saved = true;
			o->pid = getpid();
			snprintf(o->id, sizeof(o->id), "%s", t->id);
			/* What it did not touch is as it was: read it as we would. */
			return found_now(x, t, o);
		}
		bw_warn("%s: ignoring %s (%s)", t->name, path, err ? why : o->dev == t->dev ?
			"left for another device at the same dev_t: identity differs" :
			"another device");
	}
	memset(o, 0, sizeof(*o));
	o->pid = getpid();
	o->dev = t->dev;
	o->low_latency = -1;
	o->slice_idle_us = -1;
	o->strict_guarantees = -1;
	snprintf(o->name, sizeof(o->name), "%s", t->name);
	snprintf(o->id, sizeof(o->id), "%s", t->id);
	return found_now(x, t, o);
}

/*
 * Before anything is written: bfq (or --set-scheduler), the lock, and
 * write permission on what will be written.  0, or -errno after saying why.
 */
static int preflight(struct bw_tuner *x, struct tdev *t, bool named)
{
	const struct bw_tuner_args *a = &x->a;
	char sched[32];
	const char *attrs[4];
	int i, n = 0, err;

	if (sched_of(t->name, sched, sizeof(sched))) {
		if (named)
			bw_err("%s: no %s: not a request-based device with a scheduler", t->name,
			       SCHED_ATTR);
		return -ENODEV;
	}
	if (strcmp(sched, "bfq") && !bw_bfq_available()) {
		if (named)
			bw_err("%s: %s", t->name, BW_NO_BFQ);
		return -EOPNOTSUPP;
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
	if (!a->cfg.no_strict && !strcmp(sched, "bfq"))
		attrs[n++] = STRICT_ATTR;
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

static void tdev_init(struct tdev *t, __u32 dev, const char *name)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->dev = dev;
	t->lock_fd = -1;
	t->state_fd = -1;
	for (i = 0; i < F_NR; i++)
		t->fd[i] = -1;
	snprintf(t->name, sizeof(t->name), "%s", name);
}

static void close_fds(struct tdev *t)
{
	int i;

	for (i = 0; i < F_NR; i++) {
		if (t->fd[i] >= 0)
			close(t->fd[i]);
		t->fd[i] = -1;
	}
	if (t->state_fd >= 0)
		close(t->state_fd);
	t->state_fd = -1;
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	t->lock_fd = -1;
}

/* The devices to tune: the named ones (all must pass), else every one on bfq. */
static int pick_devices(struct bw_tuner *x, const struct bw_watch_opts *wo)
{
	struct bw_devinfo di;
	__u32 devs[BW_MAX_WATCH];
	int i, n, err;

	n = bw_watched_or_all(wo->core.nr_watch, wo->core.watch, devs, BW_MAX_WATCH);
	x->td = calloc(n ? n : 1, sizeof(*x->td));
	if (!x->td)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct tdev *t = &x->td[x->ntd];

		if (bw_dev_probe(devs[i], &di) || (!wo->core.nr_watch && !bw_dev_present(&di)))
			continue;
		bw_dev_identify(&di, false);	/* no request to the device */
		tdev_init(t, devs[i], di.name);
		snprintf(t->id, sizeof(t->id), "%s", di.id);
		err = preflight(x, t, wo->core.nr_watch > 0);
		if (err)
			close_fds(t);
		if (err && wo->core.nr_watch)
			return err;
		if (err == -EOPNOTSUPP || err == -ENODEV)
			continue;
		if (err)
			return err;
		t->active = true;
		x->ntd++;
	}
	if (!x->ntd && !bw_bfq_available()) {
		bw_err("no device to tune: %s", BW_NO_BFQ);
		return -ENODEV;
	}
	if (!x->ntd) {
		bw_err("no device to tune: none uses bfq (name one with -d, and "
		       "--set-scheduler bfq to switch it)");
		return -ENODEV;
	}
	return 0;
}

int bw_tuner_open(struct bw_tuner **out, struct bw_tuner_args *a, struct bw_watch *w,
		  struct bw_watch_opts *wo)
{
	struct bw_tuner *x;
	struct bw_watch_dev *wd;
	int i, err;

	*out = NULL;
	err = bw_check_privileges();
	if (err)
		return err;
	x = calloc(1, sizeof(*x));
	if (!x) {
		bw_err("out of memory");
		return -ENOMEM;
	}
	x->a = *a;
	x->w = w;
	err = pick_devices(x, wo);
	if (err)
		goto fail;
	/* Watch what is tuned, nothing else; with streams: think time, sequential share. */
	wo->core.nr_watch = x->ntd;
	wo->core.streams = true;
	wo->core.exact = true;	/* S1, P_eff, busy time and depth: the exact tier */
	/* Streams on the tuned devices only, even where more are watched (export --tune). */
	wo->core.nr_streams_watch = x->ntd;
	for (i = 0; i < x->ntd; i++) {
		wo->core.watch[i] = x->td[i].dev;
		wo->core.streams_watch[i] = x->td[i].dev;
		wd = bw_watch_dev(w, x->td[i].dev);
		if (!wd) {
			bw_err("out of memory");
			err = -ENOMEM;
			goto fail;
		}
		wd->named = true;
	}
	*out = x;
	return 0;
fail:
	bw_tuner_close(x, false);
	return err;
}

/* The originals to the state file (fsync'd), kept open to empty it if need be. */
static int save_originals(struct bw_tuner *x, struct tdev *t)
{
	char fname[BW_NAME_LEN + 8], path[PATH_MAX];
	int err;

	snprintf(fname, sizeof(fname), "tune-%s", t->name);
	err = bw_state_write(x->a.run_dir, fname, bw_tunefile_format, &t->orig);
	if (!err) {
		t->orig_saved = true;
		path_of(x->a.run_dir, t->name, "", path, sizeof(path));
		t->state_fd = open(path, O_RDWR | O_CLOEXEC);
		err = t->state_fd < 0 ? -errno : 0;
	}
	if (err)
		bw_err("%s: cannot save the values found to %s/%s: %s; nothing was changed",
		       t->name, x->a.run_dir, fname, strerror(-err));
	return err;
}

/* Whether this tuner writes fd i's file: now, or when it puts back. */
static bool writes(const struct bw_tuner *x, const struct tdev *t, int i)
{
	switch (i) {
	case F_LL:
		return x->a.low_latency >= 0 || t->orig.low_latency >= 0;
	case F_STRICT:
		return !x->a.cfg.no_strict;
	case F_SCHED:
		return t->orig.sched[0];
	default:
		return true;
	}
}

static int open_writes(struct bw_tuner *x, struct tdev *t)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < F_NR; i++) {
		if (!writes(x, t, i))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/%s", t->name, attr_of[i]);
		t->fd[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (t->fd[i] < 0)
			return -errno;
	}
	return 0;
}

/*
 * Switches the scheduler as asked, then opens what it writes (bfq's
 * iosched/ files exist only from then on), then sets low_latency.
 */
static int switch_as_asked(struct bw_tuner *x, struct tdev *t)
{
	const char *what = "switching to bfq";
	int err = 0;

	if (x->a.set_sched)
		err = bw_sysfs_set(t->name, SCHED_ATTR, x->a.set_sched);
	if (!err) {
		what = "opening its queue settings for writing";
		err = open_writes(x, t);
	}
	if (!err && x->a.low_latency >= 0) {
		what = "setting low_latency";
		err = write_long(t->fd[F_LL], t->name, LL_ATTR, x->a.low_latency);
	}
	if (err)
		bw_err("%s: %s: %s", t->name, what, strerror(-err));
	return err;
}

static int prepare_dev(struct bw_tuner *x, struct tdev *t)
{
	long cur;
	int err;

	if (!x->a.cfg.dry_run) {
		err = save_originals(x, t) ?: switch_as_asked(x, t);
		if (err)
			return err;
	}
	if (read_long(t->name, IDLE_ATTR, &cur)) {
		bw_err("%s: cannot read /sys/block/%s/%s", t->name, t->name, IDLE_ATTR);
		return -EIO;
	}
	bw_policy_init(&t->st, (__u32)cur);
	if (!x->a.cfg.no_strict && !read_long(t->name, STRICT_ATTR, &cur))
		t->st.strict = !!cur;
	return 0;
}

int bw_tuner_prepare(struct bw_tuner *x)
{
	int i, err;

	for (i = 0; i < x->ntd; i++) {
		err = prepare_dev(x, &x->td[i]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Puts back what o says was there (through fd where open); skip[i]: fd i's
 * value is as someone else set it.  strict_guarantees before
 * slice_idle_us: BFQ raises slice_idle to 8 ms when strict_guarantees
 * is set (bfq_strict_guarantees_store), so the idle value comes last.
 */
static int restore_orig(const struct bw_tunefile_orig *o, const int *fd, const bool *skip)
{
	char sched[32];
	int err = 0, e;

	if (sched_of(o->name, sched, sizeof(sched))) {
		bw_warn("%s: gone; nothing to put back", o->name);
		return -ENODEV;
	}
	if (!strcmp(sched, "bfq")) {
		if (o->strict_guarantees >= 0 && !skip[F_STRICT]) {
			e = write_long(fd[F_STRICT], o->name, STRICT_ATTR, o->strict_guarantees);
			err = err ?: e;
		}
		if (o->slice_idle_us >= 0 && !skip[F_IDLE]) {
			e = write_long(fd[F_IDLE], o->name, IDLE_ATTR, o->slice_idle_us);
			err = err ?: e;
		}
		if (o->low_latency >= 0) {
			e = write_long(fd[F_LL], o->name, LL_ATTR, o->low_latency);
			err = err ?: e;
		}
	}
	if (o->sched[0]) {
		e = put(fd[F_SCHED], o->name, SCHED_ATTR, o->sched);
		err = err ?: e;
	}
	if (err) {
		bw_err("%s: putting back the values found: %s", o->name, strerror(-err));
		return err;
	}
	if (o->sched[0])
		bw_warn("%s: put back scheduler %s", o->name, o->sched);
	if (o->slice_idle_us >= 0)
		bw_warn("%s: %s slice_idle_us %ld", o->name, skip[F_IDLE] ?
			"left as someone else set it, not" : "put back", o->slice_idle_us);
	if (o->strict_guarantees >= 0)
		bw_warn("%s: %s strict_guarantees %ld", o->name, skip[F_STRICT] ?
			"left as someone else set it, not" : "put back", o->strict_guarantees);
	if (o->low_latency >= 0)
		bw_warn("%s: put back low_latency %ld", o->name, o->low_latency);
	return 0;
}

/*
 * All is put back: the state file goes; where it cannot (the run dir is
 * root's, and we are no longer), it is emptied through the fd kept open.
 */
static void remove_state(const struct bw_tuner *x, const struct tdev *t)
{
	char path[PATH_MAX];
	int err;

	path_of(x->a.run_dir, t->name, "", path, sizeof(path));
	if (!unlink(path) || errno == ENOENT)
		return;
	err = -errno;
	if (t->state_fd >= 0 && !ftruncate(t->state_fd, 0))
		return;
	bw_warn("%s: cannot remove %s: %s; remove it before `blkwise tune --restore`", t->name,
		path, strerror(-err));
}

/* Ends tuning a device; put_back: restore and remove the state file (kept if that fails). */
static void release(struct bw_tuner *x, struct tdev *t, bool put_back)
{
	int err;

	if (put_back && t->orig_saved) {
		err = restore_orig(&t->orig, t->fd, t->foreign);
		if (!err || err == -ENODEV)
			remove_state(x, t);
	}
	t->orig_saved = false;
	close_fds(t);
	t->active = false;
}

/* A state file of one of wo's devices (every one when none is named). */
static bool restore_wanted(const struct bw_watch_opts *wo, __u32 dev)
{
	int i;

	for (i = 0; i < wo->core.nr_watch; i++)
		if (wo->core.watch[i] == dev)
			return true;
	return !wo->core.nr_watch;
}

/* The device at o's dev_t is the one o's values were found on (when o names it). */
static bool same_device(const struct bw_tunefile_orig *o)
{
	struct bw_devinfo di;

	if (!o->id[0])
		return true;
	if (bw_dev_probe(o->dev, &di))
		return false;
	bw_dev_identify(&di, false);
	return !strcmp(di.id, o->id);
}

/*
 * One state file left in the run dir: 1 when put back, 0 when not wanted or
 * nothing to put back (empty: removed), -errno after saying why not.
 */
static int restore_file(const struct bw_tuner_args *a, const struct bw_watch_opts *wo,
			const char *name)
{
	char path[PATH_MAX], why[100];
	struct bw_tunefile_orig o;
	int lfd, err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", a->run_dir, name);
	f = fopen(path, "r");
	if (f && empty_state(f)) {
		fclose(f);
		unlink(path);
		return 0;
	}
	if (!f || bw_tunefile_parse(f, &o, why, sizeof(why))) {
		bw_err("%s: not a tune state file (%s); left as is", path, f ? why :
		       strerror(errno));
		if (f)
			fclose(f);
		return -EINVAL;
	}
	fclose(f);
	if (!restore_wanted(wo, o.dev))
		return 0;
	if (!same_device(&o)) {
		bw_warn("%s: %s was left for another device than the one now at %u:%u; "
			"nothing put back, removed", o.name, path, BW_MAJOR(o.dev), BW_MINOR(o.dev));
		unlink(path);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s.lock", a->run_dir, name);
	lfd = open(path, O_RDWR | O_CLOEXEC);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB)) {
		bw_err("%s: blkwise tune (pid %d) is still running; stop it instead", o.name,
		       o.pid);
		close(lfd);
		return -EBUSY;
	}
	err = restore_orig(&o, no_fd, (const bool[F_NR]){ false });
	if (!err) {
		snprintf(path, sizeof(path), "%s/%s", a->run_dir, name);
		unlink(path);
	}
	if (lfd >= 0)
		close(lfd);
	return err ?: 1;
}

int bw_tuner_restore(const struct bw_tuner_args *a, const struct bw_watch_opts *wo)
{
	struct dirent *de;
	int n = 0, failed = 0, err;
	DIR *d = opendir(a->run_dir);

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

		if (strncmp(de->d_name, "tune-", 5) || (len > 5 && !strcmp(de->d_name + len - 5, ".lock")))
			continue;
		err = restore_file(a, wo, de->d_name);
		n += err > 0;
		failed += err < 0;
	}
	closedir(d);
	if (!n && !failed)
		bw_warn("nothing to restore in %s", a->run_dir);
	return failed ? -EIO : 0;
}

static const struct bw_watch_dev *watched(const struct bw_tuner *x, __u32 dev)
{
	int i;

	for (i = 0; i < x->w->ndevs; i++)
		if (x->w->devs[i].dev == dev)
			return &x->w->devs[i];
	return NULL;
}

/*
 * The class the tuner may act on: a stored one is a hypothesis, used to
 * start only where the identity it was stored under is a strong one; under
 * a dev_t (which another device may have now) it waits for live evidence,
 * as an unknown class does.
 */
static struct bw_class class_of(const struct bw_watch_dev *wd)
{
	struct bw_class c = wd->cls;

	if (c.stored && wd->info.id_kind == BW_ID_DEVT)
		c.cls = BW_CLASS_UNKNOWN;
	return c;
}

static void observe(const struct bw_tuner *x, const struct bw_watch_dev *wd, __u32 idle_us,
		    struct bw_policy_obs *o)
{
	const struct bw_stream_interval *s[BW_POLICY_MAX_STREAMS];
	struct bw_class c = class_of(wd);
	int i, n = 0;

	for (i = 0; i < x->w->nstreams && n < BW_POLICY_MAX_STREAMS; i++)
		if (x->w->streams[i].s.dev == wd->dev)
			s[n++] = &x->w->streams[i].s;
	bw_policy_observe(&wd->iv, &c, s, n, idle_us, o);
	o->rotational = wd->info.rotational;
}

static void stamp(char *buf, size_t len)
{
	time_t now = time(NULL);

	strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
}

static void json_win(struct bw_json *j, const char *key, const struct bw_policy_win *w)
{
	bw_json_obj(j, key);
	bw_json_num(j, "window_s", w->secs, 3);
	bw_json_u64(j, "ios", w->ios);
	bw_json_num(j, "mb_per_s", bw_policy_win_mbps(w), 3);
	bw_json_num(j, "p_eff", bw_policy_win_peff(w), 3);
	bw_json_num(j, "depth_mean_busy", bw_policy_win_depth(w), 3);
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

static void json_decision(const struct bw_tuner *x, const struct tdev *t,
			  const struct bw_policy_decision *d, const char *action, const char *ts)
{
	struct bw_json j;

	bw_json_begin(&j, stdout);
	bw_json_obj(&j, NULL);
	bw_json_str(&j, "timestamp", ts);
	bw_json_str(&j, "device", t->name);
	bw_json_str(&j, "action", action);
	bw_json_bool(&j, "dry_run", x->a.cfg.dry_run);
	bw_json_u64(&j, "slice_idle_us_before", d->before);
	bw_json_u64(&j, "slice_idle_us_after", d->after);
	bw_json_u64(&j, "strict_guarantees_before", d->strict_before);
	bw_json_u64(&j, "strict_guarantees_after", d->strict_after);
	bw_json_str(&j, "why", d->why);
	json_win(&j, "evidence", &d->win);
	if (d->action == BW_POLICY_KEEP || d->action == BW_POLICY_REVERT)
		json_win(&j, "compared_with", &d->base);
	if (d->resolution > 0)	/* a probe's end: what its windows could tell apart */
		bw_json_num(&j, "resolution", d->resolution, 3);
	bw_json_u64(&j, "repairs", t->st.repairs);
	bw_json_u64(&j, "probe_damage", t->st.probe_damage);
	bw_json_u64(&j, "probes", t->st.probes);
	bw_json_num(&j, "probe_cost_s", t->st.probe_cost_s, 2);
	bw_json_u64(&j, "changes", t->st.changes);
	bw_json_close(&j, '}');
	bw_json_end(&j);
}

/* One line per decision, with its evidence: the only thing the tuner prints to stdout. */
static void log_decision(const struct bw_tuner *x, const struct tdev *t,
			 const struct bw_policy_decision *d, const char *action)
{
	const struct bw_policy_win *w = &d->win;
	char ts[32], ev[400];

	stamp(ts, sizeof(ts));
	if (x->a.json) {
		json_decision(x, t, d, action, ts);
		return;
	}
	bw_policy_win_evidence(ev, sizeof(ev), w);
	printf("%s %s %s: slice_idle_us %u -> %u%s: %s\n    evidence: %s; probes %d (%.1f s), "
	       "changes %d\n", ts, t->name, action, d->before, d->after, bw_policy_strict_note(d), d->why,
	       ev, t->st.probes, t->st.probe_cost_s, t->st.changes);
	fflush(stdout);
}

/* A write that failed: said, and the device left alone (that value not put back). */
static int write_failed(struct tdev *t, int f, long v, int err)
{
	bw_err("%s: writing %ld to /sys/block/%s/%s: %s; leaving it alone", t->name, v, t->name,
	       attr_of[f], strerror(-err));
	t->hands_off = true;
	t->foreign[f] = true;
	return err;
}

/*
 * Writes what d decided (strict_guarantees first: setting it raises
 * slice_idle to 8 ms in BFQ, so the idle value is written after), or in a
 * dry run only says it would and takes what is in force.
 */
static int apply(struct bw_tuner *x, struct tdev *t, const struct bw_policy_decision *d, double now)
{
	long cur, strict = t->st.strict;
	int err;

	if (x->a.cfg.dry_run) {
		if (!x->a.cfg.no_strict)
			read_long(t->name, STRICT_ATTR, &strict);
		if (!read_long(t->name, IDLE_ATTR, &cur))
			bw_policy_applied(&x->a.cfg, &t->st, (__u32)cur, !!strict, now);
		return 0;
	}
	if (d->strict_after != t->st.strict) {
		err = write_long(t->fd[F_STRICT], t->name, STRICT_ATTR, d->strict_after);
		if (err)
			return write_failed(t, F_STRICT, d->strict_after, err);
	}
	err = write_long(t->fd[F_IDLE], t->name, IDLE_ATTR, d->after);
	if (err)
		return write_failed(t, F_IDLE, d->after, err);
	bw_policy_applied(&x->a.cfg, &t->st, d->after, d->strict_after, now);
	return 0;
}

/* Carries a decision out (or, in a dry run, only says it), and logs it. */
static void act(struct bw_tuner *x, struct tdev *t, struct bw_policy_decision *d, double now)
{
	char name[16];
	bool trial = d->action == BW_POLICY_PROBE || d->action == BW_POLICY_REPAIR;

	snprintf(name, sizeof(name), "%s%s", x->a.cfg.dry_run ? "would-" : "",
		 bw_policy_action_name(d->action));
	if (d->action < BW_POLICY_NR_ACTIONS)
		t->actions[d->action]++;
	if (!trial || !x->a.cfg.dry_run)
		apply(x, t, d, now);
	if (d->dropped)
		bw_watch_drop_class(x->w, t->dev);
	if (d->learned != BW_CLASS_UNKNOWN)
		bw_watch_learn_class(x->w, t->dev, d->learned, d->learned_peff);
	if (d->verdict_learned)
		bw_watch_learn_idle(x->w, t->dev, d->verdict_us, d->verdict_strict, d->verdict_gain);
	log_decision(x, t, d, name);
	if (!trial)
		t->decided = true;
}

/*
 * What is in force against what we set: false (the device left alone
 * until restart) when a value changed behind our back.  In a dry run,
 * what is in force is simply taken.
 */
static bool in_force(struct bw_tuner *x, struct tdev *t, long *idle)
{
	long strict = t->st.strict;

	if (read_long(t->name, IDLE_ATTR, idle) ||
	    (!x->a.cfg.no_strict && read_long(t->name, STRICT_ATTR, &strict))) {
		bw_warn("%s: %s is gone (scheduler changed behind our back?): leaving %s alone "
			"until restart", t->name, IDLE_ATTR, t->name);
		t->hands_off = true;
		t->foreign[F_IDLE] = t->foreign[F_STRICT] = true;
		return false;
	}
	if (x->a.cfg.dry_run) {
		t->st.setting = (__u32)*idle;
		t->st.strict = !!strict;
		return true;
	}
	if ((__u32)*idle != t->st.setting) {
		bw_warn("%s: slice_idle_us changed behind our back (now %ld, we set %u): "
			"respecting it, leaving %s alone until restart", t->name, *idle,
			t->st.setting, t->name);
		t->foreign[F_IDLE] = true;
	}
	if ((__u32)strict != t->st.strict) {
		bw_warn("%s: strict_guarantees changed behind our back (now %ld, we set %u): "
			"respecting it, leaving %s alone until restart", t->name, strict,
			t->st.strict, t->name);
		t->foreign[F_STRICT] = true;
	}
	t->hands_off = t->foreign[F_IDLE] || t->foreign[F_STRICT];
	return !t->hands_off;
}

/*
 * What the store holds, once the device has its identity: the idling
 * verdict, a hypothesis the policy measures again (never under a dev_t,
 * which another device may have now); and where the identity may name
 * another device, the doubt that has the policy check every stored belief.
 */
static void seed_verdict(struct tdev *t, const struct bw_watch_dev *wd)
{
	if (t->idle_seeded || !wd->info.id[0])
		return;
	t->idle_seeded = true;
	if (wd->has_idle && wd->info.id_kind != BW_ID_DEVT)
		bw_policy_seed_verdict(&t->st, wd->idle.idle_us, wd->idle.strict, wd->idle.gain,
				     difftime(time(NULL), (time_t)wd->idle.learned));
	if (!bw_id_ambiguous(wd->info.id_kind, wd->info.id) ||
	    !(wd->has_idle || wd->has_stored || wd->cls.stored))
		return;
	bw_policy_doubt(&t->st, wd->info.id_kind == BW_ID_DEVT ?
		      "keyed by dev_t, which another device may have now" :
		      "its backing file has no birth time: another file at the same path "
		      "can have the same identity");
}

static void tune_dev(struct bw_tuner *x, struct tdev *t, double now)
{
	const struct bw_watch_dev *wd = watched(x, t->dev);
	struct bw_policy_decision d;
	struct bw_policy_obs o;
	long cur;

	if (!wd || wd->row != BW_ROW_SHOW || !wd->shown) {
		bw_warn("%s: gone; no longer tuned", t->name);
		release(x, t, true);
		return;
	}
	if (t->hands_off || !in_force(x, t, &cur))
		return;
	seed_verdict(t, wd);
	observe(x, wd, (__u32)cur, &o);
	if (bw_policy_step(&x->a.cfg, &t->st, &o, now, &d))
		act(x, t, &d, now);
}

/* What is known before any window: a class or an idling verdict from the store. */
static void start_dev(struct bw_tuner *x, struct tdev *t)
{
	const struct bw_watch_dev *wd = watched(x, t->dev);
	struct bw_policy_decision d;

	if (wd)
		seed_verdict(t, wd);
	if (!wd || !bw_policy_start(&x->a.cfg, &t->st, class_of(wd).cls, wd->cls.stored,
				  wd->info.rotational, &d))
		return;
	act(x, t, &d, 0);
}

void bw_tuner_begin(struct bw_tuner *x)
{
	const struct bw_policy_cfg *cfg = &x->a.cfg;
	int i;

	x->t0 = bw_now_ns();
	x->now = 0;
	bw_warn("tuning %d device%s (%s%s, window %.2f s); Ctrl-C to stop and put back", x->ntd,
		x->ntd == 1 ? "" : "s", cfg->policy == BW_POLICY_LATENCY ? "latency" : "throughput",
		cfg->dry_run ? ", dry run" : "", cfg->window_s);
	for (i = 0; i < x->ntd; i++)
		start_dev(x, &x->td[i]);
}

int bw_tuner_tick(struct bw_tuner *x)
{
	int i, active = 0;

	x->now = (bw_now_ns() - x->t0) / 1e9;
	for (i = 0; i < x->ntd; i++) {
		if (!x->td[i].active)
			continue;
		tune_dev(x, &x->td[i], x->now);
		active += x->td[i].active;
	}
	return active;
}

bool bw_tuner_all_decided(const struct bw_tuner *x)
{
	int i;

	for (i = 0; i < x->ntd; i++) {
		const struct tdev *t = &x->td[i];

		if (!t->active || t->hands_off || t->decided)
			continue;
		if (t->st.phase == BW_PH_MEASURE && x->now >= ONCE_MAX_WINDOWS * x->a.cfg.window_s)
			continue;	/* never enough I/O to judge: left as is (said at close) */
		if (t->st.phase == BW_PH_MEASURE && t->st.windows > 0 && !t->st.probes)
			continue;	/* judged: nothing to change */
		return false;
	}
	return true;
}

int bw_tuner_stats(const struct bw_tuner *x, struct bw_tuner_dev_stats *out, int max)
{
	int i;

	for (i = 0; i < x->ntd && i < max; i++) {
		const struct tdev *t = &x->td[i];
		struct bw_tuner_dev_stats *s = &out[i];

		memset(s, 0, sizeof(*s));
		s->dev = t->dev;
		snprintf(s->name, sizeof(s->name), "%s", t->name);
		s->active = t->active && !t->hands_off;
		memcpy(s->actions, t->actions, sizeof(s->actions));
		s->probes = t->st.probes;
		s->probe_s = t->st.probe_cost_s;
		s->setting = t->st.setting;
	}
	return i;
}

/* --once: the decision stays; `tune --restore` puts back what was there. */
static void keep_dev(struct bw_tuner *x, struct tdev *t)
{
	if (!t->decided && !t->st.windows)
		bw_warn("%s: too little I/O to judge by in %d windows", t->name, ONCE_MAX_WINDOWS);
	else if (!t->decided)
		bw_warn("%s: judged by %d window%s: nothing to change", t->name, t->st.windows,
			t->st.windows == 1 ? "" : "s");
	if (x->a.cfg.dry_run)
		bw_warn("%s: slice_idle_us %u as found; dry run, nothing written", t->name,
			t->st.setting);
	else
		bw_warn("%s: left at slice_idle_us %u; `blkwise tune --restore` puts back what "
			"was there", t->name, t->st.setting);
	release(x, t, false);
}

void bw_tuner_close(struct bw_tuner *x, bool keep)
{
	int i;

	if (!x)
		return;
	for (i = 0; i < x->ntd; i++) {
		struct tdev *t = &x->td[i];

		if (keep && (t->orig_saved || (x->a.cfg.dry_run && t->active)))
			keep_dev(x, t);
		else
			release(x, t, true);
	}
	free(x->td);
	free(x);
}
