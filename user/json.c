// SPDX-License-Identifier: GPL-2.0
/* A streaming JSON writer: enough for JSON Lines output, nothing more. */
#include <math.h>
#include "blkwise.h"

void bw_json_begin(struct bw_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void key(struct bw_json *j, const char *k)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (k) {
		put_string(j->f, k);
		fputc(':', j->f);
	}
}

static void open_(struct bw_json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	if (j->depth < 15)
		j->depth++;
	j->need_comma[j->depth] = false;
}

void bw_json_obj(struct bw_json *j, const char *k)
{
	open_(j, k, '{');
}

void bw_json_arr(struct bw_json *j, const char *k)
{
	open_(j, k, '[');
}

void bw_json_close(struct bw_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

/* NAN and infinities have no JSON spelling: they become null. */
void bw_json_num(struct bw_json *j, const char *k, double v, int prec)
{
	key(j, k);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", prec, v);
}

void bw_json_u64(struct bw_json *j, const char *k, __u64 v)
{
	key(j, k);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void bw_json_str(struct bw_json *j, const char *k, const char *v)
{
	key(j, k);
	if (v)
		put_string(j->f, v);
	else
		fputs("null", j->f);
}

void bw_json_bool(struct bw_json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void bw_json_end(struct bw_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
