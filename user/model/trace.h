/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace files of `blkwise record`, and the readers `analyze` uses (ours and
 * blktrace's).  Pure: stdio only.
 *
 * Layout (little-endian, every block 8-byte aligned):
 *
 *   file head   "BWTRACE\0"  u32 version  u32 byte-order mark 0x1a2b3c4d
 *   block       u32 type  u32 len | body | u32 len  u32 type
 *
 * len is the whole block's, head and tail included, as in pcapng: a reader
 * skips a type it does not know, checks the tail against the head, and stops
 * cleanly at the last whole record of a file cut short.  The first block is
 * INFO (clock, kernel release, device table); then EVENTS blocks of fixed-size
 * struct bw_trec, LOST blocks (cumulative ring-buffer drops per CPU, about
 * once a second), CGROUP blocks (a cgroup id the events carry and its path,
 * once each, before the first events that carry it are written) and, in a
 * file closed properly, one END block.  Version 1 had no CGROUP blocks and
 * 64-byte events (no cgroup); it is still read, its events' cgroup 0.
 */
#ifndef BLKWISE_TRACE_H
#define BLKWISE_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "record.h"

#define BW_TRACE_MAGIC "BWTRACE"
#define BW_TRACE_VERSION 2
#define BW_TREC_V1_SIZE 64	/* version 1's events: struct bw_trec up to cgroup */
#define BW_TRACE_BOM 0x1a2b3c4du
#define BW_TRACE_MAX_BLOCK (4u << 20)	/* readers refuse larger blocks */
#define BW_TRACE_MAX_CPUS 4096
#define BW_TRACE_MAX_DEVS 256
#define BW_TRACE_BLOCK_EVENTS 1024	/* records per EVENTS block written */
#define BW_TRACE_MAX_PATH 4096	/* a cgroup's path, NUL included */

enum bw_tblock_type {
	BW_TB_INFO = 1,
	BW_TB_EVENTS,
	BW_TB_LOST,
	BW_TB_END,
	BW_TB_CGROUP,
};

/* CGROUP block body: this, then the path, NUL-terminated ("" if unknown). */
struct bw_tcgroup {
	__u64 id;
};

/* The cgroups a trace names, as read so far. */
struct bw_tcgroups {
	struct bw_tcg {
		__u64 id;
		char *path;
	} *e;
	int n, cap;
};

/* id's path, or NULL when the trace does not name it. */
const char *bw_tcgroup_path(const struct bw_tcgroups *c, __u64 id);

struct bw_tfile_head {
	char magic[8];
	__u32 version;
	__u32 bom;
};

struct bw_tblock {
	__u32 type;
	__u32 len;
};

struct bw_ttail {
	__u32 len;
	__u32 type;
};

/* A device as it was when recording started. */
struct bw_tdev {
	__u32 dev;
	__u32 rotational;
	char name[32];
	char scheduler[32];	/* the active one, "none" */
	char model[64];
	__u64 size_sectors;
	__u32 nr_requests;
	__u32 nr_hw_queues;
	__u32 max_sectors_kb;
	__u32 logical_block_size;
	__u32 read_ahead_kb;
	__u32 nomerges;
	__s32 slice_idle_us;	/* BFQ/mq-deadline knob; -1 when the scheduler has none */
	__u32 pad;
};

/* INFO block body; ndevs struct bw_tdev follow it. */
struct bw_tinfo {
	__u64 start_ns;		/* the clock's value when recording started */
	__u64 start_unix_ns;	/* wall clock at the same moment */
	char clock[16];		/* "monotonic": bpf_ktime_get_ns */
	char release[64];	/* uname -r of the recording kernel */
	char hostname[64];
	char source[16];	/* "blkwise", or "blktrace" for a capture read in */
	char attach[16];	/* tp_btf or raw_tp */
	__u32 ncpus;
	__u32 ndevs;
	__u32 rec_size;		/* sizeof(struct bw_trec) */
	__u32 flags;
};
#define BW_TINFO_Q_IO_START 1u	/* Q events from block_io_start (else insert) */
#define BW_TINFO_INSERTS 2u	/* insert events recorded whatever Q's source (dispatch stalls) */

/* LOST and END bodies: cumulative drops per CPU, ncpus of them after this. */
struct bw_tlost {
	__u64 ts;
	__u64 events;		/* events written so far */
	__u32 ncpus;
	__u32 reason;		/* END: why recording stopped */
};

enum bw_tend_reason { BW_END_SIGNAL = 1, BW_END_DURATION, BW_END_MAX_SIZE, BW_END_ERROR };

/* Writer: buffered into EVENTS blocks; errors are the FILE's (ferror). */
struct bw_twriter {
	FILE *f;
	__u64 off;
	__u64 events;
	__u32 ncpus;
	int n;
	struct bw_trec buf[BW_TRACE_BLOCK_EVENTS];
};

int bw_tw_begin(struct bw_twriter *w, FILE *f, const struct bw_tinfo *info,
		const struct bw_tdev *devs);
int bw_tw_event(struct bw_twriter *w, const struct bw_trec *ev);
int bw_tw_flush(struct bw_twriter *w);
int bw_tw_lost(struct bw_twriter *w, __u64 ts, const __u64 *lost);
int bw_tw_end(struct bw_twriter *w, __u64 ts, const __u64 *lost, __u32 reason);
/* A cgroup the events name, once: before the events that carry it are flushed. */
int bw_tw_cgroup(struct bw_twriter *w, __u64 id, const char *path);

/*
 * A source of events: our reader or blktrace's.  next gives the next event
 * (1), the end (0) or an error (-1, with the message in err); rewind starts
 * over for another pass.
 */
struct bw_tsource {
	int (*next)(void *ctx, const struct bw_trec **ev);
	int (*rewind)(void *ctx);
	void *ctx;
	const struct bw_tinfo *info;
	const struct bw_tdev *devs;
	const __u64 *lost;	/* per CPU, info->ncpus of them */
	const struct bw_tcgroups *cgroups;	/* read so far (all of them at the end) */
	bool *truncated;	/* the input ended before its end mark */
	char *err;		/* the last error or warning, one line */
};

/*
 * The source of reader r, whatever its kind: every reader holds info,
 * devs, lost, cgroups, truncated and err under these names.
 */
#define BW_TSOURCE_OF(r, next_fn, rewind_fn)					\
	((struct bw_tsource){ .next = (next_fn), .rewind = (rewind_fn), .ctx = (r),	\
			      .info = &(r)->info, .devs = (r)->devs, .lost = (r)->lost,	\
			      .cgroups = &(r)->cgroups, .truncated = &(r)->truncated,	\
			      .err = (r)->err })

struct bw_treader {
	FILE *f;
	const char *name;
	__u64 off;		/* of the next byte read */
	__u64 first_block;
	struct bw_tinfo info;
	struct bw_tdev *devs;
	struct bw_tcgroups cgroups;
	struct bw_trec *buf;
	__u32 buf_cap;
	__u32 rec_size;		/* the file's: sizeof(struct bw_trec), or version 1's */
	__u32 version;
	bool cgroups_done;	/* read on the first pass; skipped on the next ones */
	size_t n, i;
	__u64 *lost;
	bool ended, truncated, done;
	char err[512];
};

/* 0, or -1 with r->err naming the file and offset. */
int bw_tr_open(struct bw_treader *r, FILE *f, const char *name);
int bw_tr_next(struct bw_treader *r, const struct bw_trec **ev);
int bw_tr_rewind(struct bw_treader *r);
void bw_tr_close(struct bw_treader *r);
void bw_tr_source(struct bw_treader *r, struct bw_tsource *s);

/* blktrace.c: captures of blktrace -o NAME (NAME.blktrace.CPU files). */
#define BW_BT_MAX_FILES 256
struct bw_btreader;
/* files: the per-CPU files; 0, or -1 with err set. */
int bw_bt_open(struct bw_btreader **out, FILE **files, const char **names, int nfiles,
	       char *err, size_t errlen);
void bw_bt_close(struct bw_btreader *b);
void bw_bt_source(struct bw_btreader *b, struct bw_tsource *s);
/* Does the start of a file look like blktrace's (either byte order)? */
bool bw_bt_magic(const void *buf, size_t len);

#endif /* BLKWISE_TRACE_H */
