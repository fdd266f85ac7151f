/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lock of a queue or CQ. Objects created under a thread domain are
 * used by one thread at a time by the application's promise, so their lock
 * is a flag test and nothing else; the choice is made once, at creation.
 */
#ifndef PVRDMA_LOCK_H
#define PVRDMA_LOCK_H

#include <pthread.h>
#include <stdbool.h>

struct pvrdma_lock {
	pthread_spinlock_t spin;
	bool single_thread;		/* thread domain: no locking */
};

static inline int pvrdma_lock_init(struct pvrdma_lock *l, bool single_thread)
{
	l->single_thread = single_thread;
	return pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
}

static inline void pvrdma_lock_destroy(struct pvrdma_lock *l)
{
	pthread_spin_destroy(&l->spin);
}

/* Returns whether a lock was really taken (for the statistics). */
static inline bool pvrdma_lock(struct pvrdma_lock *l)
{
	if (l->single_thread)
		return false;
	pthread_spin_lock(&l->spin);
	return true;
}

static inline void pvrdma_unlock(struct pvrdma_lock *l)
{
	if (!l->single_thread)
		pthread_spin_unlock(&l->spin);
}

#endif /* PVRDMA_LOCK_H */
