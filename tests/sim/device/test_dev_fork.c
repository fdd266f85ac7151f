// SPDX-License-Identifier: BSD-2-Clause
/*
 * An adapter's lock and fork(): a device thread holds dev->lock through
 * its rounds, and a fork() by another thread meanwhile must leave the
 * child that lock free (or the child's next device call hangs; here it
 * dies of its alarm instead).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "device.h"
#include "../fork_while_held.h"

static void *dev_lock_holder(void *arg)
{
	struct sim_dev *dev = arg;

	pthread_mutex_lock(&dev->lock);
	fork_hold_a_while();
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

/* Every adapter's lock, the held one's too, is the child's. */
static int child_takes_every_lock(void)
{
	unsigned int i;

	for (i = 0; i < sim_global.num_adapters; i++)
		if (pthread_mutex_lock(&sim_devs[i].lock) ||
		    pthread_mutex_unlock(&sim_devs[i].lock))
			return 1;
	return 0;
}

static void fork_while_dev_held(unsigned int adapter)
{
	fork_while_held(dev_lock_holder, &sim_devs[adapter],
			child_takes_every_lock);
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
	fork_while_dev_held(1);
	fork_while_dev_held(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_while_device_thread_holds_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
