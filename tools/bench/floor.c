// SPDX-License-Identifier: GPL-2.0
/*
 * floor - attach the empty tp_btf programs of floor.bpf.c and stay attached
 * until SIGTERM, SIGINT or SIGHUP.  Used by tools/bench.sh as the cost floor.
 *
 * usage: floor [--streams] [--clock] | --exact | --exact-tag | --rqfields | --record | --stats
 *   --streams  also attach block_io_start (the set blkwise stat --streams uses)
 *   --clock    programs that read the clock once each (with --streams, Q too)
 *   --exact    D and C as the cheapest exact design (floor.bpf.c): a clock
 *              read, the request's entry and the in-flight word each
 *   --exact-tag  the same, the entry's first probe at the request's tag
 *   --rqfields the completion-only design alone (floor.bpf.c): one C program
 *              reading the kernel's stamps and the clock, two histogram
 *              adds into a per-CPU array; nothing on any other hook
 *   --record   Q, D and C programs that read the clock and put a 64-byte
 *              record into a ring buffer, drained here every 50 ms, as
 *              blkwise record drains its own
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
#include <time.h>
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

static void stop_signals(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP);
}

static void wait_for_stop(void)
{
	sigset_t sigs;
	int sig;

	printf("ready\n");
	fflush(stdout);
	stop_signals(&sigs);
	sigwait(&sigs, &sig);
}

static int drop_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* --record: drain the ring buffer until a stop signal, as blkwise record does. */
static int drain_until_stop(struct floor_bpf *skel)
{
	struct timespec zero = { 0 };
	struct ring_buffer *rb;
	sigset_t sigs;

	rb = ring_buffer__new(bpf_map__fd(skel->maps.floor_ring), drop_record, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "floor: cannot open the ring buffer: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	stop_signals(&sigs);
	while (sigtimedwait(&sigs, NULL, &zero) < 0) {
		ring_buffer__poll(rb, 50);
		ring_buffer__consume(rb);
	}
	ring_buffer__free(rb);
	return 0;
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
	int streams = 0, clock = 0, record = 0, exact = 0, rqf = 0, rqi = 0;
	int err, i;

	/* Block the stop signals first; sigwait() picks them up later. */
	stop_signals(&sigs);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	if (argc == 2 && !strcmp(argv[1], "--stats"))
		return hold_stats();
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--streams")) {
			streams = 1;
		} else if (!strcmp(argv[i], "--clock")) {
			clock = 1;
		} else if (!strcmp(argv[i], "--record")) {
			record = 1;
		} else if (!strcmp(argv[i], "--exact")) {
			exact = 1;
		} else if (!strcmp(argv[i], "--exact-tag")) {
			exact = 2;
		} else if (!strcmp(argv[i], "--rqfields")) {
			rqf = 1;
		} else if (!strcmp(argv[i], "--rqissue")) {
			rqf = 1;
			rqi = 1;
		} else {
			fprintf(stderr, "usage: %s [--streams] [--clock] | --exact | --exact-tag | --rqfields | --record | --stats\n",
				argv[0]);
			return 2;
		}
	}
	if ((record || exact || rqf) && (streams || clock || record + !!exact + rqf > 1)) {
		fprintf(stderr, "floor: --record, --exact and --rqfields are sets of their own\n");
		return 2;
	}

	libbpf_set_print(print_libbpf);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->ex_by_tag = exact == 2;
	bpf_program__set_autoload(skel->progs.floor_io_start, streams && !clock);
	bpf_program__set_autoload(skel->progs.floor_io_start_clk, streams && clock);
	bpf_program__set_autoload(skel->progs.floor_issue, !clock && !record && !exact && !rqf);
	bpf_program__set_autoload(skel->progs.floor_issue_clk, clock);
	bpf_program__set_autoload(skel->progs.floor_issue_exact, exact);
	bpf_program__set_autoload(skel->progs.floor_complete, !clock && !record && !exact && !rqf);
	bpf_program__set_autoload(skel->progs.floor_complete_rqf, rqf && !rqi);
	bpf_program__set_autoload(skel->progs.floor_complete_rqi, rqi);
	bpf_program__set_autoload(skel->progs.floor_issue_rqi, rqi);
	bpf_program__set_autoload(skel->progs.floor_complete_clk, clock);
	bpf_program__set_autoload(skel->progs.floor_complete_exact, exact);
	bpf_program__set_autoload(skel->progs.floor_io_start_rec, record);
	bpf_program__set_autoload(skel->progs.floor_issue_rec, record);
	bpf_program__set_autoload(skel->progs.floor_complete_rec, record);
	/* A recorder's floor is its three programs, the completion-only design its one. */
	bpf_program__set_autoload(skel->progs.floor_requeue, !record && !rqf);
	bpf_program__set_autoload(skel->progs.floor_rq_merge, !record && !rqf);
	bpf_program__set_autoload(skel->progs.floor_backmerge, !record && !rqf);
	bpf_program__set_autoload(skel->progs.floor_frontmerge, !record && !rqf);
	if (!record)	/* no ring buffer to allocate */
		bpf_map__set_autocreate(skel->maps.floor_ring, false);
	if (!exact)
		bpf_map__set_autocreate(skel->maps.ex_rqs, false);
	if (!rqf)
		bpf_map__set_autocreate(skel->maps.rqf_hists, false);
	if (!rqi)
		bpf_map__set_autocreate(skel->maps.rqi_slots, false);

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

	if (record)
		err = drain_until_stop(skel);
	else
		wait_for_stop();
out:
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
