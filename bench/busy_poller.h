/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread that spins on memory until told to stop, as the thread of an
 * RDMA client that busy-polls its CQ (perftest's) does: a stream run
 * beside it measures what a transport gets of a machine where one core is
 * taken that way. In a header, as bench_util.h, so that each harness
 * stays a program of one source file.
 */
#ifndef PVRDMA_BENCH_BUSY_POLLER_H
#define PVRDMA_BENCH_BUSY_POLLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "bench_util.h"

struct busy_poller {
	pthread_t thread;
	atomic_bool stop;
	bool running;
};

static void *busy_poller_main(void *arg)
{
	struct busy_poller *p = arg;

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed))
		__builtin_ia32_pause();
	return NULL;
}

static inline void busy_poller_start(struct busy_poller *p)
{
	atomic_init(&p->stop, false);
	if (pthread_create(&p->thread, NULL, busy_poller_main, p))
		die("pthread_create", errno);
	p->running = true;
}

static inline void busy_poller_stop(struct busy_poller *p)
{
	if (!p->running)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	p->running = false;
}

#endif /* PVRDMA_BENCH_BUSY_POLLER_H */
