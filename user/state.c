// SPDX-License-Identifier: GPL-2.0
/*
 * State files: written atomically (a temporary file in the same directory,
 * fsync, rename over the old one, fsync of the directory), so a crash
 * leaves either the old file or the new one, never half of one.  The S1
 * store is read-merged-written under a lock file, so two blkwise processes
 * (stat and tune, say) add to it without losing each other's records.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "blkwise.h"

#define S1_FILE "s1"
#define S1_MAX_RECORDS 4096

/* mkdir -p, 0755. */
int bw_make_dir(const char *dir)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int bw_state_write(const char *dir, const char *name, int (*fmt)(FILE *f, const void *arg),
		   const void *arg)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	int fd, dfd, err;
	FILE *f;

	err = bw_make_dir(dir);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", dir, name, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	err = fmt(f, arg);
	if (fflush(f) || fsync(fd))
		err = err ?: -errno;
	if (fclose(f))
		err = err ?: -errno;
	if (err)
		goto fail;
	if (rename(tmp, path)) {
		err = -errno;
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
fail:
	unlink(tmp);
	return err;
}

/* 0, -ENOENT when there is no store yet, or another error with why set. */
int bw_s1_load(const char *dir, struct bw_s1_store *s, char *why, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/" S1_FILE, dir);
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		snprintf(why, len, "%s", strerror(errno));
		return err;
	}
	err = bw_s1_store_parse(f, s, why, len);
	fclose(f);
	if (err)
		bw_s1_store_free(s);
	return err;
}

static int format_s1(FILE *f, const void *arg)
{
	return bw_s1_store_format(f, arg);
}

/*
 * Merges what the store on disk holds now into mine (a newer record
 * there wins), then writes mine.  A damaged file is moved aside as
 * s1.damaged rather than lost.
 */
int bw_s1_save(const char *dir, struct bw_s1_store *mine)
{
	struct bw_s1_store disk = {};
	char lock[PATH_MAX], path[PATH_MAX], aside[PATH_MAX], why[200];
	int lfd, err;

	err = bw_make_dir(dir);
	if (err)
		return err;
	snprintf(lock, sizeof(lock), "%s/" S1_FILE ".lock", dir);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return -errno;
	if (flock(lfd, LOCK_EX)) {
		err = -errno;
		goto out;
	}
	err = bw_s1_load(dir, &disk, why, sizeof(why));
	if (err == -EINVAL) {
		snprintf(path, sizeof(path), "%s/" S1_FILE, dir);
		snprintf(aside, sizeof(aside), "%s/" S1_FILE ".damaged", dir);
		rename(path, aside);
	}
	err = bw_s1_store_merge(mine, &disk);
	bw_s1_store_free(&disk);
	if (err)
		goto out;
	bw_s1_store_prune(mine, S1_MAX_RECORDS);
	err = bw_state_write(dir, S1_FILE, format_s1, mine);
out:
	close(lfd);
	return err;
}
