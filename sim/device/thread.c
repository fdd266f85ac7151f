// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device thread, one per adapter: receives when no application
 * polls, EPOLLOUT of full links, RNR and ACK timers, kicks of the control
 * path; and the start of an adapter's device. See engine.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include <string.h>

#include "engine.h"
#include "spawn.h"

struct engine dev_engines[SIM_MAX_ADAPTERS];

static int sleep_timeout_ms(struct engine *eng)
{
	uint64_t d = eng->next_deadline;

	if (!d)
		return -1;
	if (d <= eng->now)
		return 0;
	return (int)((d - eng->now + 999999) / 1000000);
}

/* A device thread handed a stream of large transfers waits a little for
 * its next doorbell before it sleeps: a wake-up per doorbell costs more. */
static bool bulk_linger(struct engine *eng)
{
	uint64_t t = atomic_load_explicit(&eng->bulk_ns, memory_order_relaxed);
	uint64_t until;

	if (!t || now_ns() - t >= BULK_LINGER_NS)
		return false;
	atomic_store(&eng->bulk_linger, true);
	until = now_ns() + BULK_LINGER_NS;
	while (dev_dbq_empty(&eng->dbq) && now_ns() < until)
		sched_yield();
	/* Waiting no more, whatever came: a flag left set would hand every
	 * later doorbell of the adapter to this thread, asleep or not. */
	atomic_store(&eng->bulk_linger, false);
	return !dev_dbq_empty(&eng->dbq);
}

/*
 * The device thread: receives, EPOLLOUT of full links, timers, kicks, and
 * the doorbells traps queued or handed to it (dispatch.c). While the
 * application polls its CQ its own traps do the receive work: the thread
 * then sleeps quietly (wake-ups and connections only) until POLLING_NS
 * after the last POLL doorbell, so as not to take a CPU from the poller.
 * With --async-mode it polls while the adapter is active (async.c).
 */
static void *engine_main(void *arg)
{
	struct engine *eng = arg;
	struct sim_dev *dev = eng->dev;
	uint64_t last_poll, quiet_ns = 0;
	sigset_t all;
	int timeout = 0;

	/* Signals are the application's: never run its handlers here. */
	sigfillset(&all);
	sim_libc.pthread_sigmask(SIG_BLOCK, &all, NULL);

	while (!atomic_load(&eng->stop)) {
		if ((timeout || quiet_ns) && bulk_linger(eng)) {
			timeout = 0;
			quiet_ns = 0;
		}
		if (timeout || quiet_ns) {
			if (!fabric_sleep_prepare(eng->port)) {
				timeout = 0;
				quiet_ns = 0;
			} else if (!dev_dbq_empty(&eng->dbq) ||
				   atomic_load(&eng->kick_pending)) {
				fabric_sleep_cancel(eng->port);
				timeout = 0;
				quiet_ns = 0;
			}
		}
		if (quiet_ns)
			fabric_wait_quiet(eng->port, quiet_ns);
		else
			fabric_wait(eng->port, timeout);
		pthread_mutex_lock(&dev->lock);
		eng->sleep_until = 0;
		if (engine_round(eng, quiet_ns != 0)) {
			timeout = 0;
			quiet_ns = 0;
		} else if (dev_async_poll(eng)) {
			timeout = 0;
			quiet_ns = 0;
			dev_unlock(eng, dev);
			sched_yield();	/* the application's core too */
			continue;
		} else {
			timeout = sleep_timeout_ms(eng);
			last_poll = atomic_load_explicit(&eng->last_poll_ns,
							 memory_order_relaxed);
			quiet_ns = 0;
			if (eng->now - last_poll < POLLING_NS) {
				quiet_ns = last_poll + POLLING_NS - eng->now;
				if (timeout >= 0 &&
				    (uint64_t)timeout * 1000000ull < quiet_ns)
					quiet_ns = timeout ?
						   (uint64_t)timeout * 1000000ull :
						   0;
			}
			if (quiet_ns)
				eng->sleep_until = eng->now + quiet_ns;
			else if (timeout < 0)
				eng->sleep_until = UINT64_MAX;
			else if (timeout)
				eng->sleep_until = eng->now +
					(uint64_t)timeout * 1000000ull;
		}
		dev_unlock(eng, dev);
	}
	return NULL;
}

static void engines_at_exit(void)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_ADAPTERS; i++)
		if (dev_engines[i].started)
			fabric_close(dev_engines[i].port);
}

void engine_copy_in_place(struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);

	if (eng && eng->started)
		fabric_copy_in_place(eng->port);
}

void engine_forget(struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);
	struct qlink *l;

	if (!eng)
		return;
	if (eng->started)
		fabric_forget(eng->port);
	/* The parent's QPs, copies in the child's tables, leave the device:
	 * destroying one (the child closing the parent's file) must not
	 * unlink it from lists that are no longer there. */
	for (l = eng->all.first; l; l = l->next)
		eqp_of(l, all)->qp->engine = NULL;
	/* The parent's thread, queues and QP lists are not the child's. */
	memset(eng, 0, sizeof(*eng));
}

/* Starts the device of an adapter (idempotent; dev->lock held or not
 * yet shared). Doorbells trapped before it are kept and run first. */
int engine_start(struct sim_dev *dev)
{
	static bool atexit_done;
	struct engine *eng = engine_of(dev);
	int ret;

	if (!eng)
		return EINVAL;
	if (eng->started)
		return 0;
	eng->dev = dev;
	atomic_store(&eng->dev_set, true);
	eng->port = fabric_open(&(struct fab_adapter){
		.index = dev->index, .gid = dev->gid,
		.gid_count = &dev->gid_count, .lock = &dev->lock,
		.rx = engine_rx, .rx_end = engine_rx_end,
		.ahead = engine_rx_ahead, .placed = engine_rx_placed,
		.owner = dev,
		.ipv4 = dev->cfg.ipv4, .name = dev->cfg.ibdev });
	if (!eng->port)
		return ENOMEM;
	atomic_store(&eng->stop, false);
	ret = sim_thread_create(&eng->thread, NULL, engine_main, eng);
	if (ret) {
		fabric_close(eng->port);
		eng->port = NULL;
		return ret;
	}
	eng->started = true;
	if (!atexit_done) {
		atexit_done = true;
		atexit(engines_at_exit);
	}
	return 0;
}
