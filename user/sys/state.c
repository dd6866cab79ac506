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
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cap-ng.h>
#include "sys/sys.h"

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
static int s1_save_local(const char *dir, struct bw_s1_store *mine)
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

/*
 * The S1 keeper.  A process that drops to a user that cannot write the
 * state directory (root's /var/lib/blkwise, dropping to nobody) would lose
 * what it learns; a descriptor of the directory does not help, as every
 * name made in it is checked against the caller's identity.  So, before
 * the drop, it forks a keeper: chrooted into the directory, the same
 * user, no descriptor but its socket, and no capability but
 * CAP_DAC_OVERRIDE (to write the directory) and CAP_CHOWN (to give the
 * files back to root).  It takes a store in the file's own format, reads
 * it as any store file is read, and saves it as bw_s1_save does; all it
 * can reach is the store.
 */
#define KEEPER_MAX (4 << 20)

static int keeper_fd = -1;
static char keeper_dir[PATH_MAX];

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		put += n;
	}
	return 0;
}

static int keeper_save(char *text, __u32 len)
{
	struct bw_s1_store s = {};
	char why[200];
	FILE *f = fmemopen(text, len, "r");
	int err;

	if (!f)
		return -ENOMEM;
	err = bw_s1_store_parse(f, &s, why, sizeof(why));
	fclose(f);
	if (!err)
		err = s1_save_local("/", &s);
	bw_s1_store_free(&s);
	if (!err && (chown("/" S1_FILE, 0, 0) || chown("/" S1_FILE ".lock", 0, 0)))
		err = -errno;
	return err;
}

static void keeper_main(int fd, unsigned int uid, unsigned int gid)
{
	__u32 len;
	char *text;
	int err = 0;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	if (dup2(fd, 3) < 0 || close_range(4, ~0U, 0))
		_exit(1);
	fd = 3;
	if (chroot(keeper_dir) || chdir("/"))
		err = -errno;
	capng_clear(CAPNG_SELECT_BOTH);
	capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_DAC_OVERRIDE, CAP_CHOWN, -1);
	if (!err && capng_change_id(uid, gid, CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING))
		err = -EPERM;
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (write_full(fd, &err, sizeof(err)) || err)
		_exit(1);
	while (!read_full(fd, &len, sizeof(len)) && len && len <= KEEPER_MAX) {
		text = malloc(len);
		err = text ? read_full(fd, text, len) : -ENOMEM;
		if (!err)
			err = keeper_save(text, len);
		free(text);
		if (write_full(fd, &err, sizeof(err)))
			break;
	}
	_exit(0);
}

int bw_s1_keeper_start(const char *dir, unsigned int uid, unsigned int gid)
{
	int sv[2], err;
	pid_t pid;

	err = bw_make_dir(dir);
	if (err)
		return err;
	if (!realpath(dir, keeper_dir))
		return -errno;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (!pid) {
		close(sv[0]);
		keeper_main(sv[1], uid, gid);
	}
	close(sv[1]);
	if (read_full(sv[0], &err, sizeof(err)))
		err = -EPIPE;
	if (err) {
		close(sv[0]);
		waitpid(pid, NULL, 0);
		return err;
	}
	keeper_fd = sv[0];
	return 0;
}

static int keeper_send(const struct bw_s1_store *mine)
{
	char *text = NULL;
	size_t len = 0;
	__u32 n;
	int err, reply;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	err = bw_s1_store_format(f, mine);
	if (fclose(f))
		err = err ?: -ENOMEM;
	n = len;
	if (!err && (len > KEEPER_MAX || write_full(keeper_fd, &n, sizeof(n)) ||
		     write_full(keeper_fd, text, len) || read_full(keeper_fd, &reply, sizeof(reply))))
		err = -EPIPE;
	free(text);
	return err ?: reply;
}

/*
 * Merges what the store on disk holds now into mine (a newer record
 * there wins), then writes mine, through the keeper where there is one
 * for dir.
 */
int bw_s1_save(const char *dir, struct bw_s1_store *mine)
{
	char real[PATH_MAX];

	if (keeper_fd >= 0 && (!strcmp(dir, keeper_dir) ||
			       (realpath(dir, real) && !strcmp(real, keeper_dir)))) {
		bw_s1_store_prune(mine, S1_MAX_RECORDS);
		return keeper_send(mine);
	}
	return s1_save_local(dir, mine);
}
