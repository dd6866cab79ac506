// SPDX-License-Identifier: GPL-2.0
/* Errors, clocks, sysfs and procfs reads, privileges and signals. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "sys/sys.h"
#include "version.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool bw_json_errors;

void bw_print_version(FILE *f)
{
	fprintf(f, "blkwise %s (commit %s), libbpf %s\n", BW_VERSION, BW_COMMIT,
		libbpf_version_string());
}
volatile int bw_exiting;

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "blkwise: %s%s\n", kind, msg);
	if (bw_json_errors && kind[0]) {
		struct bw_json j;

		bw_json_begin(&j, stdout);
		bw_json_obj(&j, NULL);
		bw_json_str(&j, "error", msg);
		bw_json_close(&j, '}');
		bw_json_end(&j);
	}
}

void bw_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
}

void bw_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

__u64 bw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int bw_read_sysfs_u64(const char *disk, const char *attr, __u64 *val)
{
	char buf[64], *end;
	int err = bw_sysfs_get(disk, attr, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	return errno || end == buf ? -EINVAL : 0;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* 0 when we may load tracing BPF programs; names the missing capability otherwise. */
int bw_check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d)) {
		bw_err("reading capabilities (capget): %s", strerror(errno));
		return -errno;
	}
	if (has_cap(d, CAP_SYS_ADMIN) || (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON)))
		return 0;
	bw_err("not privileged: missing %s%s%s; run as root, or grant CAP_BPF and CAP_PERFMON",
	       has_cap(d, CAP_BPF) ? "" : "CAP_BPF",
	       !has_cap(d, CAP_BPF) && !has_cap(d, CAP_PERFMON) ? " and " : "",
	       has_cap(d, CAP_PERFMON) ? "" : "CAP_PERFMON");
	return -EPERM;
}

static void on_signal(int sig)
{
	(void)sig;
	bw_exiting = 1;
}

void bw_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Sleeps until ns from now, or until a signal asks us to exit; -EINTR then. */
int bw_sleep_ns(__u64 ns)
{
	struct timespec ts;
	__u64 until = bw_now_ns() + ns;

	ts.tv_sec = until / 1000000000ULL;
	ts.tv_nsec = until % 1000000000ULL;
	while (!bw_exiting) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (!err)
			return 0;
		if (err != EINTR)
			return -err;
	}
	return -EINTR;
}

/* getopt's leftovers: -h prints usage and exits 0; anything else is a usage error. */
int bw_opt_other(int c, void (*usage)(FILE *f))
{
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	usage(stderr);
	return -EINVAL;
}

/* Arguments after the options: none taken. */
int bw_opt_rest(int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	bw_err("unexpected argument '%s'; see --help", argv[optind]);
	return -EINVAL;
}
