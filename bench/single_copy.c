// SPDX-License-Identifier: BSD-2-Clause
/*
 * single_copy write|read SIZE COUNT | pingpong ITERS
 *
 * The limits of same-host data placement between two processes, with
 * nothing of the sim in the way. One JSON line:
 *   write - COUNT process_vm_writev() calls of SIZE bytes from this
 *           process into a buffer of a child that only sleeps: the
 *           bandwidth of one kernel copy between two address spaces, and
 *           the CPU seconds the child spent (the target of an RDMA WRITE
 *           spends none);
 *   read  - the same with process_vm_readv() from the child;
 *   pingpong - ITERS round trips of one cache line between two processes
 *           spinning on a MAP_SHARED page: the cost of the cheapest
 *           possible notification between them; one-way = half the round
 *           trip, median ("typical") and 99th percentile.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

/* The child's CPU seconds, from its rusage once it is reaped. */
static double reap(pid_t pid)
{
	struct rusage ru;
	int status;

	kill(pid, SIGTERM);
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static int copy_bw(int to_target, size_t size, unsigned long count)
{
	int p[2];
	uint8_t *buf = malloc(size), *target;
	struct iovec local, remote;
	double t0, t, child_cpu;
	unsigned long i;
	ssize_t n;
	pid_t pid;

	if (!buf || pipe(p)) {
		perror("single_copy");
		return 1;
	}
	memset(buf, 0x5a, size);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* The target: a buffer of its own, faulted in, then sleep. */
		target = malloc(size);
		if (!target)
			_exit(1);
		memset(target, 0, size);
		if (write(p[1], &target, sizeof(target)) != sizeof(target))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &target, sizeof(target)) != sizeof(target)) {
		fprintf(stderr, "single_copy: no target\n");
		return 1;
	}
	local = (struct iovec){ .iov_base = buf, .iov_len = size };
	remote = (struct iovec){ .iov_base = target, .iov_len = size };
	t0 = now_s();
	for (i = 0; i < count; i++) {
		if (to_target)
			n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
		else
			n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n != (ssize_t)size) {
			fprintf(stderr, "single_copy: process_vm_%sv: %s\n",
				to_target ? "write" : "read",
				n < 0 ? strerror(errno) : "short copy");
			reap(pid);
			return 1;
		}
	}
	t = now_s() - t0;
	child_cpu = reap(pid);
	printf("{\"mode\": \"%s\", \"size\": %zu, \"count\": %lu, "
	       "\"GBps\": %.4f, \"Mpps\": %.4f, \"target_cpu_s\": %.4f}\n",
	       to_target ? "write" : "read", size, count,
	       size * (double)count / t / 1e9, count / t / 1e6, child_cpu);
	return 0;
}

/* Spins on the line; yields now and then, for a machine with fewer free
 * cores than spinners. */
static void wait_for(_Atomic uint64_t *line, uint64_t want)
{
	unsigned int spins = 0;

	while (atomic_load_explicit(line, memory_order_acquire) != want) {
		__builtin_ia32_pause();
		if (++spins % 4096 == 0)
			sched_yield();
	}
}

static int pingpong(unsigned long iters)
{
	_Atomic uint64_t *line;
	double *rtt = calloc(iters, sizeof(*rtt)), t;
	unsigned long i;
	pid_t pid;

	line = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (line == MAP_FAILED || !rtt) {
		perror("single_copy");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* Answers every odd value with the next even one. */
		for (i = 0; i < iters; i++) {
			uint64_t want = 2 * i + 1;

			wait_for(line, want);
			atomic_store_explicit(line, want + 1,
					      memory_order_release);
		}
		_exit(0);
	}
	for (i = 0; i < iters; i++) {
		uint64_t want = 2 * i + 2;

		t = now_s();
		atomic_store_explicit(line, want - 1, memory_order_release);
		wait_for(line, want);
		rtt[i] = now_s() - t;
	}
	reap(pid);
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("{\"mode\": \"pingpong\", \"count\": %lu, "
	       "\"typical_us\": %.3f, \"p99_us\": %.3f}\n", iters,
	       rtt[iters / 2] / 2 * 1e6, rtt[iters * 99 / 100] / 2 * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "pingpong") && atol(argv[2]) > 0)
		return pingpong(strtoul(argv[2], NULL, 0));
	if (argc == 4 && (!strcmp(argv[1], "write") ||
			  !strcmp(argv[1], "read")) &&
	    atol(argv[2]) > 0 && atol(argv[3]) > 0)
		return copy_bw(!strcmp(argv[1], "write"),
			       strtoull(argv[2], NULL, 0),
			       strtoul(argv[3], NULL, 0));
	fprintf(stderr,
		"usage: single_copy write|read SIZE COUNT | pingpong ITERS\n");
	return 2;
}
