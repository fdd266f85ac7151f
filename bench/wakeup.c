// SPDX-License-Identifier: BSD-2-Clause
/*
 * wakeup pipe|eventfd ITERS [TRAPS]
 *
 * The OS limit of an event-driven completion: ITERS round trips between two
 * processes, each blocked in read() until the other writes one token to it
 * (a pipe each way, or an eventfd each way). Nothing spins: each one-way
 * trip is one wake-up of a sleeping process, what a completion channel
 * costs at best. One JSON line: one-way = half a round trip, median
 * ("typical") and 99th percentile.
 *
 * With TRAPS (under pvrdma-sim), each process rings TRAPS doorbells of its
 * own adapter (CQ POLL stores to its UAR page, which trap and find no work)
 * between waking and writing the token: the ABI floor of an event-driven
 * message, the doorbells a program must ring between its wake-up and its
 * peer's, measured end to end with the scheduling of two processes that
 * trap, in its tail too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "bench_util.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* One direction: a pipe (write end, read end) or one eventfd (both). */
struct way {
	int rd, wr;
};

static int way_open(struct way *w, int eventfd_mode)
{
	int p[2];

	if (eventfd_mode) {
		w->rd = w->wr = eventfd(0, 0);
		return w->rd < 0 ? -1 : 0;
	}
	if (pipe(p))
		return -1;
	w->rd = p[0];
	w->wr = p[1];
	return 0;
}

/* The CQ POLL doorbell of this process's first adapter, or NULL. */
static volatile uint32_t *doorbell_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	uint8_t *uar;

	if (!list || !list[0])
		return NULL;
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		return NULL;
	/* As a provider maps it; it lives as long as the process. */
	uar = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, ctx->cmd_fd, 0);
	if (uar == MAP_FAILED)
		return NULL;
	return (volatile uint32_t *)(uar + PVRDMA_UAR_CQ_OFFSET);
}

static void ring(volatile uint32_t *db, unsigned long traps)
{
	while (traps--)
		*db = PVRDMA_UAR_CQ_POLL | 1;
}

static int token_send(const struct way *w)
{
	uint64_t one = 1;

	return write(w->wr, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

static int token_wait(const struct way *w)
{
	uint64_t v;
	ssize_t n;

	do {
		n = read(w->rd, &v, sizeof(v));
	} while (n < 0 && errno == EINTR);
	return n == sizeof(v) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct way ping, pong;
	unsigned long iters, traps, i;
	volatile uint32_t *db = NULL;
	double *rtt, t;
	int efd, status;
	pid_t pid;

	if ((argc != 3 && argc != 4) || (strcmp(argv[1], "pipe") &&
					 strcmp(argv[1], "eventfd"))) {
		fprintf(stderr, "usage: wakeup pipe|eventfd ITERS [TRAPS]\n");
		return 2;
	}
	efd = !strcmp(argv[1], "eventfd");
	iters = strtoul(argv[2], NULL, 0);
	traps = argc == 4 ? strtoul(argv[3], NULL, 0) : 0;
	rtt = calloc(iters ? iters : 1, sizeof(*rtt));
	if (!iters || !rtt || way_open(&ping, efd) || way_open(&pong, efd)) {
		perror("wakeup");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	/* Each process its own adapter, after the fork (a UAR page is
	 * not inherited). */
	if (traps && !(db = doorbell_open())) {
		fprintf(stderr, "wakeup: no adapter (run under pvrdma-sim)\n");
		if (!pid)
			_exit(1);
		return 1;
	}
	if (!pid) {
		for (i = 0; i < iters; i++) {
			if (token_wait(&ping))
				_exit(1);
			if (traps)
				ring(db, traps);
			if (token_send(&pong))
				_exit(1);
		}
		_exit(0);
	}
	for (i = 0; i < iters; i++) {
		t = now_us();
		if (token_send(&ping) || token_wait(&pong)) {
			perror("wakeup: round trip");
			return 1;
		}
		if (traps)
			ring(db, traps);
		rtt[i] = (now_us() - t) / 2;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "wakeup: the child failed\n");
		return 1;
	}
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("{\"mode\": \"%s\", \"count\": %lu, \"traps\": %lu, "
	       "\"typical_us\": %.3f, \"p99_us\": %.3f}\n", argv[1], iters,
	       traps, rtt[iters / 2], rtt[iters * 99 / 100]);
	free(rtt);
	return 0;
}
