// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the blktrace reader: the input is split into two
 * per-CPU files at a point its first byte picks, and replayed as analyze
 * would (exact percentiles on).
 */
#include <stdint.h>
#include <stdlib.h>
#include "model/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bw_replay_opts o = { .interval = 1, .exact = true };
	const char *names[2] = { "fuzz.blktrace.0", "fuzz.blktrace.1" };
	struct bw_btreader *bt;
	struct bw_tsource src;
	struct bw_replay *rp;
	FILE *f[2];
	size_t cut;
	int n;
	char err[512];

	if (size < 2)
		return 0;
	/* An empty part is no file: fmemopen takes no empty buffer. */
	cut = 1 + (size_t)data[0] * (size - 1) / 255;
	f[0] = cut > 1 ? fmemopen((void *)(data + 1), cut - 1, "r") : NULL;
	f[1] = cut < size ? fmemopen((void *)(data + cut), size - cut, "r") : NULL;
	n = f[0] && f[1] ? 2 : 1;
	if (!f[0]) {
		f[0] = f[1];
		f[1] = NULL;
		names[0] = names[1];
	}
	if (f[0] && !bw_bt_open(&bt, f, names, n, err, sizeof(err))) {
		bw_bt_source(bt, &src);
		if (!bw_replay_new(&rp, &o, &src)) {
			bw_replay_run(rp);
			bw_replay_free(rp);
		}
		bw_bt_close(bt);
	}
	if (f[0])
		fclose(f[0]);
	if (f[1])
		fclose(f[1]);
	return 0;
}
