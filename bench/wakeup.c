// SPDX-License-Identifier: BSD-2-Clause
/*
 * wakeup pipe|eventfd ITERS
 *
 * The OS limit of an event-driven completion: ITERS round trips between two
 * processes, each blocked in read() until the other writes one token to it
 * (a pipe each way, or an eventfd each way). Nothing spins: each one-way
 * trip is one wake-up of a sleeping process, what a completion channel
 * costs at best. One JSON line: one-way = half a round trip, median
 * ("typical") and 99th percentile.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	unsigned long iters, i;
	double *rtt, t;
	int efd, status;
	pid_t pid;

	if (argc != 3 || (strcmp(argv[1], "pipe") &&
			  strcmp(argv[1], "eventfd"))) {
		fprintf(stderr, "usage: wakeup pipe|eventfd ITERS\n");
		return 2;
	}
	efd = !strcmp(argv[1], "eventfd");
	iters = strtoul(argv[2], NULL, 0);
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
	if (!pid) {
		for (i = 0; i < iters; i++)
			if (token_wait(&ping) || token_send(&pong))
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < iters; i++) {
		t = now_us();
		if (token_send(&ping) || token_wait(&pong)) {
			perror("wakeup: round trip");
			return 1;
		}
		rtt[i] = (now_us() - t) / 2;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "wakeup: the child failed\n");
		return 1;
	}
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("{\"mode\": \"%s\", \"count\": %lu, \"typical_us\": %.3f, "
	       "\"p99_us\": %.3f}\n", argv[1], iters, rtt[iters / 2],
	       rtt[iters * 99 / 100]);
	free(rtt);
	return 0;
}
