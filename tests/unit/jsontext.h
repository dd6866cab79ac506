/* SPDX-License-Identifier: GPL-2.0 */
/* What a JSON or CSV writer writes, as a string, for the unit tests. */
#ifndef BLKWISE_JSONTEXT_H
#define BLKWISE_JSONTEXT_H

#include <stdio.h>
#include "model/model.h"

/*
 * What fn writes, in mode (BW_JSON, BW_CSV_HEADER or BW_CSV_ROW); free() it.
 * Not inlined: GCC 12 then takes the stream's buffer for a dangling local.
 */
__attribute__((unused, noinline))
static char *json_text(void (*fn)(struct bw_json *j, const void *arg), const void *arg,
		       enum bw_json_mode mode)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct bw_json j;

	if (mode == BW_JSON)
		bw_json_begin(&j, f);
	else
		bw_json_begin_csv(&j, f, mode == BW_CSV_HEADER);
	fn(&j, arg);
	bw_json_end(&j);
	fclose(f);
	return buf;
}

#endif /* BLKWISE_JSONTEXT_H */
