// SPDX-License-Identifier: GPL-2.0
/*
 * Loader of bpf/streams.bpf.c: picks the Q event this kernel has
 * (block_io_start, else block_rq_insert and block_rq_issue), attaches with
 * the core's attach type, shares the core's streams maps (the core's
 * completion takes requests out of their streams), and reads the streams
 * back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "load/loader.h"
#include "streams.skel.h"

struct bw_streams {
	struct streams_bpf *skel;
	int scount_fd;
	int ncpus;
	bool fallback;
};

static void pick(struct streams_bpf *s, bool raw_tp, bool fallback)
{
	bw_prog_pair(s->progs.bw_st_io_start, s->progs.bw_st_io_start_raw, !fallback, raw_tp);
	bw_prog_pair(s->progs.bw_st_insert, s->progs.bw_st_insert_raw, fallback, raw_tp);
	bw_prog_pair(s->progs.bw_st_issue, s->progs.bw_st_issue_raw, fallback, raw_tp);
	bw_prog_pair(s->progs.bw_st_merge, s->progs.bw_st_merge_raw, true, raw_tp);
}

/* The streams' device filter: their own devices when named, else the core's. */
static int fill_watched(int fd, const struct bw_core_opts *o)
{
	const char *what = "the streams' device filter";

	if (!o->nr_streams_watch)
		return bw_fill_watch_map(fd, o->nr_watch, o->watch, what);
	return bw_fill_watch_map(fd, o->nr_streams_watch, o->streams_watch, what);
}

int bw_streams_open(struct bw_streams **out, const struct bw_core_opts *o,
		    const struct bw_load_env *env)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);
	struct bw_streams *st = calloc(1, sizeof(*st));
	const char *force = getenv("BW_TEST_STREAMS_FALLBACK");
	int err;

	if (!st)
		return -ENOMEM;
	st->skel = streams_bpf__open_opts(&oo);
	if (!st->skel) {
		err = -errno;
		bw_err("opening the streams BPF object: %s", strerror(errno));
		goto fail;
	}
	/* The fallback is forced only by tests, to exercise it on a 6.5+ kernel. */
	st->fallback = !env->has_io_start || (force && *force == '1');
	pick(st->skel, env->raw_tp, st->fallback);
	st->skel->rodata->rq_arg_second = env->rq_arg_second;
	st->skel->rodata->filter_on = o->nr_watch > 0 || o->nr_streams_watch > 0;
	st->skel->rodata->fallback_q = st->fallback;
	st->skel->rodata->stream_by = o->streams_by;
	st->skel->rodata->rq_hash_bits = env->rq_hash_bits;
	st->skel->rodata->skip = bw_bench_skip();
	st->scount_fd = env->scount_fd;
	st->ncpus = env->ncpus;
	err = bpf_map__reuse_fd(st->skel->maps.rqs, env->rqs_fd);
	err = err ?: bpf_map__reuse_fd(st->skel->maps.streams, env->streams_fd);
	err = err ?: bpf_map__reuse_fd(st->skel->maps.scount, env->scount_fd);
	if (err) {
		bw_err("sharing the core's per-request table and streams maps: %s", strerror(-err));
		goto fail;
	}
	err = streams_bpf__load(st->skel);
	if (err) {
		bw_err("loading the streams BPF programs: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	err = fill_watched(bpf_map__fd(st->skel->maps.qwatch), o);
	if (err)
		goto fail;
	err = streams_bpf__attach(st->skel);
	if (err) {
		bw_err("attaching the streams programs: %s; rerun with --verbose", strerror(-err));
		goto fail;
	}
	*out = st;
	return 0;
fail:
	bw_streams_close(st);
	return err < 0 ? err : -EINVAL;
}

void bw_streams_close(struct bw_streams *st)
{
	if (!st)
		return;
	streams_bpf__destroy(st->skel);
	free(st);
}

struct bpf_object *bw_streams_obj(const struct bw_streams *st)
{
	return st->skel->obj;
}

__u64 bw_streams_epoch(struct bw_streams *st)
{
	return __atomic_fetch_add(&st->skel->bss->epoch, 1, __ATOMIC_SEQ_CST);
}

int bw_streams_read(struct bw_streams *st, struct bw_stream_snap *out, int max, __u64 now_ns)
{
	int fd = bpf_map__fd(st->skel->maps.streams);
	struct bw_skey key, next;
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

/* The per-CPU counters of rare events, summed; 0 or -errno (t then zero). */
static int sum_counts(const struct bw_streams *st, struct bw_scount *t)
{
	struct bw_scount *pc = calloc(st->ncpus, sizeof(*pc));
	__u32 zero = 0;
	int i, err = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (pc && !(err = bpf_map_lookup_elem(st->scount_fd, &zero, pc) ? -errno : 0)) {
		for (i = 0; i < st->ncpus; i++) {
			t->q_events += pc[i].q_events;
			t->c_events += pc[i].c_events;
			t->stale += pc[i].stale;
			t->no_room += pc[i].no_room;
			t->owner_bio += pc[i].owner_bio;
			t->owner_task += pc[i].owner_task;
		}
	}
	free(pc);
	return err;
}

void bw_streams_print(const struct bw_streams *st, FILE *f)
{
	struct bw_scount t;

	sum_counts(st, &t);
	fprintf(f, "blkwise: streams by %s, Q from %s; Q %llu, C %llu, stale %llu, no room %llu",
		st->skel->rodata->stream_by == BW_STREAMS_CGROUP ? "cgroup" : "process",
		st->fallback ? "block_rq_insert/block_rq_issue (fallback)" : "block_io_start",
		(unsigned long long)t.q_events, (unsigned long long)t.c_events,
		(unsigned long long)t.stale, (unsigned long long)t.no_room);
	if (st->skel->rodata->stream_by == BW_STREAMS_CGROUP)
		fprintf(f, "; charged to the bio's cgroup %llu, to the current task's %llu",
			(unsigned long long)t.owner_bio, (unsigned long long)t.owner_task);
	fputc('\n', f);
}

int bw_streams_owners(const struct bw_streams *st, __u64 *bio, __u64 *task)
{
	struct bw_scount t;
	int err = sum_counts(st, &t);

	*bio = t.owner_bio;
	*task = t.owner_task;
	return err;
}
