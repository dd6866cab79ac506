// SPDX-License-Identifier: GPL-2.0
/*
 * The in-flight rules of bpf/flight.h, which the BPF objects and the
 * replay of a trace share: the word's count and entries, busy periods,
 * solo detection, the epoch's maximum depth, a request issued again while
 * in flight (its completion lost) and a completion with nothing in flight.
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
	CHECK(pc.max_epoch == 1 && pc.max_depth == 2, "epoch 1's maximum 2");
	CHECK(sh.word >> BW_INFLIGHT_BITS == 3, "three entries");

	/* D opens a period, E enters and leaves first: D is not alone either. */
	bw_flight_enter(&sh, &pc, 60 * US, 0xd, 2, BW_D_INC, true, plain);
	bw_flight_enter(&sh, &pc, 61 * US, 0xe, 2, BW_D_INC, true, plain);
	bw_flight_leave(&sh, &pc, 62 * US, 0xe, true, plain);
	CHECK(!bw_flight_leave(&sh, &pc, 70 * US, 0xd, true, plain), "D had company");
	CHECK(pc.max_epoch == 2 && pc.max_depth == 2, "a new epoch restarts the maximum");
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

static void test_plain(void)
{
	solo_then_overlap(true);
	lost_and_unmatched(true);
}

static void test_atomic(void)
{
	solo_then_overlap(false);
	lost_and_unmatched(false);
}

/* Without fetch-and-add (before 5.12) the word is counted and nothing is learned. */
static void test_no_fetch(void)
{
	struct bw_dev_shared sh = { 0 };
	struct bw_dev_pcpu pc = { 0 };

	CHECK(bw_flight_enter(&sh, &pc, 10 * US, 0xa, 1, BW_D_INC, false, false) == 0, "no depth");
	CHECK(!bw_flight_leave(&sh, &pc, 20 * US, 0xa, false, false), "no solo");
	CHECK(count(&sh) == 0 && pc.busy_ns == 0 && pc.max_depth == 0, "counted, no figures");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_plain), UNIT(test_atomic), UNIT(test_no_fetch),
	};

	return unit_run("flight", tests, sizeof(tests) / sizeof(tests[0]));
}
