/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by bpf/streams.bpf.c and its loader user/streams.c.
 * A stream's figures are struct bw_stream (bpf/core.h); what is new here is
 * its key, which names either a process or a cgroup, and the per-request
 * state that carries a request's stream from Q to C.
 */
#ifndef BLKWISE_STREAMS_H
#define BLKWISE_STREAMS_H

#include "core.h"

/* What a stream is: the submitting process (tgid) or its cgroup (v2 id). */
enum bw_stream_by {
	BW_STREAMS_PROCESS,
	BW_STREAMS_CGROUP,
};

struct bw_skey {
	__u32 dev;		/* MKDEV of the disk */
	__u32 by;		/* enum bw_stream_by */
	__u64 id;		/* tgid, or cgroup id (the cgroup2 directory's inode) */
};

/* Per request, keyed by the request's address; kept after C for its next Q. */
struct bw_srq {
	__u64 q_ts;		/* Q time; 0 when not in flight */
	__u64 start_ns;		/* rq->start_time_ns at Q: tells a reused request apart */
	struct bw_skey key;
};

#endif /* BLKWISE_STREAMS_H */
