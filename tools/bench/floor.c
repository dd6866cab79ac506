// SPDX-License-Identifier: GPL-2.0
/*
 * floor - attach the empty tp_btf programs of floor.bpf.c and stay attached
 * until SIGTERM or SIGINT.  Used by tools/bench.sh as the cost floor.
 *
 * usage: floor [--streams]
 *   --streams  also attach block_io_start (the set blkwise stat --streams uses)
 *
 * Prints "ready" on stdout once every program is attached.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	sigset_t sigs;
	int streams = 0;
	int err, sig;

	if (argc == 2 && !strcmp(argv[1], "--streams")) {
		streams = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--streams]\n", argv[0]);
		return 2;
	}

	libbpf_set_print(print_libbpf);
	/* Block the stop signals now; sigwait() picks them up once attached. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	if (!streams)
		bpf_program__set_autoload(skel->progs.floor_io_start, false);

	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr,
			"floor: cannot load BPF programs: %s (need root/CAP_BPF and a kernel with BTF: /sys/kernel/btf/vmlinux)\n",
			strerror(-err));
		goto out;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor: cannot attach tp_btf programs: %s\n",
			strerror(-err));
		goto out;
	}

	printf("ready\n");
	fflush(stdout);
	sigwait(&sigs, &sig);
out:
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
