// SPDX-License-Identifier: GPL-2.0
/*
 * The slot reader every loader shares (user/model/snap.c): a snapshot's
 * devices, per-CPU values summed, 32-bit histogram buckets extended across
 * reads, and the maximum depth of the epoch just closed only.
 */
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"

#define NCPUS 3

static void test_dev_get_and_find(void)
{
	struct bw_snap s = { .cap = 2 };
	struct bw_snap_dev *a, *b;

	s.devs = calloc(2, sizeof(*s.devs));
	a = bw_snap_dev_get(&s, 7, s.cap);
	CHECK(a && a->dev == 7 && s.nr == 1, "first device added");
	a->busy_ns = 5;
	CHECK(bw_snap_dev_get(&s, 7, s.cap) == a && s.nr == 1 && a->busy_ns == 5,
	      "the same device again: the same entry, kept");
	b = bw_snap_dev_get(&s, 9, s.cap);
	CHECK(b && b != a && s.nr == 2 && b->busy_ns == 0, "a second device, zeroed");
	CHECK(bw_snap_dev_get(&s, 11, s.cap) == NULL && s.nr == 2, "full: no third");
	CHECK(bw_snap_find(&s, 9) == b && bw_snap_find(&s, 11) == NULL, "found by dev");
	bw_snap_free(&s);
	CHECK(!s.devs && !s.nr, "freed");
}

/* Two reads of one slot: 64-bit fields summed over CPUs, buckets extended. */
static void test_add_pcpu(void)
{
	struct bw_dev_pcpu *pc = calloc(NCPUS, sizeof(*pc));
	struct bw_op_stats *ext = calloc(BW_NR_OPS, sizeof(*ext));
	struct bw_snap_dev d;
	int cpu;

	for (cpu = 0; cpu < NCPUS; cpu++) {
		pc[cpu].op[BW_OP_READ].ios = 10 + cpu;
		pc[cpu].op[BW_OP_READ].solo_ns[3] = 1000;
		pc[cpu].op[BW_OP_WRITE].bytes = 4096;
		pc[cpu].op[BW_OP_READ].hist_d2c[5] = 0xfffffff0u;	/* near the wrap */
		pc[cpu].busy_ns = 100;
		pc[cpu].lost = 1;
		bw_epoch_max_note(&pc[cpu].max, cpu == 2 ? 4 : 3, 10 * (cpu + 1));
	}
	memset(&d, 0, sizeof(d));
	bw_snap_add_pcpu(&d, pc, NCPUS, 3, ext);
	CHECK(d.op[BW_OP_READ].ios == 33, "ios summed: %llu", (unsigned long long)d.op[BW_OP_READ].ios);
	CHECK(d.op[BW_OP_READ].solo_ns[3] == 3000, "solo time summed");
	CHECK(d.op[BW_OP_WRITE].bytes == 3 * 4096, "bytes summed");
	CHECK(d.busy_ns == 300 && d.lost == 3, "device fields summed");
	CHECK(d.max_depth == 20, "max depth of the closed epoch (3) only: %llu",
	      (unsigned long long)d.max_depth);
	CHECK(d.op[BW_OP_READ].hist_d2c[5] == 0xffffffd0ULL,
	      "first read: the 32-bit sum, 3 x 0xfffffff0 mod 2^32 (%llu)", (unsigned long long)d.op[BW_OP_READ].hist_d2c[5]);
	/* Each CPU's bucket wraps past 2^32: the sum moved by 3 * 0x20, never backwards. */
	for (cpu = 0; cpu < NCPUS; cpu++)
		pc[cpu].op[BW_OP_READ].hist_d2c[5] += 0x20;
	memset(&d, 0, sizeof(d));
	bw_snap_add_pcpu(&d, pc, NCPUS, 3, ext);
	CHECK(d.op[BW_OP_READ].hist_d2c[5] == 0xffffffd0ULL + 3 * 0x20,
	      "second read extended across the wrap (%llu)",
	      (unsigned long long)d.op[BW_OP_READ].hist_d2c[5]);
	/* A refresh extends without adding anywhere; the next read continues from it. */
	for (cpu = 0; cpu < NCPUS; cpu++)
		pc[cpu].op[BW_OP_READ].hist_d2c[5] += 0x10;
	bw_pcpu_extend(pc, NCPUS, ext);
	CHECK(ext[BW_OP_READ].hist_d2c[5] == 0xffffffd0ULL + 3 * 0x30,
	      "refresh extended the carried sum");
	free(pc);
	free(ext);
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_dev_get_and_find), UNIT(test_add_pcpu),
	};

	return unit_run("snap", t, sizeof(t) / sizeof(t[0]));
}
