// SPDX-License-Identifier: BSD-2-Clause
/*
 * Signals: SIGSEGV and SIGBUS stay the doorbell trap's. Every libc way
 * to set a signal's action or a thread's mask, and every call that waits
 * with a mask, keeps the application's view in signals.c instead of the
 * kernel. See preload.h.
 */
#include "preload.h"

/* Owned signals each handler's sa_mask held, by signal. */
atomic_uint app_samask_owned[NSIG];

bool sig_valid(int sig)
{
	return sig > 0 && sig < NSIG;
}

static int app_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old, bool libc_checks)
{
	struct sigaction copy;
	unsigned int bits = 0;
	int ret;

	if (sim_doorbell_trap_installed() && sim_signal_owned(sig))
		return sim_signal_app_action(sig, act, old);
	if (libc_checks && !sig_valid(sig)) {
		errno = EINVAL;
		return -1;
	}
	if (act) {
		copy = *act;
		bits = sim_signal_bits(&copy.sa_mask);
		sim_signal_strip(&copy.sa_mask);
		act = &copy;
	}
	ret = get_sigaction()(sig, act, old);
	if (ret || !sig_valid(sig))
		return ret;
	if (old)
		sim_signal_add_bits(&old->sa_mask,
				    atomic_load(&app_samask_owned[sig]));
	if (act)
		atomic_store(&app_samask_owned[sig], bits);
	return 0;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return app_sigaction(sig, act, old, false);
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return app_sigaction(sig, act, old, false);
}

/* signal() and its kin: an action with the given flags, no mask. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || !sig_valid(sig)) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);	/* as glibc's signal() */
	if (app_sigaction(sig, &act, &old, true))
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics, as glibc's signal() gives. */
sighandler_t signal(int sig, sighandler_t handler)
{
	if (!sim_signal_owned(sig))
		return get_signal()(sig, handler);
	return set_handler(sig, handler, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t handler);

sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

sighandler_t ssignal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (!sim_signal_owned(sig))
		return get_sysv_signal()(sig, handler);
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

sighandler_t __sysv_signal(int sig, sighandler_t handler);

sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

static unsigned int owned_bit(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	return sim_signal_bits(&set);
}

int sighold(int sig)
{
	if (!sim_signal_owned(sig))
		return get_sighold()(sig);
	sim_signal_set_blocked(sim_signal_blocked() | owned_bit(sig));
	return 0;
}

int sigrelse(int sig)
{
	if (!sim_signal_owned(sig))
		return get_sigrelse()(sig);
	sim_signal_set_blocked(sim_signal_blocked() & ~owned_bit(sig));
	return 0;
}

int sigignore(int sig)
{
	struct sigaction act = { .sa_handler = SIG_IGN };

	if (!sim_signal_owned(sig))
		return get_sigignore()(sig);
	sigemptyset(&act.sa_mask);
	return app_sigaction(sig, &act, NULL, true);
}

/* System V sigset(): SIG_HOLD blocks; anything else unblocks. */
sighandler_t sigset(int sig, sighandler_t disp)
{
	unsigned int bit, was;
	struct sigaction act, old;

	if (!sim_signal_owned(sig))
		return get_sigset()(sig, disp);
	bit = owned_bit(sig);
	was = sim_signal_blocked();
	if (disp == SIG_HOLD) {
		if (app_sigaction(sig, NULL, &old, true))
			return SIG_ERR;
		sim_signal_set_blocked(was | bit);
		return was & bit ? SIG_HOLD : old.sa_handler;
	}
	if (disp == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = disp;
	sigemptyset(&act.sa_mask);
	if (app_sigaction(sig, &act, &old, true))
		return SIG_ERR;
	sim_signal_set_blocked(was & ~bit);
	return was & bit ? SIG_HOLD : old.sa_handler;
}

int siginterrupt(int sig, int interrupt)
{
	struct sigaction act;

	if (!sim_signal_owned(sig))
		return get_siginterrupt()(sig, interrupt);
	if (app_sigaction(sig, NULL, &act, true))
		return -1;
	if (interrupt)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return app_sigaction(sig, &act, NULL, true);
}

/* The old BSD sigvec() (a compat symbol old binaries still bind to). */
struct sim_sigvec {
	sighandler_t sv_handler;
	int sv_mask;
	int sv_flags;
};

#define SIM_SV_ONSTACK		1

#define SIM_SV_INTERRUPT	2

#define SIM_SV_RESETHAND	4

int sigvec(int sig, const struct sim_sigvec *vec, struct sim_sigvec *ovec);

int sigvec(int sig, const struct sim_sigvec *vec, struct sim_sigvec *ovec)
{
	struct sigaction act, old;
	unsigned long w;

	if (vec) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = vec->sv_handler;
		sigemptyset(&act.sa_mask);
		w = (unsigned int)vec->sv_mask;
		memcpy(&act.sa_mask, &w, sizeof(w));
		if (vec->sv_flags & SIM_SV_ONSTACK)
			act.sa_flags |= SA_ONSTACK;
		if (!(vec->sv_flags & SIM_SV_INTERRUPT))
			act.sa_flags |= SA_RESTART;
		if (vec->sv_flags & SIM_SV_RESETHAND)
			act.sa_flags |= SA_RESETHAND;
	}
	if (app_sigaction(sig, vec ? &act : NULL, &old, true))
		return -1;
	if (ovec) {
		memcpy(&w, &old.sa_mask, sizeof(w));
		ovec->sv_handler = old.sa_handler;
		ovec->sv_mask = (int)w;
		ovec->sv_flags = (old.sa_flags & SA_ONSTACK ? SIM_SV_ONSTACK :
				  0) |
				 (old.sa_flags & SA_RESTART ? 0 :
				  SIM_SV_INTERRUPT) |
				 (old.sa_flags & SA_RESETHAND ?
				  SIM_SV_RESETHAND : 0);
	}
	return 0;
}

/*
 * A thread's mask: the owned signals go to the view, the rest to the
 * kernel; what the application reads back is both. Returns 0 or an errno.
 */
int mask_change(int how, const sigset_t *set, sigset_t *old,
		bool pthread_style)
{
	unsigned int view = sim_signal_blocked(), next = view, bits;
	sigset_t copy;
	int ret;

	if (set) {
		bits = sim_signal_bits(set);
		switch (how) {
		case SIG_BLOCK:
			next = view | bits;
			break;
		case SIG_UNBLOCK:
			next = view & ~bits;
			break;
		case SIG_SETMASK:
			next = bits;
			break;
		default:
			return EINVAL;
		}
		copy = *set;
		sim_signal_strip(&copy);
		set = &copy;
	}
	if (pthread_style) {
		ret = get_pthread_sigmask()(how, set, old);
	} else {
		ret = get_sigprocmask()(how, set, old);
		if (ret)
			ret = errno;
	}
	if (ret)
		return ret;
	if (old)
		sim_signal_add_bits(old, view);
	if (set)
		sim_signal_set_blocked(next);
	return 0;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int ret = mask_change(how, set, old, false);

	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return mask_change(how, set, old, true);
}

/* The BSD int masks: signals 1..32. */
static int bsd_mask(int how, int mask)
{
	sigset_t set, old;
	unsigned long w = (unsigned int)mask;
	int i, out = 0;

	sigemptyset(&set);
	memcpy(&set, &w, sizeof(w));
	if (sigprocmask(how, &set, &old))
		return -1;
	for (i = 1; i <= 32; i++)
		if (sigismember(&old, i) == 1)
			out |= 1 << (i - 1);
	return out;
}

int sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask);
}

int sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask);
}

int siggetmask(void)
{
	return bsd_mask(SIG_BLOCK, 0);
}

/*
 * Waits under a temporary mask: owned signals stay deliverable in the
 * kernel, the view holds the temporary mask meanwhile.
 */
struct wait_mask {
	unsigned int saved;
	bool set;
	sigset_t copy;
};

static const sigset_t *wait_mask_enter(struct wait_mask *w,
				       const sigset_t *mask)
{
	w->saved = sim_signal_blocked();
	w->set = mask != NULL;
	if (!mask)
		return NULL;
	w->copy = *mask;
	sim_signal_strip(&w->copy);
	sim_signal_set_blocked(sim_signal_bits(mask));
	return &w->copy;
}

static int wait_mask_leave(struct wait_mask *w, int ret)
{
	int err = errno;

	if (w->set)
		sim_signal_set_blocked(w->saved);
	errno = err;
	return ret;
}

#define WITH_MASK(mask, call)						\
	({								\
		struct wait_mask w_;					\
		const sigset_t *m_ = wait_mask_enter(&w_, (mask));	\
		wait_mask_leave(&w_, (call));				\
	})

int sigsuspend(const sigset_t *mask)
{
	return WITH_MASK(mask, get_sigsuspend()(m_));
}

int __sigsuspend(const sigset_t *mask);

int __sigsuspend(const sigset_t *mask)
{
	return sigsuspend(mask);
}

/* sigpause(): the BSD form takes a mask, the XPG form a signal. */
int __sigpause(int sig_or_mask, int is_sig);

int __sigpause(int sig_or_mask, int is_sig)
{
	sigset_t set;

	if (is_sig) {
		if (sigprocmask(SIG_BLOCK, NULL, &set) ||
		    sigdelset(&set, sig_or_mask))
			return -1;
	} else {
		unsigned long w = (unsigned int)sig_or_mask;

		sigemptyset(&set);
		memcpy(&set, &w, sizeof(w));
	}
	return sigsuspend(&set);
}

/* <signal.h> names the XPG form sigpause: the BSD symbol by its name. */
int bsd_sigpause(int mask) __asm__("sigpause");

int bsd_sigpause(int mask)
{
	return __sigpause(mask, 0);
}

int __xpg_sigpause(int sig);

int __xpg_sigpause(int sig)
{
	return __sigpause(sig, 1);
}

int sigpending(sigset_t *set)
{
	int ret = get_sigpending()(set);

	if (!ret)
		sim_signal_add_bits(set, sim_signal_pending());
	return ret;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	  const sigset_t *mask)
{
	return WITH_MASK(mask, get_ppoll()(fds, n, ts, m_));
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *mask, size_t fdslen);

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *mask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();		/* what glibc's check does */
	return ppoll(fds, n, ts, mask);
}

int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
	    const struct timespec *ts, const sigset_t *mask)
{
	return WITH_MASK(mask, get_pselect()(n, r, w, e, ts, m_));
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
		const sigset_t *mask)
{
	return WITH_MASK(mask, get_epoll_pwait()(epfd, ev, max, timeout, m_));
}

int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
		 const struct timespec *ts, const sigset_t *mask)
{
	return WITH_MASK(mask, get_epoll_pwait2()(epfd, ev, max, ts, m_));
}
