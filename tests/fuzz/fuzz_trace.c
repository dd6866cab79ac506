// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the blkwise trace reader, driven through the replay
 * (every pass, exact percentiles on) as analyze drives it: any input must
 * end in events or a one-line error, never a crash, hang or unbounded
 * allocation.
 */
#include <stdint.h>
#include <stdlib.h>
#include "model/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bw_replay_opts o = { .interval = 1, .exact = true };
	struct bw_treader r;
	struct bw_tsource src;
	struct bw_replay *rp;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (!bw_tr_open(&r, f, "fuzz")) {
		bw_tr_source(&r, &src);
		if (!bw_replay_new(&rp, &o, &src)) {
			bw_replay_run(rp);
			bw_replay_free(rp);
		}
	}
	bw_tr_close(&r);
	fclose(f);
	return 0;
}
