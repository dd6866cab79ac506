// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/record.bpf.c, next to user/load/core.c and through the same
 * setup (libbpf logging, kernel BTF, tp_btf or raw_tp per tracepoint from
 * BTF, the pre-5.11 argument order, the device filter of bw_core_opts).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "load/loader.h"
#include "record.h"
#include "record.skel.h"


struct bw_rec {
	struct record_bpf *skel;
	struct ring_buffer *rb;
	bw_rec_cb cb;
	void *ctx;
	int ncpus;
	bool raw_tp;
	bool io_start;
};

/*
 * Q from block_io_start (6.5+) where it exists, else insert and getrq;
 * insert always, for dispatch stalls (bpf/stall.h).
 */
static void pick_programs(struct bw_rec *r, const struct btf *btf, const struct bw_load_env *env)
{
	struct record_bpf *s = r->skel;
	bool io_start = env->has_io_start;
	struct bpf_program *tp[] = { s->progs.bw_rec_issue, s->progs.bw_rec_complete,
				     s->progs.bw_rec_requeue, s->progs.bw_rec_rq_merge,
				     s->progs.bw_rec_backmerge, s->progs.bw_rec_frontmerge,
				     s->progs.bw_rec_io_start, s->progs.bw_rec_insert, s->progs.bw_rec_getrq };
	struct bpf_program *raw[] = { s->progs.bw_rec_issue_raw, s->progs.bw_rec_complete_raw,
				      s->progs.bw_rec_requeue_raw, s->progs.bw_rec_rq_merge_raw,
				      s->progs.bw_rec_backmerge_raw, s->progs.bw_rec_frontmerge_raw,
				      s->progs.bw_rec_io_start_raw, s->progs.bw_rec_insert_raw,
				      s->progs.bw_rec_getrq_raw };
	size_t i, n = sizeof(tp) / sizeof(tp[0]);

	r->raw_tp = env->raw_tp;
	r->io_start = io_start;
	/* The last three are the Q choice: io_start, else getrq; insert always. */
	for (i = 0; i < n; i++)
		bw_prog_pair(tp[i], raw[i], i < 6 || i == 7 || (i == 6 ? io_start : !io_start),
			     r->raw_tp);
	s->rodata->rq_arg_second = env->rq_arg_second;
	s->rodata->bio_merge_old = bw_tp_nargs(btf, "block_bio_backmerge") == 3;
	s->rodata->getrq_old = bw_tp_nargs(btf, "block_getrq") == 3;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct bw_rec *r = ctx;

	if (size < sizeof(struct bw_trec))
		return 0;
	return r->cb(r->ctx, data);
}

int bw_rec_open(struct bw_rec **out, const struct bw_core_opts *o, __u32 ring_bytes,
		bw_rec_cb cb, void *ctx)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct bw_load_env env;
	struct btf *btf = NULL;
	struct bw_rec *r;
	int err;

	bw_libbpf_setup(o->verbose);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cb = cb;
	r->ctx = ctx;
	err = bw_kernel_btf(o->btf_path, &btf);
	err = err ?: bw_load_env_probe(&env, btf, o->force_raw_tp);
	if (err)
		goto fail;
	r->ncpus = env.ncpus;
	r->skel = record_bpf__open_opts(&oo);
	if (!r->skel) {
		err = -errno;
		bw_err("opening the record BPF object: %s", strerror(errno));
		goto fail;
	}
	pick_programs(r, btf, &env);
	r->skel->rodata->filter_on = o->nr_watch > 0;
	r->skel->rodata->wakeup_at = ring_bytes / 4;
	r->skel->rodata->skip = bw_bench_skip();
	err = bpf_map__set_max_entries(r->skel->maps.events, ring_bytes);
	if (err) {
		bw_err("sizing the ring buffer (%u bytes): %s", ring_bytes, strerror(-err));
		goto fail;
	}
	err = record_bpf__load(r->skel);
	if (err) {
		bw_explain_load_error(err);
		goto fail;
	}
	err = bw_fill_watch_map(bpf_map__fd(r->skel->maps.qwatch), o->nr_watch, o->watch,
				"the device filter map");
	if (err)
		goto fail;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_event, r, NULL);
	if (!r->rb) {
		err = -errno;
		bw_err("opening the ring buffer: %s", strerror(errno));
		goto fail;
	}
	err = record_bpf__attach(r->skel);
	if (err) {
		bw_err("attaching to block tracepoints: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	btf__free(btf);
	*out = r;
	return 0;
fail:
	btf__free(btf);
	bw_rec_close(r);
	return err < 0 ? err : -EINVAL;
}

/*
 * The BPF side wakes us only when a quarter of the buffer waits: after a
 * quiet wait, take what came without a wakeup too.
 */
int bw_rec_poll(struct bw_rec *r, int timeout_ms)
{
	int n = ring_buffer__poll(r->rb, timeout_ms), m;

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	m = ring_buffer__consume(r->rb);
	return m < 0 ? m : n + m;
}

int bw_rec_drops(struct bw_rec *r, __u64 *per_cpu)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.drops), &zero, per_cpu))
		return -errno;
	return 0;
}

int bw_rec_ncpus(const struct bw_rec *r)
{
	return r->ncpus;
}

const char *bw_rec_attach_mode(const struct bw_rec *r)
{
	return r->raw_tp ? "raw_tp" : "tp_btf";
}

bool bw_rec_io_start(const struct bw_rec *r)
{
	return r->io_start;
}

void bw_rec_close(struct bw_rec *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	record_bpf__destroy(r->skel);
	free(r);
}
