// SPDX-License-Identifier: GPL-2.0
/* A streaming JSON writer: enough for JSON Lines output, and CSV rows. */
#include <math.h>
#include <string.h>
#include "model/model.h"

void bw_json_begin(struct bw_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

void bw_json_begin_csv(struct bw_json *j, FILE *f, bool header)
{
	bw_json_begin(j, f);
	j->mode = header ? BW_CSV_HEADER : BW_CSV_ROW;
}

/*
 * CSV (RFC 4180): quoted when it holds a comma, a quote or a line break;
 * in_cell: inside a cell quoted already (an array's).
 */
static void csv_text(FILE *f, const char *s, bool in_cell)
{
	bool quote = !in_cell && strpbrk(s, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

/* A new cell: its separator, and in the header its column name. */
static bool csv_cell(struct bw_json *j, const char *k)
{
	int i;
	bool dot = false;

	if (j->cell_open) {	/* the next value of an array's cell */
		if (j->mode == BW_CSV_ROW && j->need_comma[j->depth])
			fputc(' ', j->f);
		j->need_comma[j->depth] = true;
		return j->mode == BW_CSV_ROW;
	}
	if (j->row_started)
		fputc(',', j->f);
	j->row_started = true;
	if (j->mode == BW_CSV_ROW)
		return true;
	for (i = 1; i <= j->depth; i++) {
		if (!j->path[i])
			continue;
		if (dot)
			fputc('.', j->f);
		csv_text(j->f, j->path[i], false);
		dot = true;
	}
	if (k) {
		if (dot)
			fputc('.', j->f);
		csv_text(j->f, k, false);
	}
	return false;
}

static void csv_open(struct bw_json *j, const char *k, char c)
{
	if (c == '[' && !j->cell_open) {
		if (csv_cell(j, k))
			fputc('"', j->f);
		j->cell_open = true;
	}
	if (j->depth < 15)
		j->depth++;
	j->path[j->depth] = k;
	j->need_comma[j->depth] = false;
}

static void csv_close(struct bw_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	if (c == ']' && j->cell_open) {
		j->cell_open = false;
		if (j->mode == BW_CSV_ROW)
			fputc('"', j->f);
	}
	if (!j->depth && c == '}') {
		fputc('\n', j->f);
		j->row_started = false;
	}
}

/* A value as a CSV cell: printed by the caller when this says so. */
static bool csv_value(struct bw_json *j, const char *k)
{
	return csv_cell(j, k);
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
	if (j->mode != BW_JSON) {
		csv_open(j, k, c);
		return;
	}
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
	if (j->mode != BW_JSON) {
		csv_close(j, c);
		return;
	}
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

/* NAN and infinities have no JSON spelling: they become null. */
void bw_json_num(struct bw_json *j, const char *k, double v, int prec)
{
	if (j->mode != BW_JSON) {
		if (csv_value(j, k) && isfinite(v))
			fprintf(j->f, "%.*f", prec, v);
		return;
	}
	key(j, k);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", prec, v);
}

void bw_json_u64(struct bw_json *j, const char *k, __u64 v)
{
	if (j->mode != BW_JSON) {
		if (csv_value(j, k))
			fprintf(j->f, "%llu", (unsigned long long)v);
		return;
	}
	key(j, k);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void bw_json_str(struct bw_json *j, const char *k, const char *v)
{
	if (j->mode != BW_JSON) {
		if (csv_value(j, k) && v)
			csv_text(j->f, v, j->cell_open);
		return;
	}
	key(j, k);
	if (v)
		put_string(j->f, v);
	else
		fputs("null", j->f);
}

void bw_json_bool(struct bw_json *j, const char *k, bool v)
{
	if (j->mode != BW_JSON) {
		if (csv_value(j, k))
			fputs(v ? "true" : "false", j->f);
		return;
	}
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void bw_json_end(struct bw_json *j)
{
	if (j->mode == BW_JSON)
		fputc('\n', j->f);
	fflush(j->f);
}
