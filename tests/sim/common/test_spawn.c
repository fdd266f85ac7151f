// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sim's threads and fork() (spawn.c), with a thread runtime that holds
 * a lock of its own while it sets a new thread up (slow_thread_start.h):
 * sim_thread_create() returns once the thread runs its function, so a
 * fork() right after it leaves the child no runtime lock held; a fork()
 * from another thread while a sim thread is being started waits for it;
 * a thread that could not be created holds no fork() up.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "slow_thread_start.h"
#include "spawn.h"

static atomic_int ran;

static void *count_run(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ran, 1);
	return NULL;
}

static int slow_runtime(void **state)
{
	(void)state;
	sim_libc.pthread_create = slow_pthread_create;
	return 0;
}

static int plain_runtime(void **state)
{
	(void)state;
	sim_libc.pthread_create = pthread_create;
	return 0;
}

static void test_returns_once_running(void **state)
{
	pthread_t t;

	(void)state;
	atomic_store(&ran, 0);
	assert_int_equal(sim_thread_create(&t, NULL, count_run, NULL), 0);
	/* What a program may do right after the call that started it. */
	assert_true(fork_sees_runtime_free());
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&ran), 1);
}

static void *start_one(void *arg)
{
	pthread_t *t = arg;

	return (void *)(intptr_t)sim_thread_create(t, NULL, count_run, NULL);
}

static void test_fork_waits_for_a_starting_thread(void **state)
{
	pthread_t creator, t;
	void *ret;

	(void)state;
	atomic_store(&ran, 0);
	atomic_store(&slow_setup_begun, false);
	assert_int_equal(pthread_create(&creator, NULL, start_one, &t), 0);
	while (!atomic_load(&slow_setup_begun))
		sched_yield();
	/* The sim thread is in the runtime's setup now. */
	assert_true(fork_sees_runtime_free());
	assert_int_equal(pthread_join(creator, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&ran), 1);
}

static int failing_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	(void)thread;
	(void)attr;
	(void)fn;
	(void)arg;
	return EAGAIN;
}

static void test_failed_create(void **state)
{
	pthread_t t;
	int status;
	pid_t pid;

	(void)state;
	sim_libc.pthread_create = failing_create;
	assert_int_equal(sim_thread_create(&t, NULL, count_run, NULL), EAGAIN);
	sim_libc.pthread_create = pthread_create;
	/* Nothing is being started: a fork goes through, and so does a
	 * thread of the child. */
	pid = fork();
	if (!pid)
		_exit(sim_thread_create(&t, NULL, count_run, NULL) ||
		      pthread_join(t, NULL));
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_returns_once_running,
						slow_runtime, plain_runtime),
		cmocka_unit_test_setup_teardown(
			test_fork_waits_for_a_starting_thread, slow_runtime,
			plain_runtime),
		cmocka_unit_test(test_failed_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
