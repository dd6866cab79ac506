// SPDX-License-Identifier: GPL-2.0
/*
 * The first line every blkwise state file opens with: its magic and its
 * format version ("blkwise-s1 4", "blkwise-tune 2").  A reader takes the
 * versions from 1 to the one it writes, and says why it refuses a file.
 */
#include <errno.h>
#include <string.h>
#include "model/model.h"

int bw_state_version(FILE *f, const char *magic, const char *what, int max, int *version,
		     char *why, size_t len)
{
	char line[128], word[64];

	if (!fgets(line, sizeof(line), f)) {
		snprintf(why, len, "empty");
		return -EINVAL;
	}
	if (sscanf(line, "%63s %d", word, version) != 2 || strcmp(word, magic)) {
		snprintf(why, len, "not a blkwise %s file (first line is not '%s N')", what, magic);
		return -EINVAL;
	}
	if (*version < 1 || *version > max) {
		snprintf(why, len, "format version %d, this blkwise reads 1 to %d", *version, max);
		return -EINVAL;
	}
	return 0;
}
