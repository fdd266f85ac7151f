/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fork() while another thread holds a lock of the sim: the child, which
 * has the forking thread alone, must find the lock free (fork handlers), or
 * its next call that takes it hangs; here it dies of its alarm instead and
 * the test fails. For tests/sim/device/test_dev_fork.c (dev->lock) and
 * tests/sim/host/test_doorbell_fork.c (the signal watch's app_lock).
 */
#ifndef TEST_FORK_WHILE_HELD_H
#define TEST_FORK_WHILE_HELD_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

static atomic_bool fork_lock_held;

/*
 * For the holder thread, with the lock taken: says so, and keeps it long
 * enough that the fork() comes meanwhile.
 */
static inline void fork_hold_a_while(void)
{
	atomic_store(&fork_lock_held, true);
	usleep(200000);
}

/*
 * Starts holder(arg), which takes the lock and calls fork_hold_a_while()
 * before it lets go; forks once it holds the lock. The child returns
 * child()'s exit status within 5 s; the test asserts it is 0.
 */
static inline void fork_while_held(void *(*holder)(void *), void *arg,
				   int (*child)(void))
{
	pthread_t t;
	pid_t pid;
	int status;

	atomic_store(&fork_lock_held, false);
	assert_int_equal(pthread_create(&t, NULL, holder, arg), 0);
	while (!atomic_load(&fork_lock_held))
		usleep(1000);
	pid = fork();
	if (pid == 0) {
		alarm(5);
		_exit(child());
	}
	assert_true(pid > 0);
	pthread_join(t, NULL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

#endif /* TEST_FORK_WHILE_HELD_H */
