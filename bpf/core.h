/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by bpf/core.bpf.c and its loader user/load/core.c.
 *
 * Layout rules: every map value is a plain array of __u64 (histogram
 * buckets of __u32, extended by user space) so user space can sum per-CPU
 * copies field by field; the histogram geometry lives in
 * bpf/hist.h so the BPF side and the percentile math agree by construction.
 */
#ifndef BLKWISE_CORE_H
#define BLKWISE_CORE_H

#include "hist.h"

enum bw_op {
	BW_OP_READ,
	BW_OP_WRITE,
	BW_OP_DISCARD,
	BW_OP_FLUSH,
	BW_OP_PASSTHROUGH,	/* driver-private requests (REQ_OP_DRV_IN/OUT): not in diskstats */
	BW_NR_OPS,
};

#define BW_REQ_OP_DISCARD 3
#define BW_REQ_OP_FLUSH 2
#define BW_REQ_OP_PASSTHROUGH 32	/* SCSI_IN/OUT (32, 33, before 5.18), DRV_IN/OUT (34, 35) */

/*
 * The op of a request's cmd_flags (REQ_OP_MASK: the low 8 bits), for BPF
 * and user space, filed as the kernel's op_stat_group() files it for
 * /proc/diskstats: discard, else write when the op's low bit is set
 * (op_is_write: write zeroes, secure erase, zone ops), else read; flush
 * requests are diskstats' fourth group.  Passthrough requests, which
 * diskstats does not count, are an op of their own.
 */
static inline __attribute__((always_inline)) __u32 bw_op_of(__u32 cmd_flags)
{
	__u32 op = cmd_flags & 0xff;

	if (op >= BW_REQ_OP_PASSTHROUGH)
		return BW_OP_PASSTHROUGH;
	if (op == BW_REQ_OP_DISCARD)
		return BW_OP_DISCARD;
	if (op == BW_REQ_OP_FLUSH)
		return BW_OP_FLUSH;
	return op & 1 ? BW_OP_WRITE : BW_OP_READ;
}

/*
 * Solo service time is kept per size class: a 4 KiB read and a 1 MiB read
 * are not the same job.  Class c holds requests of <= 4 KiB << c.
 */
#define BW_SIZE_CLASSES 8

/* The size class of an I/O of bytes: the BPF objects' and the replay's (user/model/replay.c). */
static inline __attribute__((always_inline)) __u32 bw_size_class(__u32 bytes)
{
	__u32 c;

	if (bytes <= 4096)
		return 0;
	c = bw_ilog2((bytes - 1) >> 12) + 1;
	return c < BW_SIZE_CLASSES ? c : BW_SIZE_CLASSES - 1;
}

/*
 * The largest depth of an epoch (user space moves the epoch at each read):
 * kept in the slot of the epoch's parity, so the epoch a read has just
 * closed stays whole while the next one fills the other slot, however
 * long the read takes to reach it (a single slot lost the closed epoch's
 * maximum to the first request of the next one: in a slow guest, every
 * interval's).  The rule for BPF, and for the replay of a trace.
 */
struct bw_epoch_max {
	__u64 epoch[2];
	__u64 max[2];
};

static inline __attribute__((always_inline)) void
bw_epoch_max_note(struct bw_epoch_max *m, __u64 epoch, __u64 depth)
{
	__u32 i = epoch & 1;

	if (m->epoch[i] != epoch) {
		m->epoch[i] = epoch;
		m->max[i] = depth;
	} else if (depth > m->max[i]) {
		m->max[i] = depth;
	}
}

/* Epoch's maximum, once a read has closed it; 0 when nothing entered in it. */
static inline __attribute__((always_inline)) __u64
bw_epoch_max_of(const struct bw_epoch_max *m, __u64 epoch)
{
	__u32 i = epoch & 1;

	return m->epoch[i] == epoch ? m->max[i] : 0;
}

/* In-flight word: low bits count requests, high bits count issues (D). */
#define BW_INFLIGHT_BITS 20
#define BW_INFLIGHT_MASK ((1ULL << BW_INFLIGHT_BITS) - 1)
#define BW_D_INC ((1ULL << BW_INFLIGHT_BITS) | 1ULL)

#include "skip.h"

#define BW_SLOT_NONE 0xffffffffu	/* queue seen, device not watched */
#define BW_QMAP_BITS 10		/* queue map: 1024 entries, two-way */

/*
 * Per device, op and CPU.  Histogram buckets are 32-bit: a bucket can take
 * 2^32 events between two reads of user space, which sums them modulo 2^32
 * and extends the sum (user/load/core.c); the sums that grow by more than one
 * per event stay 64-bit.
 */
#define BW_OP_FIELDS(hist_t)							\
	__u64 ios;		/* completed requests */			\
	__u64 bytes;								\
	__u64 errors;								\
	__u64 requeues;								\
	__u64 merges;		/* bio and request merges, as diskstats counts */ \
	__u64 d2c_ns;		/* sum of service time */			\
	__u64 q2d_ns;		/* sum of queue time, over q_ios */		\
	__u64 q2c_ns;		/* sum of total time, over q_ios */		\
	__u64 q_ios;		/* completions whose Q stamp was known */	\
	__u64 plugged;		/* light: issue stamp the plug's cached clock (bw_stamp_plugged) */ \
	__u64 segments;		/* sum of nr_phys_segments */			\
	__u64 class_ios[BW_SIZE_CLASSES];					\
	__u64 solo_ios[BW_SIZE_CLASSES];					\
	__u64 solo_ns[BW_SIZE_CLASSES];						\
	hist_t hist_d2c[BW_LAT_BUCKETS];					\
	hist_t hist_q2d[BW_LAT_BUCKETS];					\
	hist_t hist_seg[BW_SEG_BUCKETS]

/*
 * One op's figures, declared once: per CPU in BPF (32-bit buckets, which
 * user space extends) and in the replay of a trace, which is one more
 * CPU; summed over CPUs into struct bw_op_stats (user/model/model.h), the
 * same fields with 64-bit buckets.  bpf/complete.h adds to them.
 */
struct bw_op_pcpu {
	BW_OP_FIELDS(__u32);
};

/* Per device slot, per CPU: no cross-CPU traffic on the hot path. */
struct bw_dev_pcpu {
	struct bw_op_pcpu op[BW_NR_OPS];
	__u64 busy_ns;		/* closed busy periods, added at their last C */
	struct bw_epoch_max max;	/* depth, per epoch */
	__u64 unmatched;	/* C or requeue with no D seen (issued before attach, or healed) */
	__u64 untracked;	/* no free entry in the per-request table */
	__u64 lost;		/* D, or a C not issued, found an entry outliving its C (flight.h) */
	__u64 fsync_writes;	/* empty PREFLUSH writes: completed, never issued (see core.bpf.c) */
	__u64 nostamp;		/* light tier: final completions with no issue stamp (light.bpf.c) */
	__u64 fallback;		/* light tier: of those, timed by the fallback issue program */
};

/*
 * Light tier: the requests it timed itself, from its own Q and issue
 * programs (a timing slice, where the kernel's stamps are a plug's cached
 * clock: bpf/light.bpf.c), per device slot, op and CPU.  Histograms as
 * struct bw_op_pcpu's.  claimed and freed count the entries its issue
 * program took and its completion program gave back: their difference
 * is what a slice's drain waits for.
 */
struct bw_op_time {
	__u64 ios;
	__u64 d2c_ns;
	__u64 q_ios;		/* of those, with their own Q time */
	__u64 q2d_ns;
	__u64 q2c_ns;
	__u32 hist_d2c[BW_LAT_BUCKETS];
	__u32 hist_q2d[BW_LAT_BUCKETS];
};

/*
 * The light tier's timing slice, as user space writes it to the object
 * (bpf/light.bpf.c).  Its Q and issue programs are attached before it is
 * on and detached after it is off: the attach's and detach's own work
 * falls on requests no slice times.
 */
#define BW_SAMPLING_OFF 0
#define BW_SAMPLING_ON 1	/* requests get their own times */
#define BW_SAMPLING_DRAIN 2	/* no more: the completions of those still out are looked up */

struct bw_dev_xpcpu {
	struct bw_op_time op[BW_NR_OPS];
	__u64 claimed;
	__u64 freed;
};

/*
 * Per device slot, shared by all CPUs: the only cross-CPU state.  One cache
 * line each so two busy devices never share a line.
 */
struct bw_dev_shared {
	__u64 word;		/* BW_INFLIGHT_* encoding */
	__u64 busy_start;	/* start of the current busy period, ns */
	__u64 opener_rq;	/* request that opened the current busy period */
	__u64 opener_seq;	/* issue count after its D */
	__u64 dev;		/* MKDEV of the disk, for user space */
	__u64 fallback;		/* light tier: set by user space, the issue program times this device */
	__u64 pad[2];
};

/*
 * Per live request: its issue time and device, in a table shared by all
 * devices and keyed by the request's address (open addressing,
 * BW_RQ_PROBES entries from its hash; bpf/rqtab.bpf.h).  Sized by how many
 * requests may be live at once: hw queues x tags per disk, capped
 * (user/load/core.c).  32 bytes, so an
 * entry never straddles two cache lines: the issue time keeps its low
 * BW_RQ_TS_BITS bits (a service time is their difference modulo 2^54, up
 * to 104 days: the top half is a clock that stepped back, 0), the device's
 * slot the bits above (BW_MAX_SLOTS).  With --streams the entry is claimed
 * at Q, before D (d BW_RQ_D_NONE), and carries the request's stream to C;
 * a Q that finds its request's entry issued and never completed marks it
 * BW_RQ_D_LOST for the D that follows.
 */
struct bw_rq_state {
	__u64 rq;		/* struct request address, as a key; 0 when free */
	__u64 d;		/* issue time's low bits | slot << BW_RQ_TS_BITS */
	__u64 q_ts;		/* streams: Q time; 0 when no stream holds the request */
	__u64 sid;		/* streams: the stream's id (tgid or cgroup id) */
};
#define BW_RQ_D_NONE 0ULL	/* not issued yet */
#define BW_RQ_D_LOST 1ULL	/* not issued yet; its previous issue never completed */
#define BW_RQ_TS_BITS 54
#define BW_RQ_TS_MASK ((1ULL << BW_RQ_TS_BITS) - 1)
#define BW_MAX_SLOTS (1u << (64 - BW_RQ_TS_BITS))
#define bw_rq_slot(d) ((__u32)((d) >> BW_RQ_TS_BITS))
#define BW_RQ_PROBES 4

/* request_queue address -> slot, hashed; filled by the first event of a queue. */
struct bw_qmap {
	__u64 q;		/* struct request_queue address */
	__u32 slot;
	__u32 pad;
};

#define BW_THINK_SHIFT 13
#define BW_THINK_BUCKETS 64

/* Per device and process or cgroup (struct bw_skey, bpf/streams.h); attributed at Q time. */
struct bw_stream {
	__u64 word;		/* in flight (Q..C) | Q sequence, as bw_dev_shared */
	__u64 busy_start;
	__u64 busy_ns;
	__u64 area_ns;		/* sum of Q..C time: integral of in-flight */
	__u64 ios;		/* completed */
	__u64 bytes;
	__u64 queued;		/* Q events: the base of the next three */
	__u64 sync_ios;
	__u64 seq_ios;		/* started where the previous one ended */
	__u64 seek_sectors;	/* sum of |distance| from previous end */
	__u64 next_sector;	/* end of the previous request */
	__u64 idle_start;	/* when in-flight last dropped to 0 */
	__u64 think_ns;		/* sum of gaps from idle to next Q */
	__u64 thinks;
	struct bw_epoch_max max;	/* depth (Q..C), per epoch */
	char comm[16];
	/* Think times, log-linear (bpf/hist.h) in 8 us units; the last bucket is >= 8.4 ms. */
	__u64 think_hist[BW_THINK_BUCKETS];
};

#endif /* BLKWISE_CORE_H */
