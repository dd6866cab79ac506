// SPDX-License-Identifier: GPL-2.0
/*
 * The streaming JSON writer and its CSV mode (user/model/json.c), checked
 * against exact expected text: escaping, numbers JSON has no spelling
 * for, nesting and commas; CSV quoting, nested names, array cells.
 */
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"
#include "jsontext.h"

static void one_string(struct bw_json *j, const void *arg)
{
	bw_json_obj(j, NULL);
	bw_json_str(j, arg, arg);
	bw_json_close(j, '}');
}

static void mixed(struct bw_json *j, const void *arg)
{
	(void)arg;
	bw_json_obj(j, NULL);
	bw_json_str(j, "s", "a\"b\\c\n");
	bw_json_num(j, "nan", NAN, 2);
	bw_json_arr(j, "a");
	bw_json_u64(j, NULL, 1);
	bw_json_u64(j, NULL, 2);
	bw_json_close(j, ']');
	bw_json_close(j, '}');
}

static void test_json(void)
{
	char *buf = json_text(mixed, NULL, BW_JSON);

	CHECK(!strcmp(buf, "{\"s\":\"a\\\"b\\\\c\\u000a\",\"nan\":null,\"a\":[1,2]}\n"), "got %s", buf);
	free(buf);
}

/*
 * Quotes and backslashes escaped, every control character as \u00XX (in
 * keys too), the rest byte for byte: DEL, '/', UTF-8.
 */
static void test_strings(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "{\"plain\":\"plain\"}\n" },
		{ "", "{\"\":\"\"}\n" },
		{ "q\"b\\s/", "{\"q\\\"b\\\\s/\":\"q\\\"b\\\\s/\"}\n" },
		{ "t\tr\rn\n", "{\"t\\u0009r\\u000dn\\u000a\":\"t\\u0009r\\u000dn\\u000a\"}\n" },
		{ "\x01\x1f\x7f", "{\"\\u0001\\u001f\x7f\":\"\\u0001\\u001f\x7f\"}\n" },
		{ "\xc3\xa9\xe6\x97\xa5 \xf0\x9f\x92\xbe",
		  "{\"\xc3\xa9\xe6\x97\xa5 \xf0\x9f\x92\xbe\":\"\xc3\xa9\xe6\x97\xa5 \xf0\x9f\x92\xbe\"}\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_text(one_string, cases[i].in, BW_JSON);

		CHECK(got && !strcmp(got, cases[i].out), "case %zu: %s, want %s", i, got,
		      cases[i].out);
		free(got);
	}
}

static void numbers(struct bw_json *j, const void *arg)
{
	(void)arg;
	bw_json_obj(j, NULL);
	bw_json_num(j, "nan", NAN, 3);
	bw_json_num(j, "inf", INFINITY, 3);
	bw_json_num(j, "minf", -INFINITY, 0);
	bw_json_num(j, "pi", 3.14159, 3);
	bw_json_num(j, "neg", -0.25, 2);
	bw_json_num(j, "int", 12.0, 0);
	bw_json_num(j, "big", 1e20, 0);
	bw_json_u64(j, "max", ~0ULL);
	bw_json_u64(j, "zero", 0);
	bw_json_bool(j, "t", true);
	bw_json_bool(j, "f", false);
	bw_json_str(j, "none", NULL);
	bw_json_close(j, '}');
}

/* NaN and infinities have no JSON spelling: null, never nan or inf. */
static void test_numbers(void)
{
	char *got = json_text(numbers, NULL, BW_JSON);

	CHECK(got && !strcmp(got, "{\"nan\":null,\"inf\":null,\"minf\":null,\"pi\":3.142,"
			     "\"neg\":-0.25,\"int\":12,\"big\":100000000000000000000,"
			     "\"max\":18446744073709551615,\"zero\":0,\"t\":true,\"f\":false,"
			     "\"none\":null}\n"), "got %s", got);
	free(got);
}

static void nested(struct bw_json *j, const void *arg)
{
	(void)arg;
	bw_json_obj(j, NULL);
	bw_json_obj(j, "a");
	bw_json_close(j, '}');
	bw_json_arr(j, "b");
	bw_json_close(j, ']');
	bw_json_arr(j, "c");
	bw_json_obj(j, NULL);
	bw_json_u64(j, "x", 1);
	bw_json_close(j, '}');
	bw_json_obj(j, NULL);
	bw_json_arr(j, "y");
	bw_json_bool(j, NULL, true);
	bw_json_bool(j, NULL, false);
	bw_json_close(j, ']');
	bw_json_close(j, '}');
	bw_json_close(j, ']');
	bw_json_u64(j, "d", 2);
	bw_json_close(j, '}');
}

/* Fifteen levels of objects, two members at each. */
static void deep(struct bw_json *j, const void *arg)
{
	int i;

	(void)arg;
	bw_json_obj(j, NULL);
	for (i = 0; i < 14; i++) {
		bw_json_u64(j, "n", i);
		bw_json_obj(j, "o");
	}
	bw_json_u64(j, "n", 14);
	for (i = 0; i < 15; i++)
		bw_json_close(j, '}');
}

/* Commas between members only, empty containers, one record a line. */
static void test_nesting(void)
{
	char *got = json_text(nested, NULL, BW_JSON), want[1024];
	int i, n = 0;

	CHECK(got && !strcmp(got, "{\"a\":{},\"b\":[],\"c\":[{\"x\":1},{\"y\":[true,false]}],"
			     "\"d\":2}\n"), "got %s", got);
	free(got);
	got = json_text(deep, NULL, BW_JSON);
	n += snprintf(want + n, sizeof(want) - n, "{");
	for (i = 0; i < 14; i++)
		n += snprintf(want + n, sizeof(want) - n, "\"n\":%d,\"o\":{", i);
	n += snprintf(want + n, sizeof(want) - n, "\"n\":14");
	for (i = 0; i < 15; i++)
		n += snprintf(want + n, sizeof(want) - n, "}");
	snprintf(want + n, sizeof(want) - n, "\n");
	CHECK(got && !strcmp(got, want), "15 levels: %s", got);
	free(got);
}

/* Two records on one stream: JSON Lines, each begun afresh. */
static void test_lines(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct bw_json j;
	int i;

	for (i = 0; i < 2; i++) {
		bw_json_begin(&j, f);
		bw_json_obj(&j, NULL);
		bw_json_u64(&j, "i", i);
		bw_json_close(&j, '}');
		bw_json_end(&j);
	}
	fclose(f);
	CHECK(!strcmp(buf, "{\"i\":0}\n{\"i\":1}\n"), "got %s", buf);
	free(buf);
}

struct csv_arg {
	const char *name;
	double ms;
};

static void csv_rec(struct bw_json *j, const void *arg)
{
	const struct csv_arg *a = arg;

	bw_json_obj(j, NULL);
	bw_json_str(j, "name", a->name);
	bw_json_obj(j, "ops");
	bw_json_u64(j, "ios", 3);
	bw_json_num(j, "ms", a->ms, 2);
	bw_json_close(j, '}');
	bw_json_arr(j, "slaves");
	bw_json_str(j, NULL, "x");
	bw_json_str(j, NULL, "p\"q");
	bw_json_close(j, ']');
	bw_json_str(j, "none", NULL);
	bw_json_bool(j, "ok", true);
	bw_json_close(j, '}');
}

/*
 * CSV: a header of dotted names, rows with the same cells; RFC 4180 quoting;
 * NaN and NULL as empty cells; an array as one cell, its values spaced.
 */
static void test_csv(void)
{
	static const struct { struct csv_arg a; const char *row; } rows[] = {
		{ { "plain", 1.5 }, "plain,3,1.50,\"x p\"\"q\",,true\n" },
		{ { "a,b", NAN }, "\"a,b\",3,,\"x p\"\"q\",,true\n" },
		{ { "l1\nl2", 2 }, "\"l1\nl2\",3,2.00,\"x p\"\"q\",,true\n" },
		{ { "say \"hi\"", 0 }, "\"say \"\"hi\"\"\",3,0.00,\"x p\"\"q\",,true\n" },
	};
	char *got = json_text(csv_rec, &rows[0].a, BW_CSV_HEADER);
	size_t i;

	CHECK(got && !strcmp(got, "name,ops.ios,ops.ms,slaves,none,ok\n"), "header: %s", got);
	free(got);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		got = json_text(csv_rec, &rows[i].a, BW_CSV_ROW);
		CHECK(got && !strcmp(got, rows[i].row), "row %zu: %s, want %s", i, got, rows[i].row);
		free(got);
	}
	got = json_text(one_string, "a,b", BW_CSV_HEADER);
	CHECK(got && !strcmp(got, "\"a,b\"\n"), "a name with a comma, quoted: %s", got);
	free(got);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_json), UNIT(test_strings), UNIT(test_numbers), UNIT(test_nesting),
		UNIT(test_lines), UNIT(test_csv),
	};

	return unit_run("json", tests, sizeof(tests) / sizeof(tests[0]));
}
