/* SPDX-License-Identifier: GPL-2.0 */
/* One lost completion, as lostdiag.bpf.c records it for lostdiag.c. */
#ifndef LOSTDIAG_H
#define LOSTDIAG_H

struct lost_sample {
	__u64 sector, now, prev_d, last_c, tag, d_cpu, c_cpu, cpu;
};

#define MAX_SAMPLES 256

#endif
