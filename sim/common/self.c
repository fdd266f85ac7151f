// SPDX-License-Identifier: BSD-2-Clause
/*
 * This process's pid, and the calling thread's tid, without a system call
 * per use; and what the kernel says of another process's thread.
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
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

pid_t sim_self_tid(void)
{
	static __thread pid_t pid, tid;

	/* A forked child's thread is another one. */
	if (pid != sim_self_pid()) {
		pid = sim_self_pid();
		tid = (pid_t)sim_sys(SYS_gettid, 0, 0, 0);
	}
	return tid;
}

enum sim_task_run sim_task_run(pid_t pid, pid_t tid)
{
	char path[80], buf[512], *p;
	long fd, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	fd = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fd == -ENOENT ? SIM_TASK_GONE : SIM_TASK_UNKNOWN;
	n = sim_sys(SYS_read, fd, buf, sizeof(buf) - 1);
	sim_sys(SYS_close, fd, 0, 0);
	if (n <= 0)
		return SIM_TASK_GONE;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the name may hold anything */
	if (!p || p[1] != ' ')
		return SIM_TASK_GONE;
	switch (p[2]) {
	case 'Z':
	case 'X':
		return SIM_TASK_GONE;
	case 'T':
	case 't':
		return SIM_TASK_STOPPED;
	case 'S':
		return SIM_TASK_ASLEEP;
	default:
		return SIM_TASK_RUNNING;
	}
}
