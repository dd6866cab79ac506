// SPDX-License-Identifier: GPL-2.0
/*
 * What sysfs says of a block device: its name (uevent's DEVNAME, which
 * /proc/partitions omits for some drivers, e.g. null_blk on 5.10), whether
 * it is a partition, its size, its backing store and a stable identity.
 * The choices themselves (what is shown, which identity wins) are pure and
 * live in devname.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/loop.h>
#include "sys/sys.h"

/* First line of /sys/dev/block/M:m/REL without its newline; -errno if none. */
static int read_line(__u32 dev, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	char *ok;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", BW_MAJOR(dev), BW_MINOR(dev), rel);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok) {
		buf[0] = '\0';
		return 0;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* 0 when /sys/dev/block/M:m/REL exists. */
static int access_dev(__u32 dev, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", BW_MAJOR(dev), BW_MINOR(dev), rel);
	return access(path, F_OK) ? -errno : 0;
}

/* The whole disk a partition belongs to: the dev of its parent directory. */
static __u32 parent_disk(__u32 dev)
{
	char buf[32];
	unsigned int ma, mi;

	if (read_line(dev, "../dev", buf, sizeof(buf)) || sscanf(buf, "%u:%u", &ma, &mi) != 2)
		return dev;
	return BW_MKDEV(ma, mi);
}

/*
 * ":SEC.NSEC", the birth time of the file at path when that is the file
 * MA:MI:INO and its filesystem keeps one; "" otherwise.  ext4 and xfs give
 * the inode number a deleted file freed to the next new file, so the
 * number alone does not tell a new file at an old path from the old one.
 * No I/O: the bound file's inode is in memory (AT_STATX_DONT_SYNC).
 */
static void file_birth(const char *path, unsigned int ma, unsigned int mi,
		       unsigned long long ino, char *out, size_t len)
{
	struct statx sx;

	out[0] = '\0';
	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO | STATX_BTIME, &sx) ||
	    !(sx.stx_mask & STATX_BTIME) || sx.stx_ino != ino || sx.stx_dev_major != ma ||
	    sx.stx_dev_minor != mi)
		return;
	snprintf(out, len, ":%lld.%09u", (long long)sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec);
}

/*
 * The file a loop device is bound to, as the kernel holds it
 * (LOOP_GET_STATUS64: lo_device, lo_inode): "MAJ:MIN:INO" of the file
 * itself, and ":SEC.NSEC" of its birth where its filesystem keeps one
 * (file_birth()), so a new file at an old path is told apart.  Where the
 * device node cannot be opened (no privileges left), the file now at the
 * backing path, which is the bound one unless it was replaced since (then
 * sysfs says "(deleted)" and the identity is the dev_t anyway).  "" when
 * neither can be read.  No I/O: the status is the driver's.
 */
static void loop_file_id(__u32 dev, const char *name, const char *backing, char *out,
			 size_t len)
{
	struct loop_info64 li;
	char path[PATH_MAX], birth[40];
	unsigned long long ino;
	unsigned int ma, mi;
	struct stat sb;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &sb) && S_ISBLK(sb.st_mode) &&
	    BW_MKDEV(major(sb.st_rdev), minor(sb.st_rdev)) == dev &&
	    !ioctl(fd, LOOP_GET_STATUS64, &li)) {
		ma = major(li.lo_device);
		mi = minor(li.lo_device);
		ino = li.lo_inode;
	} else if (!stat(backing, &sb)) {
		ma = major(sb.st_dev);
		mi = minor(sb.st_dev);
		ino = sb.st_ino;
	} else {
		goto out;
	}
	file_birth(backing, ma, mi, ino, birth, sizeof(birth));
	snprintf(out, len, "%u:%u:%llu%s", ma, mi, ino, birth);
out:
	if (fd >= 0)
		close(fd);
}

/*
 * The device's identity and model, at its appearance and again only when
 * bw_id_recheck_due says: a driver may answer an attribute with a request
 * to the device (virtio-blk's serial is a GET_ID request), which a watcher
 * must not make every interval.  That
 * serial, when nothing else names the device, is left pending (BW_ID_PENDING)
 * unless may_io: the caller reads it once the device has I/O of its own.
 */
void bw_dev_identify(struct bw_devinfo *di, bool may_io)
{
	static const char *const wwids[] = { "wwid", "device/wwid" };
	char wwid[BW_ID_LEN] = "", serial[BW_ID_LEN] = "", file_id[96] = "";
	__u32 dev = di->dev;
	size_t i;

	for (i = 0; i < 2 && !wwid[0]; i++)
		read_line(dev, wwids[i], wwid, sizeof(wwid));
	read_line(dev, "device/serial", serial, sizeof(serial));
	read_line(dev, "device/model", di->model, sizeof(di->model));
	di->identified = true;
	if (!wwid[0] && !serial[0] && !di->backing[0] && !access_dev(dev, "serial")) {
		if (!may_io) {
			di->id_kind = BW_ID_PENDING;
			di->id[0] = '\0';
			return;
		}
		read_line(dev, "serial", serial, sizeof(serial));
	}
	if (di->backing[0])
		loop_file_id(dev, di->name, di->backing, file_id, sizeof(file_id));
	di->id_kind = bw_pick_identity(wwid, serial, di->backing, di->offset, file_id, dev,
				       di->id, sizeof(di->id));
}

/* What tells one appearance of the device from the next (bw_dev_same_appearance). */
static void read_appearance(__u32 dev, struct bw_devinfo *di)
{
	char path[PATH_MAX], buf[32] = "";
	struct stat st;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", BW_MAJOR(dev), BW_MINOR(dev));
	if (!stat(path, &st))
		di->ino = st.st_ino;
	if (!read_line(dev, "diskseq", buf, sizeof(buf)))
		di->diskseq = strtoull(buf, NULL, 10);
	if (di->backing[0] && !read_line(dev, "loop/offset", buf, sizeof(buf)))
		di->offset = strtoull(buf, NULL, 10);
}

/* The names in /sys/dev/block/M:m/REL (slaves/, holders/), space-separated. */
static void read_names(__u32 dev, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", BW_MAJOR(dev), BW_MINOR(dev), rel);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int n;

		if (de->d_name[0] == '.')
			continue;
		n = snprintf(out + used, len - used, "%s%s", used ? " " : "", de->d_name);
		if (n < 0 || (size_t)n >= len - used) {
			out[used] = '\0';
			break;
		}
		used += n;
	}
	closedir(d);
}

/*
 * Bio-based: a disk with a queue directory but no mq/ (zram, brd, dm, md);
 * a partition is what its disk is.
 */
bool bw_dev_is_bio_based(__u32 dev)
{
	if (!access_dev(dev, "partition"))
		return access_dev(dev, "../mq") && !access_dev(dev, "../queue");
	return access_dev(dev, "mq") && !access_dev(dev, "queue");
}

/* Whether the device is there: its name, size and (loop) backing file. */
static int presence(__u32 dev, struct bw_devinfo *di)
{
	char buf[256];
	FILE *f;
	int err;

	memset(di, 0, sizeof(*di));
	di->dev = dev;
	di->disk = dev;
	snprintf(buf, sizeof(buf), "/sys/dev/block/%u:%u/uevent", BW_MAJOR(dev), BW_MINOR(dev));
	f = fopen(buf, "r");
	if (!f)
		return -errno;
	err = bw_parse_uevent(f, di);
	fclose(f);
	if (err)
		return err;
	di->exists = true;
	if (di->partition)
		di->disk = parent_disk(dev);
	if (!read_line(dev, "size", buf, sizeof(buf)))
		di->size_sectors = strtoull(buf, NULL, 10);
	/* A loop device (LOOP_MAJOR, include/uapi/linux/major.h) has a file only while bound. */
	di->is_loop = BW_MAJOR(dev) == 7;
	di->has_backing = !di->is_loop ||
			  !read_line(dev, "loop/backing_file", di->backing, sizeof(di->backing));
	return 0;
}

int bw_dev_probe(__u32 dev, struct bw_devinfo *di)
{
	char buf[128];
	int err = presence(dev, di);

	if (err)
		return err;
	if (!read_line(dev, "queue/rotational", buf, sizeof(buf)))
		di->rotational = buf[0] == '1';
	if (!read_line(dev, "stat", buf, sizeof(buf)))
		di->ds_merges_known = !bw_parse_stat(buf, &di->ds_merges, &di->ds_ticks_ms) &&
				      !bw_parse_dstat(buf, &di->ds);
	read_appearance(dev, di);
	di->bio_based = bw_dev_is_bio_based(di->disk);
	read_names(di->disk, "slaves", di->slaves, sizeof(di->slaves));
	read_names(di->disk, "holders", di->holders, sizeof(di->holders));
	return 0;
}

/*
 * A name as a user gives it: "loop3", "/dev/loop3", "/dev/mapper/vg-lv"
 * or any other block special file, or "7:3".  0 and *dev, or -ENODEV.
 */
int bw_dev_lookup(const char *arg, __u32 *dev)
{
	unsigned int ma, mi;
	char path[PATH_MAX], buf[32];
	struct stat st;
	FILE *f;
	char c;

	if (sscanf(arg, "%u:%u%c", &ma, &mi, &c) == 2) {
		*dev = BW_MKDEV(ma, mi);
		return access_dev(*dev, "uevent") ? -ENODEV : 0;
	}
	if (arg[0] == '/') {
		if (stat(arg, &st) || !S_ISBLK(st.st_mode))
			return -ENODEV;
		*dev = BW_MKDEV(major(st.st_rdev), minor(st.st_rdev));
		return 0;
	}
	if (strchr(arg, '/'))
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", arg);
	f = fopen(path, "r");
	if (!f)
		return -ENODEV;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%u:%u", &ma, &mi) != 2) {
		fclose(f);
		return -ENODEV;
	}
	fclose(f);
	*dev = BW_MKDEV(ma, mi);
	return 0;
}

/* /sys/block/DISK/ATTR for reading (first line) and writing. */
int bw_sysfs_get(const char *disk, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", disk, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int bw_sysfs_set(const char *disk, const char *attr, const char *val)
{
	char path[PATH_MAX];
	size_t n = strlen(val);
	ssize_t w;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", disk, attr);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, val, n);
	if (w < 0)
		err = -errno;
	else if ((size_t)w != n)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int bw_sysfs_writable(const char *disk, const char *attr)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/%s", disk, attr);
	return access(path, W_OK) ? -errno : 0;
}
