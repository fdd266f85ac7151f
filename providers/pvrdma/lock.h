/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lock of a queue or CQ. Objects created under a thread domain are
 * used by one thread at a time by the application's promise, so their lock
 * is a flag test and nothing else; the choice is made once, at creation.
 *
 * The others get a spinlock of our own, inlined into the fast path: a
 * critical section is a few dozen instructions, so a call into libc's
 * pthread_spin_lock/unlock (two calls through the PLT) would cost about
 * as much as the test-and-set itself. Waiters spin on a plain load
 * (test-and-test-and-set) so the line is not bounced between cores while
 * the holder works.
 */
#ifndef PVRDMA_LOCK_H
#define PVRDMA_LOCK_H

#include <stdbool.h>

struct pvrdma_lock {
	int held;			/* 0 free, 1 held (atomic) */
	bool single_thread;		/* thread domain: no locking */
};

static inline int pvrdma_lock_init(struct pvrdma_lock *l, bool single_thread)
{
	l->single_thread = single_thread;
	__atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
	return 0;
}

static inline void pvrdma_lock_destroy(struct pvrdma_lock *l)
{
	(void)l;
}

/* What a waiter does between two looks at the lock word: tell the core
 * it spins (SMT siblings and power), where the architecture has a way. */
static inline void pvrdma_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* The spinlock itself, whatever the object's thread domain says. */
static inline void pvrdma_spin_lock(struct pvrdma_lock *l)
{
	while (__builtin_expect(__atomic_exchange_n(&l->held, 1,
						    __ATOMIC_ACQUIRE), 0)) {
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED))
			pvrdma_cpu_relax();
	}
}

static inline void pvrdma_spin_unlock(struct pvrdma_lock *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

static inline void pvrdma_lock(struct pvrdma_lock *l)
{
	if (!l->single_thread)
		pvrdma_spin_lock(l);
}

static inline void pvrdma_unlock(struct pvrdma_lock *l)
{
	if (!l->single_thread)
		pvrdma_spin_unlock(l);
}

#endif /* PVRDMA_LOCK_H */
