// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UAR trap: how the "hypervisor" sees doorbells, and the signals it
 * needs for that.
 *
 * A UAR page is mapped read-only, so each doorbell store faults like an
 * MMIO write to a trapping BAR. The SIGSEGV handler finds the page in a
 * lock-free registry, decodes the store at the faulting RIP, hands offset
 * and value to engine_doorbell() and steps past the instruction.
 *
 * SIGSEGV and SIGBUS are the sim's in the kernel, whatever the application
 * does: a store to a UAR must trap in every thread, at any mask, under any
 * handler. The application's view of them is kept here instead:
 *
 *  - its action for each (recorded by signals.c's sigaction() & co., or
 *    found installed by the safety net, see sim_signal_check()); faults
 *    that are not UAR stores run it as the kernel would have, or, with
 *    SIG_DFL, kill the process as they would without the sim;
 *  - per thread, whether it has them blocked (the kernel mask never holds
 *    them: signals.c strips them from every mask it passes on). A fault
 *    of its own while it "blocks" one kills the thread's process, as the
 *    kernel's forced signal does; a sent one waits until it unblocks.
 *
 * SIGBUS is taken for mappings of the uverbs file made behind the sim's
 * back (an mmap hook that reaches libc by dlsym(RTLD_NEXT), a raw
 * syscall): such a page lies beyond the backing file's end, so its first
 * store raises SIGBUS, and the fixup mmap.c registers turns the page
 * into the context's UAR in place; the store then restarts and traps.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "host.h"
#include "spawn.h"
#include "sys.h"
#include "x86_store.h"

#ifndef SA_RESTORER
#define SA_RESTORER	0x04000000
#endif

/* UAR pages alive at once: one per open device context. */
#define UAR_SLOTS	1024
/* How often the safety net looks at the kernel's actions. */
#define SIGNAL_CHECK_NS	50000000L

struct uar_slot {
	_Atomic(uintptr_t) page;
	_Atomic(struct sim_ucontext *) uctx;
};

static struct uar_slot uar_slots[UAR_SLOTS];
static atomic_uint uar_slots_used;	/* high-water mark of the scan */

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
static _Atomic(sim_bus_fixup_fn) bus_fixup;

/* The application's view of the owned signals in this thread. */
static __thread unsigned int view_blocked
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int view_pending
	__attribute__((tls_model("initial-exec")));
static __thread siginfo_t view_pending_info[SIM_OWNED_SIGNALS]
	__attribute__((tls_model("initial-exec")));

static void trap_handler(int sig, siginfo_t *si, void *ctx);

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

/* libc's own sigaction: signals.c exports one that comes back here. */
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

static struct sim_ucontext *uar_lookup(uintptr_t page)
{
	unsigned int i, n = atomic_load_explicit(&uar_slots_used,
						 memory_order_acquire);

	for (i = 0; i < n; i++)
		if (atomic_load_explicit(&uar_slots[i].page,
					 memory_order_acquire) == page)
			return atomic_load_explicit(&uar_slots[i].uctx,
						    memory_order_acquire);
	return NULL;
}

static int uar_register(uintptr_t page, struct sim_ucontext *uctx)
{
	unsigned int i;

	for (i = 0; i < UAR_SLOTS; i++) {
		uintptr_t expect = 0;

		/* Claim with a page value no real page has, then publish. */
		if (!atomic_compare_exchange_strong(&uar_slots[i].page, &expect,
						    (uintptr_t)1))
			continue;
		atomic_store(&uar_slots[i].uctx, uctx);
		atomic_store(&uar_slots[i].page, page);
		for (;;) {
			unsigned int used = atomic_load(&uar_slots_used);

			if (used > i ||
			    atomic_compare_exchange_weak(&uar_slots_used, &used,
							 i + 1))
				break;
		}
		return 0;
	}
	return -ENOMEM;
}

/* Drops the page's registration (of uctx only, if not NULL). */
static bool uar_unregister(uintptr_t page, struct sim_ucontext *uctx)
{
	unsigned int i, n = atomic_load(&uar_slots_used);

	for (i = 0; i < n; i++) {
		uintptr_t expect = page;

		if (uctx && atomic_load(&uar_slots[i].uctx) != uctx)
			continue;
		if (atomic_compare_exchange_strong(&uar_slots[i].page, &expect,
						   (uintptr_t)1)) {
			atomic_store(&uar_slots[i].uctx, NULL);
			atomic_store(&uar_slots[i].page, 0);
			return true;
		}
	}
	return false;
}

struct sim_ucontext *sim_uar_lookup(const void *addr)
{
	return uar_lookup((uintptr_t)addr & ~(uintptr_t)(SIM_PAGE_SIZE - 1));
}

static void *signal_watch(void *arg);
static void signal_watch_start(void);

/*
 * A fork()ed child has no UAR page (VM_DONTCOPY in the kernel,
 * MADV_DONTFORK here): a store to where one was is the child's own fault,
 * never a doorbell of the parent's device. Its watch thread was not
 * forked either; the child's first UAR starts one.
 *
 * Where a parent's UAR was, the child gets an inaccessible page of its
 * own. A hole there would be the first place for the child's own UAR,
 * and a provider that lets go of the inherited context (munmap of the
 * parent's UAR address, as every provider does at close) would then
 * unmap the child's doorbells. The placeholder goes instead; a store to
 * it is the same fault as to a hole.
 */
static void uar_hold_place(uintptr_t page)
{
	long p = sim_sys6(SYS_mmap, (long)page, SIM_PAGE_SIZE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			  -1, 0);

	/* A kernel before 4.17 takes the address as a hint only. */
	if (p >= 0 && (uintptr_t)p != page)
		sim_sys(SYS_munmap, p, SIM_PAGE_SIZE, 0);
}

static void doorbell_forked(void)
{
	unsigned int i, n = atomic_load(&uar_slots_used);

	for (i = 0; i < n; i++) {
		uintptr_t page = atomic_load(&uar_slots[i].page);

		if (page > 1)
			uar_hold_place(page);
		atomic_store(&uar_slots[i].uctx, NULL);
		atomic_store(&uar_slots[i].page, 0);
	}
	atomic_store(&uar_slots_used, 0);
	atomic_store(&watch_started, false);
}

/*
 * The signal watch holds app_lock in sim_signal_check(): a fork() by
 * another thread meanwhile would leave the child, which has the forking
 * thread alone, app_lock held for good, and hang its next sigaction() of
 * an owned signal. The kernel's locks are never held in a new process:
 * fork() waits for app_lock, and the child makes it anew.
 *
 * Registered in the preload's constructor, after the devices' handlers
 * (device/dev.c) and before the CM agent's: prepare handlers run in
 * reverse order, and app_lock is taken under no other lock of the sim.
 * spawn.c's handlers are registered here too, not at the first sim thread
 * (started under dev->lock): glibc runs prepare handlers under its own
 * lock, which pthread_atfork() takes.
 */
static void doorbell_fork_prepare(void)
{
	pthread_mutex_lock(&app_lock);
}

static void doorbell_fork_parent(void)
{
	pthread_mutex_unlock(&app_lock);
}

static void doorbell_fork_child(void)
{
	pthread_mutex_init(&app_lock, NULL);
	doorbell_forked();
}

/* The safety net runs from the first UAR on: only then do traps matter. */
static void signal_watch_start(void)
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

/*
 * Raw system calls: mmap.c's mmap/munmap must not see these pages.
 * The page goes at addr_hint when that is free; an address already in use
 * is never replaced, the page then goes wherever the kernel puts it.
 */
void *sim_uar_map(struct sim_ucontext *uctx, void *addr_hint)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	long p = -EEXIST;
	int ret;

	if (addr_hint) {
		p = sim_sys6(SYS_mmap, (long)addr_hint, SIM_PAGE_SIZE,
			     PROT_READ, flags | MAP_FIXED_NOREPLACE, -1, 0);
		/* A kernel before 4.17 takes the address as a hint only. */
		if (p >= 0 && p != (long)addr_hint) {
			sim_sys(SYS_munmap, p, SIM_PAGE_SIZE, 0);
			p = -EEXIST;
		}
	}
	if (p < 0)
		p = sim_sys6(SYS_mmap, 0, SIM_PAGE_SIZE, PROT_READ, flags,
			     -1, 0);
	if (p < 0) {
		errno = (int)-p;
		return MAP_FAILED;
	}
	/* Device memory is not inherited: a child gets no mapping here. */
	sim_sys(SYS_madvise, p, SIM_PAGE_SIZE, MADV_DONTFORK);
	/* A registration of this page is stale: the kernel gave the
	 * address out again, so that UAR was unmapped unseen. */
	while (uar_unregister((uintptr_t)p, NULL))
		;
	ret = uar_register((uintptr_t)p, uctx);
	if (ret) {
		sim_sys(SYS_munmap, p, SIM_PAGE_SIZE, 0);
		errno = -ret;
		return MAP_FAILED;
	}
	signal_watch_start();
	return (void *)p;
}

void sim_uar_unmap(struct sim_ucontext *uctx, void *uar)
{
	if (uar && uar != MAP_FAILED && uar_unregister((uintptr_t)uar, uctx))
		sim_sys(SYS_munmap, uar, SIM_PAGE_SIZE, 0);
}

void sim_signal_set_bus_fixup(sim_bus_fixup_fn fn)
{
	atomic_store(&bus_fixup, fn);
}

/* ModRM register numbers -> saved registers of the interrupted thread. */
static const int greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

static void say(const char *msg)
{
	sim_sys(SYS_write, STDERR_FILENO, msg, strlen(msg));
}

static __attribute__((noreturn)) void undecodable(const uint8_t *rip,
						   uintptr_t addr)
{
	char buf[256];
	int n, i;

	n = snprintf(buf, sizeof(buf),
		     "pvrdma-sim: store to UAR page at %#lx by an instruction "
		     "the doorbell trap cannot decode at %p:",
		     (unsigned long)addr, (const void *)rip);
	for (i = 0; i < 8 && n < (int)sizeof(buf) - 4; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %02x", rip[i]);
	snprintf(buf + n, sizeof(buf) - n, "\n");
	say(buf);
	abort();
}

/* The kernel takes the signal back: its default action ends the process. */
static void die_of(int sig, const siginfo_t *si)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	atomic_store(&trap_installed, false);
	/* A fault re-executes its instruction once we return; a sent
	 * signal is sent again (the trap never blocks it). */
	if (si->si_code <= 0)
		sim_sys6(SYS_rt_tgsigqueueinfo, getpid(),
			 sim_sys(SYS_gettid, 0, 0, 0), sig, (long)si, 0, 0);
}

/* Runs the application's action as the kernel would have run it. */
static void chain(int sig, siginfo_t *si, void *ctx)
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

static void trap_handler(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	ucontext_t *uc = ctx;
	struct sim_ucontext *uctx = NULL;
	sim_bus_fixup_fn fixup;
	struct x86_store st;
	const uint8_t *rip;
	uint64_t value;
	int saved_errno = errno;

	if (sig == SIGSEGV && si->si_code > 0)
		uctx = sim_uar_lookup((void *)addr);
	if (uctx && si->si_code == SEGV_MAPERR) {
		/* Unmapped behind the sim's back: not a UAR any more. */
		uar_unregister(addr & ~(uintptr_t)(SIM_PAGE_SIZE - 1), uctx);
		uctx = NULL;
	}
	if (!uctx) {
		fixup = atomic_load(&bus_fixup);
		if (sig == SIGBUS && si->si_code == BUS_ADRERR && fixup &&
		    fixup((void *)addr)) {
			errno = saved_errno;
			return;		/* now a UAR: the store traps */
		}
		chain(sig, si, ctx);
		errno = saved_errno;
		return;
	}
	rip = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	if (x86_store_decode(rip, X86_MAX_INSN_LEN, &st))
		undecodable(rip, addr);
	value = st.src_is_imm ? st.imm :
		(uint64_t)uc->uc_mcontext.gregs[greg_of[st.src_reg]];
	/*
	 * A 64-bit store names the register at the faulting address with its
	 * low half, as the device model of a hypervisor takes it.
	 */
	engine_doorbell(uctx, (uint32_t)(addr & (SIM_PAGE_SIZE - 1)),
			(uint32_t)value);
	uc->uc_mcontext.gregs[REG_RIP] += st.len;
	errno = saved_errno;
	sim_trap_resume(uc);
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

int sim_doorbell_trap_install(void)
{
	struct sigaction act, prev[SIM_OWNED_SIGNALS];
	unsigned long kmask = 0, kold = 0;
	int i;

	if (atomic_load(&trap_installed))
		return 0;
	sim_trap_resume_init();
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
	pthread_atfork(doorbell_fork_prepare, doorbell_fork_parent,
		       doorbell_fork_child);

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
