// SPDX-License-Identifier: GPL-2.0
/* Device names and identities from sysfs text, and argument parsing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blkwise.h"

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
 * file_id: the file's own device and inode, so that another file at the
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
	return k == BW_ID_DEVT ? "no wwid, serial or backing file: keyed by dev_t, "
				 "which another device may get after a reboot" : NULL;
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

/* A size: bytes, or with K, M, G or T (powers of 1024); > 0. */
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
	if (v >= 1.8e19)
		return -EINVAL;
	*bytes = (__u64)v;
	return 0;
}
