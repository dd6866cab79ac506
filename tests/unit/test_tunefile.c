// SPDX-License-Identifier: GPL-2.0
/* The tuner's state file (user/model/tunefile.c): round trip, old versions, bad files. */
#include <errno.h>
#include "unit.h"
#include "model/policy.h"

static int parse_text(const char *text, struct bw_tunefile_orig *o, char *why, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = bw_tunefile_parse(f, o, why, len);

	fclose(f);
	return err;
}

/* The state file: what a tuner found, with the device's identity, back exactly. */
static void test_state_file(void)
{
	struct bw_tunefile_orig o = { .pid = 42, .dev = (7u << 20) | 3, .slice_idle_us = 8000,
				  .low_latency = -1, .strict_guarantees = 0 }, r;
	char why[100], buf[512];
	FILE *f;

	snprintf(o.name, sizeof(o.name), "loop3");
	snprintf(o.id, sizeof(o.id), "loop:/var/tmp/a disk.img#254:0:1234");
	f = tmpfile();
	CHECK(!bw_tunefile_format(f, &o), "formatted");
	rewind(f);
	CHECK(!bw_tunefile_parse(f, &r, why, sizeof(why)), "parsed: %s", why);
	CHECK(!strcmp(r.id, o.id) && r.strict_guarantees == 0 && r.slice_idle_us == 8000 &&
	      r.low_latency == -1 && r.dev == o.dev, "round trip (identity '%s')", r.id);
	fclose(f);
	/* Version 1: no identity, no strict_guarantees; matched on dev_t alone. */
	snprintf(buf, sizeof(buf), "blkwise-tune 1\npid 7\ndevice loop3 7:3\nslice_idle_us 0\n");
	f = fmemopen(buf, strlen(buf), "r");
	CHECK(!bw_tunefile_parse(f, &r, why, sizeof(why)) && !r.id[0] &&
	      r.strict_guarantees == -1 && r.slice_idle_us == 0, "version 1 still read");
	fclose(f);
	snprintf(buf, sizeof(buf), "blkwise-tune 1\npid 7\ndevice loop3 7:3\nstrict_guarantees 1\n");
	f = fmemopen(buf, strlen(buf), "r");
	CHECK(bw_tunefile_parse(f, &r, why, sizeof(why)), "version 1 has no strict_guarantees");
	fclose(f);
}

/* Each refusal is -EINVAL with the line it is about. */
static void test_bad_files(void)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "", "empty" },
		{ "blkwise-s1 4\n", "not a blkwise tune state file (first line is not 'blkwise-tune N')" },
		{ "blkwise-tune 3\n", "format version 3, this blkwise reads 1 to 2" },
		{ "blkwise-tune 2\npid 7\n", "line 2: no device line" },
		{ "blkwise-tune 2\ndevice loop3 7:3\nslice_idle_us -5\n",
		  "line 3: not a number >= 0" },
		{ "blkwise-tune 2\ndevice loop3 7:3\nslice_idle_us 8000 9\n",
		  "line 3: not 'key value'" },
		{ "blkwise-tune 2\ndevice loop3 7:3\nquantum 4\n", "line 3: unknown key" },
	};
	struct bw_tunefile_orig o;
	char why[100];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK(parse_text(bad[i].text, &o, why, sizeof(why)) == -EINVAL &&
		      !strcmp(why, bad[i].why), "file %zu: '%s', want '%s'", i, why, bad[i].why);
	}
}

static void test_scheduler(void)
{
	char out[32];

	CHECK(!bw_parse_scheduler("none [mq-deadline] bfq\n", out, sizeof(out)) &&
	      !strcmp(out, "mq-deadline"), "the bracketed one: %s", out);
	CHECK(!bw_parse_scheduler("[none]\n", out, sizeof(out)) && !strcmp(out, "none"),
	      "alone: %s", out);
	CHECK(bw_parse_scheduler("none mq-deadline\n", out, sizeof(out)) == -EINVAL,
	      "no brackets: refused");
}

int main(void)
{
	static const struct unit_test t[] = {
		UNIT(test_state_file), UNIT(test_bad_files), UNIT(test_scheduler),
	};

	return unit_run("tunefile", t, sizeof(t) / sizeof(t[0]));
}
