// SPDX-License-Identifier: GPL-2.0
/* Device names and identities from sysfs text, and argument parsing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

/* /sys/dev/block/M:m/uevent: DEVNAME and DEVTYPE; -EINVAL without a name. */
int bw_parse_uevent(FILE *f, struct bw_devinfo *di)
{
	char line[256];

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "DEVNAME=", 8))
			snprintf(di->name, sizeof(di->name), "%.*s", (int)sizeof(di->name) - 1, line + 8);
		else if (!strcmp(line, "DEVTYPE=partition"))
			di->partition = true;
	}
	return di->name[0] ? 0 : -EINVAL;
}

/*
 * A device's identity, stable across reboots and renames where sysfs has
 * one: the wwid, else the serial (with the model, as serials are unique
 * only per vendor), else a loop device's backing file (and offset, and
 * file_id: the file's own device, inode and birth, so that another file at the
 * same path is another device), else the dev_t, which a reboot or a
 * re-plug can give to another device.
 */
enum bw_id_kind bw_pick_identity(const char *wwid, const char *serial, const char *backing,
				 __u64 offset, const char *file_id, __u32 dev, char *out, size_t len)
{
	char off[32] = "";

	size_t blen = strlen(backing);

	if (wwid[0]) {
		snprintf(out, len, "wwid:%s", wwid);
		return BW_ID_WWID;
	}
	if (serial[0]) {
		snprintf(out, len, "serial:%s", serial);
		return BW_ID_SERIAL;
	}
	/* A backing file deleted after the bind names nothing anymore. */
	if (backing[0] && !(blen > 10 && !strcmp(backing + blen - 10, " (deleted)"))) {
		if (offset)
			snprintf(off, sizeof(off), "@%llu", (unsigned long long)offset);
		snprintf(out, len, "loop:%s%s%s%s", backing, off, file_id[0] ? "#" : "", file_id);
		return BW_ID_BACKING;
	}
	snprintf(out, len, "devt:%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
	return BW_ID_DEVT;
}

const char *bw_id_note(enum bw_id_kind k)
{
	if (k == BW_ID_PENDING)
		return "serial not read: reading it is a request to the device "
		       "(virtio-blk), made once, at the device's first I/O, and only "
		       "with the S1 store (not with --no-state)";
	return k == BW_ID_DEVT ? "no wwid, serial or backing file: keyed by dev_t, "
				 "which another device may get after a reboot" : NULL;
}

/* A backing file's identity ends "#MAJ:MIN:INO", then ":SEC.NSEC" when its birth is known. */
bool bw_id_ambiguous(enum bw_id_kind k, const char *id)
{
	const char *h;
	int colons = 0;

	if (k == BW_ID_DEVT)
		return true;
	if (k != BW_ID_BACKING)
		return false;
	h = strrchr(id, '#');
	if (!h)
		return true;
	for (; *h; h++)
		colons += *h == ':';
	return colons < 3;
}

/*
 * What a line of /sys/block/DEV/stat (the fields of /proc/diskstats after
 * the name) gives beside blkwise's own figures: its merges, read merges
 * (2nd), write merges (6th) and, since 4.18, discard merges (13th); and
 * io_ticks (10th), the ms the device had requests in flight, counted in
 * whole jiffies (iostat's %util).  0, or -EINVAL on a line too short.
 */
int bw_parse_stat(const char *line, __u64 *merges, __u64 *io_ticks_ms)
{
	unsigned long long f[13];
	int n;

	n = sscanf(line, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
		   &f[11], &f[12]);
	if (n < 11)
		return -EINVAL;
	*merges = f[1] + f[5] + (n == 13 ? f[12] : 0);
	*io_ticks_ms = f[9];
	return 0;
}

int bw_parse_dstat(const char *line, struct bw_dstat *ds)
{
	unsigned long long f[17] = { 0 };
	int n;

	n = sscanf(line, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		   "%llu %llu", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9],
		   &f[10], &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]);
	if (n < 11)
		return -EINVAL;
	memset(ds, 0, sizeof(*ds));
	ds->ios[BW_OP_READ] = f[0];
	ds->merges[BW_OP_READ] = f[1];
	ds->bytes[BW_OP_READ] = f[2] * 512;
	ds->ios[BW_OP_WRITE] = f[4];
	ds->merges[BW_OP_WRITE] = f[5];
	ds->bytes[BW_OP_WRITE] = f[6] * 512;
	if (n >= 15) {	/* discards: 4.18 */
		ds->ios[BW_OP_DISCARD] = f[11];
		ds->merges[BW_OP_DISCARD] = f[12];
		ds->bytes[BW_OP_DISCARD] = f[13] * 512;
	}
	if (n >= 17)	/* flushes: 5.5 */
		ds->ios[BW_OP_FLUSH] = f[15];
	return 0;
}

/*
 * The same appearance of a device: both there, the same disk sequence
 * number (a new disk, or a loop device bound again, gets a new one since
 * 5.15), the same sysfs directory (a re-created device gets a new one) and
 * the same backing file (a loop device bound again before 5.15).
 */
bool bw_dev_same_appearance(const struct bw_devinfo *a, const struct bw_devinfo *b)
{
	return a->exists && b->exists && a->dev == b->dev && a->diskseq == b->diskseq &&
	       a->ino == b->ino && a->offset == b->offset && !strcmp(a->backing, b->backing);
}

/*
 * When an identity kept since the device's appearance is read again.  A
 * loop device bound to another file has a new disk sequence number (5.15+),
 * so bw_dev_same_appearance sees the new file behind the same path and
 * dev_t without asking for it; its file is read again only on a kernel
 * without one (seq false), every time.  Reading it is not free: the loop
 * driver asks the backing file's filesystem for its attributes, a request
 * to the server on FUSE or NFS.  A wwid, a serial (some drivers answer it
 * with a request to the device) or a loop device's file is read again when
 * live evidence contradicted what was learned under it (doubt), and at
 * least every BW_ID_RECHECK_S while the device has I/O of its own, so that
 * a watcher of an idle disk still makes none.  A serial still to read
 * (BW_ID_PENDING) is read at the device's first I/O of its own.  A dev_t
 * has nothing to read.
 */
bool bw_id_recheck_due(enum bw_id_kind k, double age_s, bool had_io, bool doubt, bool seq)
{
	switch (k) {
	case BW_ID_BACKING:
		if (!seq)
			return true;
		/* fall through */
	case BW_ID_WWID:
	case BW_ID_SERIAL:
		return doubt || (had_io && age_s >= BW_ID_RECHECK_S);
	case BW_ID_PENDING:
		return had_io;	/* the serial, at the device's first I/O of its own */
	default:
		return false;
	}
}

/* The identity read at the device's appearance, carried to a new reading of sysfs. */
void bw_dev_keep_identity(struct bw_devinfo *di, const struct bw_devinfo *was)
{
	di->identified = was->identified;
	di->id_kind = was->id_kind;
	memcpy(di->id, was->id, sizeof(di->id));
	memcpy(di->model, was->model, sizeof(di->model));
}

/* Shown without -d: a device with a size and, for loop, a backing file. */
bool bw_dev_present(const struct bw_devinfo *di)
{
	return di->exists && di->size_sectors > 0 && di->has_backing;
}

/* Seconds, > 0 and <= 1 day; 0 on success, -EINVAL otherwise. */
int bw_parse_interval(const char *s, double *secs)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 86400)
		return -EINVAL;
	*secs = v;
	return 0;
}

/* A positive count; 0 on success, -EINVAL otherwise. */
int bw_parse_count(const char *s, long *count)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -EINVAL;
	*count = v;
	return 0;
}

/* A size: bytes, or with K, M, G or T (powers of 1024); a whole byte at least. */
int bw_parse_size(const char *s, __u64 *bytes)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end & ~0x20);
		if (!u || (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")))
			return -EINVAL;
		v *= (double)(1ULL << (10 * (u - units + 1)));
	}
	if (v < 1 || v >= 1.8e19)
		return -EINVAL;
	*bytes = (__u64)v;
	return 0;
}
