// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sim's own threads (the CM agent, the device threads, the signal
 * watch) and fork().
 *
 * A thread is not yet running its function when pthread_create() returns:
 * the C library and a sanitizer's runtime still set it up in the new
 * thread (its stack bounds, its TLS, the runtime's per-thread state), and
 * that setup allocates. glibc's malloc holds its locks across fork(), but
 * AddressSanitizer's allocator (as gcc 12 ships it) has no fork handlers:
 * a fork() while a new thread is inside it leaves the child one of the
 * allocator's locks held by a thread the child does not have. The child
 * then hangs at the first allocation that needs that lock, typically in
 * the setup of the child's own first thread (its CM agent: its rdma_cm
 * events never come).
 *
 * A program may fork() at any time after the call that made the sim start
 * a thread (opening a device maps a UAR, which starts the signal watch;
 * opening rdma_cm starts the CM agent), so no sim thread is left
 * half-started behind a sim call: sim_thread_create() returns once the
 * thread runs its function, and a fork() from another thread waits for
 * the threads being started. What each thread does once running is its
 * own concern (the CM agent allocates only under cm_lock, which its fork
 * handler holds).
 */
#include <stdbool.h>

#include "libc.h"
#include "spawn.h"

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	bool running;
};

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static unsigned int starting;		/* created, not yet running fn */
static pthread_once_t fork_handlers = PTHREAD_ONCE_INIT;

static void *thread_entry(void *p)
{
	struct thread_start *ts = p;
	void *(*fn)(void *) = ts->fn;
	void *arg = ts->arg;

	/* ts is on the creator's stack: gone once it is told. */
	pthread_mutex_lock(&start_lock);
	ts->running = true;
	starting--;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);
	return fn(arg);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&start_lock);
	while (starting)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
}

/* The threads being started, and whoever held the lock, are not in the
 * child. */
static void fork_child(void)
{
	pthread_mutex_init(&start_lock, NULL);
	pthread_cond_init(&start_cond, NULL);
	starting = 0;
}

static void install_fork_handlers(void)
{
	pthread_atfork(fork_prepare, NULL, fork_child);
}

void sim_thread_fork_init(void)
{
	pthread_once(&fork_handlers, install_fork_handlers);
}

int sim_thread_create(pthread_t *thread, const pthread_attr_t *attr,
		      void *(*fn)(void *), void *arg)
{
	struct thread_start ts = { .fn = fn, .arg = arg };
	int ret;

	sim_thread_fork_init();
	pthread_mutex_lock(&start_lock);
	starting++;
	pthread_mutex_unlock(&start_lock);
	ret = sim_libc.pthread_create(thread, attr, thread_entry, &ts);
	pthread_mutex_lock(&start_lock);
	if (ret) {
		starting--;
		pthread_cond_broadcast(&start_cond);
	}
	while (!ret && !ts.running)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
	return ret;
}
