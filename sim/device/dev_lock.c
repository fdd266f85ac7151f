// SPDX-License-Identifier: BSD-2-Clause
/*
 * The adapter's lock (dev->lock): made error-checking, taken around
 * fork(), and released without stranding a doorbell a trap queued while
 * it was held.
 */
#include <pthread.h>

#include "engine.h"

static void dev_lock_make(struct sim_dev *dev)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&dev->lock, &a);
	pthread_mutexattr_destroy(&a);
}

/*
 * fork(): a lock another thread held would stay held in the child, whose
 * next device call would hang. So fork() waits for each adapter's lock (in
 * index order, as sim_mr_pin_give_up() takes them) and the child makes
 * them anew; EDEADLK: a handler forks on a thread inside the device.
 * Registered from the preload's constructor, before any other handler of
 * the sim, so these innermost locks are taken last.
 */
static unsigned int fork_locked;	/* bit i: sim_devs[i].lock taken */

static unsigned int fork_adapters(void)
{
	return sim_global.num_adapters < SIM_MAX_ADAPTERS ?
	       sim_global.num_adapters : SIM_MAX_ADAPTERS;
}

static void dev_fork_prepare(void)
{
	unsigned int i, n = fork_adapters();

	fork_locked = 0;
	for (i = 0; i < n; i++)
		if (!pthread_mutex_lock(&sim_devs[i].lock))
			fork_locked |= 1u << i;
}

static void dev_fork_parent(void)
{
	unsigned int i = fork_adapters();

	while (i-- > 0)
		if (fork_locked & (1u << i))
			pthread_mutex_unlock(&sim_devs[i].lock);
}

static void dev_fork_child(void)
{
	unsigned int i, n = fork_adapters();

	for (i = 0; i < n; i++)
		if (fork_locked & (1u << i))
			dev_lock_make(&sim_devs[i]);
}

static void dev_fork_register(void)
{
	pthread_atfork(dev_fork_prepare, dev_fork_parent, dev_fork_child);
}

/*
 * Error-checking: the doorbell trap takes dev->lock on the application's
 * thread, and a signal handler of the application that rings a doorbell
 * while that thread is inside the sim must get EDEADLK, not a deadlock.
 */
void sim_dev_lock_init(struct sim_dev *dev)
{
	static pthread_once_t fork_handlers = PTHREAD_ONCE_INIT;

	pthread_once(&fork_handlers, dev_fork_register);
	dev_lock_make(dev);
}

/*
 * Releases dev->lock without stranding a doorbell queued by a trap that
 * found the lock taken: the trap queued, then tried the lock; we unlock,
 * then look at the queue (full fences between, Dekker style): one of the
 * two sees the other.
 */
void dev_unlock(struct engine *eng, struct sim_dev *dev)
{
	for (;;) {
		pthread_mutex_unlock(&dev->lock);
		atomic_thread_fence(memory_order_seq_cst);
		if (dev_dbq_empty(&eng->dbq) ||
		    pthread_mutex_trylock(&dev->lock))
			return;
		eng->now = now_ns();
		dev_dbq_drain(eng);
		dev_acks_flush(eng);
	}
}
