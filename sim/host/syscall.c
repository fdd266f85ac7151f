// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscall(): the raw system calls on signals, masks, fds and mappings
 * get the same answers as their libc entry points. See preload.h.
 */
#include "preload.h"

/*
 * ---- syscall(): the raw system calls, answered as the calls above ----
 *
 * A program (or a library: UCX's hooks) that makes these calls with
 * glibc's syscall() gets what the libc call would have given it. Inline
 * system calls cannot be seen: doorbell.c's safety net and SIGBUS fixup
 * cover the actions and mappings they could change.
 */

static long raw_sigprocmask(int how, const unsigned long *set,
			    unsigned long *old, long size)
{
	sigset_t s, o;
	int ret;

	if (size != SIM_KSIGSET_SIZE)
		return get_syscall()(SYS_rt_sigprocmask, how, set, old, size);
	if (set) {
		sigemptyset(&s);
		memcpy(&s, set, SIM_KSIGSET_SIZE);
	}
	/* How the kernel reads it: the rest checked by the kernel. */
	if (set && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK) {
		errno = EINVAL;
		return -1;
	}
	ret = mask_change(how, set ? &s : NULL, old ? &o : NULL, true);
	if (ret) {
		errno = ret;
		return -1;
	}
	if (old)
		memcpy(old, &o, SIM_KSIGSET_SIZE);
	return 0;
}

static long raw_sigaction(int sig, const struct sim_ksigaction *kact,
			  struct sim_ksigaction *kold, long size)
{
	struct sigaction act, old;
	struct sim_ksigaction copy;
	unsigned long w;

	if (size != SIM_KSIGSET_SIZE || !sig_valid(sig))
		return get_syscall()(SYS_rt_sigaction, sig, kact, kold, size);
	if (!sim_doorbell_trap_installed() || !sim_signal_owned(sig)) {
		unsigned int bits = 0;
		sigset_t set;
		long ret;

		if (kact) {
			copy = *kact;
			sigemptyset(&set);
			memcpy(&set, &copy.mask, SIM_KSIGSET_SIZE);
			bits = sim_signal_bits(&set);
			sim_signal_strip(&set);
			memcpy(&copy.mask, &set, SIM_KSIGSET_SIZE);
			kact = &copy;
		}
		ret = get_syscall()(SYS_rt_sigaction, sig, kact, kold, size);
		if (!ret && kold) {
			sigemptyset(&set);
			w = atomic_load(&app_samask_owned[sig]);
			sim_signal_add_bits(&set, (unsigned int)w);
			memcpy(&w, &set, sizeof(w));
			kold->mask |= w;
		}
		if (!ret && kact)
			atomic_store(&app_samask_owned[sig], bits);
		return ret;
	}
	if (kact) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = (sighandler_t)kact->handler;
		act.sa_flags = (int)(kact->flags & ~0x04000000ul);
		sigemptyset(&act.sa_mask);
		memcpy(&act.sa_mask, &kact->mask, SIM_KSIGSET_SIZE);
	}
	sim_signal_app_action(sig, kact ? &act : NULL, &old);
	if (kold) {
		memset(kold, 0, sizeof(*kold));
		kold->handler = (void *)old.sa_handler;
		kold->flags = (unsigned int)old.sa_flags;
		memcpy(&kold->mask, &old.sa_mask, SIM_KSIGSET_SIZE);
	}
	return 0;
}

/* The masks a raw wait takes: owned signals out, the view meanwhile. */
static long raw_wait_mask(long nr, long a1, long a2, long a3, long a4,
			  long a5, long a6, const unsigned long *kmask,
			  int mask_arg)
{
	unsigned int saved = sim_signal_blocked();
	unsigned long copy;
	sigset_t set;
	long args[6] = { a1, a2, a3, a4, a5, a6 }, ret;
	int err;

	if (!kmask)
		return get_syscall()(nr, a1, a2, a3, a4, a5, a6);
	copy = *kmask;
	sigemptyset(&set);
	memcpy(&set, &copy, sizeof(copy));
	sim_signal_set_blocked(sim_signal_bits(&set));
	sim_signal_strip(&set);
	memcpy(&copy, &set, sizeof(copy));
	args[mask_arg] = (long)&copy;
	ret = get_syscall()(nr, args[0], args[1], args[2], args[3], args[4],
			    args[5]);
	err = errno;
	sim_signal_set_blocked(saved);
	errno = err;
	return ret;
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	switch (nr) {
	case SYS_rt_sigprocmask:
		return raw_sigprocmask((int)a[0], (const unsigned long *)a[1],
				       (unsigned long *)a[2], a[3]);
	case SYS_rt_sigaction:
		return raw_sigaction((int)a[0],
				     (const struct sim_ksigaction *)a[1],
				     (struct sim_ksigaction *)a[2], a[3]);
	case SYS_rt_sigsuspend:
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[0], 0);
	case SYS_ppoll:
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[3], 3);
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[4], 4);
	case SYS_mmap:
		return (long)host_mmap((void *)a[0], (size_t)a[1], (int)a[2],
				       (int)a[3], (int)a[4], (off_t)a[5]);
	case SYS_munmap:
		return host_munmap((void *)a[0], (size_t)a[1]);
	case SYS_mremap:
		return (long)host_mremap((void *)a[0], (size_t)a[1],
					 (size_t)a[2], (int)a[3],
					 (void *)a[4]);
	case SYS_madvise:	/* not madvise(): a memory hook may own it */
		return host_madvise((void *)a[0], (size_t)a[1], (int)a[2]);
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return app_close_range((unsigned int)a[0],
					      (unsigned int)a[1], (int)a[2],
					      raw_close_range);
	case SYS_dup:
		return dup((int)a[0]);
	case SYS_dup2:
		return dup2((int)a[0], (int)a[1]);
	case SYS_dup3:
		return dup3((int)a[0], (int)a[1], (int)a[2]);
	case SYS_fcntl:
		return fcntl((int)a[0], (int)a[1], a[2]);
	case SYS_ioctl:
		return ioctl((int)a[0], (unsigned long)a[1], a[2]);
	case SYS_write:
		return write((int)a[0], (const void *)a[1], (size_t)a[2]);
	case SYS_open:
		return open((const char *)a[0], (int)a[1],
				   (mode_t)a[2]);
	case SYS_openat:
		return openat((int)a[0], (const char *)a[1], (int)a[2],
				     (mode_t)a[3]);
	case SYS_fstat:
		return fstat((int)a[0], (struct stat *)a[1]);
	case SYS_newfstatat:
		return fstatat((int)a[0], (const char *)a[1],
				      (struct stat *)a[2], (int)a[3]);
	default:
		return get_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}
