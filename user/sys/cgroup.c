// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup ids to paths.  bpf_get_current_cgroup_id() gives the id of the
 * submitter's cgroup in the v2 hierarchy, which is its directory's inode
 * number in the cgroup2 mount (kernfs): a walk of the mount matching inode
 * numbers finds the path.  A blkg's cgroup (bpf/cgroups.bpf.c) is in the
 * hierarchy of the io controller, v1's blkio on a hybrid host that mounts
 * it there, and is found the same way in that mount (c->io).  Paths are
 * cached; an unknown id triggers a new walk at most once a second (cgroups
 * come and go).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sys/sys.h"

#define MAX_DEPTH 32

/* Whether list (words separated by spaces or commas) holds word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		bool start = p == list || p[-1] == ' ' || p[-1] == ',';
		char end = p[n];

		if (start && (!end || end == ' ' || end == ',' || end == '\n'))
			return true;
		p += n;
	}
	return false;
}

/*
 * Where cgroup2 is mounted (the unified hierarchy of a hybrid setup too),
 * into v2; where a v1 hierarchy with blkio is, into v1 ("" when none).
 */
static int find_mounts(char *v2, char *v1, size_t len)
{
	char line[1024], mnt[512], fstype[64], opts[512];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	v2[0] = v1[0] = '\0';
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0])
			snprintf(v2, len, "%s", mnt);
		else if (!strcmp(fstype, "cgroup") && !v1[0] && has_word(opts, "blkio"))
			snprintf(v1, len, "%s", mnt);
	}
	fclose(f);
	return v2[0] || v1[0] ? 0 : -1;
}

/* Whether cgroup.controllers of the v2 mount lists io. */
static bool v2_has_io(const char *mnt)
{
	char path[600], buf[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return has_word(buf, "io");
}

/* The mount ids resolve in: v2's, or with io the io controller's. */
static int find_mount(struct bw_cgroups *c)
{
	char v2[sizeof(c->mnt)], v1[sizeof(c->mnt)];

	if (find_mounts(v2, v1, sizeof(v2)))
		return -1;
	if (c->io && v1[0] && !(v2[0] && v2_has_io(v2)))
		snprintf(c->mnt, sizeof(c->mnt), "%s", v1);
	else
		snprintf(c->mnt, sizeof(c->mnt), "%s", v2);
	c->v1 = c->mnt[0] && !strcmp(c->mnt, v1);
	return c->mnt[0] ? 0 : -1;
}

static void put(struct bw_cgroups *c, __u64 id, const char *path)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->e[i].id == id)
			return;
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 64;
		void *e = realloc(c->e, cap * sizeof(*c->e));

		if (!e)
			return;
		c->e = e;
		c->cap = cap;
	}
	c->e[c->n].path = strdup(path);
	if (c->e[c->n].path)
		c->e[c->n++].id = id;
}

/* Records dir (relative path rel, "" for the root) and everything below it. */
static void walk(struct bw_cgroups *c, int dfd, const char *rel, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (fstat(dfd, &st)) {
		close(dfd);
		return;
	}
	put(c, st.st_ino, rel[0] ? rel : "/");
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while (depth < MAX_DEPTH && (de = readdir(d))) {
		char sub[4096];
		int fd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
		walk(c, fd, sub, depth + 1);
	}
	closedir(d);
}

static void rescan(struct bw_cgroups *c)
{
	int fd;

	c->walked_at = time(NULL);
	if (!c->mnt[0] && find_mount(c))
		return;
	fd = open(c->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		walk(c, fd, "", 0);
}

const char *bw_cgroup_path(struct bw_cgroups *c, __u64 id)
{
	int pass, i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < c->n; i++)
			if (c->e[i].id == id)
				return c->e[i].path;
		if (pass || c->walked_at == time(NULL))
			break;
		rescan(c);
	}
	return NULL;
}

bool bw_cgroup_alive(const struct bw_cgroups *c, __u64 id, const char *path)
{
	char full[4096 + 512];
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", c->mnt, strcmp(path, "/") ? path : "");
	return !stat(full, &st) && (__u64)st.st_ino == id;
}

const char *bw_cgroups_hierarchy(struct bw_cgroups *c)
{
	if (!c->mnt[0] && find_mount(c))
		return NULL;
	return c->v1 ? "blkio" : "cgroup2";
}

void bw_cgroups_free(struct bw_cgroups *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		free(c->e[i].path);
	free(c->e);
	memset(c, 0, sizeof(*c));
}
