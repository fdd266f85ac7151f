/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * System calls the sim makes for itself, straight into the kernel.
 *
 * The preload library exports syscall() and the libc calls on fds, masks
 * and mappings, and answers them as the kernel and the application would
 * see them: the sim's own calls must not be taken for the application's
 * (a hidden fd would not close, a UAR unmap would come back to itself), so
 * they never go through libc's symbols. x86-64 only, like the doorbell
 * trap. Each returns what the kernel returns: a negative errno on failure.
 */
#ifndef PVRDMA_SIM_SYS_H
#define PVRDMA_SIM_SYS_H

#include <sys/syscall.h>

static inline long sim_sys6(long nr, long a1, long a2, long a3, long a4,
			    long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define sim_sys(nr, a1, a2, a3)						\
	sim_sys6((nr), (long)(a1), (long)(a2), (long)(a3), 0, 0, 0)

/* The kernel's sigset: signals 1..64, one bit each. */
#define SIM_KSIGSET_SIZE	8

/* The kernel's struct sigaction on x86-64 (rt_sigaction). */
struct sim_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

#endif /* PVRDMA_SIM_SYS_H */
