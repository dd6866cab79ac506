// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup v2 ids to paths.  bpf_get_current_cgroup_id() gives the id of the
 * submitter's cgroup in the v2 hierarchy, which is its directory's inode
 * number in the cgroup2 mount (kernfs): a walk of the mount matching inode
 * numbers finds the path.  Paths are cached; an unknown id triggers a new
 * walk at most once a second (cgroups come and go).
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

/* Where cgroup2 is mounted (the unified hierarchy of a hybrid setup too). */
static int find_mount(char *out, size_t len)
{
	char line[1024], mnt[512], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			snprintf(out, len, "%s", mnt);
			found = 0;
		}
	}
	fclose(f);
	return found;
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
	if (!c->mnt[0] && find_mount(c->mnt, sizeof(c->mnt)))
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

void bw_cgroups_free(struct bw_cgroups *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		free(c->e[i].path);
	free(c->e);
	memset(c, 0, sizeof(*c));
}
