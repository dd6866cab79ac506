// SPDX-License-Identifier: GPL-2.0
/* Interval figures, P_eff, parsing and JSON. */
#include <errno.h>
#include <stdlib.h>
#include "unit.h"
#include "model/model.h"

/* A device that did n reads of 4 KiB, each taking svc_ns, over busy_ns. */
static void fill(struct bw_snap_dev *d, __u64 n, __u64 svc_ns, __u64 busy_ns, __u64 solos,
		 __u64 solo_ns)
{
	struct bw_op_stats *r = &d->op[BW_OP_READ];

	memset(d, 0, sizeof(*d));
	d->dev = (7 << 20) | 3;
	r->ios = n;
	r->bytes = n * 4096;
	r->d2c_ns = n * svc_ns;
	r->class_ios[0] = n;
	r->solo_ios[0] = solos;
	r->solo_ns[0] = solos * solo_ns;
	r->hist_d2c[bw_bucket(svc_ns >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] = n;
	r->segments = n;
	d->busy_ns = busy_ns;
}

static void test_peff_parallel_device(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	/* P=4 at 2 ms: 2000 reads in 1 s busy, each seeing 8 ms at depth 16. */
	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 1000000000, 100, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "P_eff = N * S1 / T_b");
	CHECK_NEAR(iv.depth_busy, 16.0, 1e-9, "L = sum(D2C) / T_b");
	CHECK_NEAR(iv.r_per_s, 2000, 1e-9, "r/s");
	CHECK_NEAR(iv.svc_mean_ms, 8.0, 1e-9, "mean service");
	CHECK_NEAR(iv.svc_p50_ms, 8.0, 0.07, "p50 service");
	CHECK_NEAR(iv.busy_pct, 100, 1e-9, "busy");
	CHECK_NEAR(iv.solo_ms, 2.0, 1e-9, "solo service");
	CHECK(iv.p_eff_why == NULL, "determined");
}

static void test_peff_undetermined(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	/* Depth 1: L = 1, P_eff must not be guessed. */
	fill(&cur, 500, 2000000, 1000000000, 500, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff), "depth 1 is undetermined (got %g)", iv.p_eff);
	CHECK(iv.p_eff_why && !strcmp(iv.p_eff_why, "not driven at depth"), "reason");
	/* Deep but S1 never seen. */
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff), "no S1 is undetermined");
	CHECK(iv.p_eff_why && !strcmp(iv.p_eff_why, "solo service time unknown"), "reason");
	/* Idle. */
	fill(&cur, 0, 0, 0, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.p_eff) && isnan(iv.svc_mean_ms) && isnan(iv.depth_busy), "idle");
}

static void test_parse_args(void)
{
	double s;
	long n;

	CHECK(bw_parse_interval("0.5", &s) == 0 && s == 0.5, "0.5");
	CHECK(bw_parse_interval("0", &s) != 0, "0");
	CHECK(bw_parse_interval("-1", &s) != 0, "-1");
	CHECK(bw_parse_interval("abc", &s) != 0, "abc");
	CHECK(bw_parse_interval("1s", &s) != 0, "1s");
	CHECK(bw_parse_interval("nan", &s) != 0, "nan");
	CHECK(bw_parse_interval("", &s) != 0, "empty");
	CHECK(bw_parse_count("5", &n) == 0 && n == 5, "5");
	CHECK(bw_parse_count("0", &n) != 0, "0");
	CHECK(bw_parse_count("5x", &n) != 0, "5x");
	CHECK(bw_parse_count("99999999999999999999", &n) != 0, "overflow");
	{
		__u64 b;

		CHECK(bw_parse_size("4096", &b) == 0 && b == 4096, "bytes");
		CHECK(bw_parse_size("64K", &b) == 0 && b == 65536, "64K");
		CHECK(bw_parse_size("16M", &b) == 0 && b == 16u << 20, "16M");
		CHECK(bw_parse_size("1GiB", &b) == 0 && b == 1u << 30, "1GiB");
		CHECK(bw_parse_size("2g", &b) == 0 && b == 2ULL << 30, "2g");
		CHECK(bw_parse_size("1.5K", &b) == 0 && b == 1536, "1.5K");
		CHECK(bw_parse_size("0", &b) != 0, "0");
		CHECK(bw_parse_size("5X", &b) != 0, "5X");
		CHECK(bw_parse_size("5KX", &b) != 0, "5KX");
		CHECK(bw_parse_size("-1M", &b) != 0, "negative");
		CHECK(bw_parse_size("", &b) != 0, "empty");
	}
}

static void test_stored_s1(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_s1_dev st = {};
	struct bw_interval iv;

	/* Deep, no live solo sample: a stored S1 of 2 ms, learned 600 s ago, decides. */
	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	st.s[BW_OP_READ][0] = (struct bw_s1){ .samples = 50, .mean_ns = 2000000, .learned = 1000 };
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "P_eff from the stored S1");
	CHECK(iv.s1_source && !strcmp(iv.s1_source, "stored"), "source stored");
	CHECK_NEAR(iv.s1_age_s, 600, 1e-9, "age");
	CHECK(iv.solo_ios == 50, "stored sample count, got %llu", (unsigned long long)iv.solo_ios);
	/* Enough live samples replace it, whatever the store says. */
	fill(&cur, 2000, 8000000, 1000000000, 20, 1000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 2.0, 1e-9, "P_eff from the live S1");
	CHECK(iv.s1_source && !strcmp(iv.s1_source, "live") && isnan(iv.s1_age_s), "source live");
	/* Too few live samples: the stored one still serves. */
	fill(&cur, 2000, 8000000, 1000000000, 19, 1000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK_NEAR(iv.p_eff, 4.0, 1e-9, "19 live samples do not replace it");
	/* A stored record of another size class does not count. */
	st.s[BW_OP_READ][0].samples = 0;
	st.s[BW_OP_READ][3] = (struct bw_s1){ .samples = 50, .mean_ns = 2000000, .learned = 1 };
	fill(&cur, 2000, 8000000, 1000000000, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, &st, 1600, &iv);
	CHECK(isnan(iv.p_eff) && iv.s1_source == NULL, "other class: undetermined");
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-nS1"), "code -nS1");
}

static void test_peff_codes(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 10, 2000000, 20000000, 10, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-n<20"), "few: %s", iv.p_eff_code);
	fill(&cur, 500, 2000000, 1000000000, 500, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-L<1.5"), "shallow: %s", iv.p_eff_code);
	fill(&cur, 0, 0, 0, 0, 0);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.p_eff_code && !strcmp(iv.p_eff_code, "-"), "idle: %s", iv.p_eff_code);
	CHECK(!bw_interval_active(&iv), "idle is not active");
	fill(&cur, 2000, 8000000, 1000000000, 100, 2000000);
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(!iv.p_eff_code && !iv.p_eff_why, "determined: no code");
	CHECK(bw_interval_active(&iv), "active");
}

/* When a kept identity is read again (bw_id_recheck_due). */
static void test_identity_recheck(void)
{
	CHECK(bw_id_recheck_due(BW_ID_BACKING, 0, false, false),
	      "a loop file costs no request: checked every time");
	CHECK(!bw_id_recheck_due(BW_ID_SERIAL, BW_ID_RECHECK_S - 1, true, false),
	      "a serial is not read again within %d s", BW_ID_RECHECK_S);
	CHECK(bw_id_recheck_due(BW_ID_SERIAL, BW_ID_RECHECK_S, true, false) &&
	      bw_id_recheck_due(BW_ID_WWID, BW_ID_RECHECK_S + 5, true, false),
	      "a wwid or serial is read again after %d s under load", BW_ID_RECHECK_S);
	CHECK(!bw_id_recheck_due(BW_ID_SERIAL, 10 * BW_ID_RECHECK_S, false, false),
	      "never on an idle device: reading may be a request");
	CHECK(bw_id_recheck_due(BW_ID_WWID, 1, false, true),
	      "at once when live evidence contradicts what was learned under it");
	CHECK(!bw_id_recheck_due(BW_ID_DEVT, 10 * BW_ID_RECHECK_S, true, true),
	      "a dev_t has nothing to read");
	CHECK(bw_id_recheck_due(BW_ID_PENDING, 0, true, false) &&
	      !bw_id_recheck_due(BW_ID_PENDING, 0, false, false),
	      "a pending serial at the device's first I/O");
}

static void test_uevent_identity(void)
{
	const char *text = "MAJOR=7\nMINOR=3\nDEVNAME=loop3p1\nDEVTYPE=partition\nDISKSEQ=9\n";
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct bw_devinfo di = {};
	char id[BW_ID_LEN];

	CHECK(bw_parse_uevent(f, &di) == 0, "parsed");
	fclose(f);
	CHECK(!strcmp(di.name, "loop3p1") && di.partition, "name %s, partition", di.name);
	f = fmemopen((void *)"MAJOR=1\n", 8, "r");
	memset(&di, 0, sizeof(di));
	CHECK(bw_parse_uevent(f, &di) != 0, "no DEVNAME is an error");
	fclose(f);
	CHECK(bw_pick_identity("eui.0025", "S3X", "/img", 0, "", 7u << 20, id, sizeof(id)) ==
	      BW_ID_WWID && !strcmp(id, "wwid:eui.0025"), "wwid first: %s", id);
	CHECK(bw_pick_identity("", "S3X", "/img", 0, "", 7u << 20, id, sizeof(id)) == BW_ID_SERIAL &&
	      !strcmp(id, "serial:S3X"), "then serial: %s", id);
	CHECK(bw_pick_identity("", "", "/img", 4096, "", 7u << 20, id, sizeof(id)) == BW_ID_BACKING &&
	      !strcmp(id, "loop:/img@4096"), "then backing file and offset: %s", id);
	CHECK(bw_pick_identity("", "", "/img", 0, "0:52:7", 7u << 20, id, sizeof(id)) ==
	      BW_ID_BACKING && !strcmp(id, "loop:/img#0:52:7"),
	      "with the file's own device and inode: %s", id);
	CHECK(bw_pick_identity("", "", "/img (deleted)", 0, "", (7u << 20) | 3, id, sizeof(id)) ==
	      BW_ID_DEVT && !strcmp(id, "devt:7:3"), "deleted backing file: dev_t: %s", id);
	CHECK(bw_id_note(BW_ID_DEVT) && !bw_id_note(BW_ID_BACKING), "a note only for dev_t");
	di = (struct bw_devinfo){ .exists = true, .size_sectors = 0, .has_backing = true };
	CHECK(!bw_dev_present(&di), "size 0 is not shown");
	di.size_sectors = 8;
	di.has_backing = false;
	CHECK(!bw_dev_present(&di), "no backing store is not shown");
	di.has_backing = true;
	CHECK(bw_dev_present(&di), "sized and backed is shown");
}

/* Before 5.12 (no BPF fetch-and-add): busy%, depth while busy and max depth unknown, not 0. */
/*
 * Depth while busy: 8 requests issued together at 0.5 s, each in flight for
 * 1 s, observed at 0 (idle), 1 s and 2 s.  Each second holds 0.5 s of them
 * at depth 8: mean depth 8 both times, as the max, though all the service
 * time is known only in the second.
 */
static void test_depth_split(void)
{
	static struct bw_snap_dev s0, s1, s2;
	struct bw_interval iv;

	CHECK(bw_flight_area(100, 0, 0) == 100, "all completed inside");
	CHECK(bw_flight_area(100, 30, 20) == 90, "30 before the start, 20 still open");
	CHECK(bw_flight_area(10, 30, 0) == 0, "never below 0 (a table healed meanwhile)");
	fill(&s0, 0, 0, 0, 0, 0);
	fill(&s1, 0, 0, 500 * 1000000ULL, 0, 0);
	s1.open_area_ns = 8 * 500 * 1000000ULL;
	s1.inflight = 8;
	s1.max_depth = 8;
	bw_interval_compute(&s0, &s1, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.depth_busy, 8.0, 1e-9, "depth with the requests still in flight");
	fill(&s2, 8, 1000000000ULL, 1000 * 1000000ULL, 0, 0);
	s2.max_depth = 0;	/* no D in this interval: the 8 were in flight as it began */
	bw_interval_compute(&s1, &s2, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK_NEAR(iv.depth_busy, 8.0, 1e-9, "depth where they complete (was 16)");
	CHECK(iv.depth_busy <= iv.depth_max, "mean %g <= max %llu", iv.depth_busy,
	      (unsigned long long)iv.depth_max);
}

/*
 * Counted as diskstats counts: empty flush writes are writes (with no
 * service time), passthrough requests are not averaged into the data ops.
 */
static void test_fsync_and_passthrough(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_op_stats *pt;
	struct bw_interval iv;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 100, 1000000, 100000000, 0, 0);
	cur.op[BW_OP_WRITE] = cur.op[BW_OP_READ];
	memset(&cur.op[BW_OP_READ], 0, sizeof(cur.op[BW_OP_READ]));
	cur.fsync_writes = 25;
	pt = &cur.op[BW_OP_PASSTHROUGH];
	pt->ios = 1;
	pt->bytes = 20;
	pt->d2c_ns = 400000000;
	pt->hist_d2c[bw_bucket(400000000 >> BW_LAT_SHIFT, BW_LAT_BUCKETS)] = 1;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.ios[BW_OP_WRITE] == 125, "writes as diskstats: %llu",
	      (unsigned long long)iv.ios[BW_OP_WRITE]);
	CHECK(iv.fsync_writes == 25, "shown apart");
	CHECK_NEAR(iv.w_per_s, 125, 1e-9, "w/s as iostat");
	CHECK_NEAR(iv.svc_mean_ms, 1.0, 1e-9, "service mean over serviced data requests");
	CHECK(iv.svc_hist_samples == 100, "histogram of data requests");
	CHECK(iv.ios[BW_OP_PASSTHROUGH] == 1, "passthrough an op of its own");
	CHECK(!strcmp(bw_op_names[BW_OP_PASSTHROUGH], "passthrough"), "its name");
	CHECK_NEAR(iv.kb_per_rq, 4.0, 1e-9, "size of data requests");
}

/* diskstats' merges from a stat line; one appearance of a device from the next. */
static void test_stat_merges_and_appearance(void)
{
	static struct bw_devinfo a, b;
	__u64 m = 0;

	CHECK(!bw_parse_stat_merges("  100  7  800  5  200  11  1600  9  0  14  14  3  13  24  2  "
				    "4  1", &m) && m == 7 + 11 + 13, "rrqm + wrqm + drqm: %llu",
	      (unsigned long long)m);
	CHECK(!bw_parse_stat_merges("100 7 800 5 200 11 1600 9 0 14 14", &m) && m == 18,
	      "before 4.18: no discard fields");
	CHECK(bw_parse_stat_merges("1 2 3", &m) == -EINVAL, "short line");
	a.exists = b.exists = true;
	a.dev = b.dev = (254u << 20);
	a.diskseq = b.diskseq = 9;
	a.ino = b.ino = 1234;
	CHECK(bw_dev_same_appearance(&a, &b), "same");
	b.diskseq = 10;
	CHECK(!bw_dev_same_appearance(&a, &b), "a new diskseq: a new disk or a loop bound again");
	b.diskseq = 9;
	b.ino = 99;
	CHECK(!bw_dev_same_appearance(&a, &b), "a re-created device (no diskseq before 5.15)");
	b.ino = 1234;
	snprintf(b.backing, sizeof(b.backing), "/var/tmp/x.img");
	CHECK(!bw_dev_same_appearance(&a, &b), "a loop device bound to another file");
	b.backing[0] = '\0';
	b.exists = false;
	CHECK(!bw_dev_same_appearance(&a, &b), "gone");
}

static void test_busy_unknown(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;
	struct bw_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fill(&prev, 0, 0, 0, 0, 0);
	fill(&cur, 2000, 8000000, 0, 0, 0);
	cur.busy_unknown = true;
	cur.max_depth = 0;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(isnan(iv.busy_pct) && isnan(iv.depth_busy) && iv.depth_max_unknown,
	      "busy %g, depth %g, max unknown %d", iv.busy_pct, iv.depth_busy, iv.depth_max_unknown);
	CHECK_NEAR(iv.r_per_s, 2000, 1e-9, "counts still measured");
	f = open_memstream(&buf, &len);
	bw_render_row(f, &iv, NULL);
	fclose(f);
	CHECK(buf && strstr(buf, "8.383       -      -    -      -"),
	      "row: queue time, then depth, max depth and busy%% as -: %s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	bw_json_begin(&j, f);
	bw_render_json_dev(&j, &iv, NULL, 0);
	bw_json_end(&j);
	fclose(f);
	CHECK(buf && strstr(buf, "\"depth_max\":null") && strstr(buf, "\"busy_pct\":null"),
	      "JSON nulls: %s", buf);
	free(buf);
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct bw_json j;

	bw_json_begin(&j, f);
	bw_json_obj(&j, NULL);
	bw_json_str(&j, "s", "a\"b\\c\n");
	bw_json_num(&j, "nan", NAN, 2);
	bw_json_arr(&j, "a");
	bw_json_u64(&j, NULL, 1);
	bw_json_u64(&j, NULL, 2);
	bw_json_close(&j, ']');
	bw_json_close(&j, '}');
	bw_json_end(&j);
	fclose(f);
	CHECK(!strcmp(buf, "{\"s\":\"a\\\"b\\\\c\\u000a\",\"nan\":null,\"a\":[1,2]}\n"), "got %s", buf);
	free(buf);
}

/* Segments: the interval's sum and histogram, the delta of the two snapshots. */
static void test_segments(void)
{
	static struct bw_snap_dev prev, cur;
	struct bw_interval iv;

	fill(&prev, 10, 1000000, 10000000, 0, 0);
	fill(&cur, 30, 1000000, 30000000, 0, 0);
	prev.op[BW_OP_READ].hist_seg[1] = 10;
	cur.op[BW_OP_READ].hist_seg[1] = 12;
	cur.op[BW_OP_READ].hist_seg[bw_bucket(32, BW_SEG_BUCKETS)] = 18;
	cur.op[BW_OP_READ].segments = 10 + 2 + 18 * 32;
	bw_interval_compute(&prev, &cur, 1.0, &bw_peff_default, NULL, 0, &iv);
	CHECK(iv.segments == 2 + 18 * 32, "segments of the interval: %llu",
	      (unsigned long long)iv.segments);
	CHECK(iv.hist_seg[1] == 2 && iv.hist_seg[bw_bucket(32, BW_SEG_BUCKETS)] == 18,
	      "histogram of the interval");
	CHECK(bw_hist_total(iv.hist_seg, BW_SEG_BUCKETS) == iv.ios[BW_OP_READ],
	      "histogram total = requests");
}

/* Virtio ring buffers: deltas, the share, and nothing known without counts. */
static void test_vio_interval(void)
{
	struct bw_vio_stats prev = {}, cur = {};
	struct bw_interval iv = {};

	prev.v[BW_VIO_INDIRECT] = 100;
	prev.v[BW_VIO_INDIRECT_DESCS] = 600;
	cur.v[BW_VIO_INDIRECT] = 130;
	cur.v[BW_VIO_INDIRECT_DESCS] = 600 + 30 * 6;
	cur.v[BW_VIO_DIRECT] = 10;
	cur.v[BW_VIO_DIRECT_DESCS] = 10 * 3;
	bw_vio_interval(&prev, &cur, &iv);
	CHECK(iv.virtio, "shown");
	CHECK(iv.vio_indirect == 30 && iv.vio_direct == 10, "buffers %lld indirect, %lld direct",
	      (long long)iv.vio_indirect, (long long)iv.vio_direct);
	CHECK(iv.vio_descs == 30 * 6 + 10 * 3, "descriptors %lld", (long long)iv.vio_descs);
	CHECK_NEAR(iv.indirect_share, 0.75, 1e-12, "indirect share");
	bw_vio_interval(&cur, &cur, &iv);
	CHECK(isnan(iv.indirect_share) && iv.vio_indirect == 0, "no buffer: share unknown");
	bw_vio_interval(NULL, NULL, &iv);
	CHECK(iv.virtio && iv.vio_indirect < 0 && iv.vio_descs < 0 && isnan(iv.indirect_share),
	      "not known");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_peff_parallel_device), UNIT(test_peff_undetermined),
		UNIT(test_parse_args), UNIT(test_stored_s1),
		UNIT(test_peff_codes), UNIT(test_uevent_identity), UNIT(test_identity_recheck),
		UNIT(test_busy_unknown), UNIT(test_json), UNIT(test_depth_split),
		UNIT(test_fsync_and_passthrough), UNIT(test_stat_merges_and_appearance),
		UNIT(test_segments), UNIT(test_vio_interval),
	};

	return unit_run("metrics", tests, sizeof(tests) / sizeof(tests[0]));
}
