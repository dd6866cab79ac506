// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of the per-device tiers: bpf/light.bpf.c (the default: one
 * completion program, the kernel's stamps) or bpf/core.bpf.c (the exact
 * tier: issue and completion, the in-flight word).  Both count into the
 * same maps (bpf/devmaps.bpf.h, bpf/slot.bpf.h), so one loader sizes them
 * from the devices present, picks tp_btf or raw_tp per tracepoint from
 * BTF, loads, attaches, and reads the maps back into one bw_snap per call.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "load/loader.h"
#include "core.skel.h"
#include "light.skel.h"
#include "streams.h"
#include "stall.h"

/* Requests one device may have live at once, as the table is sized (docs/design.md). */
#define BW_LIVE_CAP 4096
#define BW_RQ_TABLE_MAX (1u << 20)

struct bw_core {
	struct core_bpf *skel;		/* the exact tier, or */
	struct light_bpf *lskel;	/* the light tier */
	bool light;
	struct bpf_object *obj;		/* the one loaded */
	struct bpf_map *pcpu_map, *shared_map, *dev2slot_map, *qmap_map, *rqs_map;
	__u32 *next_slot;		/* in its bss */
	__u64 *claim_races, *qmap_evictions, *slot_overflow;
	struct bpf_link *issue_link;	/* light: the issue program, for a fallback or a timing slice */
	struct bpf_link *q_link;	/* light: the Q program, for a timing slice */
	bool fallback_on;		/* light: a device needs the issue program */
	int sampling;			/* light: the timing slice's state (BW_SAMPLING_*) */
	struct bw_dev_xpcpu *xbuf;	/* light: ncpus values of xpcpu, for one lookup */
	struct bw_op_stats **xhist;	/* light: per slot, xpcpu's histograms extended */
	__u64 fallback_devs;		/* light: slots timed by it (bit per slot, the first 64) */
	int ncpus;
	__u32 max_slots;
	__u32 rq_entries;		/* per-request table, all devices */
	bool have_fetch;
	bool raw_tp;
	bool verbose;
	bool slice_dirty;		/* sampler: the last slice left requests in flight */
	bool light_off;			/* light: its programs detached for a share of the time */
	int nr_watch;
	__u32 watch[BW_MAX_WATCH];
	struct bw_dev_pcpu *pcpu_buf;	/* ncpus values, for one lookup */
	struct bw_dev_shared *sh;	/* the mmap of the shared map */
	size_t sh_len;
	__u64 *healed;			/* per slot: lost completions healed here */
	__u64 *last_word;		/* per slot: the word at the previous snapshot */
	struct bw_op_stats **hist;	/* per slot: histograms extended to 64 bits */
	struct bw_rq_state *rq_buf;	/* rq_entries, for one pass over the table */
	__u32 *rq_keys;
	struct bw_load_env env;		/* the kernel, and the maps the other objects share */
};

static __u32 roundup_bits(__u64 v)
{
	__u32 b = 0;

	while ((1ULL << b) < v)
		b++;
	return b;
}

/*
 * Requests a disk can have live at once: its hw queues times the tags of
 * each (nr_requests, the scheduler's depth where there is one, as big as
 * the driver's or bigger), capped: a table holding every tag of a 64-queue
 * NVMe drive would be mostly empty.
 */
static __u64 live_requests(const char *disk)
{
	__u64 tags = 128, live;
	int hwqs = bw_disk_hw_queues(disk);

	if (hwqs < 0)
		return 0;	/* bio-based: no requests */
	bw_read_sysfs_u64(disk, "queue/nr_requests", &tags);
	live = tags * (hwqs ? hwqs : 1);
	return live < BW_LIVE_CAP ? live : BW_LIVE_CAP;
}

static void add_live(const char *disk, void *arg)
{
	*(__u64 *)arg += live_requests(disk);
}

/*
 * Entries of the per-request table: twice what the disks (the watched
 * ones, or all) can have live, so open addressing stays short, with room
 * for devices that appear later.
 */
static __u32 size_rq_table(const struct bw_core *c)
{
	__u64 live = 0, want;
	int i;

	if (c->nr_watch) {
		for (i = 0; i < c->nr_watch; i++) {
			struct bw_devinfo di;

			if (bw_dev_probe(c->watch[i], &di))
				continue;
			if (di.partition && bw_dev_probe(di.disk, &di))
				continue;
			live += live_requests(di.name);
		}
	} else {
		bw_disks_walk(add_live, &live);
	}
	want = 1ULL << roundup_bits(2 * live);
	if (want < 4096)
		want = 4096;
	return want < BW_RQ_TABLE_MAX ? want : BW_RQ_TABLE_MAX;
}

/* Four copies of each program (bpf/core.bpf.c): keep the one for this kernel. */
#define PICK(name) pick4(s->progs.name, s->progs.name##_raw, s->progs.name##_nf,	\
			 s->progs.name##_raw_nf, btf_ok, c->have_fetch)

static void pick4(struct bpf_program *btf_f, struct bpf_program *raw_f, struct bpf_program *btf_nf,
		  struct bpf_program *raw_nf, bool btf_ok, bool fetch)
{
	bpf_program__set_autoload(btf_f, btf_ok && fetch);
	bpf_program__set_autoload(raw_f, !btf_ok && fetch);
	bpf_program__set_autoload(btf_nf, btf_ok && !fetch);
	bpf_program__set_autoload(raw_nf, !btf_ok && !fetch);
}

#define PICK_L(name) pick4(s->progs.name, s->progs.name##_raw, s->progs.name##_nf,	\
			   s->progs.name##_raw_nf, btf_ok, c->have_fetch)

/* The light tier's: the issue program is loaded, attached only when a device needs it. */
static void pick_light_programs(struct bw_core *c, const struct btf *btf)
{
	struct light_bpf *s = c->lskel;
	bool btf_ok = !c->raw_tp;

	PICK_L(bw_light_complete);
	PICK_L(bw_light_issue);
	PICK_L(bw_light_requeue);
	PICK_L(bw_light_rq_merge);
	PICK_L(bw_light_backmerge);
	PICK_L(bw_light_frontmerge);
	/* Q, for timing slices where the kernel's stamps are a plug's (6.9+; block_io_start 6.5+). */
	bpf_program__set_autoload(s->progs.bw_light_io_start, btf_ok && c->env.plug_clock &&
				  c->env.has_io_start && c->have_fetch);
	bpf_program__set_autoload(s->progs.bw_light_io_start_raw, !btf_ok && c->env.plug_clock &&
				  c->env.has_io_start && c->have_fetch);
	bpf_program__set_autoload(s->progs.bw_light_io_start_nf, false);
	bpf_program__set_autoload(s->progs.bw_light_io_start_raw_nf, false);
	bpf_program__set_autoattach(s->progs.bw_light_io_start, false);
	bpf_program__set_autoattach(s->progs.bw_light_io_start_raw, false);
	bpf_program__set_autoattach(s->progs.bw_light_issue, false);
	bpf_program__set_autoattach(s->progs.bw_light_issue_raw, false);
	bpf_program__set_autoattach(s->progs.bw_light_issue_nf, false);
	bpf_program__set_autoattach(s->progs.bw_light_issue_raw_nf, false);
	s->rodata->rq_arg_second = c->env.rq_arg_second;
	s->rodata->bio_merge_arg = bw_tp_nargs(btf, "block_bio_backmerge") == 3 ? 2 : 0;
}

static void pick_programs(struct bw_core *c, const struct btf *btf, bool streams)
{
	struct core_bpf *s = c->skel;
	bool btf_ok = !c->raw_tp;
	/*
	 * Queue time from Q's own clock wherever block_io_start exists (6.5+;
	 * bpf/complete.h, bw_q_origin): the streams' Q reads it, else the
	 * core's own (bpf/core.bpf.c, on_io_start).
	 */
	bool q_clock = c->env.has_io_start && c->have_fetch;
	bool q = q_clock && !streams;

	PICK(bw_issue);
	PICK(bw_complete);
	PICK(bw_requeue);
	PICK(bw_rq_merge);
	PICK(bw_insert);
	PICK(bw_backmerge);
	PICK(bw_frontmerge);
	bpf_program__set_autoload(s->progs.bw_io_start, btf_ok && q);
	bpf_program__set_autoload(s->progs.bw_io_start_raw, !btf_ok && q);
	bpf_program__set_autoload(s->progs.bw_io_start_nf, false);
	bpf_program__set_autoload(s->progs.bw_io_start_raw_nf, false);
	s->rodata->qtime_on = q;
	s->rodata->q_clock = q_clock;
	/* The pre-5.11 (q, rq) request tracepoints (bw_load_env_probe). */
	s->rodata->rq_arg_second = c->env.rq_arg_second;
	/*
	 * The bio merge tracepoints were (q, rq, bio) until 5.11 ("block:
	 * simplify and extend the block_bio_merge tracepoint class"), (bio)
	 * since: ask BTF here too.
	 */
	s->rodata->bio_merge_arg = bw_tp_nargs(btf, "block_bio_backmerge") == 3 ? 2 : 0;
}

/* Map bytes for a host of ncpus watching slots devices (the model in print_memory). */
static __u64 map_bytes(__u64 ncpus, __u64 slots, __u64 rq_entries)
{
	return (1 << BW_QMAP_BITS) * sizeof(struct bw_qmap) +
	       slots * (sizeof(struct bw_dev_shared) + ncpus * sizeof(struct bw_dev_pcpu) +
			2 * sizeof(__u32) + 64) +	/* dev2slot, with the hash's overhead */
	       rq_entries * sizeof(struct bw_rq_state);
}

/*
 * Slots for devices that appear after start: 16, or as many as fit in
 * 2 MiB of per-CPU maps, since on a many-CPU host each slot costs more.
 */
static __u32 spare_slots(int ncpus)
{
	__u64 fit = (2ULL << 20) / ((__u64)ncpus * sizeof(struct bw_dev_pcpu));

	return fit < 16 ? (fit ? fit : 1) : 16;
}

/* The maps both tiers share, by the loaded object's names. */
static void bind_maps(struct bw_core *c)
{
	if (c->light) {
		struct light_bpf *s = c->lskel;

		c->obj = s->obj;
		c->pcpu_map = s->maps.pcpu;
		c->shared_map = s->maps.shared;
		c->dev2slot_map = s->maps.dev2slot;
		c->qmap_map = s->maps.qmap;
		c->rqs_map = s->maps.rqs;
		c->next_slot = &s->bss->next_slot;
		c->claim_races = &s->bss->claim_races;
		c->qmap_evictions = &s->bss->qmap_evictions;
		c->slot_overflow = &s->bss->slot_overflow;
		return;
	}
	c->obj = c->skel->obj;
	c->pcpu_map = c->skel->maps.pcpu;
	c->shared_map = c->skel->maps.shared;
	c->dev2slot_map = c->skel->maps.dev2slot;
	c->qmap_map = c->skel->maps.qmap;
	c->rqs_map = c->skel->maps.rqs;
	c->next_slot = &c->skel->bss->next_slot;
	c->claim_races = &c->skel->bss->claim_races;
	c->qmap_evictions = &c->skel->bss->qmap_evictions;
	c->slot_overflow = &c->skel->bss->slot_overflow;
}

static void size_slots(struct bw_core *c, const struct bw_core_opts *o)
{
	if (o->max_devices > 0)
		c->max_slots = o->max_devices > o->nr_watch ? o->max_devices : o->nr_watch;
	else if (o->nr_watch > 0)
		c->max_slots = o->nr_watch;
	else
		c->max_slots = bw_count_disks() + spare_slots(c->ncpus);
	if (c->max_slots > BW_MAX_SLOTS)
		c->max_slots = BW_MAX_SLOTS;
	c->rq_entries = size_rq_table(c);
}

static int size_common(struct bw_core *c)
{
	int err;

	err = bpf_map__set_max_entries(c->shared_map, c->max_slots);
	err = err ?: bpf_map__set_max_entries(c->pcpu_map, c->max_slots);
	err = err ?: bpf_map__set_max_entries(c->dev2slot_map, c->max_slots);
	return err ?: bpf_map__set_max_entries(c->rqs_map, c->rq_entries);
}

static int size_light(struct bw_core *c, const struct bw_core_opts *o)
{
	struct light_bpf *s = c->lskel;

	size_slots(c, o);
	s->rodata->rq_hash_bits = roundup_bits(c->rq_entries);
	s->rodata->max_slots = c->max_slots;
	s->rodata->filter_on = o->nr_watch > 0;
	s->rodata->skip = bw_bench_skip();
	return size_common(c) ?: bpf_map__set_max_entries(s->maps.xpcpu, c->max_slots);
}

static int size_maps(struct bw_core *c, const struct bw_core_opts *o)
{
	struct core_bpf *s = c->skel;
	int err;

	size_slots(c, o);
	s->rodata->rq_hash_bits = roundup_bits(c->rq_entries);
	s->rodata->max_slots = c->max_slots;
	s->rodata->filter_on = o->nr_watch > 0;
	s->rodata->skip = bw_bench_skip();
	err = size_common(c);
	err = err ?: bpf_map__set_max_entries(s->maps.stalls, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.waits, c->rq_entries);
	/* The streams' maps, which the streams object reuses; one entry without. */
	s->rodata->streams_on = o->streams;
	s->rodata->stream_by = o->streams_by;
	err = err ?: bpf_map__set_max_entries(s->maps.streams, o->streams ? 4096 : 1);
	/* A sampler beside the light tier takes its clock at C (bpf/handoff.bpf.h). */
	if (o->sampler && o->handoff_fd > 0) {
		s->rodata->handoff_on = true;
		err = err ?: bpf_map__reuse_fd(s->maps.handoff, o->handoff_fd);
	}
	return err;
}

/*
 * Give every device we know of its slot before attaching, so the BPF side
 * only ever looks slots up; devices appearing later get theirs in BPF.
 */
static int fill_slots(struct bw_core *c)
{
	int dfd = bpf_map__fd(c->dev2slot_map);
	int sfd = bpf_map__fd(c->shared_map);
	__u32 devs[BW_MAX_WATCH];
	int n, err;

	n = bw_watched_or_all(c->nr_watch, c->watch, devs, BW_MAX_WATCH);
	if ((__u32)n > c->max_slots)
		n = c->max_slots;
	err = bw_fill_dev_slots(dfd, sfd, devs, n);
	if (!err)
		*c->next_slot = n;
	return err;
}

static int map_shared(struct bw_core *c)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	c->sh_len = (c->max_slots * sizeof(struct bw_dev_shared) + page - 1) / page * page;
	p = mmap(NULL, c->sh_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->shared_map), 0);
	if (p == MAP_FAILED) {
		bw_err("mapping the BPF map 'shared': %s", strerror(errno));
		return -errno;
	}
	c->sh = p;
	c->healed = calloc(c->max_slots, sizeof(*c->healed));
	c->last_word = calloc(c->max_slots, sizeof(*c->last_word));
	c->hist = calloc(c->max_slots, sizeof(*c->hist));
	return c->healed && c->last_word && c->hist ? 0 : -ENOMEM;
}

int bw_core_open(struct bw_core **out, const struct bw_core_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct btf *btf = NULL;
	struct bw_core *c;
	int err;

	bw_libbpf_setup(o->verbose);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->verbose = o->verbose;
	c->nr_watch = o->nr_watch;
	memcpy(c->watch, o->watch, sizeof(c->watch));
	err = bw_kernel_btf(o->btf_path, &btf);
	err = err ?: bw_load_env_probe(&c->env, btf, o->force_raw_tp);
	if (err)
		goto fail;
	c->ncpus = c->env.ncpus;
	c->have_fetch = c->env.have_fetch;
	c->raw_tp = c->env.raw_tp;
	c->pcpu_buf = calloc(c->ncpus, sizeof(*c->pcpu_buf));
	if (!c->pcpu_buf) {
		err = -ENOMEM;
		goto fail;
	}
	/* Streams take requests out of their streams at the exact tier's C. */
	c->light = !o->exact && !o->streams;
	if (c->light)
		c->lskel = light_bpf__open_opts(&oo);
	else
		c->skel = core_bpf__open_opts(&oo);
	if (c->light ? !c->lskel : !c->skel) {
		err = -errno;
		bw_err("opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	bind_maps(c);
	if (c->light)
		pick_light_programs(c, btf);
	else
		pick_programs(c, btf, o->streams);
	/* Two copies of the kernel's BTF (ours, libbpf's) would double the start-up peak. */
	btf__free(btf);
	btf = NULL;
	err = c->light ? size_light(c, o) : size_maps(c, o);
	if (err) {
		bw_err("sizing BPF maps: %s", strerror(-err));
		goto fail;
	}
	err = c->light ? light_bpf__load(c->lskel) : core_bpf__load(c->skel);
	if (err) {
		bw_explain_load_error(err);
		goto fail;
	}
	c->env.rqs_fd = bpf_map__fd(c->rqs_map);
	c->env.streams_fd = c->light ? -1 : bpf_map__fd(c->skel->maps.streams);
	c->env.scount_fd = c->light ? -1 : bpf_map__fd(c->skel->maps.scount);
	c->env.handoff_fd = c->light ? bpf_map__fd(c->lskel->maps.handoff) : -1;
	c->env.rq_hash_bits = roundup_bits(c->rq_entries);
	err = map_shared(c);
	err = err ?: fill_slots(c);
	if (err)
		goto fail;
	if (o->sampler && !c->light) {
		*out = c;
		return 0;
	}
	err = c->light ? light_bpf__attach(c->lskel) : core_bpf__attach(c->skel);
	if (err) {
		bw_err("attaching to block tracepoints: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	btf__free(btf);
	bw_core_close(c);
	return err < 0 ? err : -EINVAL;
}

void bw_core_close(struct bw_core *c)
{
	__u32 i;

	if (!c)
		return;
	if (c->sh)
		munmap(c->sh, c->sh_len);
	bpf_link__destroy(c->issue_link);
	bpf_link__destroy(c->q_link);
	core_bpf__destroy(c->skel);
	light_bpf__destroy(c->lskel);
	free(c->healed);
	free(c->rq_buf);
	free(c->rq_keys);
	free(c->last_word);
	for (i = 0; c->hist && i < c->max_slots; i++)
		free(c->hist[i]);
	free(c->hist);
	for (i = 0; c->xhist && i < c->max_slots; i++)
		free(c->xhist[i]);
	free(c->xhist);
	free(c->xbuf);
	free(c->pcpu_buf);
	free(c);
}

bool bw_core_light(const struct bw_core *c)
{
	return c->light;
}

const char *bw_core_attach_mode(const struct bw_core *c)
{
	return c->raw_tp ? "raw_tp" : "tp_btf";
}

const struct bw_load_env *bw_core_env(const struct bw_core *c)
{
	return &c->env;
}

struct bpf_object *bw_core_obj(const struct bw_core *c)
{
	return c->obj;
}

/* Requests the kernel has in flight on a device, from sysfs; -1 if unknown. */
static long long kernel_inflight(__u32 dev)
{
	unsigned long long r, w;
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/inflight", dev >> 20, dev & 0xfffff);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu", &r, &w) == 2;
	fclose(f);
	return ok ? (long long)(r + w) : -1;
}

/* Forget the issue times a slot's device left in the per-request table. */
static void clear_rq_states(struct bw_core *c, __u32 slot)
{
	int fd = bpf_map__fd(c->skel->maps.rqs);
	struct bw_rq_state st, zero = {};
	__u32 i;

	for (i = 0; i < c->rq_entries; i++) {
		if (bpf_map_lookup_elem(fd, &i, &st) || !st.rq || st.d <= BW_RQ_D_LOST ||
		    bw_rq_slot(st.d) != slot)
			continue;
		/* A request in a stream stays queued in it (bpf/rqtab.bpf.h): only its D goes. */
		if (st.q_ts) {
			st.d = BW_RQ_D_NONE;
			bpf_map_update_elem(fd, &i, &st, BPF_ANY);
		} else {
			bpf_map_update_elem(fd, &i, &zero, BPF_ANY);
		}
	}
}

/*
 * A completion BPF never saw leaves a request counted in flight until its
 * request is issued again; on a device that then goes idle that would be
 * forever, and the device would look busy.  When nothing at all happened
 * on the device for a whole interval (the word did not move) and the
 * kernel has nothing in flight, what is left is such a ghost: clear it.
 */
static void heal_slot(struct bw_core *c, __u32 slot)
{
	__u64 *word = &c->sh[slot].word;
	__u64 w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
	__u64 last = c->last_word[slot];

	c->last_word[slot] = w;
	if (!(w & BW_INFLIGHT_MASK) || w != last || !c->sh[slot].dev)
		return;
	if (kernel_inflight((__u32)c->sh[slot].dev) != 0)
		return;
	if (!__atomic_compare_exchange_n(word, &w, w & ~BW_INFLIGHT_MASK, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	c->healed[slot] += w & BW_INFLIGHT_MASK;
	c->last_word[slot] = w & ~BW_INFLIGHT_MASK;
	clear_rq_states(c, slot);
}

/* The values of an array map's entries into buf (keys: room for as many), in batches where the kernel has them. */
static void read_array(int fd, __u32 entries, size_t vsz, void *buf, __u32 *keys)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 i, n, done = 0, in = 0, out;
	bool first = true;
	int err;

	while (done < entries) {
		n = entries - done;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys + done,
					   (char *)buf + done * vsz, &n, &opts);
		done += n;
		if (err && errno == ENOENT)
			return;
		if (err)
			break;
		in = out;
		first = false;
	}
	if (done >= entries)
		return;
	for (i = 0; i < entries; i++)	/* no batch operations: one by one */
		if (bpf_map_lookup_elem(fd, &i, (char *)buf + i * vsz))
			memset((char *)buf + i * vsz, 0, vsz);
}

static int rq_bufs(struct bw_core *c)
{
	if (!c->rq_buf) {
		c->rq_buf = calloc(c->rq_entries, sizeof(*c->rq_buf));
		c->rq_keys = calloc(c->rq_entries, sizeof(*c->rq_keys));
	}
	return c->rq_buf && c->rq_keys ? 0 : -ENOMEM;
}

/* The table into c->rq_buf; entries read, or -errno. */
static long read_rq_table(struct bw_core *c)
{
	if (rq_bufs(c))
		return -ENOMEM;
	read_array(bpf_map__fd(c->skel->maps.rqs), c->rq_entries, sizeof(*c->rq_buf),
		   c->rq_buf, c->rq_keys);
	return c->rq_entries;
}

/*
 * Each slot's requests in flight: their time since issue at now, summed
 * into area[slot] (what metrics.c's bw_flight_area credits to the interval
 * it was spent in).  One pass over the table, only when something is in
 * flight.
 */
static void open_areas(struct bw_core *c, __u64 now, __u32 nslots, __u64 *area)
{
	long i, n;
	__u32 slot;
	__u64 age;

	for (slot = 0; slot < nslots; slot++)
		if (c->sh[slot].word & BW_INFLIGHT_MASK)
			break;
	if (slot == nslots)
		return;
	n = read_rq_table(c);
	for (i = 0; i < n; i++) {
		const struct bw_rq_state *st = &c->rq_buf[i];

		/* Free, or queued in a stream and not issued yet: not in flight. */
		if (!st->rq || st->d <= BW_RQ_D_LOST)
			continue;
		slot = bw_rq_slot(st->d);
		if (slot >= nslots)
			continue;
		age = (now - st->d) & BW_RQ_TS_MASK;
		if (age <= BW_RQ_TS_MASK / 2)	/* else issued after now */
			area[slot] += age;
	}
}

/* A slot's dispatch stalls (bpf/stall.h), with the episode open at now. */
static void read_stall(struct bw_core *c, __u32 slot, __u64 now, struct bw_snap_dev *d)
{
	struct bw_stall st;

	d->stall_unknown = !c->have_fetch;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stalls), &slot, &st))
		return;
	d->stall_ns += st.ns;
	d->stalls += st.episodes;
	if (st.start && now > st.start)
		d->stall_ns += now - st.start;
}

/* The light tier's copy of a program for this kernel (tp_btf or raw_tp, with or without fetch). */
static struct bpf_program *light_prog(const struct bw_core *c, struct bpf_program *btf_f,
				      struct bpf_program *raw_f, struct bpf_program *btf_nf,
				      struct bpf_program *raw_nf)
{
	if (c->raw_tp)
		return c->have_fetch ? raw_f : raw_nf;
	return c->have_fetch ? btf_f : btf_nf;
}

#define LIGHT_PROG(c, name) light_prog(c, (c)->lskel->progs.name, (c)->lskel->progs.name##_raw, \
				       (c)->lskel->progs.name##_nf, (c)->lskel->progs.name##_raw_nf)

/* The light tier's issue program attached while a fallback or a timing slice needs it. */
static int light_issue(struct bw_core *c)
{
	bool want = c->fallback_on || c->sampling == BW_SAMPLING_ON;

	if (want && !c->issue_link) {
		c->issue_link = bpf_program__attach(LIGHT_PROG(c, bw_light_issue));
		if (!c->issue_link)
			return -errno;
	} else if (!want && c->issue_link) {
		bpf_link__destroy(c->issue_link);
		c->issue_link = NULL;
	}
	return 0;
}

/*
 * Light tier: a device whose completions came without the kernel's issue
 * stamp (its queue keeps no statistics) is timed from now on by the issue
 * program, attached at the first such device and said once.
 */
static void light_fallback(struct bw_core *c, __u32 slot, struct bw_snap_dev *d)
{
	long long inflight = kernel_inflight(d->dev);
	int err;

	d->light = true;
	d->plug_clock = c->env.plug_clock;
	/* No in-flight word: what the kernel has in flight, for what a count has yet to see. */
	if (inflight > 0)
		d->inflight = inflight;
	d->fallback = c->sh[slot].fallback;
	if (!d->nostamp || c->sh[slot].fallback)
		return;
	d->fallback = 1;	/* from this interval on, whatever follows */
	c->fallback_on = true;
	err = light_issue(c);
	if (err) {
		c->fallback_on = false;
		bw_warn("device %u:%u has no issue stamps and the issue program did not attach (%s): "
			"its completions are counted as unmatched; use --exact",
			d->dev >> 20, d->dev & 0xfffff, strerror(-err));
		c->sh[slot].fallback = 2;	/* tried: not again */
		return;
	}
	__atomic_store_n(&c->sh[slot].fallback, 1, __ATOMIC_RELEASE);
	if (c->verbose)
		fprintf(stderr, "blkwise: device %u:%u: its queue keeps no issue stamp "
			"(rq->io_start_time_ns is 0): timed by the issue program from now on "
			"(timing_source issue_fallback)\n", d->dev >> 20, d->dev & 0xfffff);
}

bool bw_core_can_sample(const struct bw_core *c)
{
	return c->light && bpf_program__fd(LIGHT_PROG(c, bw_light_io_start)) >= 0;
}

int bw_core_sampling(struct bw_core *c, int state)
{
	int err = 0;

	if (!bw_core_can_sample(c))
		return -EOPNOTSUPP;
	/* Attached, off, before a slice; on; draining; off, then detached. */
	if (state == BW_SAMPLING_ARM) {
		c->sampling = BW_SAMPLING_ON;	/* the issue program wanted attached */
		if (!c->q_link) {
			c->q_link = bpf_program__attach(LIGHT_PROG(c, bw_light_io_start));
			if (!c->q_link)
				return -errno;
		}
		return light_issue(c);
	}
	__atomic_store_n(&c->lskel->bss->sampling, state, __ATOMIC_RELEASE);
	if (state != BW_SAMPLING_OFF)
		return 0;
	c->sampling = state;
	bpf_link__destroy(c->q_link);
	c->q_link = NULL;
	err = light_issue(c);
	return err;
}

int bw_core_light_attach(struct bw_core *c, bool on)
{
	int err = 0;

	if (!c->light || on == !c->light_off)
		return 0;
	if (on)
		err = light_bpf__attach(c->lskel);
	else
		light_bpf__detach(c->lskel);
	if (!err)
		c->light_off = !on;
	return err;
}

void bw_core_handoff(struct bw_core *c, bool on)
{
	if (c->light)
		__atomic_store_n(&c->lskel->bss->handoff_on, on, __ATOMIC_RELEASE);
}

__u64 bw_core_sampled_out(struct bw_core *c)
{
	__u64 claimed = 0, freed = 0;
	__u32 slot, nslots = *c->next_slot;
	int cpu, fd;

	if (!c->light || !c->xbuf)
		return 0;
	fd = bpf_map__fd(c->lskel->maps.xpcpu);
	for (slot = 0; slot < nslots && slot < c->max_slots; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, c->xbuf))
			continue;
		for (cpu = 0; cpu < c->ncpus; cpu++) {
			claimed += c->xbuf[cpu].claimed;
			freed += c->xbuf[cpu].freed;
		}
	}
	return claimed > freed ? claimed - freed : 0;
}

/* The light tier's own timed requests of a slot into d's xop. */
static int light_timed(struct bw_core *c, __u32 slot, struct bw_snap_dev *d)
{
	if (!bw_core_can_sample(c))
		return 0;
	if (!c->xbuf)
		c->xbuf = calloc(c->ncpus, sizeof(*c->xbuf));
	if (!c->xhist)
		c->xhist = calloc(c->max_slots, sizeof(*c->xhist));
	if (c->xhist && !c->xhist[slot])
		c->xhist[slot] = calloc(BW_NR_OPS, sizeof(*c->xhist[slot]));
	if (!c->xbuf || !c->xhist || !c->xhist[slot])
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(c->lskel->maps.xpcpu), &slot, c->xbuf))
		return -errno;
	bw_xtime_add(d->xop, c->xbuf, c->ncpus, c->xhist[slot]);
	d->x_timed = true;
	return 0;
}

int bw_core_snapshot(struct bw_core *c, struct bw_snap *s, int extra)
{
	int pcpu_fd = bpf_map__fd(c->pcpu_map);
	int cap = c->max_slots + c->nr_watch + extra;
	__u32 slot, nslots;
	__u64 closed = 0, *area;
	int i, err = 0;

	s->devs = calloc(cap, sizeof(*s->devs));
	if (!s->devs)
		return -ENOMEM;
	s->nr = 0;
	s->cap = cap;
	for (i = 0; i < c->nr_watch; i++)
		bw_snap_dev_get(s, c->watch[i], cap);
	/* Close the max-depth epoch first, so what we read is final for it. */
	if (!c->light) {
		closed = c->skel->bss->epoch;
		__atomic_store_n(&c->skel->bss->epoch, closed + 1, __ATOMIC_SEQ_CST);
	}
	nslots = *c->next_slot;
	if (nslots > c->max_slots)
		nslots = c->max_slots;
	area = calloc(nslots ? nslots : 1, sizeof(*area));
	if (!area)
		return -ENOMEM;
	for (slot = 0; slot < nslots && !c->light; slot++)
		heal_slot(c, slot);
	s->ts_ns = bw_now_ns();
	if (!c->light)
		open_areas(c, s->ts_ns, nslots, area);
	for (slot = 0; slot < nslots; slot++) {
		struct bw_dev_shared sh;
		struct bw_snap_dev *d;

		memcpy(&sh, &c->sh[slot], sizeof(sh));
		if (bpf_map_lookup_elem(pcpu_fd, &slot, c->pcpu_buf)) {
			err = -errno;
			bw_err("reading BPF map slot %u: %s", slot, strerror(errno));
			goto out;
		}
		if (!sh.dev)	/* claimed but not yet published */
			continue;
		d = bw_snap_dev_get(s, (__u32)sh.dev, cap);
		if (!d)
			continue;
		if (!c->hist[slot])
			c->hist[slot] = calloc(BW_NR_OPS, sizeof(*c->hist[slot]));
		if (!c->hist[slot]) {
			err = -ENOMEM;
			goto out;
		}
		bw_snap_add_pcpu(d, c->pcpu_buf, c->ncpus, closed, c->hist[slot]);
		d->busy_unknown = !c->have_fetch;
		if (c->light) {
			light_fallback(c, slot, d);
			err = light_timed(c, slot, d);
			if (err)
				goto out;
			continue;
		}
		read_stall(c, slot, s->ts_ns, d);
		d->lost += c->healed[slot];
		if (sh.word & BW_INFLIGHT_MASK) {
			d->inflight += sh.word & BW_INFLIGHT_MASK;
			d->open_area_ns += area[slot];
			/* Without fetch atomics no busy period is ever opened. */
			if (c->have_fetch && s->ts_ns > sh.busy_start)
				d->busy_ns += s->ts_ns - sh.busy_start;
		}
	}
out:
	free(area);
	return err;
}

/* Every entry of a per-request array map (rqs, waits) whose key word is set, back to zeros. */
static int clear_table(struct bw_core *c, struct bpf_map *m)
{
	size_t vsz = bpf_map__value_size(m);
	char *buf = calloc(c->rq_entries, vsz), *zero = calloc(1, vsz);
	int fd = bpf_map__fd(m), err = 0;
	__u32 i;

	if (!buf || !zero || rq_bufs(c)) {
		err = -ENOMEM;
		goto out;
	}
	read_array(fd, c->rq_entries, vsz, buf, c->rq_keys);
	for (i = 0; i < c->rq_entries; i++)
		if (*(__u64 *)(buf + i * vsz) && bpf_map_update_elem(fd, &i, zero, BPF_ANY))
			err = -errno;
out:
	free(buf);
	free(zero);
	return err;
}

int bw_core_slice_begin(struct bw_core *c)
{
	int err = 0, fd = bpf_map__fd(c->skel->maps.stalls);
	struct bw_stall st;
	__u32 slot;

	/*
	 * Nothing is attached: what the last slice left in flight (its
	 * requests completed unseen) goes, so this one starts from an empty
	 * device as the exact tier sees it; cumulative counts stay.  A slice
	 * that drained (bw_core_slice_drain) left nothing in flight, and its
	 * tables are not read again.
	 */
	for (slot = 0; slot < c->max_slots; slot++) {
		c->sh[slot].word = 0;
		c->sh[slot].busy_start = 0;
		c->sh[slot].opener_rq = 0;
		c->sh[slot].opener_seq = 0;
		c->last_word[slot] = 0;
		if (!c->slice_dirty || bpf_map_lookup_elem(fd, &slot, &st))
			continue;
		st.waiting = 0;
		st.start = 0;
		bpf_map_update_elem(fd, &slot, &st, BPF_ANY);
	}
	if (c->slice_dirty) {
		err = clear_table(c, c->skel->maps.rqs);
		err = err ?: clear_table(c, c->skel->maps.waits);
	}
	err = err ?: core_bpf__attach(c->skel);
	if (err)
		bw_err("starting an exact slice: %s", strerror(-err));
	c->slice_dirty = true;
	return err;
}

/* Every program of the object detached but the completion's. */
void bw_core_slice_drain(struct bw_core *c)
{
	struct bpf_object_skeleton *k = c->skel->skeleton;
	int i;

	for (i = 0; i < k->prog_cnt; i++) {
		struct bpf_prog_skeleton *p = (void *)((char *)k->progs + i * k->prog_skel_sz);

		if (!strncmp(p->name, "bw_complete", strlen("bw_complete")))
			continue;
		bpf_link__destroy(*p->link);
		*p->link = NULL;
	}
}

__u64 bw_core_inflight(const struct bw_core *c)
{
	__u64 n = 0;
	__u32 slot;

	for (slot = 0; slot < c->max_slots; slot++)
		n += c->sh[slot].word & BW_INFLIGHT_MASK;
	return n;
}

void bw_core_slice_end(struct bw_core *c)
{
	int fd = bpf_map__fd(c->skel->maps.stalls);
	struct bw_stall st;
	__u32 slot;

	core_bpf__detach(c->skel);
	/* Drained: nothing in flight, nothing waiting, no entry left to clear. */
	c->slice_dirty = bw_core_inflight(c) != 0;
	for (slot = 0; slot < c->max_slots && !c->slice_dirty; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, &st) && st.waiting)
			c->slice_dirty = true;
}

/*
 * A 32-bit bucket must not take 2^32 events between two reads: between
 * snapshots far apart, the watch loop calls this (every 10 s) to extend
 * the histograms without closing an interval.
 */
int bw_core_refresh(struct bw_core *c)
{
	__u32 nslots = *c->next_slot;

	return bw_slots_refresh(bpf_map__fd(c->pcpu_map),
				nslots < c->max_slots ? nslots : c->max_slots, c->pcpu_buf, c->ncpus,
				c->hist);
}

void bw_core_forget_dev(struct bw_core *c, __u32 dev)
{
	int qfd = bpf_map__fd(c->qmap_map);
	int sfd = bpf_map__fd(c->shared_map);
	struct bw_qmap e, zero = {};
	struct bw_dev_shared sh;
	__u32 qid;

	for (qid = 0; qid < bpf_map__max_entries(c->qmap_map); qid++) {
		if (bpf_map_lookup_elem(qfd, &qid, &e) || e.slot == BW_SLOT_NONE || e.q <= 1)
			continue;
		if (bpf_map_lookup_elem(sfd, &e.slot, &sh) || sh.dev != dev)
			continue;
		if (bpf_map_update_elem(qfd, &qid, &zero, BPF_ANY))
			bw_warn("resetting queue map entry %u: %s", qid, strerror(errno));
	}
}

/*
 * What the same sizing gives a host of 16 NVMe drives with 64 hw queues of
 * 1023 tags each and 64 CPUs, watching those drives and watching all.
 */
static void print_model(FILE *f)
{
	const __u64 drives = 16, cpus = 64, live = 64 * 1023;
	__u64 per = live < BW_LIVE_CAP ? live : BW_LIVE_CAP;
	__u64 rq = 1ULL << roundup_bits(2 * drives * per);

	if (rq > BW_RQ_TABLE_MAX)
		rq = BW_RQ_TABLE_MAX;
	fprintf(f, "blkwise: model host (16 drives x 64 queues x 1023 tags, 64 CPUs): "
		"maps %.1f MiB with -d for each drive, %.1f MiB watching all "
		"(%llu request entries)\n",
		map_bytes(cpus, drives, rq) / 1048576.0,
		map_bytes(cpus, drives + spare_slots(cpus), rq) / 1048576.0,
		(unsigned long long)rq);
}

void bw_core_print_memory(const struct bw_core *c, struct bpf_object *const *others, int nothers,
			  FILE *f)
{
	__u64 total = bw_obj_print_maps(c->obj, c->ncpus, f);
	int i;

	for (i = 0; i < nothers; i++)
		total += bw_obj_print_maps(others[i], c->ncpus, f);
	fprintf(f, "blkwise: maps total %.1f MiB (%u device slots, %u request entries for all, "
		"%d CPUs); attach %s%s\n", total / 1048576.0, c->max_slots, c->rq_entries,
		c->ncpus, c->raw_tp ? "raw_tp" : "tp_btf",
		c->have_fetch ? "" : ", no atomic fetch (busy and solo time not measured)");
	print_model(f);
	fprintf(f, "blkwise: slot races %llu, queue map evictions %llu, slot overflow %llu\n",
		(unsigned long long)*c->claim_races,
		(unsigned long long)*c->qmap_evictions,
		(unsigned long long)*c->slot_overflow);
}
