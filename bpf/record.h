/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-request event of `blkwise record`: what bpf/record.bpf.c puts in
 * its ring buffer, and, unchanged, what a trace file's event blocks hold
 * (user/model/trace.h).  One fixed size, so the writer copies and the reader
 * indexes; blktrace captures are read into the same struct, as are the
 * 64-byte events of a version 1 trace (without cgroup).
 */
#ifndef BLKWISE_RECORD_H
#define BLKWISE_RECORD_H

/* Event types; the letters are blktrace's. */
enum bw_ev_type {
	BW_EV_QUEUE = 1,	/* Q: block_io_start (6.5+); blktrace: a bio queued */
	BW_EV_GETRQ,		/* G: a request allocated for a bio */
	BW_EV_INSERT,		/* I: block_rq_insert, into the scheduler */
	BW_EV_ISSUE,		/* D: block_rq_issue, to the driver */
	BW_EV_COMPLETE,		/* C: block_rq_complete */
	BW_EV_REQUEUE,		/* R: block_rq_requeue, D undone */
	BW_EV_RQ_MERGE,		/* M: a request merged into another and freed */
	BW_EV_BACKMERGE,	/* A bio appended to a request */
	BW_EV_FRONTMERGE,	/* A bio prepended to a request */
	BW_EV_COMM,		/* a process's name, before its first event */
	BW_EV_MAX,
};

#define BW_TAG_NONE 0xffffu
#define BW_COMM_LEN 16

struct bw_trec {
	__u64 ts;		/* ns, the file header's clock */
	union {
		struct {
			__u64 rq;	/* the request's identity while it lives; 0: by sector */
			__u64 sector;
		};
		char comm[BW_COMM_LEN];	/* BW_EV_COMM */
	};
	__u64 alloc_ns;		/* D, C: when the request was allocated (0: unknown) */
	__u32 dev;		/* MKDEV(major, first_minor) of the disk */
	__u32 bytes;		/* C: bytes completed; else the request's or bio's size */
	__u32 flags;		/* cmd_flags / bi_opf: op in the low 8 bits */
	__u32 pid;		/* tgid of the task current at the event */
	__s32 error;		/* C: the blk_status_t */
	__u16 nr_seg;
	__u16 tag;		/* allocation tag, BW_TAG_NONE when none */
	__u16 hwq;
	__u16 cpu;
	__u8 type;		/* enum bw_ev_type */
	__u8 xflags;		/* BW_X_* */
	__u8 pad[2];
	/*
	 * The cgroup (v2 id) a stream by cgroup charges the request or bio
	 * to, as bpf/rq.bpf.h's bw_stream_owner gives it: the bio's blkg's,
	 * else (BW_X_OWNER_TASK) the current task's, which names the
	 * submitter at Q, G and I only.  Set at Q, I, G and bio merges, where
	 * a stream takes it; 0 at D, C, requeue and request merge, and where
	 * unknown (a version 1 trace, a blktrace capture).
	 */
	__u64 cgroup;
};
#define BW_X_PARTIAL 1u		/* C: fewer bytes than the request has left: it stays in flight */
#define BW_X_EMPTY_FLUSH 2u	/* C: an empty PREFLUSH write, never issued (bpf/rq.bpf.h) */
#define BW_X_OWNER_TASK 4u	/* cgroup is the current task's, not the bio's blkg's */

#endif /* BLKWISE_RECORD_H */
