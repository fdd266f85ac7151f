// SPDX-License-Identifier: BSD-2-Clause
/*
 * This process's pid, without a system call per use.
 *
 * The device asks whose it is at every completion it writes (its shared
 * segment is the process's, see fabric/shared.c) and at every copy it
 * makes through process_vm_readv/writev on itself; glibc no longer caches
 * the pid, and a system call each time showed in the per-message cost.
 *
 * A fork()ed child must never see its parent's pid here: the fork handler
 * that sets the child's is registered before any other of the sim's (the
 * earliest constructor), and child handlers run in registration order, so
 * each of the sim's own handlers already sees the child's pid. A child
 * made by a raw clone() system call runs no handler and keeps its parent's
 * here, as it keeps glibc's own per-process state.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "common.h"
#include "sys.h"

static atomic_int self_pid;

static int pid_now(void)
{
	return (int)sim_sys(SYS_getpid, 0, 0, 0);
}

static void self_forked(void)
{
	atomic_store_explicit(&self_pid, pid_now(), memory_order_relaxed);
}

__attribute__((constructor(101))) static void self_init(void)
{
	atomic_store_explicit(&self_pid, pid_now(), memory_order_relaxed);
	pthread_atfork(NULL, NULL, self_forked);
}

pid_t sim_self_pid(void)
{
	int pid = atomic_load_explicit(&self_pid, memory_order_relaxed);

	/* Only before the constructor ran (another library's constructor
	 * calling into the sim). */
	return pid ? pid : pid_now();
}
