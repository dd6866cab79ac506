// SPDX-License-Identifier: GPL-2.0
/*
 * floor - attach the empty tp_btf programs of floor.bpf.c and stay attached
 * until SIGTERM, SIGINT or SIGHUP.  Used by tools/bench.sh as the cost floor.
 *
 * usage: floor [--streams | --clock | --stats]
 *   --streams  also attach block_io_start (the set blkwise stat --streams uses)
 *   --clock    issue and complete programs that read the clock once each
 *   --stats    attach nothing; hold BPF run-time statistics on instead
 *              (BPF_ENABLE_STATS).  Unlike kernel.bpf_stats_enabled, this is
 *              reference counted: another process resetting the sysctl
 *              cannot switch the accounting off under a running bench.
 *
 * Prints "ready" on stdout once attached (or once statistics are on).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void wait_for_stop(void)
{
	sigset_t sigs;
	int sig;

	printf("ready\n");
	fflush(stdout);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigwait(&sigs, &sig);
}

static int hold_stats(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		fprintf(stderr,
			"floor: cannot enable BPF run-time stats: %s (needs root/CAP_SYS_ADMIN, Linux >= 5.8)\n",
			strerror(-fd));
		return 1;
	}
	wait_for_stop();
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	sigset_t sigs;
	int streams = 0, clock = 0;
	int err;

	/* Block the stop signals first; sigwait() picks them up later. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	if (argc == 2 && !strcmp(argv[1], "--streams")) {
		streams = 1;
	} else if (argc == 2 && !strcmp(argv[1], "--clock")) {
		clock = 1;
	} else if (argc == 2 && !strcmp(argv[1], "--stats")) {
		return hold_stats();
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--streams | --clock | --stats]\n", argv[0]);
		return 2;
	}

	libbpf_set_print(print_libbpf);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	if (!streams)
		bpf_program__set_autoload(skel->progs.floor_io_start, false);
	bpf_program__set_autoload(clock ? skel->progs.floor_issue : skel->progs.floor_issue_clk,
				  false);
	bpf_program__set_autoload(clock ? skel->progs.floor_complete : skel->progs.floor_complete_clk,
				  false);

	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr,
			"floor: cannot load BPF programs: %s (needs root/CAP_BPF and kernel BTF: /sys/kernel/btf/vmlinux)\n",
			strerror(-err));
		goto out;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor: cannot attach tp_btf programs: %s\n",
			strerror(-err));
		goto out;
	}

	wait_for_stop();
out:
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
