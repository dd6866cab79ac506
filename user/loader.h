/* SPDX-License-Identifier: GPL-2.0 */
/* The one load/attach path of bpf/core.bpf.c, shared by every subcommand. */
#ifndef BLKWISE_LOADER_H
#define BLKWISE_LOADER_H

#include "blkwise.h"
#include "biocache.h"

struct bw_core_opts {
	const char *btf_path;	/* kernel BTF elsewhere than /sys/kernel/btf/vmlinux */
	bool force_raw_tp;	/* exercise the raw_tp fallback on a BTF kernel */
	bool streams;
	bool verbose;
	bool bio_cache;		/* also bpf/biocache.bpf.c (bw_core_bio_cache) */
	int max_devices;	/* 0: sized from the devices present */
	int nr_watch;		/* 0: every device */
	__u32 watch[BW_MAX_WATCH];
};

struct bw_stream_snap {
	struct bw_stream_key key;
	struct bw_stream s;
};

struct bw_core;

int bw_core_open(struct bw_core **out, const struct bw_core_opts *opts);
void bw_core_close(struct bw_core *c);
/* Fill s (devices with a slot, plus every watched one); closes a max-depth epoch. */
int bw_core_snapshot(struct bw_core *c, struct bw_snap *s);
void bw_snap_free(struct bw_snap *s);
/* A device went away: let a new device on its queue id claim a fresh slot. */
void bw_core_forget_dev(struct bw_core *c, __u32 dev);
/* Up to max streams, open busy periods closed at now_ns; how many, or -errno. */
int bw_core_streams(struct bw_core *c, struct bw_stream_snap *out, int max, __u64 now_ns);
const char *bw_core_attach_mode(const struct bw_core *c);

/* A loaded program's run time and count (counted while BPF stats are on). */
struct bw_prog_stat {
	char name[64];
	__u64 run_ns;
	__u64 run_cnt;
};
/* Up to max loaded programs; how many, or -errno. */
int bw_core_prog_stats(const struct bw_core *c, struct bw_prog_stat *out, int max);
void bw_core_print_memory(const struct bw_core *c, FILE *f);

/*
 * The per-cpu bio alloc cache (bpf/biocache.bpf.c), counted since load:
 * exact where fentry/fexit load, else what block_bio_queue shows.
 */
enum bw_bc_method { BW_BC_OFF, BW_BC_TRACEPOINT, BW_BC_EXACT };

struct bw_bc_set {
	__u64 bs;			/* struct bio_set address; 0: bios of no set */
	char name[48];			/* its symbol, from /proc/kallsyms, else the address */
	struct bw_bc_stats sum;		/* over CPUs */
	struct bw_bc_stats *cpu;	/* ncpus entries */
};

struct bw_bc_snap {
	enum bw_bc_method method;
	const char *why;		/* why not exact ("" when exact) */
	int ncpus;
	int nr;
	struct bw_bc_set *sets;
};

/* Fill s (method BW_BC_OFF when not loaded); 0 or -errno.  Free with bw_bc_snap_free. */
int bw_core_bio_cache(struct bw_core *c, struct bw_bc_snap *s);
void bw_bc_snap_free(struct bw_bc_snap *s);

#endif /* BLKWISE_LOADER_H */
