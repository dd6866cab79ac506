// SPDX-License-Identifier: GPL-2.0
/*
 * A synthetic trace of a known workload, for measuring analyze's speed (and
 * btt's on the same requests): N requests of 4 KiB random reads DEPTH at a
 * time on one device (DEPTH <= 256), each Q, D and C, service time 50..150 us.
 *
 *   synthtrace N DEPTH FILE           a blkwise trace
 *   synthtrace N DEPTH NAME blktrace  NAME.blktrace.0 and .1 (two CPUs)
 */
#include <stdlib.h>
#include <string.h>
#include "model/trace.h"

struct bt_rec {
	__u32 magic, sequence;
	__u64 time, sector;
	__u32 bytes, action, pid, device, cpu;
	__u16 error, pdu_len;
};

static FILE *bt[2];
static struct bw_twriter *tw;

static void emit(__u8 type, __u64 ts, __u64 rq, __u64 sector, __u64 alloc, __u32 cpu)
{
	static const __u32 act[BW_EV_MAX] = { [BW_EV_QUEUE] = 1, [BW_EV_ISSUE] = 7,
					      [BW_EV_COMPLETE] = 8 };
	struct bw_trec e = { .ts = ts, .rq = rq, .sector = sector, .dev = (7u << 20) | 0,
			     .bytes = 4096, .pid = 1234, .nr_seg = 1, .tag = 0, .cpu = cpu,
			     .type = type };
	struct bt_rec r = { .magic = 0x65617407, .time = ts, .sector = sector, .bytes = 4096,
			    .action = act[type] | 1u << (16 + 3), .pid = 1234,
			    .device = (7u << 20) | 0, .cpu = cpu };

	if (type != BW_EV_QUEUE)
		e.alloc_ns = alloc;
	if (tw)
		bw_tw_event(tw, &e);
	else
		fwrite(&r, sizeof(r), 1, bt[cpu]);
}

int main(int argc, char **argv)
{
	struct bw_tinfo in = { .start_ns = 1000, .ncpus = 2, .ndevs = 1,
			       .rec_size = sizeof(struct bw_trec) };
	struct bw_tdev dev = { .dev = 7u << 20, .name = "loop0", .scheduler = "none",
			       .slice_idle_us = -1 };
	__u64 n, i, *busy_until, lost[2] = {};
	long depth;
	__u32 seed = 1;
	char path[4096];
	FILE *f;

	if (argc < 4 || (n = strtoull(argv[1], NULL, 10)) == 0 || (depth = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: synthtrace N DEPTH FILE [blktrace]\n");
		return 2;
	}
	busy_until = calloc(depth, sizeof(*busy_until));
	if (argc > 4 && !strcmp(argv[4], "blktrace")) {
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s.blktrace.%llu", argv[3],
				 (unsigned long long)i);
			bt[i] = fopen(path, "w");
			if (!bt[i])
				return 1;
		}
	} else {
		tw = malloc(sizeof(*tw));
		f = fopen(argv[3], "w");
		if (!f || !tw)
			return 1;
		snprintf(in.clock, sizeof(in.clock), "monotonic");
		snprintf(in.source, sizeof(in.source), "synthtrace");
		bw_tw_begin(tw, f, &in, &dev);
	}
	/*
	 * Rounds of 200 us: every lane queues and issues one request, 20 ns
	 * apart, and all complete within the round, in time order.
	 */
	for (i = 0; i < n; i += depth) {
		__u64 base = 1000000 + i / depth * 200000, c[256];
		long l, k, m = depth < 256 ? depth : 256, order[256];

		for (l = 0; l < m && i + l < n; l++) {
			__u64 q = base + l * 20, sector, rq = 0xffff888000000000ULL + l * 512;

			seed = seed * 1103515245 + 12345;
			sector = ((__u64)(seed >> 4) % (1u << 20)) * 8;
			emit(BW_EV_QUEUE, q, rq, sector, 0, l & 1);
			emit(BW_EV_ISSUE, q + 5, rq, sector, q, l & 1);
			c[l] = q + 5 + 50000 + (seed >> 8) % 100000;
			busy_until[l] = sector;
			/* Insertion sort of the completions by time. */
			for (k = l; k > 0 && c[order[k - 1]] > c[l]; k--)
				order[k] = order[k - 1];
			order[k] = l;
		}
		for (k = 0; k < l; k++) {
			long o = order[k];

			emit(BW_EV_COMPLETE, c[o], 0xffff888000000000ULL + o * 512,
			     busy_until[o], base + o * 20, (o + 1) & 1);
		}
	}
	if (tw) {
		bw_tw_end(tw, 0, lost, BW_END_SIGNAL);
		return fclose(tw->f) ? 1 : 0;
	}
	return fclose(bt[0]) || fclose(bt[1]) ? 1 : 0;
}
