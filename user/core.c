// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/core.bpf.c: sizes the maps from the devices present, picks
 * tp_btf or raw_tp per tracepoint from BTF, loads, attaches, and reads the
 * maps back into one bw_snap per call.
 */
#include <errno.h>
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
#include "biocache.skel.h"

#define BW_MAX_QID 4096

struct bw_core {
	struct core_bpf *skel;
	int ncpus;
	__u32 max_slots;
	__u32 rq_bits;
	bool raw_tp;
	bool verbose;
	int nr_watch;
	__u32 watch[BW_MAX_WATCH];
	struct bw_dev_pcpu *pcpu_buf;	/* ncpus values, for one lookup */
	struct bw_dev_shared *sh;	/* the mmap of the shared map */
	size_t sh_len;
	__u64 *healed;			/* per slot: lost completions healed here */
	__u64 *last_word;		/* per slot: the word at the previous snapshot */
	struct bw_bc *bc;		/* bpf/biocache.bpf.c, when asked for */
};

static int bc_open(struct bw_core *c, const struct btf *btf);
static void bc_close(struct bw_bc *b);

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
 * Widest tag space and most hw queues among the disks present, so a
 * request's (hw queue, tag) always fits its slot's part of the table.
 */
static void size_tag_space(__u32 *tag_bits, __u32 *hwq_bits)
{
	__u64 tags = 256, hwqs = 1, v;
	struct dirent *de, *me;
	char path[300];
	DIR *d, *md;

	d = opendir("/sys/block");
	if (!d)
		goto out;
	while ((de = readdir(d))) {
		__u64 n = 0;

		if (de->d_name[0] == '.')
			continue;
		if (!bw_read_sysfs_u64(de->d_name, "queue/nr_requests", &v) && v > tags)
			tags = v;
		snprintf(path, sizeof(path), "/sys/block/%s/mq", de->d_name);
		md = opendir(path);
		if (!md)
			continue;
		while ((me = readdir(md))) {
			char attr[64];

			if (me->d_name[0] == '.')
				continue;
			n++;
			snprintf(attr, sizeof(attr), "mq/%.32s/nr_tags", me->d_name);
			if (!bw_read_sysfs_u64(de->d_name, attr, &v) && v > tags)
				tags = v;
		}
		closedir(md);
		if (n > hwqs)
			hwqs = n;
	}
	closedir(d);
out:
	/* nr_requests can be raised at run time: leave room for 4x. */
	*tag_bits = roundup_bits(tags * 4);
	if (*tag_bits < 10)
		*tag_bits = 10;
	*hwq_bits = roundup_bits(hwqs);
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

static void pick_programs(struct bw_core *c, const struct btf *btf, bool streams)
{
	struct core_bpf *s = c->skel;
	bool btf_ok = !c->raw_tp && tp_nargs(btf, "block_rq_issue") > 0;
	bool io_start = tp_nargs(btf, "block_io_start") > 0;
	struct bpf_program *tp[] = { s->progs.bw_issue, s->progs.bw_complete,
				     s->progs.bw_requeue, s->progs.bw_rq_merge,
				     s->progs.bw_backmerge, s->progs.bw_frontmerge };
	struct bpf_program *raw[] = { s->progs.bw_issue_raw, s->progs.bw_complete_raw,
				      s->progs.bw_requeue_raw, s->progs.bw_rq_merge_raw,
				      s->progs.bw_backmerge_raw, s->progs.bw_frontmerge_raw };
	size_t i;

	c->raw_tp = !btf_ok;
	for (i = 0; i < sizeof(tp) / sizeof(tp[0]); i++) {
		bpf_program__set_autoload(tp[i], btf_ok);
		bpf_program__set_autoload(raw[i], !btf_ok);
	}
	/*
	 * block_rq_issue/insert/merge/requeue lost their request_queue argument in 5.11
	 * (commit a54895fa057c, "block: remove the request_queue to argument
	 * request based tracepoints"), backported to 5.10.137: ask BTF.
	 */
	s->rodata->rq_arg_second = tp_nargs(btf, "block_rq_issue") == 2;
	/* Q for streams: block_io_start (6.5+) else block_rq_insert. */
	bpf_program__set_autoload(s->progs.bw_io_start, streams && btf_ok && io_start);
	bpf_program__set_autoload(s->progs.bw_insert, streams && btf_ok && !io_start);
	bpf_program__set_autoload(s->progs.bw_insert_raw, streams && !btf_ok);
	bpf_program__set_autoload(s->progs.bw_io_start_raw, false);
}

static int size_maps(struct bw_core *c, const struct bw_core_opts *o)
{
	struct core_bpf *s = c->skel;
	__u32 tag_bits, hwq_bits;
	int err;

	size_tag_space(&tag_bits, &hwq_bits);
	c->rq_bits = tag_bits + hwq_bits;
	if (o->max_devices > 0)
		c->max_slots = o->max_devices > o->nr_watch ? o->max_devices : o->nr_watch;
	else if (o->nr_watch > 0)
		c->max_slots = o->nr_watch;
	else
		c->max_slots = count_disks() + 16;
	if (c->max_slots > 1024)
		c->max_slots = 1024;
	s->rodata->tag_bits = tag_bits;
	s->rodata->rq_bits = c->rq_bits;
	s->rodata->max_slots = c->max_slots;
	s->rodata->max_qid = BW_MAX_QID;
	s->rodata->filter_on = o->nr_watch > 0;
	s->rodata->streams_on = o->streams;
	err = bpf_map__set_max_entries(s->maps.qmap, BW_MAX_QID);
	err = err ?: bpf_map__set_max_entries(s->maps.shared, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.pcpu, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.dev2slot, c->max_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.rqs, c->max_slots << c->rq_bits);
	err = err ?: bpf_map__set_max_entries(s->maps.streams, o->streams ? 4096 : 1);
	return err;
}

/*
 * BPF atomic fetch-and-add (BPF_ATOMIC | BPF_FETCH), which the hot path
 * uses, came with 5.12 ("bpf: Add BPF_FETCH field / create atomic_fetch_add
 * instruction", Brendan Jackman's atomics series); older kernels refuse it with
 * "BPF_STX uses reserved fields".  Probed only after a failed load.
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
	struct utsname u;

	if (!have_atomic_fetch()) {
		uname(&u);
		bw_err("this kernel (%s) lacks BPF atomic fetch-and-add, which blkwise needs: "
		       "Linux 5.12 or later", u.release);
		return;
	}
	if (err == -EPERM || err == -EACCES)
		bw_err("loading BPF programs: %s; needs root or CAP_BPF+CAP_PERFMON "
		       "(and no lockdown forbidding BPF); rerun with --verbose for libbpf's log",
		       strerror(-err));
	else
		bw_err("loading BPF programs: %s; rerun with --verbose for libbpf's log",
		       strerror(-err));
}

/* Every whole disk in /sys/block, as dev_t; returns how many. */
static int list_disks(__u32 *out, int max)
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

/*
 * Give every device we know of its slot before attaching, so the BPF side
 * only ever looks slots up; devices appearing later get theirs in BPF.
 */
static int fill_slots(struct bw_core *c)
{
	int dfd = bpf_map__fd(c->skel->maps.dev2slot);
	int sfd = bpf_map__fd(c->skel->maps.shared);
	__u32 devs[BW_MAX_WATCH], slot;
	int n;

	if (c->nr_watch) {
		n = c->nr_watch;
		memcpy(devs, c->watch, n * sizeof(devs[0]));
	} else {
		n = list_disks(devs, BW_MAX_WATCH);
	}
	if ((__u32)n > c->max_slots)
		n = c->max_slots;
	for (slot = 0; slot < (__u32)n; slot++) {
		struct bw_dev_shared sh = { .dev = devs[slot] };

		if (bpf_map_update_elem(dfd, &devs[slot], &slot, BPF_ANY) ||
		    bpf_map_update_elem(sfd, &slot, &sh, BPF_ANY)) {
			bw_err("filling the device slot maps: %s", strerror(errno));
			return -errno;
		}
	}
	c->skel->bss->next_slot = n;
	return 0;
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
	return c->healed && c->last_word ? 0 : -ENOMEM;
}

int bw_core_open(struct bw_core **out, const struct bw_core_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct btf *btf = NULL;
	struct bw_core *c;
	int err;

	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);
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
	btf = o->btf_path ? btf__parse(o->btf_path, NULL) : btf__load_vmlinux_btf();
	err = libbpf_get_error(btf);
	if (err) {
		btf = NULL;
		bw_err("no kernel BTF (%s): %s; blkwise needs a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", o->btf_path ?: "/sys/kernel/btf/vmlinux",
		       strerror(-err));
		goto fail;
	}
	c->skel = core_bpf__open_opts(&oo);
	if (!c->skel) {
		err = -errno;
		bw_err("opening the BPF object: %s", strerror(errno));
		goto fail;
	}
	pick_programs(c, btf, o->streams);
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
	err = map_shared(c);
	err = err ?: fill_slots(c);
	if (err)
		goto fail;
	err = core_bpf__attach(c->skel);
	if (err) {
		bw_err("attaching to block tracepoints: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	err = o->bio_cache ? bc_open(c, btf) : 0;
	if (err)
		goto fail;
	btf__free(btf);
	*out = c;
	return 0;
fail:
	btf__free(btf);
	bw_core_close(c);
	return err < 0 ? err : -EINVAL;
}

void bw_core_close(struct bw_core *c)
{
	if (!c)
		return;
	if (c->sh)
		munmap(c->sh, c->sh_len);
	bc_close(c->bc);
	core_bpf__destroy(c->skel);
	free(c->healed);
	free(c->last_word);
	free(c->pcpu_buf);
	free(c);
}

const char *bw_core_attach_mode(const struct bw_core *c)
{
	return c->raw_tp ? "raw_tp" : "tp_btf";
}

static struct bw_snap_dev *snap_dev(struct bw_snap *s, __u32 dev, int cap)
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

static void add_pcpu(struct bw_core *c, struct bw_snap_dev *d, __u64 closed_epoch)
{
	int cpu, op;

	for (cpu = 0; cpu < c->ncpus; cpu++) {
		const struct bw_dev_pcpu *p = &c->pcpu_buf[cpu];

		for (op = 0; op < BW_NR_OPS; op++)
			bw_op_stats_add(&d->op[op], &p->op[op]);
		d->busy_ns += p->busy_ns;
		d->unmatched += p->unmatched;
		d->untracked += p->untracked;
		d->lost += p->lost;
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

/* Forget the issue times left in a slot's part of the per-request table. */
static void clear_rq_states(struct bw_core *c, __u32 slot)
{
	int fd = bpf_map__fd(c->skel->maps.rqs);
	struct bw_rq_state st, zero = {};
	__u32 i, base = slot << c->rq_bits;

	for (i = 0; i < (1u << c->rq_bits); i++) {
		__u32 key = base + i;

		if (!bpf_map_lookup_elem(fd, &key, &st) && st.d_ts)
			bpf_map_update_elem(fd, &key, &zero, BPF_ANY);
	}
}

/*
 * A completion BPF never saw leaves a request counted in flight until its
 * tag is issued again; on a device that then goes idle that would be
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

int bw_core_snapshot(struct bw_core *c, struct bw_snap *s)
{
	int pcpu_fd = bpf_map__fd(c->skel->maps.pcpu);
	int cap = c->max_slots + c->nr_watch;
	__u32 slot, nslots;
	__u64 closed;
	int i;

	s->devs = calloc(cap, sizeof(*s->devs));
	if (!s->devs)
		return -ENOMEM;
	s->nr = 0;
	for (i = 0; i < c->nr_watch; i++)
		snap_dev(s, c->watch[i], cap);
	/* Close the max-depth epoch first, so what we read is final for it. */
	closed = c->skel->bss->epoch;
	__atomic_store_n(&c->skel->bss->epoch, closed + 1, __ATOMIC_SEQ_CST);
	nslots = c->skel->bss->next_slot;
	if (nslots > c->max_slots)
		nslots = c->max_slots;
	s->ts_ns = bw_now_ns();
	for (slot = 0; slot < nslots; slot++) {
		struct bw_dev_shared sh;
		struct bw_snap_dev *d;

		heal_slot(c, slot);
		memcpy(&sh, &c->sh[slot], sizeof(sh));
		if (bpf_map_lookup_elem(pcpu_fd, &slot, c->pcpu_buf)) {
			bw_err("reading BPF map slot %u: %s", slot, strerror(errno));
			return -errno;
		}
		if (!sh.dev)	/* claimed but not yet published */
			continue;
		d = snap_dev(s, (__u32)sh.dev, cap);
		if (!d)
			continue;
		add_pcpu(c, d, closed);
		d->lost += c->healed[slot];
		if (sh.word & BW_INFLIGHT_MASK) {
			d->inflight += sh.word & BW_INFLIGHT_MASK;
			if (s->ts_ns > sh.busy_start)
				d->busy_ns += s->ts_ns - sh.busy_start;
		}
	}
	return 0;
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

	for (qid = 0; qid < BW_MAX_QID; qid++) {
		if (bpf_map_lookup_elem(qfd, &qid, &e) || e.slot == BW_SLOT_NONE || e.q <= 1)
			continue;
		if (bpf_map_lookup_elem(sfd, &e.slot, &sh) || sh.dev != dev)
			continue;
		if (bpf_map_update_elem(qfd, &qid, &zero, BPF_ANY))
			bw_warn("resetting queue map entry %u: %s", qid, strerror(errno));
	}
}

/*
 * Up to max streams, each with its open busy period closed at now_ns, so
 * two reads subtract cleanly.
 */
int bw_core_streams(struct bw_core *c, struct bw_stream_snap *out, int max, __u64 now_ns)
{
	int fd = bpf_map__fd(c->skel->maps.streams);
	struct bw_stream_key key, next;
	void *prev = NULL;
	int n = 0;

	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &out[n].s))
			continue;	/* evicted meanwhile */
		if ((out[n].s.word & BW_INFLIGHT_MASK) && now_ns > out[n].s.busy_start)
			out[n].s.busy_ns += now_ns - out[n].s.busy_start;
		out[n].key = key;
		n++;
	}
	return n;
}

void bw_core_print_memory(const struct bw_core *c, FILE *f)
{
	struct bpf_map *m;
	__u64 total = 0;

	bpf_object__for_each_map(m, c->skel->obj) {
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
	fprintf(f, "blkwise: maps total %.1f MiB (%u device slots, %u request slots each, "
		"%d CPUs); attach %s\n", total / 1048576.0, c->max_slots, 1u << c->rq_bits,
		c->ncpus, c->raw_tp ? "raw_tp" : "tp_btf");
	fprintf(f, "blkwise: slot races %llu, queue-id overflow %llu, slot overflow %llu\n",
		(unsigned long long)c->skel->bss->claim_races,
		(unsigned long long)c->skel->bss->qid_overflow,
		(unsigned long long)c->skel->bss->slot_overflow);
}

int bw_core_prog_stats(const struct bw_core *c, struct bw_prog_stat *out, int max)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, c->skel->obj) {
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

/* ---- bpf/biocache.bpf.c: the per-cpu bio alloc cache ---- */

#define BC_NAMES 1024

struct bw_bc {
	struct biocache_bpf *skel;
	enum bw_bc_method method;
	char why[200];
	int nnames;
	struct { __u64 addr; char name[48]; } names[BC_NAMES];
};

static void bc_read_names(struct bw_bc *b);

/* Load and attach, exact (fentry/fexit too) or with the tracepoint alone. */
static int bc_load(struct bw_bc *b, const struct btf *btf, bool exact)
{
	struct biocache_bpf *s = biocache_bpf__open();
	struct bpf_program *fprogs[5];
	size_t i;
	int err;

	if (!s)
		return -errno;
	fprogs[0] = s->progs.bw_bc_alloc_in;
	fprogs[1] = s->progs.bw_bc_mempool;
	fprogs[2] = s->progs.bw_bc_alloc_out;
	fprogs[3] = s->progs.bw_bc_put_in;
	fprogs[4] = s->progs.bw_bc_put_out;
	for (i = 0; i < 5; i++)
		bpf_program__set_autoload(fprogs[i], exact);
	/* Memory allocation profiling (6.10) renamed it mempool_alloc_noprof. */
	if (exact && btf__find_by_name_kind(btf, "mempool_alloc_noprof", BTF_KIND_FUNC) > 0)
		bpf_program__set_attach_target(s->progs.bw_bc_mempool, 0, "mempool_alloc_noprof");
	err = biocache_bpf__load(s);
	err = err ?: biocache_bpf__attach(s);
	if (err) {
		biocache_bpf__destroy(s);
		return err;
	}
	b->skel = s;
	return 0;
}

/*
 * Exact where fentry/fexit load and attach; else the tracepoint alone,
 * saying why.  Neither: bio cache accounting off, the rest goes on.
 */
static int bc_open(struct bw_core *c, const struct btf *btf)
{
	struct bw_bc *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	c->bc = b;
	bc_read_names(b);
	err = bc_load(b, btf, true);
	if (!err) {
		b->method = BW_BC_EXACT;
		return 0;
	}
	snprintf(b->why, sizeof(b->why), "fentry/fexit on bio_alloc_bioset, bio_put refused: %s",
		 strerror(-err));
	err = bc_load(b, btf, false);
	if (!err) {
		b->method = BW_BC_TRACEPOINT;
		if (c->verbose)
			bw_warn("bio cache: %s; counting REQ_ALLOC_CACHE bios at block_bio_queue only",
				b->why);
		return 0;
	}
	snprintf(b->why + strlen(b->why), sizeof(b->why) - strlen(b->why),
		 "; tp_btf/block_bio_queue refused: %s", strerror(-err));
	bw_warn("bio cache accounting off: %s", b->why);
	return 0;
}

static void bc_close(struct bw_bc *b)
{
	if (!b)
		return;
	biocache_bpf__destroy(b->skel);
	free(b);
}

/*
 * Data symbols that may be bio_sets (fs_bio_set, blkdev_dio_pool, ...),
 * read at load while /proc/kallsyms still shows addresses (the exporter
 * drops privileges); a set is named only by an exact address match.
 */
static void bc_read_names(struct bw_bc *b)
{
	char line[256], sym[128], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && b->nnames < BC_NAMES && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) != 3 || !a ||
		    !strchr("bBdD", type) || (!strstr(sym, "bio") && !strstr(sym, "pool") &&
					       !strstr(sym, "_bs")))
			continue;
		b->names[b->nnames].addr = a;
		snprintf(b->names[b->nnames].name, sizeof(b->names[0].name), "%.47s", sym);
		b->nnames++;
	}
	if (f)
		fclose(f);
}

static void bc_name(const struct bw_bc *b, __u64 addr, char *out, size_t len)
{
	int i;

	for (i = 0; i < b->nnames; i++) {
		if (b->names[i].addr == addr) {
			snprintf(out, len, "%s", b->names[i].name);
			return;
		}
	}
	snprintf(out, len, addr ? "0x%llx" : "none", (unsigned long long)addr);
}

int bw_core_bio_cache(struct bw_core *c, struct bw_bc_snap *s)
{
	struct bw_bc *b = c->bc;
	__u64 key, next, *prev = NULL;
	int fd, cpu, f;

	memset(s, 0, sizeof(*s));
	s->ncpus = c->ncpus;
	if (!b || !b->skel) {
		s->why = b ? b->why : "not asked for";
		return 0;
	}
	s->method = b->method;
	s->why = b->why;
	s->sets = calloc(BW_BC_MAX_SETS, sizeof(*s->sets));
	if (!s->sets)
		return -ENOMEM;
	fd = bpf_map__fd(b->skel->maps.bc_stats);
	while (s->nr < BW_BC_MAX_SETS && !bpf_map_get_next_key(fd, prev, &next)) {
		struct bw_bc_set *set = &s->sets[s->nr];

		key = next;
		prev = &key;
		set->cpu = calloc(c->ncpus, sizeof(*set->cpu));
		if (!set->cpu)
			return -ENOMEM;
		if (bpf_map_lookup_elem(fd, &key, set->cpu)) {
			free(set->cpu);
			set->cpu = NULL;
			continue;
		}
		set->bs = key;
		bc_name(b, key, set->name, sizeof(set->name));
		for (cpu = 0; cpu < c->ncpus; cpu++)
			for (f = 0; f < BW_BC_NR; f++)
				set->sum.v[f] += set->cpu[cpu].v[f];
		s->nr++;
	}
	return 0;
}

void bw_bc_snap_free(struct bw_bc_snap *s)
{
	int i;

	for (i = 0; i < s->nr; i++)
		free(s->sets[i].cpu);
	free(s->sets);
	s->sets = NULL;
	s->nr = 0;
}
