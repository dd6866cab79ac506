// SPDX-License-Identifier: GPL-2.0
/*
 * The stream rules of bpf/streams.h, which BPF and replay share: in-flight
 * word, busy time, the area under in-flight (mean depth), think time only
 * on an idle-to-busy Q, seekiness, sync share and the epoch's max depth.
 */
#include "unit.h"
#include <linux/types.h>
#include "streams.h"
#include "model/model.h"

#define MS 1000000ULL

static void test_two_overlapping_then_think(void)
{
	struct bw_stream s = { 0 };

	/* Q at 1 ms and 2 ms (sequential, 8 sectors each), C at 3 ms and 5 ms. */
	bw_stream_enter(&s, 1 * MS, 100, 4096, 1, 7);
	bw_stream_enter(&s, 2 * MS, 108, 4096, 0, 7);
	CHECK((s.word & BW_INFLIGHT_MASK) == 2, "two in flight: %llu",
	      (unsigned long long)(s.word & BW_INFLIGHT_MASK));
	CHECK(bw_epoch_max_of(&s.max, 7) == 2, "max depth 2 in epoch 7");
	bw_stream_leave(&s, 1 * MS, 3 * MS, 4096, 1);
	bw_stream_leave(&s, 2 * MS, 5 * MS, 4096, 1);
	CHECK((s.word & BW_INFLIGHT_MASK) == 0, "none left");
	CHECK(s.word >> BW_INFLIGHT_BITS == 2, "two Qs counted");
	CHECK(s.ios == 2 && s.bytes == 8192, "two completed, 8 KiB");
	CHECK(s.busy_ns == 4 * MS, "busy 1..5 ms: %llu", (unsigned long long)s.busy_ns);
	CHECK(s.area_ns == 5 * MS, "area 2 + 3 ms: %llu", (unsigned long long)s.area_ns);
	CHECK(s.idle_start == 5 * MS, "idle from the last C");
	CHECK(s.thinks == 0, "no think before the first busy period");
	CHECK(s.seq_ios == 1 && s.seek_sectors == 0, "second one sequential");
	CHECK(s.sync_ios == 1 && s.queued == 2, "one of two sync");

	/* 3 ms later, a new Q: one think of 3 ms, in its histogram bucket. */
	bw_stream_enter(&s, 8 * MS, 1000, 4096, 1, 8);
	CHECK(s.thinks == 1 && s.think_ns == 3 * MS, "think 3 ms: %llu",
	      (unsigned long long)s.think_ns);
	CHECK(s.think_hist[bw_bucket((3 * MS) >> BW_THINK_SHIFT, BW_THINK_BUCKETS)] == 1,
	      "think in its bucket");
	CHECK(bw_epoch_max_of(&s.max, 8) == 1, "a new epoch restarts the max");
	CHECK(bw_epoch_max_of(&s.max, 7) == 2,
	      "epoch 7's max whole after epoch 8's first Q, for a read that closed 7 late");
	CHECK(s.seek_sectors == 1000 - 116, "seek from the previous end: %llu",
	      (unsigned long long)s.seek_sectors);
	/* A Q while busy is no think. */
	bw_stream_enter(&s, 9 * MS, 1008, 4096, 1, 8);
	CHECK(s.thinks == 1, "no think while busy");
}

/* Merged away or stale: out of flight, not completed; the word never goes below 0. */
static void test_leave_uncompleted_and_floor(void)
{
	struct bw_stream s = { 0 };

	bw_stream_enter(&s, 1 * MS, 0, 4096, 1, 0);
	bw_stream_leave(&s, 1 * MS, 2 * MS, 0, 0);
	CHECK(s.ios == 0 && s.area_ns == 0, "not completed: no I/O, no area");
	CHECK((s.word & BW_INFLIGHT_MASK) == 0 && s.busy_ns == 1 * MS, "out of flight, busy 1 ms");
	bw_stream_leave(&s, 1 * MS, 3 * MS, 4096, 1);
	CHECK((s.word & BW_INFLIGHT_MASK) == 0, "a leave with nothing in flight stays at 0");
	CHECK(s.busy_ns == 1 * MS, "and closes no busy period");
}

/* A flush (no data, sector ~0) between two sequential reads moves no position. */
static void test_flush_has_no_position(void)
{
	struct bw_stream s = { 0 };

	bw_stream_enter(&s, 1 * MS, 100, 4096, 1, 0);
	bw_stream_enter(&s, 2 * MS, BW_NO_SECTOR, 0, 1, 0);
	bw_stream_enter(&s, 3 * MS, 108, 4096, 1, 0);
	bw_stream_enter(&s, 4 * MS, 0, 0, 1, 0);	/* an empty PREFLUSH write */
	bw_stream_enter(&s, 5 * MS, 116, 4096, 1, 0);
	CHECK(s.seek_sectors == 0, "no seek across the flushes: %llu",
	      (unsigned long long)s.seek_sectors);
	CHECK(s.seq_ios == 2 && s.queued == 5, "both reads after the first sequential, 5 queued");
	CHECK(s.next_sector == 124, "the position after the last read: %llu",
	      (unsigned long long)s.next_sector);
}

/*
 * An interval's deepest depth: the epoch its read closed, though the next
 * epoch's first Qs came before the read; else what was in flight as it began.
 */
static void test_interval_depth_max(void)
{
	struct bw_stream s = { 0 }, prev;
	struct bw_stream_interval o;
	int i;

	for (i = 0; i < 16; i++)	/* epoch 3: 16 at once */
		bw_stream_enter(&s, 1 * MS, 8 * i, 4096, 1, 3);
	for (i = 0; i < 12; i++)
		bw_stream_leave(&s, 1 * MS, 2 * MS, 4096, 1);
	bw_stream_enter(&s, 3 * MS, 0, 4096, 1, 4);	/* epoch 4 began before the read */
	bw_stream_compute(NULL, &s, 3, 1.0, &o);
	CHECK(o.depth_max == 16, "epoch 3's 16, not epoch 4's 5: %llu",
	      (unsigned long long)o.depth_max);
	prev = s;			/* 5 in flight as epoch 5 begins; no Q in it */
	bw_stream_leave(&s, 1 * MS, 4 * MS, 4096, 1);
	bw_stream_compute(&prev, &s, 5, 1.0, &o);
	CHECK(o.depth_max == 5, "no Q: the 5 in flight as it began: %llu",
	      (unsigned long long)o.depth_max);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_two_overlapping_then_think), UNIT(test_leave_uncompleted_and_floor),
		UNIT(test_flush_has_no_position), UNIT(test_interval_depth_max),
	};

	return unit_run("streams", tests, sizeof(tests) / sizeof(tests[0]));
}
