/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loaders of the BPF objects (user/load/): one file per object, over
 * the helper they share (object.c).  No loader calls another; the watch
 * session (user/watch/watch.c) opens the core and, with what the core found
 * out about the kernel (struct bw_load_env), the optional objects.
 */
#ifndef BLKWISE_LOADER_H
#define BLKWISE_LOADER_H

#include "sys/sys.h"
#include "streams.h"
#include "biocache.h"
#include "cgroups.h"

struct bpf_object;
struct bpf_program;
struct btf;

struct bw_core_opts {
	const char *btf_path;	/* kernel BTF elsewhere than /sys/kernel/btf/vmlinux */
	bool force_raw_tp;	/* exercise the raw_tp fallback on a BTF kernel */
	bool exact;		/* the exact tier (bpf/core.bpf.c); else light, unless streams */
	bool sampler;		/* with exact: loaded, attached only for slices (bw_core_slice_*) */
	int handoff_fd;		/* sampler: the light tier's clock at C (bpf/handoff.bpf.h); 0: none */
	bool streams;
	enum bw_stream_by streams_by;	/* with streams: process (default) or cgroup */
	bool verbose;
	bool biocache;		/* also bpf/biocache.bpf.c (bw_watch_biocache) */
	bool cgroups;		/* also bpf/cgroups.bpf.c (bw_watch_cgroups) */
	int max_devices;	/* 0: sized from the devices present */
	int nr_watch;		/* 0: every device */
	__u32 watch[BW_MAX_WATCH];
	int nr_streams_watch;	/* streams on these only; 0: the devices watched */
	__u32 streams_watch[BW_MAX_WATCH];
};

/* What the kernel offers, as every object's loader needs it (bw_load_env_probe). */
struct bw_load_env {
	bool raw_tp;
	bool rq_arg_second;	/* pre-5.11 request tracepoints: (q, rq) */
	bool bio_arg_second;	/* pre-5.11 block_bio_queue(q, bio) */
	bool has_io_start;	/* block_io_start (6.5+) */
	bool have_fetch;	/* BPF atomic fetch-and-add, cmpxchg (5.12+) */
	bool mempool_noprof;	/* mempool_alloc is mempool_alloc_noprof (6.10+) */
	bool has_biocache;	/* the per-cpu bio alloc cache, REQ_ALLOC_CACHE (5.15+) */
	bool plug_clock;	/* the block layer's stamps come from a plug's cached clock (6.9+) */
	int ncpus;
	/* Set by bw_core_open: the core's per-request table and streams' maps. */
	int rqs_fd, streams_fd, scount_fd;
	int handoff_fd;		/* the light tier's, for its sampler; -1 on the exact tier */
	__u32 rq_hash_bits;
};

/* object.c: what every loader shares */
void bw_libbpf_setup(bool verbose);
/* The kernel's BTF (or path's); 0, or -errno after saying what is missing. */
int bw_kernel_btf(const char *path, struct btf **out);
/* Arguments of a tracepoint from its btf_trace_* typedef; -1 when absent. */
int bw_tp_nargs(const struct btf *btf, const char *tp);
/* env from btf (raw_tp forced, or when BTF lacks the tracepoints) and probes; 0 or -errno. */
int bw_load_env_probe(struct bw_load_env *env, const struct btf *btf, bool force_raw_tp);
/* A program's two copies (tp_btf, raw_tp): the one for this kernel loads when wanted. */
void bw_prog_pair(struct bpf_program *tp_btf, struct bpf_program *raw, bool want, bool raw_tp);
void bw_explain_load_error(int err);
/* BLKWISE_BENCH_SKIP (bpf/core.h BW_SKIP_*): tools/bench.sh's profile only. */
__u32 bw_bench_skip(void);
/* A device filter map (dev_t -> 1) of devs; what names it in errors. */
int bw_fill_watch_map(int fd, int n, const __u32 *devs, const char *what);
/* Slot i to devs[i] in a dev2slot hash and a bw_dev_shared array. */
int bw_fill_dev_slots(int dev2slot_fd, int shared_fd, const __u32 *devs, int n);
/*
 * A slot of a per-CPU bw_dev_pcpu map into buf, and its 64-bit histograms
 * (hist[slot], allocated at first use; user/model/snap.c extends them); 0 or -errno.
 */
int bw_slot_read(int pcpu_fd, __u32 slot, struct bw_dev_pcpu *buf, struct bw_op_stats **hist);
/* Slots [0, nslots) read and their histograms extended, nothing added anywhere. */
int bw_slots_refresh(int pcpu_fd, __u32 nslots, struct bw_dev_pcpu *buf, int ncpus,
		     struct bw_op_stats **hist);
/* One line per map of obj (per-CPU values for ncpus); their bytes. */
__u64 bw_obj_print_maps(const struct bpf_object *obj, int ncpus, FILE *f);
/* obj's loaded programs into out[n..max); the new count, or -errno. */
int bw_obj_prog_stats(const struct bpf_object *obj, struct bw_prog_stat *out, int max, int n);

/* core.c: bpf/core.bpf.c */
struct bw_core;
int bw_core_open(struct bw_core **out, const struct bw_core_opts *opts);
void bw_core_close(struct bw_core *c);
/* The kernel as the core found it, with its shared maps: for the other objects. */
const struct bw_load_env *bw_core_env(const struct bw_core *c);
struct bpf_object *bw_core_obj(const struct bw_core *c);
/*
 * Fill s (devices with a slot, plus every watched one, with room for extra
 * more); closes a max-depth epoch.
 */
int bw_core_snapshot(struct bw_core *c, struct bw_snap *s, int extra);
/*
 * The light tier's timing slices (bpf/light.bpf.c): where the kernel's
 * stamps are a plug's cached clock (6.9+), its Q and issue programs are
 * attached (BW_SAMPLING_ARM: they do nothing yet), time requests
 * themselves while a slice runs (BW_SAMPLING_ON), its completion program
 * looks them up until they are back (BW_SAMPLING_DRAIN), then it stops
 * and they are detached (BW_SAMPLING_OFF).  Snapshots carry what they
 * timed (xop).  bw_core_sampled_out: requests timed and not completed yet.
 */
#define BW_SAMPLING_ARM 3
bool bw_core_can_sample(const struct bw_core *c);
int bw_core_sampling(struct bw_core *c, int state);
__u64 bw_core_sampled_out(struct bw_core *c);
/* The light tier's programs attached or not (a ceiling's share of the time); 0 or -errno. */
int bw_core_light_attach(struct bw_core *c, bool on);
/* An exact slice runs beside the light tier: hand it the completion's clock (bpf/handoff.bpf.h). */
void bw_core_handoff(struct bw_core *c, bool on);
/* Between snapshots more than 10 s apart: keeps 32-bit histogram buckets from wrapping. */
int bw_core_refresh(struct bw_core *c);
#define BW_REFRESH_NS (10ULL * 1000000000ULL)
/*
 * The exact tier as a sampler (opts.sampler): a slice starts from a clean
 * in-flight state (words, per-request and wait tables) and attaches; its
 * end detaches.  Figures are the deltas of snapshots taken within a slice.
 */
int bw_core_slice_begin(struct bw_core *c);
/*
 * A slice's end in two steps: its issues no longer seen (every program
 * detached but the completion's), so that the requests it saw issued
 * complete within it, then, once bw_core_inflight is 0 (or the caller gave
 * up waiting), everything detached.
 */
void bw_core_slice_drain(struct bw_core *c);
__u64 bw_core_inflight(const struct bw_core *c);
void bw_core_slice_end(struct bw_core *c);
/* A device went away: let a new device on its queue id claim a fresh slot. */
void bw_core_forget_dev(struct bw_core *c, __u32 dev);
const char *bw_core_attach_mode(const struct bw_core *c);
/* The light tier (bpf/light.bpf.c) is loaded, not the exact one. */
bool bw_core_light(const struct bw_core *c);
/* Every object's maps (the core's, then others[]), their total and the core's sizing. */
void bw_core_print_memory(const struct bw_core *c, struct bpf_object *const *others, int nothers,
			  FILE *f);

/* bio.c: bpf/bio.bpf.c.  *out stays NULL when there is no bio-based device to watch. */
struct bw_bio;
/* The cgroups object's series maps, which the bio object counts into too (export --cgroups). */
struct bw_cg_fds {
	int cgio, cgcount;
};
/* cg: the cgroups object's maps, NULL without --cgroups. */
int bw_bio_open(struct bw_bio **out, const struct bw_core_opts *o, const struct bw_load_env *env,
		const struct bw_cg_fds *cg);
void bw_bio_close(struct bw_bio *b);
struct bpf_object *bw_bio_obj(const struct bw_bio *b);
__u32 bw_bio_slots(const struct bw_bio *b);
/* Closes the bio devices' max-depth epoch, and adds their devices to s (up to s->cap). */
int bw_bio_snapshot(struct bw_bio *b, struct bw_snap *s);
int bw_bio_refresh(struct bw_bio *b);
void bw_bio_print(const struct bw_bio *b, FILE *f);

/* streams.c: bpf/streams.bpf.c, over the core's streams maps (env). */
struct bw_stream_snap {
	struct bw_skey key;
	struct bw_stream s;
};
struct bw_streams;
int bw_streams_open(struct bw_streams **out, const struct bw_core_opts *o,
		    const struct bw_load_env *env);
void bw_streams_close(struct bw_streams *st);
struct bpf_object *bw_streams_obj(const struct bw_streams *st);
/* Moves the max-depth epoch; returns the one it closed. */
__u64 bw_streams_epoch(struct bw_streams *st);
/* Up to max streams, open busy periods closed at now_ns; how many, or -errno. */
int bw_streams_read(struct bw_streams *st, struct bw_stream_snap *out, int max, __u64 now_ns);
void bw_streams_print(const struct bw_streams *st, FILE *f);
/* By cgroup: Qs charged to their bio's cgroup, and to the current task's; 0 or -errno. */
int bw_streams_owners(const struct bw_streams *st, __u64 *bio, __u64 *task);

/* cgroups.c: bpf/cgroups.bpf.c, per device, op and owning cgroup. */
struct bw_cg_series {
	struct bw_cg_key key;
	struct bw_cg_val v;	/* summed over CPUs */
};
struct bw_cgio;
int bw_cgio_open(struct bw_cgio **out, const struct bw_core_opts *o,
		 const struct bw_load_env *env);
/* Its series maps, for the bio object's bio-based devices. */
void bw_cgio_fds(const struct bw_cgio *c, struct bw_cg_fds *fds);
void bw_cgio_close(struct bw_cgio *c);
struct bpf_object *bw_cgio_obj(const struct bw_cgio *c);
/* Up to max series; how many. */
int bw_cgio_read(struct bw_cgio *c, struct bw_cg_series *out, int max);
/* A cgroup that went: its series deleted. */
void bw_cgio_forget(struct bw_cgio *c, __u64 cgroup);
/* Its rare events, summed over CPUs; 0 or -errno. */
int bw_cgio_counts(const struct bw_cgio *c, struct bw_cg_count *t);

/* biocache.c: bpf/biocache.bpf.c.  *out is set even when nothing loads: the snapshot says why. */
struct bw_bc;
int bw_bc_open(struct bw_bc **out, const struct bw_load_env *env, bool verbose);
void bw_bc_close(struct bw_bc *b);
struct bpf_object *bw_bc_obj(const struct bw_bc *b);	/* NULL when not loaded */
/* Fill s (method BW_BC_OFF when not loaded); 0 or -errno.  Free with bw_bc_snap_free. */
int bw_bc_snapshot(const struct bw_bc *b, int ncpus, struct bw_bc_snap *s);

/* record.c: bpf/record.bpf.c (btf_path, force_raw_tp, watch of opts). */
struct bw_rec;
struct bw_trec;
typedef int (*bw_rec_cb)(void *ctx, const struct bw_trec *ev);
int bw_rec_open(struct bw_rec **out, const struct bw_core_opts *opts, __u32 ring_bytes,
		bw_rec_cb cb, void *ctx);
/* Events handed to cb, or -errno; waits up to timeout_ms for the first. */
int bw_rec_poll(struct bw_rec *r, int timeout_ms);
/* Ring-buffer drops so far per CPU (bw_rec_ncpus of them); 0 or -errno. */
int bw_rec_drops(struct bw_rec *r, __u64 *per_cpu);
int bw_rec_ncpus(const struct bw_rec *r);
const char *bw_rec_attach_mode(const struct bw_rec *r);
bool bw_rec_io_start(const struct bw_rec *r);
void bw_rec_close(struct bw_rec *r);

#endif /* BLKWISE_LOADER_H */
