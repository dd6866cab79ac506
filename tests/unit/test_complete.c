// SPDX-License-Identifier: GPL-2.0
/*
 * The completion rules of bpf/complete.h, which the BPF objects and the
 * replay of a trace share: what a final completion adds, the queue and
 * total time where the plug's cached clock puts the issue stamp before the
 * allocation stamp, a request with no allocation stamp, a partial
 * completion and a solo one.
 */
#include "unit.h"
#include <linux/types.h>
#include "complete.h"

#define US 1000ULL

static void test_final_completion(void)
{
	struct bw_op_pcpu os = { 0 };
	__u32 cls;

	/* Allocated at 100 us, issued at 150, completed at 400: 8 KiB in 2 segments. */
	cls = bw_count_final(&os, 0, 8192, 2, 100 * US, 150 * US, 250 * US, 400 * US, true);
	CHECK(cls == bw_size_class(8192) && cls == 1, "size class of 8 KiB: %u", cls);
	CHECK(os.ios == 1 && os.bytes == 8192 && os.errors == 0, "one request, 8 KiB");
	CHECK(os.d2c_ns == 250 * US, "D2C 250 us: %llu", (unsigned long long)os.d2c_ns);
	CHECK(os.hist_d2c[bw_bucket((250 * US) >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] == 1,
	      "D2C in its bucket");
	CHECK(os.segments == 2 && os.hist_seg[bw_bucket(2, BW_SEG_BUCKETS)] == 1, "2 segments");
	CHECK(os.q_ios == 1 && os.q2d_ns == 50 * US && os.q2c_ns == 300 * US,
	      "Q2D 50 us, Q2C 300 us: %llu %llu", (unsigned long long)os.q2d_ns,
	      (unsigned long long)os.q2c_ns);
	CHECK(os.class_ios[1] == 1 && os.solo_ios[1] == 0, "class counted, not solo");

	/* An error, no histograms (the bench's profile). */
	bw_count_final(&os, -5, 4096, 1, 0, 500 * US, 10 * US, 510 * US, false);
	CHECK(os.ios == 2 && os.errors == 1, "the error counted");
	CHECK(os.q_ios == 1, "no allocation stamp: no queue time");
	CHECK(os.hist_d2c[bw_bucket((10 * US) >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] == 0,
	      "no histogram when told");
}

/*
 * The plug's cached clock: the issue stamped before the allocation.  The
 * request is counted in q_ios (diskstats counts it), queue time 0, total
 * time from the allocation.  An allocation stamp after the completion is
 * no stamp at all.
 */
static void test_issue_stamp_before_allocation(void)
{
	struct bw_op_pcpu os = { 0 };
	__u64 q2d = 1, q2c = 1;

	CHECK(bw_queue_times(200 * US, 180 * US, 300 * US, &q2d, &q2c), "counted");
	CHECK(q2d == 0 && q2c == 100 * US, "Q2D 0, Q2C 100 us: %llu %llu",
	      (unsigned long long)q2d, (unsigned long long)q2c);
	bw_count_queue(&os, 200 * US, 180 * US, 300 * US, true);
	CHECK(os.q_ios == 1 && os.q2d_ns == 0 && os.q2c_ns == 100 * US, "in the sums");
	CHECK(os.hist_q2d[0] == 1, "Q2D in the first bucket");
	CHECK(!bw_queue_times(400 * US, 180 * US, 300 * US, &q2d, &q2c), "stamp after C: none");
	CHECK(!bw_queue_times(0, 180 * US, 300 * US, &q2d, &q2c), "no stamp: none");
}

static void test_partial_and_solo(void)
{
	struct bw_op_pcpu os = { 0 };
	__u32 cls;

	bw_count_partial(&os, 4096);
	CHECK(os.ios == 0 && os.bytes == 4096, "a partial completion adds bytes only");
	bw_count_io(&os, 0, 1 << 20, 2000 * US, true);
	cls = bw_count_class(&os, 1 << 20);
	bw_count_solo(&os, cls, 2000 * US);
	CHECK(cls == BW_SIZE_CLASSES - 1 || cls == bw_size_class(1 << 20), "1 MiB's class");
	CHECK(os.ios == 1 && os.bytes == 4096 + (1 << 20), "the final one counts the request");
	CHECK(os.solo_ios[cls] == 1 && os.solo_ns[cls] == 2000 * US, "solo: S1's sample");
	CHECK(os.segments == 0 && os.q_ios == 0, "bw_count_io alone: no segments, no queue");
	CHECK(os.class_ios[cls] == 1, "the class counted once");
}

/* Requeues and merges go to the op of the flags, as diskstats files them. */
static void test_requeue_and_merge(void)
{
	static struct bw_dev_pcpu pc;

	bw_count_requeue(&pc, 1);			/* REQ_OP_WRITE */
	bw_count_requeue(&pc, BW_REQ_OP_PASSTHROUGH + 2);	/* DRV_IN */
	bw_count_merge(&pc, 0);				/* REQ_OP_READ */
	bw_count_merge(&pc, BW_REQ_OP_DISCARD);
	bw_count_merge(&pc, BW_REQ_OP_DISCARD | 0x800);	/* a flag above the op */
	CHECK(pc.op[BW_OP_WRITE].requeues == 1 && pc.op[BW_OP_PASSTHROUGH].requeues == 1 &&
	      pc.op[BW_OP_READ].requeues == 0, "requeues by op");
	CHECK(pc.op[BW_OP_READ].merges == 1 && pc.op[BW_OP_DISCARD].merges == 2 &&
	      pc.op[BW_OP_WRITE].merges == 0, "merges by op");
	CHECK(pc.op[BW_OP_WRITE].ios == 0 && pc.op[BW_OP_DISCARD].ios == 0,
	      "neither is a completion");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_final_completion), UNIT(test_issue_stamp_before_allocation),
		UNIT(test_partial_and_solo), UNIT(test_requeue_and_merge),
	};

	return unit_run("complete", tests, sizeof(tests) / sizeof(tests[0]));
}
