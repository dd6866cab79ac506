// SPDX-License-Identifier: GPL-2.0
/*
 * analyze's input: a blkwise trace, or a blktrace capture given by its
 * name (NAME for NAME.blktrace.0, .1, ...) or by one of its per-CPU files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "analyze/analyze.h"

/* NAME.blktrace.N for N from 0 while they exist; how many. */
static int open_capture(struct bw_input *in, const char *base)
{
	char path[4096];
	int n;

	for (n = 0; n < BW_BT_MAX_FILES; n++) {
		snprintf(path, sizeof(path), "%s.blktrace.%d", base, n);
		in->files[n] = fopen(path, "r");
		if (!in->files[n])
			break;
		setvbuf(in->files[n], NULL, _IOFBF, 1 << 18);
		in->names[n] = strdup(path);
	}
	in->nfiles = n;
	return n;
}

/* "NAME.blktrace.N" -> "NAME" in buf; false when path is not named so. */
static bool capture_base(const char *path, char *buf, size_t len)
{
	const char *p = strstr(path, ".blktrace.");

	if (!p || strspn(p + 10, "0123456789") != strlen(p + 10) || !p[10])
		return false;
	snprintf(buf, len, "%.*s", (int)(p - path), path);
	return true;
}

int bw_input_open(struct bw_input *in, const char *path, struct bw_tsource *src)
{
	char head[8] = {}, base[4096];
	struct stat st;
	size_t got;

	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		bw_err("%s: is a directory: give a trace file, or a blktrace capture's name "
		       "(DIR/NAME for DIR/NAME.blktrace.0 ...)", path);
		return BW_EXIT_RUNTIME;
	}
	in->f = fopen(path, "r");
	if (!in->f && (errno != ENOENT || !open_capture(in, path))) {
		bw_err("%s: cannot open: %s", path, strerror(errno));
		return BW_EXIT_RUNTIME;
	}
	if (in->f) {
		got = fread(head, 1, sizeof(head), in->f);
		rewind(in->f);
		if (got >= 4 && bw_bt_magic(head, got)) {
			fclose(in->f);
			in->f = NULL;
			if (!capture_base(path, base, sizeof(base)) || !open_capture(in, base)) {
				in->files[0] = fopen(path, "r");
				in->names[0] = strdup(path);
				in->nfiles = in->files[0] ? 1 : 0;
			}
		}
	}
	if (in->f) {
		setvbuf(in->f, NULL, _IOFBF, 1 << 20);
		if (bw_tr_open(&in->r, in->f, path)) {
			bw_err("%s", in->r.err);
			return BW_EXIT_RUNTIME;
		}
		bw_tr_source(&in->r, src);
		return 0;
	}
	if (bw_bt_open(&in->bt, in->files, (const char **)in->names, in->nfiles, in->err,
		       sizeof(in->err))) {
		bw_err("%s", in->err);
		return BW_EXIT_RUNTIME;
	}
	bw_bt_source(in->bt, src);
	return 0;
}

void bw_input_close(struct bw_input *in)
{
	int i;

	if (in->f) {
		bw_tr_close(&in->r);
		fclose(in->f);
	}
	bw_bt_close(in->bt);
	for (i = 0; i < in->nfiles; i++) {
		if (in->files[i])
			fclose(in->files[i]);
		free(in->names[i]);
	}
}
