// SPDX-License-Identifier: GPL-2.0
/*
 * blkwise core: per-device service time, queue time, in-flight depth, busy
 * time and solo service time, from block tracepoints alone.
 *
 * Design.  An I/O passes through two programs, issue (D) and complete (C);
 * nothing else runs per I/O unless streams are asked for.
 *
 * - No hash map on the hot path.  A device is found through its
 *   request_queue id (small, dense, kernel-allocated) in an array; the first
 *   event of a queue claims a slot for it (the only slow path, where the
 *   device filter is consulted).
 * - D's time goes to an array indexed by (slot, hw queue, allocation tag):
 *   the tag a request was allocated with (the scheduler tag when there is
 *   one, else the driver tag) is stable from allocation to free and unique
 *   among live requests of its hw queue.  (The kernel's own
 *   rq->io_start_time_ns, stamped where QUEUE_FLAG_STATS is set, would
 *   save that cache line, but a per-tag entry is what lets an issue notice
 *   that its tag's previous completion never reached us; see README.)
 * - Queue time needs no Q program: the kernel stamps rq->start_time_ns at
 *   allocation for every request it accounts in /proc/diskstats, so Q2D and
 *   Q2C here share diskstats' origin exactly.
 * - Everything summed is per-CPU.  The one cross-CPU quantity, in-flight, is
 *   a single 64-bit word per device updated with one atomic add per event:
 *   the low bits count requests in flight, the high bits count issues.  From
 *   the value the add returns, D learns whether it opened a busy period
 *   (and records itself as the opener) and C whether it closed one, and
 *   whether its request was alone from D to C: it opened the period and the
 *   issue count did not move since.  That gives busy time and solo service
 *   time without locks and without per-request state.
 * - Busy time is added when a busy period closes; user space adds the open
 *   period (now - busy_start) when it reads, so a device that never idles
 *   still shows busy time.  busy_start is read before C's decrement: while
 *   our request is in flight no new period can start, so the value is the
 *   current period's.
 *
 * Streams (per device and process, attributed at Q time in the submitter's
 * context) cost a hash lookup at Q and C; they are loaded only on request.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "core.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile bool rq_arg_second = false;	/* pre-5.11 (q, rq) prototypes */
const volatile bool filter_on = false;
const volatile bool streams_on = false;
const volatile __u32 tag_bits = 10;		/* per-hw-queue tag index width */
const volatile __u32 rq_bits = 10;		/* tag_bits + hw queue bits */
const volatile __u32 max_slots = 16;
const volatile __u32 max_qid = 1024;


/* Written by user space. */
__u64 epoch;

/* Rare events, for --verbose and the tests. */
__u32 next_slot;
__u64 qid_overflow;
__u64 slot_overflow;
__u64 claim_races;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bw_qmap);
} qmap SEC(".maps");

/* Mappable: user space reads it without syscalls and heals lost counts. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct bw_dev_shared);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct bw_dev_pcpu);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16 << 10);
	__type(key, __u32);
	__type(value, struct bw_rq_state);
} rqs SEC(".maps");

/* dev_t -> slot; with filter_on, only the watched devices are in it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} dev2slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct bw_stream_key);
	__type(value, struct bw_stream);
} streams SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_stream);
} stream_scratch SEC(".maps");

/* What a handler needs from a request, read the cheap way per attach type. */
struct rq_view {
	__u64 q;
	__u64 start_ns;
	__u64 sector;
	__u32 qid;
	__u32 hwq;
	__s32 tag;
	__u32 flags;		/* cmd_flags */
	__u32 data_len;
	__u32 nr_seg;
};

/* tp_btf: the request is a trusted pointer, plain loads suffice. */
static __always_inline void view_btf(struct request *rq, struct rq_view *v)
{
	struct request_queue *q = rq->q;
	struct blk_mq_hw_ctx *h = rq->mq_hctx;

	v->q = (__u64)q;
	v->qid = q->id;
	v->hwq = h->queue_num;
	v->tag = rq->internal_tag >= 0 ? rq->internal_tag : rq->tag;
	v->flags = rq->cmd_flags;
	v->data_len = rq->__data_len;
	v->nr_seg = rq->nr_phys_segments;
	v->start_ns = rq->start_time_ns;
	v->sector = rq->__sector;
}

/* raw_tp: every load goes through a probe read. */
static __always_inline void view_raw(struct request *rq, struct rq_view *v)
{
	int itag = BPF_CORE_READ(rq, internal_tag);

	v->q = (__u64)BPF_CORE_READ(rq, q);
	v->qid = BPF_CORE_READ(rq, q, id);
	v->hwq = BPF_CORE_READ(rq, mq_hctx, queue_num);
	v->tag = itag >= 0 ? itag : BPF_CORE_READ(rq, tag);
	v->flags = BPF_CORE_READ(rq, cmd_flags);
	v->data_len = BPF_CORE_READ(rq, __data_len);
	v->nr_seg = BPF_CORE_READ(rq, nr_phys_segments);
	v->start_ns = BPF_CORE_READ(rq, start_time_ns);
	v->sector = BPF_CORE_READ(rq, __sector);
}

/* The verifier cannot follow bw_bucket's bound through the compiler's
 * register reuse: re-check it behind a barrier the compiler cannot see past. */
static __always_inline void hist_inc(__u64 *hist, __u64 u, __u32 nbuckets)
{
	__u32 idx = bw_bucket(u, nbuckets);

	barrier_var(idx);
	if (idx < nbuckets)
		hist[idx]++;
}

static __always_inline __u32 op_of(__u32 cmd_flags)
{
	switch (cmd_flags & 0xff) {	/* REQ_OP_MASK */
	case 0:
		return BW_OP_READ;
	case 1:
		return BW_OP_WRITE;
	case 2:
		return BW_OP_FLUSH;
	case 3:
		return BW_OP_DISCARD;
	default:
		return BW_OP_OTHER;
	}
}

static __always_inline __u32 size_class(__u32 bytes)
{
	__u32 c;

	if (bytes <= 4096)
		return 0;
	c = bw_ilog2((bytes - 1) >> 12) + 1;
	return c < BW_SIZE_CLASSES ? c : BW_SIZE_CLASSES - 1;
}

/*
 * Slow path: the first event seen from a request_queue.  The device's slot
 * comes from dev2slot, filled by user space for the devices it knows of;
 * a device that appears later gets a new slot here, and CPUs racing to
 * create it agree through the hash map's insert-if-absent.  Every racer
 * then publishes the same (queue, slot) pair, so no event is dropped.
 */
static __noinline __u32 claim_slot(struct bw_qmap *e, __u64 q, struct request *rq,
				   struct bio *bio)
{
	struct bw_dev_shared *sh;
	__u32 dev, slot, *found;

	dev = bw_disk_dev(rq ? bw_rq_disk(rq) : bw_bio_disk(bio));
	found = bpf_map_lookup_elem(&dev2slot, &dev);
	if (found) {
		slot = *found;
	} else if (filter_on) {
		slot = BW_SLOT_NONE;
	} else {
		slot = __sync_fetch_and_add(&next_slot, 1);
		if (slot >= max_slots) {
			__sync_fetch_and_add(&slot_overflow, 1);
			slot = BW_SLOT_NONE;
		} else if (bpf_map_update_elem(&dev2slot, &dev, &slot, BPF_NOEXIST)) {
			__sync_fetch_and_add(&claim_races, 1);
			found = bpf_map_lookup_elem(&dev2slot, &dev);
			slot = found ? *found : BW_SLOT_NONE;
		}
	}
	if (slot != BW_SLOT_NONE) {
		sh = bpf_map_lookup_elem(&shared, &slot);
		if (!sh)
			return BW_SLOT_NONE;
		sh->dev = dev;
	}
	e->slot = slot;
	__sync_lock_test_and_set(&e->q, q);
	return slot;
}

/* rq or bio names the device for the slow path; only one is set. */
static __always_inline __u32 slot_of(__u64 q, __u32 qid, struct request *rq, struct bio *bio)
{
	struct bw_qmap *e;

	if (qid >= max_qid) {
		__sync_fetch_and_add(&qid_overflow, 1);
		return BW_SLOT_NONE;
	}
	e = bpf_map_lookup_elem(&qmap, &qid);
	if (!e)
		return BW_SLOT_NONE;
	if (e->q == q)
		return e->slot;
	return claim_slot(e, q, rq, bio);
}

static __always_inline struct bw_rq_state *rq_state(const struct rq_view *v, __u32 slot,
						    struct bw_dev_pcpu *pc)
{
	__u32 idx;

	if (v->tag < 0 || (__u32)v->tag >= (1u << tag_bits) ||
	    (v->hwq << tag_bits) >= (1u << rq_bits)) {
		pc->untracked++;
		return NULL;
	}
	idx = (slot << rq_bits) | (v->hwq << tag_bits) | (__u32)v->tag;
	return bpf_map_lookup_elem(&rqs, &idx);
}

/* A request's device: its slot and maps; false when the device is not watched. */
static __always_inline bool dev_of(struct request *rq, const struct rq_view *v, __u32 *slot,
				   struct bw_dev_shared **sh, struct bw_dev_pcpu **pc)
{
	*slot = slot_of(v->q, v->qid, rq, NULL);
	if (*slot == BW_SLOT_NONE)
		return false;
	*sh = bpf_map_lookup_elem(&shared, slot);
	*pc = bpf_map_lookup_elem(&pcpu, slot);
	return *sh && *pc;
}

static __always_inline void on_issue(struct request *rq, const struct rq_view *v, __u64 *ctx)
{
	struct bw_rq_state *st;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u64 now, old, n, depth, inc = BW_D_INC;
	__u32 slot;

	if (!dev_of(rq, v, &slot, &sh, &pc))
		return;
	st = rq_state(v, slot, pc);
	if (!st)
		return;
	now = bpf_ktime_get_ns();
	/*
	 * Tag still in flight: its completion never reached us (README, "Lost
	 * completions").  Our request takes its place in the count.
	 */
	if (st->d_ts) {
		pc->lost++;
		inc = BW_D_INC - 1;
	}
	st->d_ts = now;
	old = __sync_fetch_and_add(&sh->word, inc);
	n = old & BW_INFLIGHT_MASK;
	if (n == 0) {
		sh->busy_start = now;
		sh->opener_rq = (__u64)rq;
		sh->opener_seq = (old >> BW_INFLIGHT_BITS) + 1;
	}
	depth = n + 1;
	if (pc->max_epoch != epoch) {
		pc->max_epoch = epoch;
		pc->max_depth = depth;
	} else if (depth > pc->max_depth) {
		pc->max_depth = depth;
	}
}

/* Ends an in-flight period (C or requeue); returns the word before the decrement. */
static __always_inline __u64 leave_flight(struct bw_dev_shared *sh, struct bw_dev_pcpu *pc,
					  __u64 now)
{
	__u64 bs = sh->busy_start;
	__u64 old = __sync_fetch_and_add(&sh->word, -1ULL);

	if ((old & BW_INFLIGHT_MASK) == 0) {
		/* Its D predates us, or user space healed the count: undo. */
		__sync_fetch_and_add(&sh->word, 1);
		pc->unmatched++;
		return old | BW_INFLIGHT_MASK;
	}
	if ((old & BW_INFLIGHT_MASK) == 1 && now > bs)
		pc->busy_ns += now - bs;
	return old;
}

/* D's time of a request leaving flight (0: D never seen); clears it. */
static __always_inline __u64 take_d_time(const struct rq_view *v, __u32 slot,
					 struct bw_dev_pcpu *pc)
{
	struct bw_rq_state *st;
	__u64 d_ts;

	st = rq_state(v, slot, pc);
	if (!st)
		return 0;
	d_ts = st->d_ts;
	st->d_ts = 0;
	return d_ts;
}

static __always_inline void stream_done(struct bw_rq_state *st, __u32 dev, __u64 now,
					__u32 bytes, bool completed)
{
	struct bw_stream_key key = { .dev = dev, .tgid = st->tgid };
	struct bw_stream *s;
	__u64 bs, old;

	st->flags &= ~BW_RQ_STREAM;
	s = bpf_map_lookup_elem(&streams, &key);
	if (!s)
		return;
	if (completed) {
		__sync_fetch_and_add(&s->ios, 1);
		__sync_fetch_and_add(&s->bytes, bytes);
		__sync_fetch_and_add(&s->area_ns, now - st->q_ts);
	}
	bs = s->busy_start;
	old = __sync_fetch_and_add(&s->word, -1ULL);
	if ((old & BW_INFLIGHT_MASK) == 1) {
		if (now > bs)
			__sync_fetch_and_add(&s->busy_ns, now - bs);
		s->idle_start = now;
	}
}

/* A request with a stream entry left (completed, or merged away at Q). */
static __always_inline void stream_leave(struct request *rq, const struct rq_view *v, __u32 slot,
					 struct bw_dev_pcpu *pc, __u32 dev, __u64 now, __u32 bytes,
					 bool completed)
{
	struct bw_rq_state *st = rq_state(v, slot, pc);

	if (st && (st->flags & BW_RQ_STREAM))
		stream_done(st, dev, now, bytes, completed);
}

static __always_inline void on_complete(struct request *rq, const struct rq_view *v, int error,
					__u32 nr_bytes)
{
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	struct bw_op_stats *os;
	__u64 now, old, d2c, d_ts, q0, opener_rq, opener_seq;
	__u32 slot, op, cls;

	if (!dev_of(rq, v, &slot, &sh, &pc))
		return;
	op = op_of(v->flags);
	if (op >= BW_NR_OPS)
		return;
	os = &pc->op[op];
	/* A partial completion (nr_bytes short of what is left) keeps the request in flight. */
	if (nr_bytes < v->data_len) {
		os->bytes += nr_bytes;
		return;
	}
	now = bpf_ktime_get_ns();
	if (streams_on)
		stream_leave(rq, v, slot, pc, (__u32)sh->dev, now, nr_bytes, true);
	d_ts = take_d_time(v, slot, pc);
	if (!d_ts) {
		pc->unmatched++;
		return;
	}
	/* Stable while our request is in flight: read before we leave. */
	opener_rq = sh->opener_rq;
	opener_seq = sh->opener_seq;
	old = leave_flight(sh, pc, now);
	d2c = now > d_ts ? now - d_ts : 0;

	os->ios++;
	os->bytes += nr_bytes;
	if (error)
		os->errors++;
	os->d2c_ns += d2c;
	hist_inc(os->hist_d2c, d2c >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
	os->segments += v->nr_seg;
	hist_inc(os->hist_seg, v->nr_seg, BW_CNT_BUCKETS);
	hist_inc(os->hist_size, nr_bytes >> 9, BW_CNT_BUCKETS);
	q0 = v->start_ns;
	if (q0 && q0 <= d_ts) {
		os->q_ios++;
		os->q2d_ns += d_ts - q0;
		os->q2c_ns += now - q0;
		hist_inc(os->hist_q2d, (d_ts - q0) >> BW_LAT_SHIFT, BW_LAT_BUCKETS);
	}
	cls = size_class(nr_bytes);
	os->class_ios[cls]++;
	/* Solo: it opened the busy period, nothing was issued since, it closes it. */
	if ((old & BW_INFLIGHT_MASK) == 1 && opener_rq == (__u64)rq &&
	    (old >> BW_INFLIGHT_BITS) == opener_seq) {
		os->solo_ios[cls]++;
		os->solo_ns[cls] += d2c;
	}
}

static __always_inline void on_requeue(struct request *rq, const struct rq_view *v, __u64 *ctx)
{
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u32 slot, op;

	if (!dev_of(rq, v, &slot, &sh, &pc))
		return;
	op = op_of(v->flags);
	if (op < BW_NR_OPS)
		pc->op[op].requeues++;
	if (!take_d_time(v, slot, pc)) {
		pc->unmatched++;
		return;
	}
	leave_flight(sh, pc, bpf_ktime_get_ns());
}

static __always_inline void count_merge(__u32 slot, __u32 cmd_flags)
{
	struct bw_dev_pcpu *pc;
	__u32 op = op_of(cmd_flags);

	pc = bpf_map_lookup_elem(&pcpu, &slot);
	if (pc && op < BW_NR_OPS)
		pc->op[op].merges++;
}

/* A request merged into another is freed without completing: close its stream entry. */
static __always_inline void on_rq_merge(struct request *rq, const struct rq_view *v, __u64 *ctx)
{
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	__u32 slot;

	slot = slot_of(v->q, v->qid, rq, NULL);
	if (slot == BW_SLOT_NONE)
		return;
	count_merge(slot, v->flags);
	if (!streams_on)
		return;
	sh = bpf_map_lookup_elem(&shared, &slot);
	pc = bpf_map_lookup_elem(&pcpu, &slot);
	if (sh && pc)
		stream_leave(rq, v, slot, pc, (__u32)sh->dev, bpf_ktime_get_ns(), 0, false);
}

static __always_inline void on_bio_merge(struct bio *bio)
{
	struct request_queue *q = BPF_CORE_READ(bw_bio_disk(bio), queue);
	__u32 slot = slot_of((__u64)q, BPF_CORE_READ(q, id), NULL, bio);

	if (slot != BW_SLOT_NONE)
		count_merge(slot, BPF_CORE_READ(bio, bi_opf));
}

static __always_inline struct bw_stream *stream_get(struct bw_stream_key *key)
{
	struct bw_stream *s, *fresh;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&streams, key);
	if (s)
		return s;
	/* A new stream's first value is built per CPU: it is too big for the stack. */
	fresh = bpf_map_lookup_elem(&stream_scratch, &zero);
	if (!fresh)
		return NULL;
	__builtin_memset(fresh, 0, sizeof(*fresh));
	bpf_get_current_comm(fresh->comm, sizeof(fresh->comm));
	bpf_map_update_elem(&streams, key, fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&streams, key);
}

/* Q: the submitter is current, so this is where a request gets its stream. */
static __always_inline void on_queue(struct request *rq, const struct rq_view *v, __u64 *ctx)
{
	struct bw_stream_key key;
	struct bw_dev_shared *sh;
	struct bw_dev_pcpu *pc;
	struct bw_rq_state *st;
	struct bw_stream *s;
	__u64 now, old, n, dist, end;
	__u32 slot;

	if (!dev_of(rq, v, &slot, &sh, &pc))
		return;
	st = rq_state(v, slot, pc);
	if (!st)
		return;
	/* The tag's previous request never reached C for us: let it go. */
	if (st->flags & BW_RQ_STREAM)
		stream_done(st, (__u32)sh->dev, bpf_ktime_get_ns(), 0, false);
	key.dev = (__u32)sh->dev;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	s = stream_get(&key);
	if (!s)
		return;
	now = bpf_ktime_get_ns();
	st->tgid = key.tgid;
	st->q_ts = now;
	st->flags |= BW_RQ_STREAM;
	old = __sync_fetch_and_add(&s->word, BW_D_INC);
	n = old & BW_INFLIGHT_MASK;
	if (n == 0) {
		s->busy_start = now;
		if (s->idle_start && now > s->idle_start) {
			s->think_ns += now - s->idle_start;
			s->thinks++;
			hist_inc(s->think_hist, (now - s->idle_start) >> BW_THINK_SHIFT,
				 BW_THINK_BUCKETS);
		}
	}
	if (s->max_epoch != epoch) {
		s->max_epoch = epoch;
		s->max_depth = n + 1;
	} else if (n + 1 > s->max_depth) {
		s->max_depth = n + 1;
	}
	s->queued++;
	if (v->flags & (1u << bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)) ||
	    op_of(v->flags) == BW_OP_READ)
		s->sync_ios++;
	end = s->next_sector;
	if (end) {
		dist = v->sector > end ? v->sector - end : end - v->sector;
		s->seek_sectors += dist;
		if (!dist)
			s->seq_ios++;
	}
	s->next_sector = v->sector + (v->data_len >> 9);
}

/*
 * Every request tracepoint gets two programs from one handler: tp_btf reads
 * the request with plain loads, raw_tp (kernels whose tracepoints have no
 * BTF) through probe reads.  The loader keeps one of each pair.  Before
 * 5.11 insert/issue/merge/requeue passed (q, rq); complete never had q.
 */
#define RQ_PROGS(tp, name, qarg, handler)					\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	struct request *rq = (void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]);	\
	struct rq_view v;							\
										\
	view_btf(rq, &v);							\
	handler(rq, &v, ctx);							\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	struct request *rq = (void *)(qarg && rq_arg_second ? ctx[1] : ctx[0]);	\
	struct rq_view v;							\
										\
	view_raw(rq, &v);							\
	handler(rq, &v, ctx);							\
	return 0;								\
}

static __always_inline void complete_args(struct request *rq, const struct rq_view *v, __u64 *ctx)
{
	on_complete(rq, v, (int)ctx[1], (__u32)ctx[2]);
}

RQ_PROGS(block_rq_issue, bw_issue, true, on_issue)
RQ_PROGS(block_rq_complete, bw_complete, false, complete_args)
RQ_PROGS(block_rq_requeue, bw_requeue, true, on_requeue)
RQ_PROGS(block_rq_merge, bw_rq_merge, true, on_rq_merge)
/* Q for streams: block_io_start (6.5+) sees every request; block_rq_insert
 * is the fallback and misses requests issued directly without insert. */
RQ_PROGS(block_io_start, bw_io_start, false, on_queue)
RQ_PROGS(block_rq_insert, bw_insert, true, on_queue)

#define BIO_PROGS(tp, name)							\
SEC("tp_btf/" #tp)								\
int name(__u64 *ctx)								\
{										\
	on_bio_merge((struct bio *)ctx[0]);					\
	return 0;								\
}										\
SEC("raw_tp/" #tp)								\
int name##_raw(__u64 *ctx)							\
{										\
	on_bio_merge((struct bio *)ctx[0]);					\
	return 0;								\
}

BIO_PROGS(block_bio_backmerge, bw_backmerge)
BIO_PROGS(block_bio_frontmerge, bw_frontmerge)
