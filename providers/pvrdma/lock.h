/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lock of a queue or CQ. Objects created under a thread domain are
 * used by one thread at a time by the application's promise, so their lock
 * is a flag test and nothing else; the choice is made once, at creation.
 *
 * The others get a spinlock with the semantics of a process-private
 * pthread_spinlock_t (init, lock, unlock, destroy; the init result is
 * pthread_spin_init's). By default it is our own, inlined into the fast
 * path: a critical section is a few dozen instructions, so a call into
 * libc's pthread_spin_lock/unlock (two calls through the PLT) would cost
 * about as much as the test-and-set itself. Waiters spin on a plain load
 * (test-and-test-and-set) so the line is not bounced between cores while
 * the holder works. Built with PVRDMA_PTHREAD_SPINLOCK (CMake option of
 * the same name) it is libc's pthread_spinlock_t itself, for tools that
 * know pthread locks and not ours (helgrind, ThreadSanitizer).
 */
#ifndef PVRDMA_LOCK_H
#define PVRDMA_LOCK_H

#include <pthread.h>
#include <stdbool.h>

struct pvrdma_lock {
#ifdef PVRDMA_PTHREAD_SPINLOCK
	pthread_spinlock_t held;
#else
	int held;			/* 0 free, 1 held (atomic) */
#endif
	bool single_thread;		/* thread domain: no locking */
};

static inline int pvrdma_lock_init(struct pvrdma_lock *l, bool single_thread)
{
	l->single_thread = single_thread;
#ifdef PVRDMA_PTHREAD_SPINLOCK
	return pthread_spin_init(&l->held, PTHREAD_PROCESS_PRIVATE);
#else
	__atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
	return 0;
#endif
}

static inline void pvrdma_lock_destroy(struct pvrdma_lock *l)
{
#ifdef PVRDMA_PTHREAD_SPINLOCK
	pthread_spin_destroy(&l->held);
#else
	(void)l;
#endif
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
#ifdef PVRDMA_PTHREAD_SPINLOCK
	pthread_spin_lock(&l->held);
#else
	while (__builtin_expect(__atomic_exchange_n(&l->held, 1,
						    __ATOMIC_ACQUIRE), 0)) {
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED))
			pvrdma_cpu_relax();
	}
#endif
}

static inline void pvrdma_spin_unlock(struct pvrdma_lock *l)
{
#ifdef PVRDMA_PTHREAD_SPINLOCK
	pthread_spin_unlock(&l->held);
#else
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
#endif
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
