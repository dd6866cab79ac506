// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/core.bpf.c: sizes the maps from the devices present, picks
 * tp_btf or raw_tp per tracepoint from BTF, loads, attaches, and reads the
 * maps back into one bw_snap per call.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "loader.h"
#include "core.skel.h"
#include "streams.h"
#include "stall.h"

/* Requests one device may have live at once, as the table is sized (docs/design.md). */
#define BW_LIVE_CAP 4096
#define BW_RQ_TABLE_MAX (1u << 20)

struct bw_core {
	struct core_bpf *skel;
	int ncpus;
	__u32 max_slots;
	__u32 rq_entries;		/* per-request table, all devices */
	bool have_fetch;
	bool raw_tp;
	bool verbose;
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
	struct bw_bio *bio;		/* bio-based devices (user/bio.c), or NULL */
	struct bw_streams *streams;	/* with --streams (user/streams.c), or NULL */
	struct bw_bc *bc;		/* with --bio-cache (user/bcload.c), or NULL */
};

static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

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
	char path[300];
	struct dirent *me;
	__u64 tags = 128, hwqs = 0, live;
	DIR *md;

	bw_read_sysfs_u64(disk, "queue/nr_requests", &tags);
	snprintf(path, sizeof(path), "/sys/block/%s/mq", disk);
	md = opendir(path);
	if (!md)
		return 0;	/* bio-based: no requests */
	while ((me = readdir(md)))
		hwqs += me->d_name[0] != '.';
	closedir(md);
	live = tags * (hwqs ? hwqs : 1);
	return live < BW_LIVE_CAP ? live : BW_LIVE_CAP;
}

/*
 * Entries of the per-request table: twice what the disks (the watched
 * ones, or all) can have live, so open addressing stays short, with room
 * for devices that appear later.
 */
static __u32 size_rq_table(const struct bw_core *c)
{
	__u64 live = 0, want;
	struct dirent *de;
	DIR *d;
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
		d = opendir("/sys/block");
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				live += live_requests(de->d_name);
		if (d)
			closedir(d);
	}
	want = 1ULL << roundup_bits(2 * live);
	if (want < 4096)
		want = 4096;
	return want < BW_RQ_TABLE_MAX ? want : BW_RQ_TABLE_MAX;
}

static __u32 count_disks(void)
{
	struct dirent *de;
	__u32 n = 0;
	DIR *d = opendir("/sys/block");

	if (!d)
		return 16;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Number of arguments of a tracepoint, from its btf_trace_* typedef; -1 if absent. */
static int tp_nargs(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	if (!btf)
		return -1;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);	/* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;	/* minus the leading void *__data */
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

static void pick_programs(struct bw_core *c, const struct btf *btf)
{
	struct core_bpf *s = c->skel;
	bool btf_ok = !c->raw_tp && tp_nargs(btf, "block_rq_issue") > 0;

	c->raw_tp = !btf_ok;
	PICK(bw_issue);
	PICK(bw_complete);
	PICK(bw_requeue);
	PICK(bw_rq_merge);
	PICK(bw_insert);
	PICK(bw_backmerge);
	PICK(bw_frontmerge);
	/*
	 * block_rq_issue/insert/merge/requeue lost their request_queue argument in 5.11
	 * (commit a54895fa057c, "block: remove the request_queue to argument
	 * request based tracepoints"), backported to 5.10.137: ask BTF.
	 */
	s->rodata->rq_arg_second = tp_nargs(btf, "block_rq_issue") == 2;
	/*
	 * The bio merge tracepoints were (q, rq, bio) until 5.11 ("block:
	 * simplify and extend the block_bio_merge tracepoint class"), (bio)
	 * since: ask BTF here too.
	 */
	s->rodata->bio_merge_arg = tp_nargs(btf, "block_bio_backmerge") == 3 ? 2 : 0;
}

/* BLKWISE_BENCH_SKIP=N (BW_SKIP_* bits): the bench prices parts of the hot path. */
__u32 bw_bench_skip(void)
{
	const char *e = getenv("BLKWISE_BENCH_SKIP");
	__u32 v = e ? (__u32)strtoul(e, NULL, 0) : 0;
	static bool warned;

	if (v && !warned)
		bw_warn("BLKWISE_BENCH_SKIP=%#x: parts of the hot path are left out, "
			"figures are wrong by design (for tools/bench.sh only)", v);
	warned = true;
	return v;
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

static int size_maps(struct bw_core *c, const struct bw_core_opts *o)
{
	struct core_bpf *s = c->skel;
	int err;

	if (o->max_devices > 0)
		c->max_slots = o->max_devices > o->nr_watch ? o->max_devices : o->nr_watch;
	else if (o->nr_watch > 0)
		c->max_slots = o->nr_watch;
	else
		c->max_slots = count_disks() + spare_slots(c->ncpus);
	if (c->max_slots > BW_MAX_SLOTS)
		c->max_slots = BW_MAX_SLOTS;
	c->rq_entries = size_rq_table(c);
	s->rodata->rq_hash_bits = roundup_bits(c->rq_entries);
	s->rodata->max_slots = c->max_slots;
	s->rodata->filter_on = o->nr_watch > 0;
	s->rodata->skip = bw_bench_skip();
	err = bpf_map__set_max_entries(s->maps.shared, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.pcpu, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.dev2slot, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.rqs, c->rq_entries);
	err = err ?: bpf_map__set_max_entries(s->maps.stalls, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.waits, c->rq_entries);
	/* The streams' maps, which the streams object reuses; one entry without. */
	s->rodata->streams_on = o->streams;
	s->rodata->stream_by = o->streams_by;
	err = err ?: bpf_map__set_max_entries(s->maps.streams, o->streams ? 4096 : 1);
	return err;
}

/*
 * BPF atomic fetch-and-add (BPF_ATOMIC | BPF_FETCH), which the hot path
 * uses where it can, came with 5.12 (commit 5ca419f2864a, "bpf: Add BPF_FETCH
 * field / create atomic_fetch_add instruction", with cmpxchg in the same
 * series); older kernels refuse it with "BPF_STX uses reserved fields", and
 * get the programs compiled without it (bpf/core.bpf.c, the _nf copies).
 */
static bool have_atomic_fetch(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bw_probe_fetch", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return errno != EINVAL;	/* refused for another reason: not the culprit */
	close(fd);
	return true;
}

static void explain_load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		bw_err("loading BPF programs: %s; needs root or CAP_BPF+CAP_PERFMON "
		       "(and no lockdown forbidding BPF); rerun with --verbose for libbpf's log",
		       strerror(-err));
	else
		bw_err("loading BPF programs: %s; rerun with --verbose for libbpf's log",
		       strerror(-err));
}

/* Every whole disk in /sys/block, as dev_t; returns how many. */
int bw_list_disks(__u32 *out, int max)
{
	struct dirent *de;
	unsigned int major, minor;
	char path[300];
	int n = 0;
	DIR *d = opendir("/sys/block");
	FILE *f;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u:%u", &major, &minor) == 2)
			out[n++] = (major << 20) | minor;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The watched devices, else every disk; returns how many (at most max). */
int bw_watched_or_all(int nr, const __u32 *watch, __u32 *out, int max)
{
	if (!nr)
		return bw_list_disks(out, max);
	if (nr > max)
		nr = max;
	memcpy(out, watch, nr * sizeof(*out));
	return nr;
}

/* A device filter map (dev_t -> 1) of the watched devices; what names it in errors. */
int bw_fill_watch_map(int fd, const struct bw_core_opts *o, const char *what)
{
	__u8 one = 1;
	int i, err;

	for (i = 0; i < o->nr_watch; i++) {
		if (bpf_map_update_elem(fd, &o->watch[i], &one, BPF_ANY)) {
			err = -errno;
			bw_err("filling %s: %s", what, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Slot i to devs[i] in a dev2slot hash and a bw_dev_shared array. */
int bw_fill_dev_slots(int dev2slot_fd, int shared_fd, const __u32 *devs, int n)
{
	__u32 slot;

	for (slot = 0; slot < (__u32)n; slot++) {
		struct bw_dev_shared sh = { .dev = devs[slot] };

		if (bpf_map_update_elem(dev2slot_fd, &devs[slot], &slot, BPF_ANY) ||
		    bpf_map_update_elem(shared_fd, &slot, &sh, BPF_ANY)) {
			bw_err("filling the device slot maps: %s", strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * Give every device we know of its slot before attaching, so the BPF side
 * only ever looks slots up; devices appearing later get theirs in BPF.
 */
static int fill_slots(struct bw_core *c)
{
	int dfd = bpf_map__fd(c->skel->maps.dev2slot);
	int sfd = bpf_map__fd(c->skel->maps.shared);
	__u32 devs[BW_MAX_WATCH];
	int n, err;

	n = bw_watched_or_all(c->nr_watch, c->watch, devs, BW_MAX_WATCH);
	if ((__u32)n > c->max_slots)
		n = c->max_slots;
	err = bw_fill_dev_slots(dfd, sfd, devs, n);
	if (!err)
		c->skel->bss->next_slot = n;
	return err;
}

static int map_shared(struct bw_core *c)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	c->sh_len = (c->max_slots * sizeof(struct bw_dev_shared) + page - 1) / page * page;
	p = mmap(NULL, c->sh_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.shared), 0);
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

/* The objects of other concerns, with the core's attach type and argument layout. */
/* What the other objects need to know of this kernel, read while the BTF is at hand. */
static struct bw_load_env load_env(const struct bw_core *c, const struct btf *btf)
{
	struct bw_load_env env = {
		.raw_tp = c->raw_tp,
		.rq_arg_second = c->skel->rodata->rq_arg_second,
		.bio_arg_second = tp_nargs(btf, "block_bio_queue") == 2,
		.has_io_start = tp_nargs(btf, "block_io_start") > 0,
		.have_fetch = c->have_fetch,
		.mempool_noprof = btf__find_by_name_kind(btf, "mempool_alloc_noprof",
							 BTF_KIND_FUNC) > 0,
		.ncpus = c->ncpus,
	};

	return env;
}

/* The objects of other concerns, with the core's attach type and argument layout. */
static int open_others(struct bw_core *c, const struct bw_core_opts *o,
		       const struct bw_load_env *env)
{
	int err;

	struct utsname u;

	err = bw_bio_open(&c->bio, o, env);
	if (err || !o->streams)
		return err;
	if (!env->have_fetch) {
		uname(&u);
		bw_err("--streams needs BPF atomic fetch-and-add, which this kernel (%s) lacks: "
		       "Linux 5.12 or later; run without --streams", u.release);
		return -EOPNOTSUPP;
	}
	return bw_streams_open(&c->streams, o, env);
}

/* The libbpf setup every loader shares (user/recload.c too). */
void bw_libbpf_setup(bool verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(libbpf_print);
}

int bw_kernel_btf(const char *path, struct btf **out)
{
	struct btf *btf = path ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
	int err = libbpf_get_error(btf);

	*out = NULL;
	if (err) {
		bw_err("no kernel BTF (%s): %s; blkwise needs a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", path ?: "/sys/kernel/btf/vmlinux",
		       strerror(-err));
		return err;
	}
	*out = btf;
	return 0;
}

int bw_tp_nargs(const struct btf *btf, const char *tp)
{
	return tp_nargs(btf, tp);
}

void bw_explain_load_error(int err)
{
	explain_load_error(err);
}

int bw_core_open(struct bw_core **out, const struct bw_core_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct bw_load_env env;
	struct btf *btf = NULL;
	struct bw_core *c;
	int err;

	bw_libbpf_setup(o->verbose);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->verbose = o->verbose;
	c->raw_tp = o->force_raw_tp;
	c->nr_watch = o->nr_watch;
	memcpy(c->watch, o->watch, sizeof(c->watch));
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		bw_err("cannot count possible CPUs (/sys/devices/system/cpu/possible): %s",
		       strerror(-c->ncpus));
		err = c->ncpus;
		goto fail;
	}
	c->pcpu_buf = calloc(c->ncpus, sizeof(*c->pcpu_buf));
	if (!c->pcpu_buf) {
		err = -ENOMEM;
		goto fail;
	}
	err = bw_kernel_btf(o->btf_path, &btf);
	if (err)
		goto fail;
	c->skel = core_bpf__open_opts(&oo);
	if (!c->skel) {
		err = -errno;
		bw_err("opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	c->have_fetch = have_atomic_fetch();
	pick_programs(c, btf);
	env = load_env(c, btf);
	/* Two copies of the kernel's BTF (ours, libbpf's) would double the start-up peak. */
	btf__free(btf);
	btf = NULL;
	err = size_maps(c, o);
	if (err) {
		bw_err("sizing BPF maps: %s", strerror(-err));
		goto fail;
	}
	err = core_bpf__load(c->skel);
	if (err) {
		explain_load_error(err);
		goto fail;
	}
	env.rqs_fd = bpf_map__fd(c->skel->maps.rqs);
	env.streams_fd = bpf_map__fd(c->skel->maps.streams);
	env.scount_fd = bpf_map__fd(c->skel->maps.scount);
	env.rq_hash_bits = c->skel->rodata->rq_hash_bits;
	err = map_shared(c);
	err = err ?: fill_slots(c);
	if (err)
		goto fail;
	err = core_bpf__attach(c->skel);
	if (err) {
		bw_err("attaching to block tracepoints: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	err = open_others(c, o, &env);
	if (err)
		goto fail;
	err = o->bio_cache ? bw_bc_open(&c->bc, &env, c->verbose) : 0;
	if (err)
		goto fail;
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
	bw_streams_close(c->streams);
	bw_bio_close(c->bio);
	bw_bc_close(c->bc);
	core_bpf__destroy(c->skel);
	free(c->healed);
	free(c->rq_buf);
	free(c->rq_keys);
	free(c->last_word);
	for (i = 0; c->hist && i < c->max_slots; i++)
		free(c->hist[i]);
	free(c->hist);
	free(c->pcpu_buf);
	free(c);
}

const char *bw_core_attach_mode(const struct bw_core *c)
{
	return c->raw_tp ? "raw_tp" : "tp_btf";
}

struct bw_snap_dev *bw_snap_dev_get(struct bw_snap *s, __u32 dev, int cap)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	if (s->nr >= cap)
		return NULL;
	memset(&s->devs[s->nr], 0, sizeof(s->devs[0]));
	s->devs[s->nr].dev = dev;
	return &s->devs[s->nr++];
}

/* The 64-bit words at the head of struct bw_op_pcpu, laid out as bw_op_stats's. */
#define OP_WORDS (offsetof(struct bw_op_pcpu, hist_d2c) / sizeof(__u64))
_Static_assert(offsetof(struct bw_op_pcpu, hist_d2c) == offsetof(struct bw_op_stats, hist_d2c),
	       "bw_op_pcpu and bw_op_stats share their 64-bit head");

/*
 * n 32-bit buckets at b in each CPU's value: their sum modulo 2^32 moved
 * by less than 2^32 since the last read, so it extends ext, which is then
 * added to out.
 */
static void extend_hist(const struct bw_dev_pcpu *pcpu, int ncpus, size_t off, int n,
			__u64 *ext, __u64 *out)
{
	int cpu, i;

	for (i = 0; i < n; i++) {
		__u32 m = 0;

		for (cpu = 0; cpu < ncpus; cpu++)
			m += ((const __u32 *)((const char *)&pcpu[cpu] + off))[i];
		ext[i] = bw_extend32(ext[i], m);
		if (out)
			out[i] += ext[i];
	}
}

/* Every op's histograms of one slot extended into ext, and added to outs unless NULL. */
static void extend_ops(const struct bw_dev_pcpu *pcpu, int ncpus, struct bw_op_stats *ext,
		       struct bw_op_stats *outs)
{
	size_t base;
	int op;

	for (op = 0; op < BW_NR_OPS; op++) {
		base = offsetof(struct bw_dev_pcpu, op) + op * sizeof(struct bw_op_pcpu);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_d2c),
			    BW_LAT_BUCKETS, ext[op].hist_d2c, outs ? outs[op].hist_d2c : NULL);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_q2d),
			    BW_LAT_BUCKETS, ext[op].hist_q2d, outs ? outs[op].hist_q2d : NULL);
		extend_hist(pcpu, ncpus, base + offsetof(struct bw_op_pcpu, hist_seg),
			    BW_SEG_BUCKETS, ext[op].hist_seg, outs ? outs[op].hist_seg : NULL);
	}
}

void bw_pcpu_extend(const struct bw_dev_pcpu *pcpu, int ncpus, struct bw_op_stats *ext)
{
	extend_ops(pcpu, ncpus, ext, NULL);
}

/*
 * One slot's per-CPU values (pcpu, ncpus of them) added to d; ext, the
 * slot's own BW_NR_OPS histograms extended to 64 bits, carries over from
 * one read to the next.
 */
void bw_snap_add_pcpu(struct bw_snap_dev *d, const struct bw_dev_pcpu *pcpu, int ncpus,
		      __u64 closed_epoch, struct bw_op_stats *ext)
{
	size_t w;
	int cpu, op;

	for (op = 0; op < BW_NR_OPS; op++)
		for (cpu = 0; cpu < ncpus; cpu++) {
			const __u64 *src = (const __u64 *)&pcpu[cpu].op[op];

			for (w = 0; w < OP_WORDS; w++)
				((__u64 *)&d->op[op])[w] += src[w];
		}
	extend_ops(pcpu, ncpus, ext, d->op);
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct bw_dev_pcpu *p = &pcpu[cpu];

		d->busy_ns += p->busy_ns;
		d->unmatched += p->unmatched;
		d->untracked += p->untracked;
		d->lost += p->lost;
		d->fsync_writes += p->fsync_writes;
		if (p->max_epoch == closed_epoch && p->max_depth > d->max_depth)
			d->max_depth = p->max_depth;
	}
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

/* The table into c->rq_buf, in batches where the kernel has them; entries read, or -errno. */
static long read_rq_table(struct bw_core *c)
{
	int fd = bpf_map__fd(c->skel->maps.rqs);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 i, n, done = 0, in = 0, out;
	bool first = true;
	int err;

	if (!c->rq_buf) {
		c->rq_buf = calloc(c->rq_entries, sizeof(*c->rq_buf));
		c->rq_keys = calloc(c->rq_entries, sizeof(*c->rq_keys));
		if (!c->rq_buf || !c->rq_keys)
			return -ENOMEM;
	}
	while (done < c->rq_entries) {
		n = c->rq_entries - done;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, c->rq_keys + done,
					   c->rq_buf + done, &n, &opts);
		done += n;
		if (err && errno == ENOENT)
			return done;
		if (err)
			break;
		in = out;
		first = false;
	}
	if (done >= c->rq_entries)
		return done;
	for (i = 0; i < c->rq_entries; i++)	/* no batch operations: one by one */
		if (bpf_map_lookup_elem(fd, &i, &c->rq_buf[i]))
			memset(&c->rq_buf[i], 0, sizeof(c->rq_buf[i]));
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

int bw_core_snapshot(struct bw_core *c, struct bw_snap *s)
{
	int pcpu_fd = bpf_map__fd(c->skel->maps.pcpu);
	int cap = c->max_slots + c->nr_watch + bw_bio_slots(c->bio);
	__u32 slot, nslots;
	__u64 closed, bio_closed = 0, *area;
	int i, err = 0;

	s->devs = calloc(cap, sizeof(*s->devs));
	if (!s->devs)
		return -ENOMEM;
	s->nr = 0;
	for (i = 0; i < c->nr_watch; i++)
		bw_snap_dev_get(s, c->watch[i], cap);
	/* Close the max-depth epoch first, so what we read is final for it. */
	closed = c->skel->bss->epoch;
	__atomic_store_n(&c->skel->bss->epoch, closed + 1, __ATOMIC_SEQ_CST);
	if (c->bio)
		bio_closed = bw_bio_epoch(c->bio);
	if (c->streams)
		bw_streams_epoch(c->streams);
	nslots = c->skel->bss->next_slot;
	if (nslots > c->max_slots)
		nslots = c->max_slots;
	area = calloc(nslots ? nslots : 1, sizeof(*area));
	if (!area)
		return -ENOMEM;
	for (slot = 0; slot < nslots; slot++)
		heal_slot(c, slot);
	s->ts_ns = bw_now_ns();
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
		read_stall(c, slot, s->ts_ns, d);
		d->lost += c->healed[slot];
		d->busy_unknown = !c->have_fetch;
		if (sh.word & BW_INFLIGHT_MASK) {
			d->inflight += sh.word & BW_INFLIGHT_MASK;
			d->open_area_ns += area[slot];
			/* Without fetch atomics no busy period is ever opened. */
			if (c->have_fetch && s->ts_ns > sh.busy_start)
				d->busy_ns += s->ts_ns - sh.busy_start;
		}
	}
	if (c->bio)
		err = bw_bio_snapshot(c->bio, s, cap, bio_closed);
out:
	free(area);
	return err;
}

/*
 * A 32-bit bucket must not take 2^32 events between two reads: between
 * snapshots far apart, the watch loop calls this (every 10 s) to extend
 * the histograms without closing an interval.
 */
int bw_core_refresh(struct bw_core *c)
{
	int fd = bpf_map__fd(c->skel->maps.pcpu);
	__u32 slot, nslots = c->skel->bss->next_slot;

	if (nslots > c->max_slots)
		nslots = c->max_slots;
	for (slot = 0; slot < nslots; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, c->pcpu_buf))
			return -errno;
		if (!c->hist[slot])
			c->hist[slot] = calloc(BW_NR_OPS, sizeof(*c->hist[slot]));
		if (!c->hist[slot])
			return -ENOMEM;
		bw_pcpu_extend(c->pcpu_buf, c->ncpus, c->hist[slot]);
	}
	return c->bio ? bw_bio_refresh(c->bio) : 0;
}

void bw_snap_free(struct bw_snap *s)
{
	free(s->devs);
	s->devs = NULL;
	s->nr = 0;
}

void bw_core_forget_dev(struct bw_core *c, __u32 dev)
{
	int qfd = bpf_map__fd(c->skel->maps.qmap);
	int sfd = bpf_map__fd(c->skel->maps.shared);
	struct bw_qmap e, zero = {};
	struct bw_dev_shared sh;
	__u32 qid;

	for (qid = 0; qid < bpf_map__max_entries(c->skel->maps.qmap); qid++) {
		if (bpf_map_lookup_elem(qfd, &qid, &e) || e.slot == BW_SLOT_NONE || e.q <= 1)
			continue;
		if (bpf_map_lookup_elem(sfd, &e.slot, &sh) || sh.dev != dev)
			continue;
		if (bpf_map_update_elem(qfd, &qid, &zero, BPF_ANY))
			bw_warn("resetting queue map entry %u: %s", qid, strerror(errno));
	}
}

/* Streams live in their own object (bpf/streams.bpf.c). */
int bw_core_streams(struct bw_core *c, struct bw_stream_snap *out, int max, __u64 now_ns)
{
	return c->streams ? bw_streams_read(c->streams, out, max, now_ns) : 0;
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

/* The loaded objects: the core first. */
static int objects(const struct bw_core *c, struct bpf_object **objs)
{
	int n = 0;

	objs[n++] = c->skel->obj;
	if (c->bio)
		objs[n++] = bw_bio_obj(c->bio);
	if (c->streams)
		objs[n++] = bw_streams_obj(c->streams);
	if (bw_bc_obj(c->bc))
		objs[n++] = bw_bc_obj(c->bc);
	return n;
}

static __u64 print_maps(const struct bw_core *c, struct bpf_object *obj, FILE *f)
{
	struct bpf_map *m;
	__u64 total = 0;

	bpf_object__for_each_map(m, obj) {
		__u64 vsz = bpf_map__value_size(m), n = bpf_map__max_entries(m);
		__u64 bytes;

		if (bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY)
			vsz = ((vsz + 7) & ~7ULL) * c->ncpus;
		bytes = n * (vsz + bpf_map__key_size(m));
		total += bytes;
		fprintf(f, "blkwise: map %-14s %8llu entries x %6llu B = %8.1f KiB\n",
			bpf_map__name(m), (unsigned long long)n, (unsigned long long)vsz,
			bytes / 1024.0);
	}
	return total;
}

void bw_core_print_memory(const struct bw_core *c, FILE *f)
{
	struct bpf_object *objs[4];
	__u64 total = 0;
	int i, n = objects(c, objs);

	for (i = 0; i < n; i++)
		total += print_maps(c, objs[i], f);
	fprintf(f, "blkwise: maps total %.1f MiB (%u device slots, %u request entries for all, "
		"%d CPUs); attach %s%s\n", total / 1048576.0, c->max_slots, c->rq_entries,
		c->ncpus, c->raw_tp ? "raw_tp" : "tp_btf",
		c->have_fetch ? "" : ", no atomic fetch (busy and solo time not measured)");
	print_model(f);
	fprintf(f, "blkwise: slot races %llu, queue map evictions %llu, slot overflow %llu\n",
		(unsigned long long)c->skel->bss->claim_races,
		(unsigned long long)c->skel->bss->qmap_evictions,
		(unsigned long long)c->skel->bss->slot_overflow);
	if (c->bio)
		bw_bio_print(c->bio, f);
	if (c->streams)
		bw_streams_print(c->streams, f);
}

static int prog_stats_of(struct bpf_object *obj, struct bw_prog_stat *out, int max, int n)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (n >= max || fd < 0 || !bpf_program__autoload(prog))
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(prog));
		out[n].run_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		n++;
	}
	return n;
}

int bw_core_prog_stats(const struct bw_core *c, struct bw_prog_stat *out, int max)
{
	struct bpf_object *objs[4];
	int i, nobj = objects(c, objs), n = 0;

	for (i = 0; i < nobj && n >= 0; i++)
		n = prog_stats_of(objs[i], out, max, n);
	return n;
}

int bw_core_bio_cache(struct bw_core *c, struct bw_bc_snap *s)
{
	return bw_bc_snapshot(c->bc, c->ncpus, s);
}
