// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's privileges: once the socket is bound, the BPF programs
 * loaded and (with --tune) the sysfs files opened as root, it becomes
 * --user with no capabilities where held map fds suffice (6.5 and later),
 * else keeping only what bpf() asks for to read a map.
 */
#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <cap-ng.h>
#include "export/export.h"

static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

int bw_privs_drop(const char *user)
{
	struct passwd *pw = getpwnam(user);
	int keep = -1, err, flags;

	if (!pw) {
		bw_err("--user %s: no such user; give an existing one (e.g. nobody)", user);
		return -EINVAL;
	}
	if (!pw->pw_uid) {
		bw_warn("--user %s: staying root with every capability", user);
		return 0;
	}
	if (!kernel_at_least(6, 5))	/* bpf() checks the caller's capability on map reads */
		keep = CAP_BPF;		/* blkwise needs 5.10, which has it */
	capng_get_caps_process();
	flags = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	capng_clear(CAPNG_SELECT_BOTH);
	if (keep >= 0)
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, keep);
	/* Clearing the bounding set needs CAP_SETPCAP; without it, nothing is left to regain. */
	flags = CAPNG_DROP_SUPP_GRP | (flags ? CAPNG_CLEAR_BOUNDING : 0);
	err = capng_change_id(pw->pw_uid, pw->pw_gid, flags);
	if (err) {
		bw_err("becoming %s (capng_change_id: %d): %s", user, err, strerror(errno));
		return -EPERM;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (keep >= 0)
		bw_warn("running as %s, keeping only CAP_BPF (this kernel's bpf() needs it to read maps)",
			user);
	else
		bw_warn("running as %s, with no capabilities", user);
	return 0;
}

/*
 * The S1 store stays writable after the drop (a keeper, see state.c):
 * started before libmicrohttpd's threads, as it forks.
 */
void bw_privs_keep_store(const struct export_args *a)
{
	struct passwd *pw = getpwnam(a->user);
	int err;

	if (a->w.no_state || !pw || !pw->pw_uid)
		return;
	err = bw_s1_keeper_start(a->w.state_dir, pw->pw_uid, pw->pw_gid);
	if (err)
		bw_warn("the S1 store in %s cannot be kept writable as %s: %s; learned S1 "
			"will be saved only if %s can write there", a->w.state_dir, a->user,
			strerror(-err), a->user);
}
