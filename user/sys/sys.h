/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System access (user/sys/): errors and signals, sysfs and the disks in it,
 * device identities, cgroup paths and atomic state files.  Over the model
 * only: nothing here knows BPF.
 */
#ifndef BLKWISE_SYS_H
#define BLKWISE_SYS_H

#include "model/model.h"

/* state.c: atomic state files */
#define BW_STATE_DIR "/var/lib/blkwise"
int bw_make_dir(const char *dir);
int bw_state_write(const char *dir, const char *name, int (*fmt)(FILE *f, const void *arg),
		   const void *arg);
int bw_s1_load(const char *dir, struct bw_s1_store *s, char *why, size_t len);
int bw_s1_save(const char *dir, struct bw_s1_store *mine);
/*
 * Before a drop to uid/gid that may not write dir: a writer process that
 * keeps only what writing dir takes; bw_s1_save(dir) then goes through it.
 */
int bw_s1_keeper_start(const char *dir, unsigned int uid, unsigned int gid);

/* util.c */
extern bool bw_json_errors;
void bw_print_version(FILE *f);
void bw_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__u64 bw_now_ns(void);
int bw_check_privileges(void);
int bw_read_sysfs_u64(const char *disk, const char *attr, __u64 *val);
int bw_opt_other(int c, void (*usage)(FILE *f));
int bw_opt_rest(int argc, char **argv);

/* Signals: set by the handler, polled by the loops. */
extern volatile int bw_exiting;
void bw_install_signals(void);
int bw_sleep_ns(__u64 ns);

/* devinfo.c: sysfs */
int bw_dev_probe(__u32 dev, struct bw_devinfo *di);
void bw_dev_identify(struct bw_devinfo *di, bool may_io);
bool bw_dev_is_bio_based(__u32 dev);
int bw_dev_lookup(const char *arg, __u32 *dev);
int bw_sysfs_get(const char *disk, const char *attr, char *buf, size_t len);
int bw_sysfs_set(const char *disk, const char *attr, const char *val);
int bw_sysfs_writable(const char *disk, const char *attr);

/* disks.c: the disks in /sys/block */
/* fn (unless NULL) on each disk's name; how many disks, or -1 when /sys/block is unreadable. */
int bw_disks_walk(void (*fn)(const char *disk, void *arg), void *arg);
__u64 bw_disks_completions(void);
/* Every whole disk in /sys/block, as dev_t; how many (at most max). */
int bw_list_disks(__u32 *out, int max);
/* The watched devices, else every disk; how many (at most max). */
int bw_watched_or_all(int nr, const __u32 *watch, __u32 *out, int max);
/* Entries in /sys/block (16 when it cannot be read). */
int bw_count_disks(void);
/* A disk's hardware queues (entries of /sys/block/DISK/mq); -1 when bio-based (no mq/). */
int bw_disk_hw_queues(const char *disk);
int bw_disk_sched(const char *disk, char *sched, size_t len, long *idle_us);
/* Whether this kernel can offer BFQ (listed, loaded or loadable). */
bool bw_bfq_available(void);
#define BW_NO_BFQ "this kernel has no BFQ (CONFIG_IOSCHED_BFQ is not set and no bfq module " \
	"can be loaded): idling cannot be steered here"

/*
 * cgroup.c: cgroup ids to paths, in the cgroup v2 hierarchy, or with io set
 * (before the first lookup) in the one that holds the io controller: v2
 * where it is enabled there, else v1's blkio mount.
 */
struct bw_cgroups {
	struct { __u64 id; char *path; } *e;
	int n, cap;
	bool io;
	bool v1;		/* mnt is v1's blkio */
	char mnt[512];
	__s64 walked_at;
};
/* The path of a cgroup under its mount ("/" for the root), or NULL. */
const char *bw_cgroup_path(struct bw_cgroups *c, __u64 id);
/* Whether cgroup id is still there at path (a stat, no walk). */
bool bw_cgroup_alive(const struct bw_cgroups *c, __u64 id, const char *path);
/* Which hierarchy c resolves in: "cgroup2", "blkio" (v1), or NULL when none is mounted. */
const char *bw_cgroups_hierarchy(struct bw_cgroups *c);
void bw_cgroups_free(struct bw_cgroups *c);

#endif /* BLKWISE_SYS_H */
