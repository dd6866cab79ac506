// SPDX-License-Identifier: GPL-2.0
/*
 * lineping - what one cache line costs to cross from one CPU to another.
 *
 * usage: lineping CPU_A CPU_B [HANDOFFS]
 *
 * Two threads, pinned to CPU_A and CPU_B, hand a counter in one cache line
 * back and forth: each waits for the other's increment, then increments it
 * itself.  Every handoff is one write on one CPU seen by the other: the
 * line leaves the writer's cache for the reader's, as a request's table
 * entry or a device's in-flight word does when the request is issued on
 * one CPU and completed on another.  Prints the median over 7 runs of the
 * ns per handoff, and the range: "crossing_ns MEDIAN MIN MAX".
 *
 * Used by tools/bench.sh to say what an exact tracer must pay when
 * completions run on another CPU (docs/cost.md, "Where completions run").
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

struct ping {
	_Alignas(64) volatile uint64_t turn;
	char pad[64 - sizeof(uint64_t)];
	uint64_t handoffs;
	int cpu;
	int parity;
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Waits for turns of its parity and passes each on: handoffs / 2 of them. */
static void play(struct ping *p, int parity)
{
	uint64_t t;

	for (t = parity; t < p->handoffs; t += 2) {
		while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != t)
			cpu_relax();
		__atomic_store_n(&p->turn, t + 1, __ATOMIC_RELEASE);
	}
}

static void *other(void *arg)
{
	struct ping *p = arg;

	if (pin(p->cpu))
		return (void *)1;
	play(p, 1);
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One run: ns per handoff, or a negative errno. */
static double run(int cpu_a, int cpu_b, uint64_t handoffs)
{
	static struct ping p;
	pthread_t th;
	void *ret;
	double t0, t1;
	int err;

	p.turn = 0;
	p.handoffs = handoffs;
	p.cpu = cpu_b;
	err = pin(cpu_a);
	if (err)
		return -err;
	err = pthread_create(&th, NULL, other, &p);
	if (err)
		return -err;
	t0 = now_ns();
	play(&p, 0);
	while (__atomic_load_n(&p.turn, __ATOMIC_ACQUIRE) < handoffs)
		cpu_relax();
	t1 = now_ns();
	pthread_join(th, &ret);
	if (ret)
		return -EINVAL;
	return (t1 - t0) / handoffs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double ns[RUNS];
	uint64_t handoffs = 200000;
	int cpu_a, cpu_b, i;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: lineping CPU_A CPU_B [HANDOFFS]\n");
		return 2;
	}
	cpu_a = atoi(argv[1]);
	cpu_b = atoi(argv[2]);
	if (argc == 4)
		handoffs = strtoull(argv[3], NULL, 10);
	if (cpu_a == cpu_b || handoffs < 2) {
		fprintf(stderr, "lineping: two different CPUs and at least 2 handoffs\n");
		return 2;
	}
	for (i = 0; i < RUNS; i++) {
		ns[i] = run(cpu_a, cpu_b, handoffs);
		if (ns[i] < 0) {
			fprintf(stderr, "lineping: CPUs %d and %d: %s\n", cpu_a, cpu_b,
				strerror((int)-ns[i]));
			return 1;
		}
	}
	qsort(ns, RUNS, sizeof(ns[0]), cmp_double);
	printf("crossing_ns %.1f %.1f %.1f\n", ns[RUNS / 2], ns[0], ns[RUNS - 1]);
	return 0;
}
