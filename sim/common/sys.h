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

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

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

/* A raw result as libc reports it: -1 with errno set on failure. */
static inline long sim_sys_errno(long ret)
{
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/*
 * The mapping calls themselves. A memory hook may have patched libc's
 * mmap/munmap/mremap/madvise in place (Open MPI's patcher writes a jump
 * at their entry) and call syscall() from there, which comes back to the
 * sim: the sim's own and the application's mapping calls reach the kernel
 * only through these.
 */
static inline void *sim_sys_mmap(void *addr, size_t len, int prot, int flags,
				 int fd, off_t off)
{
	long r = sim_sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd,
			  (long)off);

	return r == sim_sys_errno(r) ? (void *)r : MAP_FAILED;
}

static inline int sim_sys_munmap(void *addr, size_t len)
{
	return (int)sim_sys_errno(sim_sys(SYS_munmap, addr, len, 0));
}

static inline void *sim_sys_mremap(void *old, size_t old_len, size_t new_len,
				   int flags, void *new_addr)
{
	long r = sim_sys6(SYS_mremap, (long)old, (long)old_len,
			  (long)new_len, flags, (long)new_addr, 0);

	return r == sim_sys_errno(r) ? (void *)r : MAP_FAILED;
}

static inline int sim_sys_madvise(void *addr, size_t len, int advice)
{
	return (int)sim_sys_errno(sim_sys(SYS_madvise, addr, len, advice));
}

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
