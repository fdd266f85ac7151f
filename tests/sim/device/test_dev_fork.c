// SPDX-License-Identifier: BSD-2-Clause
/*
 * An adapter's lock and fork(): a device thread holds dev->lock through
 * its rounds, and a fork() by another thread meanwhile must leave the
 * child that lock free (or the child's next device call hangs; here it
 * dies of its alarm instead).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "device.h"

static atomic_bool held;

static void *dev_lock_holder(void *arg)
{
	struct sim_dev *dev = arg;

	pthread_mutex_lock(&dev->lock);
	atomic_store(&held, true);
	usleep(200000);		/* the fork() comes meanwhile */
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

static void fork_while_held(unsigned int adapter)
{
	struct sim_dev *dev = &sim_devs[adapter];
	pthread_t t;
	pid_t pid;
	int status;

	atomic_store(&held, false);
	assert_int_equal(pthread_create(&t, NULL, dev_lock_holder, dev), 0);
	while (!atomic_load(&held))
		usleep(1000);
	pid = fork();
	if (pid == 0) {
		unsigned int i;

		alarm(5);
		/* every adapter's lock, the held one's too, is the child's */
		for (i = 0; i < sim_global.num_adapters; i++)
			if (pthread_mutex_lock(&sim_devs[i].lock) ||
			    pthread_mutex_unlock(&sim_devs[i].lock))
				_exit(1);
		_exit(0);
	}
	assert_true(pid > 0);
	pthread_join(t, NULL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* and the parent's locks are free again */
	assert_int_equal(pthread_mutex_trylock(&sim_devs[0].lock), 0);
	assert_int_equal(pthread_mutex_unlock(&sim_devs[0].lock), 0);
}

static void test_fork_while_device_thread_holds_lock(void **state)
{
	unsigned int i;

	(void)state;
	sim_global.num_adapters = 2;
	for (i = 0; i < sim_global.num_adapters; i++)
		sim_dev_lock_init(&sim_devs[i]);
	fork_while_held(1);
	fork_while_held(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_while_device_thread_holds_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
