/* SPDX-License-Identifier: GPL-2.0 */
/* blktrace records built for the unit tests, in either byte order. */
#ifndef BLKWISE_BTREC_H
#define BLKWISE_BTREC_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define BT_REC_MAGIC 0x65617407u	/* blktrace's magic, version 7 */

/* include/uapi/linux/blktrace_api.h's struct blk_io_trace: 48 bytes. */
struct bt_rec {
	__u32 magic, seq;
	__u64 time, sector;
	__u32 bytes, action, pid, device, cpu;
	__u16 error, pdu_len;
};

/* r (magic 0: a good one) to f, swapped if swap, then r.pdu_len bytes of pdu. */
static inline void bt_put(FILE *f, bool swap, struct bt_rec r, const void *pdu)
{
	__u16 n = r.pdu_len;

	if (!r.magic)
		r.magic = BT_REC_MAGIC;
	if (swap) {
		r.magic = __builtin_bswap32(r.magic);
		r.time = __builtin_bswap64(r.time);
		r.sector = __builtin_bswap64(r.sector);
		r.bytes = __builtin_bswap32(r.bytes);
		r.action = __builtin_bswap32(r.action);
		r.pid = __builtin_bswap32(r.pid);
		r.device = __builtin_bswap32(r.device);
		r.cpu = __builtin_bswap32(r.cpu);
		r.error = __builtin_bswap16(r.error);
		r.pdu_len = __builtin_bswap16(r.pdu_len);
	}
	fwrite(&r, sizeof(r), 1, f);
	if (n && pdu)
		fwrite(pdu, 1, n, f);
}

#endif /* BLKWISE_BTREC_H */
