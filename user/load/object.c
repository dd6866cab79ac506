// SPDX-License-Identifier: GPL-2.0
/*
 * What every loader of a BPF object shares (as libbpf-tools' trace_helpers
 * serves its tools): libbpf's setup, the kernel's BTF, what it says of
 * this kernel (tp_btf or raw_tp, the pre-5.11 argument orders, the
 * tracepoints and functions it has, fetch atomics), the choice between a
 * program's two copies, load-error messages, the device filter and slot
 * maps, and a loaded object's maps and run statistics.  Each loader
 * (core.c, bio.c, streams.c, biocache.c, record.c) builds on this and on
 * nothing of another loader.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "load/loader.h"

static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

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

/* Whether enum NAME of btf has a value VAL. */
static bool btf_enum_has(const struct btf *btf, const char *name, const char *val)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	id = btf ? btf__find_by_name_kind(btf, name, BTF_KIND_ENUM) : -1;
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), val))
			return true;
	return false;
}

/* Whether struct NAME of btf has a member MEMBER. */
static bool btf_struct_has(const struct btf *btf, const char *name, const char *member)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int id, i;

	id = btf ? btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT) : -1;
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

int bw_load_env_probe(struct bw_load_env *env, const struct btf *btf, bool force_raw_tp)
{
	memset(env, 0, sizeof(*env));
	env->ncpus = libbpf_num_possible_cpus();
	if (env->ncpus <= 0) {
		int err = env->ncpus ?: -EINVAL;

		bw_err("cannot count possible CPUs (/sys/devices/system/cpu/possible): %s",
		       strerror(-err));
		return err;
	}
	env->raw_tp = force_raw_tp || bw_tp_nargs(btf, "block_rq_issue") <= 0;
	/*
	 * block_rq_issue/insert/merge/requeue lost their request_queue argument in 5.11
	 * (commit a54895fa057c, "block: remove the request_queue to argument
	 * request based tracepoints"), backported to 5.10.137: ask BTF.
	 */
	env->rq_arg_second = bw_tp_nargs(btf, "block_rq_issue") == 2;
	env->bio_arg_second = bw_tp_nargs(btf, "block_bio_queue") == 2;
	env->has_io_start = bw_tp_nargs(btf, "block_io_start") > 0;
	env->have_fetch = have_atomic_fetch();
	env->mempool_noprof = btf && btf__find_by_name_kind(btf, "mempool_alloc_noprof",
							    BTF_KIND_FUNC) > 0;
	/* The per-cpu bio alloc cache came with 5.15 ("block: add a bio cache"). */
	env->has_biocache = btf_enum_has(btf, "req_flag_bits", "__REQ_ALLOC_CACHE");
	/* 6.9's "block: cache current nsec time in struct blk_plug" (bpf/complete.h). */
	env->plug_clock = btf_struct_has(btf, "blk_plug", "cur_ktime");
	return 0;
}

void bw_prog_pair(struct bpf_program *tp_btf, struct bpf_program *raw, bool want, bool raw_tp)
{
	bpf_program__set_autoload(tp_btf, want && !raw_tp);
	bpf_program__set_autoload(raw, want && raw_tp);
}

void bw_explain_load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		bw_err("loading BPF programs: %s; needs root or CAP_BPF+CAP_PERFMON "
		       "(and no lockdown forbidding BPF); rerun with --verbose for libbpf's log",
		       strerror(-err));
	else
		bw_err("loading BPF programs: %s; rerun with --verbose for libbpf's log",
		       strerror(-err));
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

int bw_fill_watch_map(int fd, int n, const __u32 *devs, const char *what)
{
	__u8 one = 1;
	int i, err;

	for (i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, &devs[i], &one, BPF_ANY)) {
			err = -errno;
			bw_err("filling %s: %s", what, strerror(-err));
			return err;
		}
	}
	return 0;
}

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

int bw_slot_read(int pcpu_fd, __u32 slot, struct bw_dev_pcpu *buf, struct bw_op_stats **hist)
{
	if (bpf_map_lookup_elem(pcpu_fd, &slot, buf))
		return -errno;
	if (!hist[slot])
		hist[slot] = calloc(BW_NR_OPS, sizeof(*hist[slot]));
	return hist[slot] ? 0 : -ENOMEM;
}

int bw_slots_refresh(int pcpu_fd, __u32 nslots, struct bw_dev_pcpu *buf, int ncpus,
		     struct bw_op_stats **hist)
{
	__u32 slot;
	int err;

	for (slot = 0; slot < nslots; slot++) {
		err = bw_slot_read(pcpu_fd, slot, buf, hist);
		if (err)
			return err;
		bw_pcpu_extend(buf, ncpus, hist[slot]);
	}
	return 0;
}

__u64 bw_obj_print_maps(const struct bpf_object *obj, int ncpus, FILE *f)
{
	struct bpf_map *m;
	__u64 total = 0;

	bpf_object__for_each_map(m, obj) {
		__u64 vsz = bpf_map__value_size(m), n = bpf_map__max_entries(m);
		__u64 bytes;

		if (bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY)
			vsz = ((vsz + 7) & ~7ULL) * ncpus;
		bytes = n * (vsz + bpf_map__key_size(m));
		total += bytes;
		fprintf(f, "blkwise: map %-14s %8llu entries x %6llu B = %8.1f KiB\n",
			bpf_map__name(m), (unsigned long long)n, (unsigned long long)vsz,
			bytes / 1024.0);
	}
	return total;
}

int bw_obj_prog_stats(const struct bpf_object *obj, struct bw_prog_stat *out, int max, int n)
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
