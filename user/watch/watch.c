// SPDX-License-Identifier: GPL-2.0
/* The shared watch loop: see watch.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include "watch/watch.h"
#include "watch/internal.h"

#define MAX_STREAMS 4096
/* Learned S1 goes to the store this often, and at exit. */
#define S1_SAVE_EVERY_NS (120 * 1000000000ULL)

void bw_watch_opts_init(struct bw_watch_opts *o)
{
	o->state_dir = BW_STATE_DIR;
	o->exact_period_s = BW_EXACT_PERIOD_S;
	o->exact_budget = BW_EXACT_BUDGET;
}

/* --exact-period (0: never) and --exact-slice, in seconds. */
static int slice_opt(struct bw_watch_opts *o, int c, const char *arg)
{
	bool period = c == BW_OPT_EXACT_PERIOD;
	double v;

	if (!(period && !strcmp(arg, "0")) && bw_parse_interval(arg, &v)) {
		bw_err("bad --exact-%s '%s': give seconds, 0.01 to 86400%s",
		       period ? "period" : "slice", arg, period ? ", or 0 for never" : "");
		return -EINVAL;
	}
	if (period)
		o->exact_period_s = strcmp(arg, "0") ? v : 0;
	else
		o->exact_slice_s = v;
	return 1;
}

/* --exact-budget and --max-cpu: a percentage of one CPU (0 for --max-cpu: none). */
static int cpu_opt(struct bw_watch_opts *o, int c, const char *arg)
{
	bool max = c == BW_OPT_MAX_CPU;
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v >= 0) || v > 100 || (!max && v <= 0)) {
		bw_err("bad --%s '%s': give a percentage of one CPU, %s to 100",
		       max ? "max-cpu" : "exact-budget", arg, max ? "0 (none)" : "above 0");
		return -EINVAL;
	}
	if (max) {
		o->max_cpu = v / 100;
		o->max_cpu_given = true;
	}
	else
		o->exact_budget = v / 100;
	return 1;
}

int bw_watch_opt(struct bw_watch_opts *o, int c, const char *arg)
{
	switch (c) {
	case BW_OPT_EXACT_BUDGET:
	case BW_OPT_MAX_CPU:
		return cpu_opt(o, c, arg);
	case 'd':
		if (o->nr_names >= BW_MAX_WATCH) {
			bw_err("too many -d (at most %d)", BW_MAX_WATCH);
			return -EINVAL;
		}
		snprintf(o->names[o->nr_names++], BW_NAME_LEN, "%s", arg);
		return 1;
	case 'v':
		o->core.verbose = true;
		return 1;
	case BW_OPT_STATE_DIR:
		if (!arg[0]) {
			bw_err("bad --state-dir '': give a directory");
			return -EINVAL;
		}
		o->state_dir = arg;
		return 1;
	case BW_OPT_NO_STATE:
		o->no_state = true;
		return 1;
	case BW_OPT_BTF:
		o->core.btf_path = arg;
		return 1;
	case BW_OPT_RAW_TP:
		o->core.force_raw_tp = true;
		return 1;
	case BW_OPT_EXACT:
		o->core.exact = true;
		return 1;
	case BW_OPT_EXACT_PERIOD:
	case BW_OPT_EXACT_SLICE:
		return slice_opt(o, c, arg);
	case BW_OPT_BIO_CACHE:
		o->core.biocache = true;
		return 1;
	case BW_OPT_VERSION:
		bw_print_version(stdout);
		exit(0);
	default:
		return 0;
	}
}

struct bw_watch_dev *bw_watch_dev(struct bw_watch *w, __u32 dev)
{
	struct bw_watch_dev *s = bw_watch_find(w, dev);

	if (s)
		return s;
	s = realloc(w->devs, (w->ndevs + 1) * sizeof(*s));
	if (!s)
		return NULL;
	/* Streams point into the array: the next sample sets them again. */
	w->nstreams = 0;
	w->devs = s;
	s = &w->devs[w->ndevs++];
	memset(s, 0, sizeof(*s));
	s->dev = dev;
	return s;
}

void bw_watch_solo(const struct bw_watch_dev *s, const struct bw_snap_dev *d, int op, int c,
		   __u64 *ios, __u64 *ns)
{
	__u64 n = d->op[op].solo_ios[c], t = d->op[op].solo_ns[c];

	*ios = n >= s->solo_base_ios[op][c] ? n - s->solo_base_ios[op][c] : 0;
	*ns = *ios && t >= s->solo_base_ns[op][c] ? t - s->solo_base_ns[op][c] : 0;
}

int bw_watch_resolve(struct bw_watch *w, struct bw_watch_opts *o)
{
	struct bw_core_opts *c = &o->core;
	struct bw_watch_dev *s;
	struct bw_devinfo di;
	__u32 dev;
	int i, j;

	w->o = o;
	/* A default ceiling (export's) gives way to the exact tier; one asked for is an error. */
	if (o->max_cpu > 0 && (c->exact || c->streams) && !o->max_cpu_given)
		o->max_cpu = 0;
	if (o->max_cpu > 0 && (c->exact || c->streams)) {
		bw_err("--max-cpu bounds the light tier and its slices; --exact%s runs the exact "
		       "tier throughout: drop one", c->streams ? " (implied by --streams)" : "");
		return -EINVAL;
	}
	if (o->exact_period_s > 0 && o->exact_slice_s > o->exact_period_s) {
		bw_err("--exact-slice %g must be shorter than --exact-period %g",
		       o->exact_slice_s, o->exact_period_s);
		return -EINVAL;
	}
	c->nr_watch = 0;
	for (i = 0; i < o->nr_names; i++) {
		const char *arg = o->names[i];

		if (bw_dev_lookup(arg, &dev) || bw_dev_probe(dev, &di)) {
			bw_err("unknown device '%s': no such block device in /sys/class/block "
			       "(see lsblk)", arg);
			return -ENODEV;
		}
		if (di.partition) {
			char part[BW_NAME_LEN];

			snprintf(part, sizeof(part), "%s", di.name);
			if (bw_dev_probe(di.disk, &di)) {
				bw_err("%s: cannot find its disk in sysfs", part);
				return -ENODEV;
			}
			bw_warn("%s is a partition: watching its disk %s", part, di.name);
		}
		for (j = 0; j < c->nr_watch; j++)
			if (c->watch[j] == di.dev)
				break;
		if (j < c->nr_watch)	/* named twice: watch once */
			continue;
		c->watch[c->nr_watch++] = di.dev;
		s = bw_watch_dev(w, di.dev);
		if (!s)
			return -ENOMEM;
		s->named = true;
		s->info = di;
		s->info.id[0] = '\0';	/* loaded with the store at the first sample */
	}
	return 0;
}

static void open_store(struct bw_watch *w)
{
	char why[200];
	int err;

	if (w->o->no_state)
		return;
	err = bw_s1_load(w->o->state_dir, &w->store, why, sizeof(why));
	if (err && err != -ENOENT) {
		bw_warn("ignoring the S1 store %s/s1: %s", w->o->state_dir, why);
		w->store_warned = err != -EINVAL;	/* a damaged file is replaced at save */
	}
}

static int take(struct bw_watch *w, struct bw_snap *s);
static int store_dev(struct bw_watch *w, struct bw_watch_dev *s, const struct bw_snap_dev *d,
		     __s64 now);

/* The objects of other concerns, with the core's attach type and argument layout. */
static int open_others(struct bw_watch *w)
{
	const struct bw_core_opts *o = &w->o->core;
	const struct bw_load_env *env = bw_core_env(w->core);
	struct bw_cg_fds cg;
	struct utsname u;
	int err;

	/* The cgroups object first: the bio object counts into its maps. */
	err = o->cgroups ? bw_cgio_open(&w->cg, o, env) : 0;
	if (err)
		return err;
	if (w->cg)
		bw_cgio_fds(w->cg, &cg);
	err = bw_bio_open(&w->bio, o, env, w->cg ? &cg : NULL);
	if (err)
		return err;
	if (o->streams && !env->have_fetch) {
		uname(&u);
		bw_err("streams (--streams, and tune's, which it decides by) need BPF atomic "
		       "fetch-and-add, which this kernel (%s) lacks: Linux 5.12 or later", u.release);
		return -EOPNOTSUPP;
	}
	err = o->streams ? bw_streams_open(&w->st, o, env) : 0;
	if (err)
		return err;
	w->cg_paths.io = true;
	return o->biocache ? bw_bc_open(&w->bc, env, o->verbose) : 0;
}

static void print_memory(const struct bw_watch *w, FILE *f)
{
	struct bpf_object *objs[BW_WATCH_MAX_OBJS];
	int n = bw_watch_objects(w, objs);

	bw_core_print_memory(w->core, objs + 1, n - 1, f);
	if (w->bio)
		bw_bio_print(w->bio, f);
	if (w->st)
		bw_streams_print(w->st, f);
}

/*
 * A cgroup's path while it is there.  One that is gone (its path no more
 * its directory) has its series deleted; one not found yet (made since
 * the last walk, at most a second ago) is left for the next sample, and
 * deleted if it stays unknown for CG_UNKNOWN_NS (made and removed between
 * two walks).
 */
#define CG_UNKNOWN_NS (10ULL * 1000000000ULL)

/* Since when id has been unknown (0: not yet), its entry made if need be. */
static __u64 *cg_unknown_since(struct bw_watch *w, __u64 id)
{
	void *n;
	int i;

	for (i = 0; i < w->ncg_ids; i++)
		if (w->cg_ids[i].id == id)
			return &w->cg_ids[i].since;
	n = realloc(w->cg_ids, (w->ncg_ids + 1) * sizeof(*w->cg_ids));
	if (!n)
		return NULL;
	w->cg_ids = n;
	w->cg_ids[w->ncg_ids].id = id;
	w->cg_ids[w->ncg_ids].since = 0;
	return &w->cg_ids[w->ncg_ids++].since;
}

/* id is known now, or gone: no entry of its own any more. */
static void cg_unknown_drop(struct bw_watch *w, __u64 id)
{
	int i;

	for (i = 0; i < w->ncg_ids; i++) {
		if (w->cg_ids[i].id == id) {
			w->cg_ids[i] = w->cg_ids[--w->ncg_ids];
			return;
		}
	}
}

/* A cgroup that went: its series deleted. */
static void cg_forget(struct bw_watch *w, __u64 id)
{
	bw_cgio_forget(w->cg, id);
	cg_unknown_drop(w, id);
}

static const char *cg_path(struct bw_watch *w, __u64 id, __u64 now)
{
	const char *path;
	__u64 *since;

	if (!id)
		return "/";	/* no owner: the root's */
	path = bw_cgroup_path(&w->cg_paths, id);
	if (path && bw_cgroup_alive(&w->cg_paths, id, path)) {
		cg_unknown_drop(w, id);
		return path;
	}
	if (path) {	/* known, and no more there */
		cg_forget(w, id);
		return NULL;
	}
	since = cg_unknown_since(w, id);
	if (!since || !*since) {
		if (since)
			*since = now;
	} else if (now - *since >= CG_UNKNOWN_NS) {
		cg_forget(w, id);
	}
	return NULL;
}

static void cg_dev_name(struct bw_watch *w, __u32 dev, char *out, size_t len)
{
	struct bw_watch_dev *d = bw_watch_dev(w, dev);

	if (d && d->info.name[0])
		snprintf(out, len, "%s", d->info.name);
	else
		snprintf(out, len, "%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
}

/* The series into w->cg_buf, grown until they fit; how many, or -ENOMEM. */
static int cg_read(struct bw_watch *w)
{
	int n;

	for (;;) {
		n = w->cg_cap ? bw_cgio_read(w->cg, w->cg_buf, w->cg_cap) : 0;
		if (n < w->cg_cap || w->cg_cap >= BW_CG_READ_MAX)
			return n;
		free(w->cg_buf);
		w->cg_cap = w->cg_cap ? w->cg_cap * 2 : 64;
		w->cg_buf = calloc(w->cg_cap, sizeof(*w->cg_buf));
		if (!w->cg_buf) {
			w->cg_cap = 0;
			return -ENOMEM;
		}
	}
}

int bw_watch_cgroups(struct bw_watch *w, const struct bw_cg_select *sel, struct bw_cg_rows *out)
{
	struct bw_cg_series *s;
	__u64 now = bw_now_ns();
	int i, n, m = 0;

	memset(out, 0, sizeof(*out));
	if (!w->cg)
		return 0;
	n = cg_read(w);
	if (n < 0)
		return n;
	s = w->cg_buf;
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	out->names = calloc(n ? n : 1, sizeof(*out->names));
	if (!out->rows || !out->names) {
		bw_cg_rows_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const char *path = cg_path(w, s[i].key.cgroup, now);

		if (!path)
			continue;
		out->rows[m].dev = s[i].key.dev;
		out->rows[m].op = (int)s[i].key.op;
		snprintf(out->rows[m].path, sizeof(out->rows[m].path), "%s", path);
		out->rows[m++].v = s[i].v;
	}
	out->n = bw_cg_rollup(out->rows, m, sel, &out->omitted);
	for (i = 0; i < out->n; i++)
		cg_dev_name(w, out->rows[i].dev, out->names[i], sizeof(out->names[i]));
	bw_cgio_counts(w->cg, &out->counts);
	out->hierarchy = bw_cgroups_hierarchy(&w->cg_paths);
	return 0;
}

void bw_cg_rows_free(struct bw_cg_rows *r)
{
	free(r->rows);
	free(r->names);
	memset(r, 0, sizeof(*r));
}

int bw_watch_biocache(const struct bw_watch *w, struct bw_bc_snap *s)
{
	return bw_bc_snapshot(w->bc, bw_core_env(w->core)->ncpus, s);
}

int bw_watch_refresh(struct bw_watch *w)
{
	int err = bw_core_refresh(w->core);

	err = err ?: (w->xcore ? bw_core_refresh(w->xcore) : 0);
	return err ?: (w->bio ? bw_bio_refresh(w->bio) : 0);
}

int bw_watch_start(struct bw_watch *w)
{
	int err;

	err = bw_check_privileges();
	if (err)
		return err;
	if (w->o->core.streams) {
		w->sprev = calloc(MAX_STREAMS, sizeof(*w->sprev));
		w->scur = calloc(MAX_STREAMS, sizeof(*w->scur));
		if (!w->sprev || !w->scur) {
			bw_err("out of memory");
			return -ENOMEM;
		}
	}
	open_store(w);
	err = bw_core_open(&w->core, &w->o->core);
	err = err ?: open_others(w);
	err = err ?: bw_slices_open(w);
	if (err)
		return err;
	if (w->o->core.verbose)
		print_memory(w, stderr);
	err = take(w, &w->prev);
	if (err < 0)
		return err;
	w->saved_at = w->prev.ts_ns;
	w->start_ns = w->prev.ts_ns;
	bw_cost_start(w);
	bw_watch_slices(w);
	return 0;
}

/* The S1 store's values for a device's identity, when it gets one. */
static void load_stored(struct bw_watch *w, struct bw_watch_dev *s)
{
	const struct bw_cls_rec *c = bw_s1_store_class(&w->store, s->info.id);
	const struct bw_idle_rec *v = bw_s1_store_idle(&w->store, s->info.id);

	s->has_stored = bw_s1_store_get(&w->store, s->info.id, &s->stored) > 0;
	s->has_idle = v;
	if (v)
		s->idle = *v;
	memset(s->saved_solos, 0, sizeof(s->saved_solos));
	if (c)
		bw_class_seed(&s->cls, c->cls, c->p_eff, c->learned);
}

void bw_watch_learn_class(struct bw_watch *w, __u32 dev, enum bw_class_id cls, double p_eff)
{
	struct bw_watch_dev *s = bw_watch_dev(w, dev);
	__s64 now = time(NULL);

	if (!s || !s->info.id[0] || bw_class_live(&s->cls))
		return;
	bw_class_seed(&s->cls, cls, p_eff, now);
	if (!w->o->no_state && !bw_s1_store_put_class(&w->store, s->info.id, cls, p_eff, now))
		w->dirty = true;
}

void bw_watch_drop_class(struct bw_watch *w, __u32 dev)
{
	struct bw_watch_dev *s = bw_watch_dev(w, dev);

	if (s && !bw_class_live(&s->cls))
		bw_class_seed(&s->cls, BW_CLASS_UNKNOWN, 0, 0);
}

void bw_watch_learn_idle(struct bw_watch *w, __u32 dev, __u32 idle_us, __u32 strict,
			 double gain)
{
	struct bw_watch_dev *s = bw_watch_dev(w, dev);

	if (!s || !s->info.id[0] || w->o->no_state)
		return;
	if (!bw_s1_store_put_idle(&w->store, s->info.id, idle_us, strict, gain, time(NULL)))
		w->dirty = true;
}

/* Did the device complete requests since the last snapshot (its own, none of ours yet)? */
static bool had_io(const struct bw_watch *w, const struct bw_snap_dev *d)
{
	const struct bw_snap_dev *p = bw_snap_find(&w->prev, d->dev);
	int op;

	for (op = 0; op < BW_NR_OPS; op++)
		if (d->op[op].ios != (p ? p->op[op].ios : 0))
			return true;
	return false;
}

/*
 * A device's identity: read at its appearance and kept while it is the
 * same appearance; a serial that costs a request to the device waits for
 * the device's own first I/O, so that a watcher of an idle disk makes none,
 * and is never read without the S1 store (--no-state), the only user of a
 * stable identity.
 */
static void identify(struct bw_watch *w, struct bw_watch_dev *s, const struct bw_snap_dev *d,
		     __u64 now_ns, struct bw_devinfo *di)
{
	bool io = !w->o->no_state && had_io(w, d);
	double age = (double)(now_ns - s->id_read_ns) / 1e9;

	if (s->info.identified && bw_dev_same_appearance(&s->info, di) &&
	    !bw_id_recheck_due(s->info.id_kind, age, io, s->id_doubt, di->diskseq)) {
		bw_dev_keep_identity(di, &s->info);
		return;
	}
	bw_dev_identify(di, io);
	s->id_read_ns = now_ns;
	s->id_doubt = false;
}

/*
 * A device that went: what was learned under its identity into the store,
 * then forgotten, so that whatever comes back at its dev_t is identified
 * afresh and starts with the beliefs of its own identity.
 */
static void drop_dev(struct bw_watch *w, struct bw_watch_dev *s, const struct bw_snap_dev *d)
{
	const struct bw_snap_dev *x = bw_watch_exact_dev(w, d->dev);
	int op, c;

	if (x && store_dev(w, s, x, time(NULL)))
		w->dirty = true;
	for (op = 0; op < BW_NR_OPS && x; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			s->solo_base_ios[op][c] = x->op[op].solo_ios[c];
			s->solo_base_ns[op][c] = x->op[op].solo_ns[c];
		}
	}
	memset(s->saved_solos, 0, sizeof(s->saved_solos));
	memset(&s->cls, 0, sizeof(s->cls));
	s->has_stored = false;
	s->has_idle = false;
	s->id_doubt = false;
	s->shown = false;
	s->dropped = true;
	s->moved_warned = false;
	s->row = BW_ROW_GONE;
	s->info.id[0] = '\0';
	s->info.identified = false;
	s->x_at_ns = 0;
	bw_core_forget_dev(w->core, d->dev);
	if (w->xcore)
		bw_core_forget_dev(w->xcore, d->dev);
}

/*
 * A named device gone from sysfs whose name now stands for another dev_t:
 * the BPF side keeps only the dev_t it was given, so say so, once.  Reads
 * only the name's dev file.
 */
static void check_moved(struct bw_watch_dev *s)
{
	__u32 dev;

	if (!s->named || s->moved_warned || !s->info.name[0] ||
	    bw_dev_lookup(s->info.name, &dev) || dev == s->dev)
		return;
	bw_warn("%s is back as %u:%u, not %u:%u as it was: not watched until a restart",
		s->info.name, BW_MAJOR(dev), BW_MINOR(dev), BW_MAJOR(s->dev), BW_MINOR(s->dev));
	s->moved_warned = true;
}

/*
 * What each device's row shows, from sysfs: a device with a size (and,
 * for loop, a backing file) is shown, and so is a named one that exists;
 * one that had a size and lost it (detached, removed) is "gone" for one
 * interval, then dropped until it has a size again.
 * Returns how many named devices are still there.
 */
static int refresh_devices(struct bw_watch *w, struct bw_snap *cur)
{
	struct bw_devinfo di;
	int i, alive = 0;

	for (i = 0; i < cur->nr; i++) {
		struct bw_snap_dev *d = &cur->devs[i];
		struct bw_watch_dev *s = bw_watch_dev(w, d->dev);
		bool present;

		if (!s)
			return -ENOMEM;
		if (bw_dev_probe(d->dev, &di))
			di.exists = false;
		present = bw_dev_present(&di);
		if (!present && s->shown) {
			drop_dev(w, s, d);
			bw_warn("%s: device gone; still watching the others, and for its return",
				s->info.name);
		} else if (present || (s->named && di.exists && !s->dropped)) {
			bool new_id;

			identify(w, s, d, cur->ts_ns, &di);
			new_id = strcmp(di.id, s->info.id) != 0;
			if (new_id && s->info.id[0] && di.id[0] &&
			    bw_dev_same_appearance(&s->info, &di))
				bw_warn("%s: identity %s is now %s: what was learned under the old one "
					"no longer applies", di.name, s->info.id, di.id);
			s->ds_merges = di.ds_merges_known && s->info.ds_merges_known &&
				       bw_dev_same_appearance(&s->info, &di) &&
				       di.ds_merges >= s->info.ds_merges ?
				       (__s64)(di.ds_merges - s->info.ds_merges) : -1;
			/* The kernel's busy time, for the light tier (a new appearance restarts it). */
			d->io_ticks_ms = di.ds_ticks_ms;
			d->io_ticks_known = di.ds_merges_known;
			d->appearance = di.diskseq ^ di.ino;
			d->ds = di.ds;
			d->ds_known = di.ds_merges_known;

			s->info = di;
			if (new_id) {
				memset(&s->cls, 0, sizeof(s->cls));
				load_stored(w, s);
			}
			if (s->dropped && present)
				bw_warn("%s: device back%s%s; watching it again", di.name,
					di.id[0] ? " as " : "", di.id);
			s->shown = present;
			s->dropped = false;
			s->row = BW_ROW_SHOW;
			alive += s->named;
		} else {
			s->row = BW_ROW_HIDE;
			if (!di.exists)
				check_moved(s);
		}
		snprintf(d->name, sizeof(d->name), "%s", s->info.name[0] ? s->info.name : "?");
	}
	return alive;
}

/*
 * Under a ceiling the light tier may run for a share of the time: counts,
 * bytes and merges of a light device are diskstats' throughout (exact at
 * any share, and one source for the whole run).
 */
static void counts_from_diskstats(struct bw_snap *s)
{
	int i, op;

	for (i = 0; i < s->nr; i++) {
		struct bw_snap_dev *d = &s->devs[i];

		if (!d->light || !d->ds_known)
			continue;
		d->light_ios = 0;
		for (op = 0; op < BW_NR_OPS; op++) {
			if (op == BW_OP_PASSTHROUGH)
				continue;
			d->light_ios += d->op[op].ios;
			d->op[op].ios = d->ds.ios[op];
			d->op[op].bytes = d->ds.bytes[op];
			d->op[op].merges = d->ds.merges[op];
		}
		d->counts_ds = true;
	}
}

/* One snapshot of every object's devices, epochs closed; then what sysfs says of them. */
static int take(struct bw_watch *w, struct bw_snap *s)
{
	int err;

	if (w->st)
		w->st_closed = bw_streams_epoch(w->st);
	err = bw_core_snapshot(w->core, s, bw_bio_slots(w->bio));
	if (!err && w->bio)
		err = bw_bio_snapshot(w->bio, s);

	if (err)
		return err;
	err = refresh_devices(w, s);
	if (err >= 0 && w->o->max_cpu > 0)
		counts_from_diskstats(s);
	return err;
}

static const struct bw_stream *find_stream(const struct bw_stream_snap *v, int n,
					   const struct bw_skey *k)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].key.dev == k->dev && v[i].key.id == k->id && v[i].key.by == k->by)
			return &v[i].s;
	return NULL;
}

/*
 * By cgroup, said once: where no request has carried its bio's cgroup
 * (no blkg on this kernel, or the io controller on cgroup v1), each is
 * charged to the cgroup of the task that submitted it, and a buffered
 * write to the flusher's.
 */
static void say_owner(struct bw_watch *w)
{
	__u64 bio, task;

	if (w->owner_said || w->o->core.streams_by != BW_STREAMS_CGROUP ||
	    bw_streams_owners(w->st, &bio, &task) || !(bio || task))
		return;
	w->owner_said = true;	/* decided at the first requests: read once */
	if (!bio)
		bw_warn("streams by cgroup: %s", BW_OWNER_TASK_NOTE);
}

static void sample_streams(struct bw_watch *w, __u64 now)
{
	struct bw_stream_snap *tmp;
	int i, n = w->st ? bw_streams_read(w->st, w->scur, MAX_STREAMS, now) : 0;
	struct bw_watch_stream *out = realloc(w->streams, (n ? n : 1) * sizeof(*out));

	w->nstreams = 0;
	if (!out)
		return;
	w->streams = out;
	if (n)
		say_owner(w);
	for (i = 0; i < n; i++) {
		const struct bw_stream_snap *s = &w->scur[i];
		struct bw_watch_stream *o = &w->streams[w->nstreams];

		bw_stream_compute(find_stream(w->sprev, w->nsprev, &s->key), &s->s, w->st_closed,
				  w->secs, &o->s);
		if (!o->s.ios)
			continue;
		o->s.dev = s->key.dev;
		if (s->key.by == BW_STREAMS_CGROUP) {
			o->s.by_cgroup = true;
			o->s.cgroup_id = s->key.id;
			o->s.cgroup = bw_cgroup_path(&w->cgroups, s->key.id);
		} else {
			o->s.tgid = (__u32)s->key.id;
		}
		o->dev = NULL;
		w->nstreams++;
	}
	tmp = w->sprev;
	w->sprev = w->scur;
	w->scur = tmp;
	w->nsprev = n;
}

void bw_watch_class_sample(struct bw_watch_dev *s, double p_eff, double secs)
{
	bool was_stored = s->cls.stored && s->cls.cls != BW_CLASS_UNKNOWN;

	bw_class_update(&s->cls, p_eff, secs);
	/* Live evidence dropped the stored class: is it still the device it was learned on? */
	if (was_stored && !s->cls.stored && s->cls.cls == BW_CLASS_UNKNOWN)
		s->id_doubt = true;
}

/*
 * S1 as a light interval's estimate uses it: the exact slices' solo
 * samples of this appearance where there are enough, else the store's.
 */
static const struct bw_s1_dev *s1_of(const struct bw_watch *w, const struct bw_watch_dev *s,
				     struct bw_s1_dev *buf)
{
	const struct bw_snap_dev *x = w->xcore ? bw_snap_find(&w->xprev, s->dev) : NULL;
	__u64 n, ns;
	int op, c;

	memset(buf, 0, sizeof(*buf));
	if (s->has_stored)
		*buf = s->stored;
	for (op = 0; op < BW_NR_OPS; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			if (x) {
				bw_watch_solo(s, x, op, c, &n, &ns);
			} else {	/* no exact tier: the light tier's estimate */
				n = s->lsolo_ios[op][c];
				ns = s->lsolo_ns[op][c];
			}
			if (n < bw_peff_default.min_solo)
				continue;
			buf->s[op][c].samples = n;
			buf->s[op][c].mean_ns = ns / n;
			buf->s[op][c].learned = time(NULL);
			buf->s[op][c].estimated = !x;
		}
	}
	return buf;
}

/*
 * Device s's interval from base to cur (secs long) into iv, with all the
 * watch knows of it: S1 (the store's, the slices'), its identity and, on
 * the light tier, an exact slice's figures where one was sampled within
 * the interval (never an older one: the workload may have moved since),
 * else the light tier's estimates.
 */
static void interval_of(const struct bw_watch *w, const struct bw_watch_dev *s,
			const struct bw_snap *base, const struct bw_snap *cur, __s64 now,
			struct bw_interval *iv)
{
	double secs = (cur->ts_ns - base->ts_ns) / 1e9;
	struct bw_s1_dev s1;

	bw_interval_compute(bw_snap_find(base, s->dev), bw_snap_find(cur, s->dev), secs,
			    &bw_peff_default, s1_of(w, s, &s1), now, iv);
	iv->gone = s->row == BW_ROW_GONE;
	iv->merges_diskstats = iv->gone ? -1 : s->ds_merges;
	iv->identity = iv->gone || !s->info.id[0] ? NULL : s->info.id;
	iv->identity_note = iv->gone ? NULL : bw_id_note(s->info.id_kind);
	iv->slaves = iv->gone ? NULL : s->info.slaves;
	iv->holders = iv->gone ? NULL : s->info.holders;
	iv->bio_based = s->info.bio_based;
	if (iv->bio_based)	/* bios have no physical segments counted */
		iv->seg_per_rq = NAN;
	iv->exact_share = iv->light && w->xcore ? bw_slices_share(w, cur->ts_ns) : NAN;
	if (iv->light && s->x_at_ns > base->ts_ns && s->x_at_ns <= cur->ts_ns)
		bw_interval_sampled(iv, &s->xiv, (cur->ts_ns - s->x_at_ns) / 1e9,
				    bw_slices_share(w, cur->ts_ns));
}

void bw_watch_interval(const struct bw_watch *w, const struct bw_watch_dev *s,
		       const struct bw_snap *since, struct bw_interval *iv)
{
	interval_of(w, s, since, &w->prev, time(NULL), iv);
}

int bw_watch_sample(struct bw_watch *w)
{
	struct bw_snap cur = {};
	struct bw_interval was;
	__s64 now = time(NULL);
	bool moved = false;
	double rate = 0, svc = 0;
	int alive, i;

	alive = take(w, &cur);
	if (alive < 0) {
		bw_snap_free(&cur);
		return alive;
	}
	w->secs = (cur.ts_ns - w->prev.ts_ns) / 1e9;
	for (i = 0; i < cur.nr; i++) {
		const struct bw_snap_dev *d = &cur.devs[i];
		struct bw_watch_dev *s = bw_watch_dev(w, d->dev);

		if (!s || s->row == BW_ROW_HIDE)
			continue;
		was = s->iv;
		interval_of(w, s, &w->prev, &cur, now, &s->iv);
		if (!w->xcore && s->iv.light)
			bw_interval_solo_estimate(bw_snap_find(&w->prev, d->dev), d, &s->iv,
						  s->lsolo_ios, s->lsolo_ns);
		s->inflight = d->inflight;
		bw_watch_class_sample(s, s->iv.p_eff, w->secs);
		if (s->row != BW_ROW_SHOW)
			continue;
		rate += bw_interval_rate(&s->iv);
		if (s->iv.svc_mean_ms > svc)
			svc = s->iv.svc_mean_ms;
		moved |= bw_workload_moved(&was, &s->iv);
	}
	bw_slices_interval(w, rate, svc, moved);
	bw_cost_interval(w);
	if (w->o->core.streams)
		sample_streams(w, cur.ts_ns);
	/* After every bw_watch_dev() of this sample: the array no longer moves. */
	for (i = 0; i < w->nstreams; i++)
		w->streams[i].dev = bw_watch_dev(w, w->streams[i].s.dev);
	bw_snap_free(&w->prev);
	w->prev = cur;
	if (w->prev.ts_ns - w->saved_at >= S1_SAVE_EVERY_NS)
		bw_watch_save(w);
	return alive;
}

/* The device's live class and S1 into the store (not its file); how many records changed. */
static int store_dev(struct bw_watch *w, struct bw_watch_dev *s, const struct bw_snap_dev *d,
		     __s64 now)
{
	int op, c, put = 0;

	if (w->o->no_state || !s->info.id[0])
		return 0;
	if (bw_class_live(&s->cls)) {
		const struct bw_cls_rec *r = bw_s1_store_class(&w->store, s->info.id);

		if ((!r || r->cls != s->cls.cls) &&
		    !bw_s1_store_put_class(&w->store, s->info.id, s->cls.cls, s->cls.median, now))
			put++;
	}
	for (op = 0; op < BW_NR_OPS; op++) {
		for (c = 0; c < BW_SIZE_CLASSES; c++) {
			struct bw_s1 v = { .learned = now };
			__u64 n, ns;

			bw_watch_solo(s, d, op, c, &n, &ns);
			if (n < bw_peff_default.min_solo || n == s->saved_solos[op][c])
				continue;
			v.samples = n;
			v.mean_ns = ns / n;
			if (!bw_s1_store_put(&w->store, s->info.id, op, c, &v)) {
				s->saved_solos[op][c] = n;
				put++;
			}
		}
	}
	return put;
}

/* Learned S1 of the devices shown, into the store and its file. */
void bw_watch_save(struct bw_watch *w)
{
	const struct bw_snap *cur = &w->prev;
	__s64 now = time(NULL);
	int i, err, put = 0;

	w->saved_at = cur->ts_ns;
	if (w->o->no_state)
		return;
	for (i = 0; i < cur->nr; i++) {
		const struct bw_snap_dev *d = &cur->devs[i];
		const struct bw_snap_dev *x = bw_watch_exact_dev(w, d->dev);
		struct bw_watch_dev *s = bw_watch_dev(w, d->dev);

		if (s && s->shown && x)
			put += store_dev(w, s, x, now);
	}
	if (!put && !w->dirty)	/* nothing new learned: leave the file alone */
		return;
	w->dirty = false;
	err = bw_s1_save(w->o->state_dir, &w->store);
	if (err && !w->store_warned) {
		bw_warn("cannot write the S1 store in %s: %s; going on without saving "
			"(--state-dir DIR to choose another, --no-state to stop trying)",
			w->o->state_dir, strerror(-err));
		w->store_warned = true;
	}
}

static int cmp_name(const void *a, const void *b)
{
	const struct bw_watch_dev *x = *(const struct bw_watch_dev *const *)a;
	const struct bw_watch_dev *y = *(const struct bw_watch_dev *const *)b;

	return strcmp(x->info.name, y->info.name);
}

int bw_watch_rows(struct bw_watch *w, struct bw_watch_dev **out)
{
	int i, n = 0;

	for (i = 0; i < w->ndevs; i++)
		if (w->devs[i].row != BW_ROW_HIDE && bw_snap_find(&w->prev, w->devs[i].dev))
			out[n++] = &w->devs[i];
	qsort(out, n, sizeof(out[0]), cmp_name);
	return n;
}

int bw_watch_ndevs(const struct bw_watch *w)
{
	return w->ndevs;
}

const struct bw_watch_dev *bw_watch_dev_at(const struct bw_watch *w, int i)
{
	return &w->devs[i];
}

const struct bw_snap *bw_watch_snapshot(const struct bw_watch *w)
{
	return &w->prev;
}

const struct bw_cost_state *bw_watch_cost(const struct bw_watch *w)
{
	return &w->cost;
}

const char *bw_watch_attach_mode(const struct bw_watch *w)
{
	return bw_core_attach_mode(w->core);
}

const char *bw_watch_tier_text(const struct bw_watch *w, char *buf, size_t len)
{
	if (!bw_core_light(w->core))
		return "exact tier";
	if (!w->xcore)
		return "light tier";
	if (w->o->exact_slice_s > 0)
		snprintf(buf, len, "light tier, exact slices of %g s every %g s",
			 w->o->exact_slice_s, w->o->exact_period_s);
	else
		snprintf(buf, len, "light tier, exact slices every %g s, %g%% of a CPU",
			 w->o->exact_period_s, w->o->exact_budget * 100);
	return buf;
}

double bw_watch_secs(const struct bw_watch *w)
{
	return w->secs;
}

const struct bw_watch_stream *bw_watch_streams(const struct bw_watch *w, int *n)
{
	*n = w->nstreams;
	return w->streams;
}

void bw_watch_close(struct bw_watch *w)
{
	bw_cost_close(w);
	bw_streams_close(w->st);
	bw_bio_close(w->bio);
	bw_bc_close(w->bc);
	bw_cgio_close(w->cg);
	bw_core_close(w->xcore);
	bw_core_close(w->core);
	bw_snap_free(&w->prev);
	bw_snap_free(&w->xprev);
	bw_s1_store_free(&w->store);
	free(w->devs);
	free(w->sprev);
	free(w->scur);
	free(w->streams);
	bw_cgroups_free(&w->cgroups);
	bw_cgroups_free(&w->cg_paths);
	free(w->cg_ids);
	free(w->cg_buf);
	memset(w, 0, sizeof(*w));
}
