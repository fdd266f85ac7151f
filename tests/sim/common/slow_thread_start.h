/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread runtime that takes its time to set a new thread up, holding a
 * lock of its own meanwhile, as a sanitizer's allocator does in the new
 * thread before the thread's function runs: installed as
 * sim_libc.pthread_create, for tests of what a fork() during that setup
 * leaves the child (spawn.c).
 */
#ifndef TEST_SLOW_THREAD_START_H
#define TEST_SLOW_THREAD_START_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "libc.h"

/* Long enough that a fork() right after pthread_create() lands in it. */
#define SLOW_SETUP_NS	200000000L

/* The runtime's own thread creation: a test that interposes
 * pthread_create() itself points this at the next one. */
static int (*slow_real_create)(pthread_t *, const pthread_attr_t *,
			       void *(*)(void *), void *) = pthread_create;

static pthread_mutex_t slow_runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool slow_setup_begun;

struct slow_start {
	void *(*fn)(void *);
	void *arg;
};

static inline void *slow_entry(void *p)
{
	struct slow_start s = *(struct slow_start *)p;
	struct timespec t = { 0, SLOW_SETUP_NS };

	pthread_mutex_lock(&slow_runtime_lock);
	atomic_store(&slow_setup_begun, true);
	free(p);
	while (nanosleep(&t, &t))
		;
	pthread_mutex_unlock(&slow_runtime_lock);
	return s.fn(s.arg);
}

/* The runtime's pthread_create returns once the setup has begun. */
static inline int slow_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			       void *(*fn)(void *), void *arg)
{
	struct slow_start *s = malloc(sizeof(*s));
	int ret;

	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	atomic_store(&slow_setup_begun, false);
	ret = slow_real_create(thread, attr, slow_entry, s);
	if (ret) {
		free(s);
		return ret;
	}
	while (!atomic_load(&slow_setup_begun))
		sched_yield();
	return 0;
}

/* Forks a child that reports whether the runtime's lock is free there
 * (a child that inherited it held would hang on its next thread). */
static inline bool fork_sees_runtime_free(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(pthread_mutex_trylock(&slow_runtime_lock) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#endif /* TEST_SLOW_THREAD_START_H */
