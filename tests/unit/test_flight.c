// SPDX-License-Identifier: GPL-2.0
/*
 * The in-flight rules of bpf/flight.h, which the BPF objects and the
 * replay of a trace share: the word's count and entries, busy periods,
 * solo detection, the epoch's maximum depth, a request issued again while
 * in flight (its completion lost), a completion with no issue of its own
 * that finds an entry outliving its request, and a completion with nothing
 * in flight.
 * Each sequence runs with the atomics and plain, as the two sides do.
 */
#include "unit.h"
#include <linux/types.h>
#include "flight.h"

#define US 1000ULL

static __u64 count(const struct bw_dev_shared *sh)
{
	return sh->word & BW_INFLIGHT_MASK;
}

static void solo_then_overlap(bool plain)
{
	struct bw_dev_shared sh = { 0 };
	struct bw_dev_pcpu pc = { 0 };

	/* A alone from 10 to 20 us: solo, busy 10 us. */
	CHECK(bw_flight_enter(&sh, &pc, 10 * US, 0xa, 1, BW_D_INC, true, plain) == 1, "depth 1");
	CHECK(bw_flight_leave(&sh, &pc, 20 * US, 0xa, true, plain), "A was alone");
	CHECK(pc.busy_ns == 10 * US && count(&sh) == 0, "busy 10 us, none left");

	/* B at 30, C at 35, B ends at 40, C at 50: neither alone; busy 30..50. */
	bw_flight_enter(&sh, &pc, 30 * US, 0xb, 1, BW_D_INC, true, plain);
	CHECK(bw_flight_enter(&sh, &pc, 35 * US, 0xc, 1, BW_D_INC, true, plain) == 2, "depth 2");
	CHECK(!bw_flight_leave(&sh, &pc, 40 * US, 0xb, true, plain), "B not alone");
	CHECK(!bw_flight_leave(&sh, &pc, 50 * US, 0xc, true, plain), "C did not open the period");
	CHECK(pc.busy_ns == 30 * US, "busy 10 + 20 us: %llu", (unsigned long long)pc.busy_ns);
	CHECK(bw_epoch_max_of(&pc.max, 1) == 2, "epoch 1's maximum 2");
	CHECK(sh.word >> BW_INFLIGHT_BITS == 3, "three entries");

	/* D opens a period, E enters and leaves first: D is not alone either. */
	bw_flight_enter(&sh, &pc, 60 * US, 0xd, 2, BW_D_INC, true, plain);
	CHECK(bw_epoch_max_of(&pc.max, 1) == 2, "epoch 1's maximum whole after epoch 2 began");
	bw_flight_enter(&sh, &pc, 61 * US, 0xe, 2, BW_D_INC, true, plain);
	bw_flight_leave(&sh, &pc, 62 * US, 0xe, true, plain);
	CHECK(!bw_flight_leave(&sh, &pc, 70 * US, 0xd, true, plain), "D had company");
	CHECK(bw_epoch_max_of(&pc.max, 2) == 2, "a new epoch restarts the maximum");
	CHECK(bw_epoch_max_of(&pc.max, 0) == 0, "nothing of an epoch not kept");
}

static void lost_and_unmatched(bool plain)
{
	struct bw_dev_shared sh = { 0 };
	struct bw_dev_pcpu pc = { 0 };

	/* A completion with nothing in flight: counted unmatched, the count stays 0. */
	CHECK(!bw_flight_leave(&sh, &pc, 5 * US, 0xa, true, plain), "not solo");
	CHECK(pc.unmatched == 1 && count(&sh) == 0 && pc.busy_ns == 0, "unmatched, word at 0");

	/* A issued, its completion lost, issued again: one in flight, two entries. */
	bw_flight_enter(&sh, &pc, 10 * US, 0xa, 1, BW_D_INC, true, plain);
	bw_flight_enter(&sh, &pc, 20 * US, 0xa, 1, BW_D_INC - 1, true, plain);
	CHECK(count(&sh) == 1 && sh.word >> BW_INFLIGHT_BITS == 2, "one in flight, two entries");
	CHECK(!bw_flight_leave(&sh, &pc, 30 * US, 0xa, true, plain),
	      "not solo: an entry since the period opened");
	CHECK(count(&sh) == 0 && pc.busy_ns == 20 * US, "busy from the first issue");
}

/* A issued at 10 us, its completion lost; an empty flush write, never issued, completes on it. */
static void outlived(bool plain)
{
	struct bw_dev_shared sh = { 0 };
	struct bw_dev_pcpu pc = { 0 };

	bw_flight_enter(&sh, &pc, 10 * US, 0xa, 1, BW_D_INC, true, plain);
	bw_flight_outlived(&sh, &pc, 40 * US, 0xa, true, plain);
	CHECK(pc.lost == 1 && count(&sh) == 0, "one lost, none in flight");
	CHECK(pc.busy_ns == 30 * US, "busy until the loss was found: %llu",
	      (unsigned long long)pc.busy_ns);
	CHECK(pc.unmatched == 0, "not unmatched");
}

static void test_plain(void)
{
	solo_then_overlap(true);
	lost_and_unmatched(true);
	outlived(true);
}

static void test_atomic(void)
{
	solo_then_overlap(false);
	lost_and_unmatched(false);
	outlived(false);
}

/* Allocated after the entry's issue (beyond the margin): an earlier request's entry. */
static void test_rq_outlived(void)
{
	const __u64 t = 5000000000ULL, slot = 3ULL << BW_RQ_TS_BITS;

	CHECK(!bw_rq_outlived(t, t - 20 * US), "issued after its allocation: its own");
	CHECK(!bw_rq_outlived(t, t), "at the same time: its own");
	CHECK(!bw_rq_outlived(t, t + BW_RQ_OUTLIVED_NS), "within the clocks' margin: its own");
	CHECK(bw_rq_outlived(t, t + BW_RQ_OUTLIVED_NS + 1), "allocated after: outlived");
	CHECK(bw_rq_outlived(t | slot, t + 50 * US), "the slot's bits are not time");
	CHECK(!bw_rq_outlived(t, 0), "no allocation stamp: never outlived");
	CHECK(bw_rq_outlived(BW_RQ_TS_MASK - 10 * US, (BW_RQ_TS_MASK + 1) + 10 * US),
	      "across the 2^54 wrap");
}

/* Without fetch-and-add (before 5.12) the word is counted and nothing is learned. */
static void test_no_fetch(void)
{
	struct bw_dev_shared sh = { 0 };
	struct bw_dev_pcpu pc = { 0 };

	CHECK(bw_flight_enter(&sh, &pc, 10 * US, 0xa, 1, BW_D_INC, false, false) == 0, "no depth");
	CHECK(!bw_flight_leave(&sh, &pc, 20 * US, 0xa, false, false), "no solo");
	CHECK(count(&sh) == 0 && pc.busy_ns == 0 && bw_epoch_max_of(&pc.max, 1) == 0,
	      "counted, no figures");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_plain), UNIT(test_atomic), UNIT(test_no_fetch), UNIT(test_rq_outlived),
	};

	return unit_run("flight", tests, sizeof(tests) / sizeof(tests[0]));
}
