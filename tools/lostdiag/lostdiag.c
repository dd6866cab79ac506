// SPDX-License-Identifier: GPL-2.0
/*
 * lostdiag MAJOR MINOR: attach lostdiag.bpf.c to one device until SIGINT,
 * then print its counts, each program's recursion misses, and one line per
 * lost completion ("lost SECTOR D_TIME ..."; times in CLOCK_MONOTONIC
 * seconds, as ftrace's "mono" clock prints them).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lostdiag.h"
#include "lostdiag.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_results(struct lostdiag_bpf *s)
{
	struct bpf_program *p;
	__u32 i, n = s->bss->nsamples;

	printf("all devices: issues %llu completes %llu, of them run with a thread of pid 1 "
	       "current %llu\n", s->bss->all_issues, s->bss->all_completes, s->bss->completes_pid1);
	printf("sched_switch: %llu, with a thread of pid 1 current %llu, switched out %llu, "
	       "switched in %llu\n", s->bss->switches, s->bss->switch_cur_pid1,
	       s->bss->switch_prev_pid1, s->bss->switch_next_pid1);
	printf("device: issues %llu completes %llu partial %llu lost %llu unmatched %llu "
	       "requeues %llu\n", s->bss->issues, s->bss->completes, s->bss->partial,
	       s->bss->lost, s->bss->unmatched, s->bss->requeues);
	bpf_object__for_each_program(p, s->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			printf("program %s: recursion_misses %llu\n", bpf_program__name(p),
			       (unsigned long long)info.recursion_misses);
	}
	for (i = 0; i < n && i < MAX_SAMPLES; i++) {
		struct lost_sample sm;

		if (bpf_map_lookup_elem(bpf_map__fd(s->maps.samples), &i, &sm))
			continue;
		printf("lost %llu %llu.%06llu tag %llu D on cpu %llu, last C on cpu %llu %lld us "
		       "before that D, next D on cpu %llu %lld us after it\n", sm.sector,
		       sm.prev_d / 1000000000ULL, sm.prev_d % 1000000000ULL / 1000, sm.tag,
		       sm.d_cpu, sm.c_cpu, (long long)(sm.prev_d - sm.last_c) / 1000, sm.cpu,
		       (long long)(sm.now - sm.prev_d) / 1000);
	}
}

int main(int argc, char **argv)
{
	struct lostdiag_bpf *s;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: lostdiag MAJOR MINOR\n");
		return 2;
	}
	s = lostdiag_bpf__open();
	if (!s) {
		perror("lostdiag: opening the BPF object");
		return 1;
	}
	s->rodata->target_major = atoi(argv[1]);
	s->rodata->target_minor = atoi(argv[2]);
	err = lostdiag_bpf__load(s) ?: lostdiag_bpf__attach(s);
	if (err) {
		fprintf(stderr, "lostdiag: loading or attaching: %d\n", err);
		lostdiag_bpf__destroy(s);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "lostdiag: attached\n");
	while (!stop)
		pause();
	print_results(s);
	lostdiag_bpf__destroy(s);
	return 0;
}
