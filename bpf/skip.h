/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parts of the hot paths tools/bench.sh leaves out to price them
 * (BENCH_PROFILE=1): the rodata `skip` of the core, streams and record
 * objects, from BLKWISE_BENCH_SKIP.  Figures measured so are wrong by design.
 */
#ifndef BLKWISE_SKIP_H
#define BLKWISE_SKIP_H

/* The core (bpf/core.bpf.c) */
#define BW_SKIP_CLOCK_D (1u << 0)	/* D's time is rq->start_time_ns, no clock read */
#define BW_SKIP_ATOMIC (1u << 1)	/* the in-flight word updated without atomics */
#define BW_SKIP_HIST (1u << 2)		/* no histograms */
#define BW_SKIP_BODY (1u << 3)		/* return once the device is found */
#define BW_SKIP_FLIGHT (1u << 4)	/* no in-flight word: no busy, solo or depth */
#define BW_SKIP_TABLE (1u << 5)		/* no per-request table: D's time is rq->start_time_ns */
#define BW_SKIP_SUMS (1u << 6)		/* C stops once it knows the service time */
#define BW_SKIP_STALL (1u << 7)		/* D and C leave dispatch stalls alone */
/* The same for streams (bpf/streams.bpf.c and the core's C) */
#define BW_SKIP_S_BODY (1u << 8)	/* Q returns once the device is found */
#define BW_SKIP_S_CLOCK (1u << 9)	/* Q takes rq->start_time_ns, no clock read */
#define BW_SKIP_S_LEAVE (1u << 10)	/* C frees the request's entry, leaves the stream alone */
#define BW_SKIP_S_STREAM (1u << 11)	/* Q claims the entry, touches no stream */
/* The light tier (bpf/light.bpf.c) */
#define BW_SKIP_L_STAMP (1u << 12)	/* C ignores rq->io_start_time_ns: a queue without stats */
/* and for record (bpf/record.bpf.c) */
#define BW_SKIP_R_BODY (1u << 16)	/* return once the device is found */
#define BW_SKIP_R_Q (1u << 17)		/* no Q event */
#define BW_SKIP_R_COMM (1u << 18)	/* no process names */

#endif /* BLKWISE_SKIP_H */
