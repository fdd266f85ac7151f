// SPDX-License-Identifier: BSD-2-Clause
/*
 * The program's signal view: SIGSEGV and SIGBUS are the UAR trap's in the
 * kernel (doorbell.c), whatever the application does: a store to a UAR
 * must trap in every thread, at any mask, under any handler. The
 * application's view of them is kept here instead:
 *
 *  - its action for each (recorded by sigcalls.c's sigaction() & co., or
 *    found installed by the safety net: sim_signal_check(), run by a
 *    watch thread); faults
 *    that are not UAR stores run it as the kernel would have, or, with
 *    SIG_DFL, kill the process as they would without the sim;
 *  - per thread, whether it has them blocked (the kernel mask never holds
 *    them: sigcalls.c strips them from every mask it passes on). A fault
 *    of its own while it "blocks" one kills the thread's process, as the
 *    kernel's forced signal does; a sent one waits until it unblocks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

#include "fault_guard.h"
#include "host.h"
#include "spawn.h"
#include "sys.h"

#ifndef SA_RESTORER
#define SA_RESTORER	0x04000000
#endif

/* How often the safety net looks at the kernel's actions. */
#define SIGNAL_CHECK_NS	50000000L

/* The signals the trap owns, and their bits in the per-thread view. */
static const int owned_sig[SIM_OWNED_SIGNALS] = { SIGSEGV, SIGBUS };

/*
 * The application's action for an owned signal, double-buffered so the
 * handler always reads a whole one: writers fill the idle copy, then flip
 * cur.
 */
struct app_signal {
	struct sigaction action[2];
	atomic_uint cur;
	atomic_bool reset;		/* SA_RESETHAND fired: now SIG_DFL */
	unsigned long mask_word;	/* owned signals in its sa_mask */
};

static struct app_signal app_sig[SIM_OWNED_SIGNALS];
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool trap_installed;
static atomic_bool watch_started;
/* The trap's handler, the kernel's action for the owned signals. */
static void (*trap_handler)(int sig, siginfo_t *si, void *ctx);

/* The application's view of the owned signals in this thread. */
static __thread unsigned int view_blocked
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int view_pending
	__attribute__((tls_model("initial-exec")));
static __thread siginfo_t view_pending_info[SIM_OWNED_SIGNALS]
	__attribute__((tls_model("initial-exec")));


static int owned_index(int sig)
{
	int i;

	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		if (owned_sig[i] == sig)
			return i;
	return -1;
}

bool sim_signal_owned(int sig)
{
	return owned_index(sig) >= 0;
}

/* The kernel word of a sigset (signals 1..64). */
static unsigned long set_word(const sigset_t *set)
{
	unsigned long w;

	memcpy(&w, set, sizeof(w));
	return w;
}

static void set_word_store(sigset_t *set, unsigned long w)
{
	memcpy(set, &w, sizeof(w));
}

static unsigned long owned_word(void)
{
	unsigned long w = 0;
	int i;

	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		w |= 1ul << (owned_sig[i] - 1);
	return w;
}

unsigned int sim_signal_bits(const sigset_t *set)
{
	unsigned int bits = 0;
	int i;

	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		if (sigismember(set, owned_sig[i]) == 1)
			bits |= 1u << i;
	return bits;
}

void sim_signal_add_bits(sigset_t *set, unsigned int bits)
{
	int i;

	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		if (bits & (1u << i))
			sigaddset(set, owned_sig[i]);
}

void sim_signal_strip(sigset_t *set)
{
	int i;

	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		sigdelset(set, owned_sig[i]);
}

unsigned int sim_signal_blocked(void)
{
	return view_blocked;
}

unsigned int sim_signal_pending(void)
{
	return view_pending;
}

/* A sent signal the application blocked is delivered when it unblocks. */
void sim_signal_set_blocked(unsigned int bits)
{
	unsigned int due;
	int i;

	view_blocked = bits & ((1u << SIM_OWNED_SIGNALS) - 1);
	due = view_pending & ~view_blocked;
	if (!due)
		return;
	view_pending &= ~due;
	for (i = 0; i < SIM_OWNED_SIGNALS; i++)
		if (due & (1u << i))
			sim_sys6(SYS_rt_tgsigqueueinfo, getpid(),
				 sim_sys(SYS_gettid, 0, 0, 0), owned_sig[i],
				 (long)&view_pending_info[i], 0, 0);
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* libc's own sigaction: sigcalls.c exports one that comes back here. */
static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	static _Atomic(sigaction_fn) fn;
	sigaction_fn f = atomic_load(&fn);

	if (!f) {
		f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
		if (!f)
			f = (sigaction_fn)dlsym(RTLD_DEFAULT, "__sigaction");
		if (!f) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store(&fn, f);
	}
	return f(sig, act, old);
}

static void *signal_watch(void *arg);

/*
 * fork() waits for app_lock (the watch holds it in sim_signal_check()) and
 * the child makes it anew: a child must not find it held for good. Taken
 * under no other lock of the sim, so registered after the devices' fork
 * handlers; spawn.c's are registered here too, not under dev->lock at the
 * first sim thread, since pthread_atfork() takes glibc's fork lock.
 */
static void signal_fork_prepare(void)
{
	pthread_mutex_lock(&app_lock);
}

static void signal_fork_parent(void)
{
	pthread_mutex_unlock(&app_lock);
}

/* Nor is the watch thread forked: the child's first UAR starts one. */
static void signal_fork_child(void)
{
	pthread_mutex_init(&app_lock, NULL);
	atomic_store(&watch_started, false);
}

/* The safety net runs from the first UAR on: only then do traps matter. */
void sim_signal_watch_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	bool expect = false;

	if (!atomic_compare_exchange_strong(&watch_started, &expect, true))
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (sim_thread_create(&t, &attr, signal_watch, NULL))
		atomic_store(&watch_started, false);
	pthread_attr_destroy(&attr);
}
/* The kernel takes the signal back: its default action ends the process. */
static void die_of(int sig, const siginfo_t *si)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	atomic_store(&trap_installed, false);
	/* no handler catches for the device's guarded copies any more */
	sim_fault_guard_enable(false);
	/* A fault re-executes its instruction once we return; a sent
	 * signal is sent again (the trap never blocks it). */
	if (si->si_code <= 0)
		sim_sys6(SYS_rt_tgsigqueueinfo, getpid(),
			 sim_sys(SYS_gettid, 0, 0, 0), sig, (long)si, 0, 0);
}

/* Runs the application's action as the kernel would have run it. */
void sim_signal_chain(int sig, siginfo_t *si, void *ctx)
{
	int idx = owned_index(sig);
	struct app_signal *as = &app_sig[idx];
	struct sigaction act = as->action[atomic_load(&as->cur) & 1];
	unsigned int bit = 1u << idx, blocked = view_blocked;
	bool sent = si->si_code <= 0;
	ucontext_t *uc = ctx;
	unsigned long kmask;

	if (atomic_load(&as->reset))
		act.sa_handler = SIG_DFL;
	if (act.sa_handler == SIG_IGN && sent)
		return;
	if (sent && (blocked & bit)) {
		/* Sent to the process (kill, sigqueue), it is the main
		 * thread's if that one is not this (the kernel would pick a
		 * thread that does not block it; the sim's own block all). */
		if ((si->si_code == SI_USER || si->si_code == SI_QUEUE) &&
		    sim_sys(SYS_gettid, 0, 0, 0) != getpid() &&
		    !sim_sys6(SYS_rt_tgsigqueueinfo, getpid(), getpid(), sig,
			      (long)si, 0, 0))
			return;
		/* Pending until the thread unblocks it. */
		view_pending_info[idx] = *si;
		view_pending |= bit;
		return;
	}
	/* A fault the thread blocked or ignored: the kernel forces the
	 * default action, as it does for any synchronous signal. */
	if (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN ||
	    (blocked & bit)) {
		die_of(sig, si);
		return;
	}
	if (act.sa_flags & SA_RESETHAND)
		atomic_store(&as->reset, true);

	/*
	 * The handler runs with the mask the kernel would give it. Owned
	 * signals stay unblocked in the kernel and blocked in the view; the
	 * interrupted mask it sees (and may change) holds the view.
	 */
	sim_signal_add_bits(&uc->uc_sigmask, blocked);
	view_blocked = blocked | sim_signal_bits(&act.sa_mask) |
		       (act.sa_flags & SA_NODEFER ? 0 : bit);
	kmask = (set_word(&uc->uc_sigmask) | set_word(&act.sa_mask)) &
		~owned_word();
	sim_sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&kmask, 0,
		 SIM_KSIGSET_SIZE, 0, 0);
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, ctx);
	else
		act.sa_handler(sig);
	/* sigreturn restores uc_sigmask: the view follows it. */
	sim_signal_set_blocked(sim_signal_bits(&uc->uc_sigmask));
	sim_signal_strip(&uc->uc_sigmask);
}

bool sim_doorbell_trap_installed(void)
{
	return atomic_load(&trap_installed);
}

/*
 * SA_NODEFER: the kernel never blocks an owned signal for the trap, so an
 * application handler that leaves by longjmp leaves no kernel mask behind
 * that would kill the next doorbell (the view blocks it meanwhile).
 */
static void trap_action(struct sigaction *act)
{
	memset(act, 0, sizeof(*act));
	act->sa_sigaction = trap_handler;
	act->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
	sigemptyset(&act->sa_mask);
}

int sim_signal_take(void (*handler)(int sig, siginfo_t *si, void *ctx))
{
	struct sigaction act, prev[SIM_OWNED_SIGNALS];
	unsigned long kmask = 0, kold = 0;
	int i;

	if (atomic_load(&trap_installed))
		return 0;
	trap_handler = handler;
	trap_action(&act);

	pthread_mutex_lock(&app_lock);
	for (i = 0; i < SIM_OWNED_SIGNALS; i++) {
		if (real_sigaction(owned_sig[i], &act, &prev[i])) {
			int err = errno;

			while (i-- > 0)
				real_sigaction(owned_sig[i], &prev[i], NULL);
			pthread_mutex_unlock(&app_lock);
			return -err;
		}
	}
	/* Whoever had them before us (a sanitizer, say) is chained to. */
	for (i = 0; i < SIM_OWNED_SIGNALS; i++) {
		app_sig[i].action[0] = prev[i];
		atomic_store(&app_sig[i].cur, 0);
		atomic_store(&app_sig[i].reset, false);
	}
	atomic_store(&trap_installed, true);
	pthread_mutex_unlock(&app_lock);

	sim_thread_fork_init();
	pthread_atfork(signal_fork_prepare, signal_fork_parent,
		       signal_fork_child);

	/* A mask inherited across exec is the application's view only. */
	sim_sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&kmask, (long)&kold,
		 SIM_KSIGSET_SIZE, 0, 0);
	if (kold & owned_word()) {
		sigset_t set;

		sigemptyset(&set);
		set_word_store(&set, kold);
		view_blocked |= sim_signal_bits(&set);
		kmask = owned_word();
		sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&kmask, 0,
			 SIM_KSIGSET_SIZE, 0, 0);
	}
	return 0;
}

int sim_signal_app_action(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	int idx = owned_index(sig);
	struct app_signal *as;
	unsigned int cur;

	if (idx < 0) {
		errno = EINVAL;
		return -1;
	}
	as = &app_sig[idx];
	pthread_mutex_lock(&app_lock);
	cur = atomic_load(&as->cur) & 1;
	if (old) {
		*old = as->action[cur];
		if (atomic_load(&as->reset)) {
			old->sa_handler = SIG_DFL;
			old->sa_flags &= ~SA_SIGINFO;
		}
	}
	if (act) {
		as->action[!cur] = *act;
		atomic_store(&as->cur, !cur);
		atomic_store(&as->reset, false);
	}
	pthread_mutex_unlock(&app_lock);
	return 0;
}

void sim_signal_locked_call(void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&app_lock);
	fn(arg);
	pthread_mutex_unlock(&app_lock);
}

int sim_doorbell_app_sigaction(const struct sigaction *act,
			       struct sigaction *old)
{
	return sim_signal_app_action(SIGSEGV, act, old);
}

/*
 * The safety net: an action installed where no interposed call saw it
 * (glibc's internal sigaction, a raw system call) would take doorbell
 * faults away from the trap and run the application's handler on them
 * forever. Whatever is found installed is recorded as the application's
 * action and the trap takes the signal back.
 */
void sim_signal_check(void)
{
	struct sim_ksigaction k;
	struct sigaction found, act;
	int i;

	if (!atomic_load(&trap_installed))
		return;
	for (i = 0; i < SIM_OWNED_SIGNALS; i++) {
		if (sim_sys6(SYS_rt_sigaction, owned_sig[i], 0, (long)&k,
			     SIM_KSIGSET_SIZE, 0, 0) ||
		    k.handler == (void *)trap_handler)
			continue;
		memset(&found, 0, sizeof(found));
		found.sa_handler = (sighandler_t)k.handler;
		found.sa_flags = (int)(k.flags & ~(unsigned long)SA_RESTORER);
		sigemptyset(&found.sa_mask);
		set_word_store(&found.sa_mask, k.mask);
		pthread_mutex_lock(&app_lock);
		if (!atomic_load(&trap_installed)) {
			pthread_mutex_unlock(&app_lock);
			return;		/* dying of a signal: leave it */
		}
		trap_action(&act);
		real_sigaction(owned_sig[i], &act, NULL);
		pthread_mutex_unlock(&app_lock);
		sim_signal_app_action(owned_sig[i], &found, NULL);
	}
}

static void *signal_watch(void *arg)
{
	const struct timespec period = { 0, SIGNAL_CHECK_NS };
	sigset_t all;

	(void)arg;
	pthread_setname_np(pthread_self(), "pvrdma-sigwatch");
	/* Never runs the application's handlers. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		nanosleep(&period, NULL);
		sim_signal_check();
	}
	return NULL;
}
