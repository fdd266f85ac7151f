// SPDX-License-Identifier: BSD-2-Clause
/*
 * A requester's copy into or out of a target's memory, made without the
 * target's segment lock, and the owner's fence against it (shared.h has
 * the model). A requester stopped (SIGSTOP, a debugger) or killed in the
 * middle of a copy so holds nothing another process waits for.
 *
 * A slot goes IDLE -> CHECKING (enter: the requester will read the tables)
 * -> ARMED (its pieces are written; the system call may read them) ->
 * IDLE (leave). An owner that took memory away moves every CHECKING or
 * ARMED slot to FENCED and empties its pieces, last to first: the kernel
 * reads the pieces first to last when the call starts, so a call that
 * starts after the fence moves nothing, and one that started before moves
 * a prefix of what it was given (the requester completes only the WRs the
 * kernel moved whole). Then the owner waits for the slot to leave FENCED
 * while the requester's thread runs: a thread inside process_vm_writev is
 * running (or waiting for a page), one that is stopped is not inside it
 * (a stop takes effect on the way back to user space), and a dead one
 * never enters it again. A thread that sleeps between enter and leave
 * (a signal handler of the application) is waited for SHM_FENCE_SLEEP_NS
 * at most.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "fabric.h"
#include "shared.h"
#include "shared_layout.h"
#include "sys.h"

enum shared_copy_state { COPY_IDLE, COPY_CHECKING, COPY_ARMED, COPY_FENCED };

/* How long a fence waits for a requester's thread that sleeps. */
#define SHM_FENCE_SLEEP_NS	1000000000ull

static bool process_gone(pid_t pid)
{
	return sim_sys(SYS_kill, pid, 0, 0) == -ESRCH;
}

struct shared_copy *shared_copy_claim(struct fab_link *link)
{
	void **slot = fabric_link_shared_slot(link);
	struct peer_seg *p = slot ? *slot : NULL;
	pid_t self = sim_self_pid();
	struct shared_copy *c;
	int32_t owner;
	unsigned int i;

	if (!p || !p->seg)
		return NULL;
	if (p->copy && p->copy_pid == self &&
	    atomic_load_explicit(&p->copy->pid, memory_order_relaxed) == self)
		return p->copy;
	p->copy = NULL;
	for (i = 0; i < SHM_COPY_SLOTS; i++) {
		c = &p->seg->copy[i];
		owner = atomic_load_explicit(&c->pid, memory_order_relaxed);
		if (owner && !process_gone(owner))
			continue;
		if (!atomic_compare_exchange_strong(&c->pid, &owner, self))
			continue;
		atomic_store(&c->state, COPY_IDLE);
		p->copy = c;
		p->copy_pid = self;
		return c;
	}
	return NULL;
}

struct iovec *shared_copy_iov(struct shared_copy *c)
{
	return c->iov;
}

void shared_copy_enter(struct shared_copy *c)
{
	atomic_store_explicit(&c->tid, sim_self_tid(), memory_order_relaxed);
	/* Before any read of what the copy is checked against. */
	atomic_store_explicit(&c->state, COPY_CHECKING, memory_order_seq_cst);
}

bool shared_copy_arm(struct shared_copy *c)
{
	uint32_t st = COPY_CHECKING;

	return atomic_compare_exchange_strong(&c->state, &st, COPY_ARMED);
}

void shared_copy_leave(struct shared_copy *c)
{
	atomic_store_explicit(&c->state, COPY_IDLE, memory_order_release);
}

static void fence_empty(struct shared_copy *c)
{
	int i;

	for (i = SHARED_COPY_IOV - 1; i >= 0; i--)
		__atomic_store_n(&c->iov[i].iov_len, 0, __ATOMIC_RELEASE);
}

static void pause_a_little(void)
{
	struct timespec ts = { 0, 20000 };

	sim_sys(SYS_nanosleep, &ts, NULL, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Until the fenced copy of c is over, or cannot start any more. */
static void fence_wait(struct shared_copy *c, pid_t pid)
{
	uint64_t asleep_since = 0;
	enum sim_task_run run;
	int32_t owner = pid;

	while (atomic_load(&c->state) == COPY_FENCED) {
		run = sim_task_run(pid, atomic_load(&c->tid));
		/* Not known: as gone, unless the process is there. */
		if (run == SIM_TASK_UNKNOWN)
			run = SIM_TASK_GONE;
		if (run == SIM_TASK_GONE && process_gone(pid)) {
			/* Free for another requester. */
			atomic_store(&c->state, COPY_IDLE);
			atomic_compare_exchange_strong(&c->pid, &owner, 0);
			return;
		}
		if (run == SIM_TASK_GONE || run == SIM_TASK_STOPPED)
			return;
		if (run == SIM_TASK_RUNNING) {
			asleep_since = 0;
		} else if (!asleep_since) {
			asleep_since = now_ns();
		} else if (now_ns() - asleep_since > SHM_FENCE_SLEEP_NS) {
			return;
		}
		pause_a_little();
	}
}

void shared_copy_fence(struct shared_seg *seg)
{
	struct shared_copy *c;
	unsigned int i;
	uint32_t st;
	int32_t pid;

	/* After the withdrawal, which was sequentially consistent. */
	atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < SHM_COPY_SLOTS; i++) {
		c = &seg->copy[i];
		pid = atomic_load(&c->pid);
		/* Not this thread's own: it is not inside a copy. */
		if (!pid || (pid == sim_self_pid() &&
			     atomic_load(&c->tid) == sim_self_tid()))
			continue;
		st = atomic_load(&c->state);
		while ((st == COPY_CHECKING || st == COPY_ARMED) &&
		       !atomic_compare_exchange_weak(&c->state, &st,
						     COPY_FENCED))
			;
		if (st != COPY_CHECKING && st != COPY_ARMED &&
		    st != COPY_FENCED)
			continue;
		fence_empty(c);
		fence_wait(c, pid);
	}
}
