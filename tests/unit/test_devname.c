// SPDX-License-Identifier: GPL-2.0
/*
 * Device names and identities from sysfs text, and the argument parsers
 * (user/model/devname.c): what is accepted, its edges, what is refused.
 */
#include <errno.h>
#include "unit.h"
#include "model/model.h"

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

/* The edges of each parser, and a refusal leaves the output as it was. */
static void test_parse_edges(void)
{
	double s = 7;
	long n = 7;
	__u64 b = 7;

	CHECK(!bw_parse_interval("0.01", &s) && s == 0.01, "0.01 s, the shortest");
	CHECK(!bw_parse_interval("86400", &s) && s == 86400, "a day, the longest");
	CHECK(!bw_parse_interval("1e1", &s) && s == 10, "1e1");
	s = 7;
	CHECK(bw_parse_interval("0.009", &s) == -EINVAL && s == 7, "below 0.01: refused, kept");
	CHECK(bw_parse_interval("86400.5", &s) == -EINVAL, "over a day");
	CHECK(bw_parse_interval("inf", &s) == -EINVAL, "inf");
	CHECK(bw_parse_interval("1 ", &s) == -EINVAL, "trailing space");
	CHECK(!bw_parse_count("9223372036854775807", &n) && n == 9223372036854775807L, "LONG_MAX");
	n = 7;
	CHECK(bw_parse_count("9223372036854775808", &n) == -EINVAL && n == 7, "past LONG_MAX");
	CHECK(bw_parse_count("-5", &n) == -EINVAL, "negative");
	CHECK(bw_parse_count("0x10", &n) == -EINVAL, "hex: base 10 only");
	CHECK(bw_parse_count("", &n) == -EINVAL, "empty");
	CHECK(bw_parse_count("2.5", &n) == -EINVAL, "a fraction");
	CHECK(!bw_parse_size("1T", &b) && b == 1ULL << 40, "1T");
	CHECK(!bw_parse_size("1KB", &b) && b == 1024, "1KB, powers of 1024");
	CHECK(!bw_parse_size("3MiB", &b) && b == 3ULL << 20, "3MiB");
	CHECK(!bw_parse_size("1", &b) && b == 1, "one byte");
	CHECK(!bw_parse_size("16000000T", &b) && b == 16000000ULL << 40, "16000000T fits in 64 bits");
	b = 7;
	CHECK(bw_parse_size("17000000T", &b) == -EINVAL && b == 7, "17000000T does not");
	CHECK(bw_parse_size("0.5", &b) == -EINVAL && b == 7, "half a byte is no size");
	CHECK(bw_parse_size("1Ki", &b) == -EINVAL, "1Ki");
	CHECK(bw_parse_size("1KBB", &b) == -EINVAL, "1KBB");
	CHECK(bw_parse_size("4E", &b) == -EINVAL, "no E");
	CHECK(bw_parse_size("nan", &b) == -EINVAL && bw_parse_size("inf", &b) == -EINVAL,
	      "nan, inf");
}

/* When a kept identity is read again (bw_id_recheck_due). */
static void test_identity_recheck(void)
{
	CHECK(bw_id_recheck_due(BW_ID_BACKING, 0, false, false, false),
	      "a loop file without a disk sequence number: checked every time");
	CHECK(!bw_id_recheck_due(BW_ID_BACKING, 1, true, false, true),
	      "with one: not read under load (a request to a FUSE or NFS server)");
	CHECK(bw_id_recheck_due(BW_ID_BACKING, 1, false, true, true) &&
	      bw_id_recheck_due(BW_ID_BACKING, BW_ID_RECHECK_S, true, false, true),
	      "with one: read on doubt, and after %d s under load", BW_ID_RECHECK_S);
	CHECK(!bw_id_recheck_due(BW_ID_SERIAL, BW_ID_RECHECK_S - 1, true, false, true),
	      "a serial is not read again within %d s", BW_ID_RECHECK_S);
	CHECK(bw_id_recheck_due(BW_ID_SERIAL, BW_ID_RECHECK_S, true, false, true) &&
	      bw_id_recheck_due(BW_ID_WWID, BW_ID_RECHECK_S + 5, true, false, true),
	      "a wwid or serial is read again after %d s under load", BW_ID_RECHECK_S);
	CHECK(!bw_id_recheck_due(BW_ID_SERIAL, 10 * BW_ID_RECHECK_S, false, false, true),
	      "never on an idle device: reading may be a request");
	CHECK(bw_id_recheck_due(BW_ID_WWID, 1, false, true, true),
	      "at once when live evidence contradicts what was learned under it");
	CHECK(!bw_id_recheck_due(BW_ID_DEVT, 10 * BW_ID_RECHECK_S, true, true, true),
	      "a dev_t has nothing to read");
	CHECK(bw_id_recheck_due(BW_ID_PENDING, 0, true, false, true) &&
	      !bw_id_recheck_due(BW_ID_PENDING, 0, false, false, true),
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

static int uevent(const char *text, struct bw_devinfo *di)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	memset(di, 0, sizeof(*di));
	err = bw_parse_uevent(f, di);
	fclose(f);
	return err;
}

/* The rest of uevent and identities: edges of each rule. */
static void test_names_and_identities(void)
{
	static struct bw_devinfo di, was;
	char id[BW_ID_LEN], small[12];

	CHECK(uevent("MAJOR=8\nDEVNAME=\nDEVTYPE=disk\n", &di) == -EINVAL, "an empty DEVNAME");
	CHECK(!uevent("DEVNAME=sda\nDEVTYPE=disk\n", &di) && !di.partition && !strcmp(di.name, "sda"),
	      "a disk: %s", di.name);
	CHECK(!uevent("DEVNAME=nvme0n1p12345678901234567890123456789\n", &di) &&
	      strlen(di.name) == BW_NAME_LEN - 1 && !strncmp(di.name, "nvme0n1p1234", 12),
	      "a long name is cut to %d: %s", BW_NAME_LEN - 1, di.name);
	CHECK(bw_pick_identity("", "", "/img", 4096, "0:52:7", 7u << 20, id, sizeof(id)) ==
	      BW_ID_BACKING && !strcmp(id, "loop:/img@4096#0:52:7"), "offset and file: %s", id);
	CHECK(bw_pick_identity("", "", "/a (deleted)/b", 0, "", 7u << 20, id, sizeof(id)) ==
	      BW_ID_BACKING, "' (deleted)' counts only at the end: %s", id);
	CHECK(bw_pick_identity("", "", "", 0, "", (259u << 20) | 0xfffff, id, sizeof(id)) ==
	      BW_ID_DEVT && !strcmp(id, "devt:259:1048575"), "the largest minor: %s", id);
	CHECK(bw_pick_identity("eui.0123456789", "", "", 0, "", 0, small, sizeof(small)) ==
	      BW_ID_WWID && !strcmp(small, "wwid:eui.01"), "cut to the buffer: %s", small);
	CHECK(bw_id_note(BW_ID_PENDING) && strstr(bw_id_note(BW_ID_PENDING), "virtio-blk") &&
	      !bw_id_note(BW_ID_WWID) && !bw_id_note(BW_ID_SERIAL), "notes");
	was = (struct bw_devinfo){ .identified = true, .id_kind = BW_ID_SERIAL, .id = "serial:S3X",
				   .model = "QEMU", .name = "vdb", .diskseq = 4 };
	di = (struct bw_devinfo){ .name = "vdc", .diskseq = 5 };
	bw_dev_keep_identity(&di, &was);
	CHECK(di.identified && di.id_kind == BW_ID_SERIAL && !strcmp(di.id, "serial:S3X") &&
	      !strcmp(di.model, "QEMU"), "the identity carried over");
	CHECK(!strcmp(di.name, "vdc") && di.diskseq == 5, "nothing else");
}

/* diskstats' merges from a stat line; one appearance of a device from the next. */
static void test_ambiguous_identities(void)
{
	CHECK(bw_id_ambiguous(BW_ID_DEVT, "devt:7:0"), "a dev_t may be another device's");
	CHECK(bw_id_ambiguous(BW_ID_BACKING, "loop:/mnt/fd/disk#0:39:2"),
	      "a backing file without its birth (FUSE) may be another file");
	CHECK(!bw_id_ambiguous(BW_ID_BACKING, "loop:/dev/shm/a#b.img#0:26:109:1796385665.335599973"),
	      "with its birth: that file");
	CHECK(!bw_id_ambiguous(BW_ID_WWID, "wwid:naa.5000"), "a wwid names one device");
	CHECK(!bw_id_ambiguous(BW_ID_SERIAL, "serial:X"), "so does a serial");
}

static void test_stat_merges_and_appearance(void)
{
	static struct bw_devinfo a, b;
	__u64 m = 0, t = 0;

	CHECK(!bw_parse_stat("  100  7  800  5  200  11  1600  9  0  14  15  3  13  24  2  "
			     "4  1", &m, &t) && m == 7 + 11 + 13, "rrqm + wrqm + drqm: %llu",
	      (unsigned long long)m);
	CHECK(t == 14, "io_ticks, the 10th field: %llu", (unsigned long long)t);
	CHECK(!bw_parse_stat("100 7 800 5 200 11 1600 9 0 14 14", &m, &t) && m == 18,
	      "before 4.18: no discard fields");
	CHECK(bw_parse_stat("1 2 3", &m, &t) == -EINVAL, "short line");
	{
		struct bw_dstat ds;

		CHECK(!bw_parse_dstat("  100  7  800  5  200  11  1600  9  0  14  15  3  13  24  2  "
				      "4  1", &ds), "every op's counts");
		CHECK(ds.ios[BW_OP_READ] == 100 && ds.bytes[BW_OP_READ] == 800 * 512 &&
		      ds.merges[BW_OP_READ] == 7, "reads");
		CHECK(ds.ios[BW_OP_WRITE] == 200 && ds.bytes[BW_OP_WRITE] == 1600 * 512, "writes");
		CHECK(ds.ios[BW_OP_DISCARD] == 3 && ds.bytes[BW_OP_DISCARD] == 24 * 512 &&
		      ds.merges[BW_OP_DISCARD] == 13, "discards");
		CHECK(ds.ios[BW_OP_FLUSH] == 4 && ds.ios[BW_OP_PASSTHROUGH] == 0, "flushes");
		CHECK(!bw_parse_dstat("100 7 800 5 200 11 1600 9 0 14 14", &ds) &&
		      !ds.ios[BW_OP_DISCARD] && !ds.ios[BW_OP_FLUSH], "before 4.18");
	}
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

/* The rest of the stat line and of an appearance. */
static void test_merges_and_appearance_edges(void)
{
	static struct bw_devinfo a, b;
	__u64 m = 5, t = 0;

	CHECK(!bw_parse_stat("1 2 3 4 5 6 7 8 9 10 11", &m, &t) && m == 2 + 6 && t == 10,
	      "11 fields");
	m = 5;
	CHECK(bw_parse_stat("1 2 3 4 5 6 7 8 9 10", &m, &t) == -EINVAL && m == 5, "10 fields");
	CHECK(bw_parse_stat("", &m, &t) == -EINVAL, "empty");
	CHECK(bw_parse_stat("1 2 x 4 5 6 7 8 9 10 11", &m, &t) == -EINVAL, "not a number");
	a = (struct bw_devinfo){ .exists = true, .dev = 7u << 20, .diskseq = 3, .ino = 9,
				 .backing = "/f", .offset = 512 };
	b = a;
	CHECK(bw_dev_same_appearance(&a, &b), "same");
	b.offset = 0;
	CHECK(!bw_dev_same_appearance(&a, &b), "bound again at another offset");
	b.offset = 512;
	b.dev = (7u << 20) | 1;
	CHECK(!bw_dev_same_appearance(&a, &b), "another dev_t");
	b.dev = a.dev;
	a.exists = false;
	CHECK(!bw_dev_same_appearance(&a, &b), "the first one gone");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_parse_args), UNIT(test_parse_edges), UNIT(test_identity_recheck),
		UNIT(test_uevent_identity), UNIT(test_names_and_identities),
		UNIT(test_stat_merges_and_appearance), UNIT(test_merges_and_appearance_edges),
		UNIT(test_ambiguous_identities),
	};

	return unit_run("devname", tests, sizeof(tests) / sizeof(tests[0]));
}
