// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UAR trap: how the "hypervisor" sees doorbells.
 *
 * A UAR page is mapped read-only, so each doorbell store faults like an
 * MMIO write to a trapping BAR. The SIGSEGV handler finds the page in a
 * lock-free registry, decodes the store at the faulting RIP, hands offset
 * and value to engine_doorbell() and steps past the instruction.
 *
 * Faults that are not UAR stores belong to the application: the handler
 * it installed (recorded by interpose.c's sigaction()/signal()) runs as the
 * kernel would have run it, or, without one, the default action kills the
 * process as it would have without the sim.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "sim.h"
#include "x86_store.h"

/* UAR pages alive at once: one per open device context. */
#define UAR_SLOTS	1024

struct uar_slot {
	_Atomic(uintptr_t) page;
	_Atomic(struct sim_ucontext *) uctx;
};

static struct uar_slot uar_slots[UAR_SLOTS];
static atomic_uint uar_slots_used;	/* high-water mark of the scan */

/*
 * The application's SIGSEGV action, double-buffered so the handler always
 * reads a whole one: writers fill the idle copy, then flip app_cur.
 */
static struct sigaction app_action[2];
static atomic_uint app_cur;
static atomic_bool app_reset;		/* SA_RESETHAND fired: now SIG_DFL */
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool trap_installed;

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* libc's own sigaction: interpose.c exports one that comes back here. */
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

static bool uar_unregister(uintptr_t page)
{
	unsigned int i, n = atomic_load(&uar_slots_used);

	for (i = 0; i < n; i++) {
		uintptr_t expect = page;

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

/*
 * Raw system calls: interpose.c's mmap/munmap must not see these pages.
 * The page goes at addr_hint when that is free; an address already in use
 * is never replaced, the page then goes wherever the kernel puts it.
 */
void *sim_uar_map(struct sim_ucontext *uctx, void *addr_hint)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	long p = -1;
	int ret;

	if (addr_hint)
		p = syscall(SYS_mmap, addr_hint, SIM_PAGE_SIZE, PROT_READ,
			    flags | MAP_FIXED_NOREPLACE, -1, 0L);
	if (p == -1)
		p = syscall(SYS_mmap, NULL, SIM_PAGE_SIZE, PROT_READ, flags,
			    -1, 0L);
	if (p == -1)
		return MAP_FAILED;
	ret = uar_register((uintptr_t)p, uctx);
	if (ret) {
		syscall(SYS_munmap, p, SIM_PAGE_SIZE);
		errno = -ret;
		return MAP_FAILED;
	}
	return (void *)p;
}

void sim_uar_unmap(void *uar)
{
	if (uar && uar != MAP_FAILED && uar_unregister((uintptr_t)uar))
		syscall(SYS_munmap, uar, SIM_PAGE_SIZE);
}

/* ModRM register numbers -> saved registers of the interrupted thread. */
static const int greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));

	(void)r;
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

/* Runs the application's action as the kernel would have run it. */
static void chain(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction act = app_action[atomic_load(&app_cur) & 1];
	ucontext_t *uc = ctx;
	sigset_t mask, saved;

	if (atomic_load(&app_reset))
		act.sa_handler = SIG_DFL;
	if (act.sa_handler == SIG_IGN && si->si_code <= 0)
		return;			/* sent by kill(): ignored */
	if (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		/*
		 * Die of this signal as if the sim were not here: a fault
		 * re-executes the instruction once we return; a sent signal
		 * is re-raised and delivered when the handler unblocks it.
		 */
		sigemptyset(&dfl.sa_mask);
		real_sigaction(SIGSEGV, &dfl, NULL);
		atomic_store(&trap_installed, false);
		if (si->si_code <= 0)
			raise(SIGSEGV);
		return;
	}
	if (act.sa_flags & SA_RESETHAND)
		atomic_store(&app_reset, true);

	mask = uc->uc_sigmask;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&act.sa_mask, s) == 1)
			sigaddset(&mask, s);
	if (act.sa_flags & SA_NODEFER)
		sigdelset(&mask, SIGSEGV);
	else
		sigaddset(&mask, SIGSEGV);
	pthread_sigmask(SIG_SETMASK, &mask, &saved);
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(sig, si, ctx);
	else
		act.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static void trap_handler(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	ucontext_t *uc = ctx;
	struct sim_ucontext *uctx;
	struct x86_store st;
	const uint8_t *rip;
	uint64_t value;
	int saved_errno;

	uctx = si->si_code > 0 ? sim_uar_lookup((void *)addr) : NULL;
	if (!uctx) {
		chain(sig, si, ctx);
		return;
	}
	saved_errno = errno;
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
}

bool sim_doorbell_trap_installed(void)
{
	return atomic_load(&trap_installed);
}

int sim_doorbell_trap_install(void)
{
	struct sigaction act, prev;

	if (atomic_load(&trap_installed))
		return 0;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = trap_handler;
	act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&act.sa_mask);

	pthread_mutex_lock(&app_lock);
	if (real_sigaction(SIGSEGV, &act, &prev)) {
		int err = errno;

		pthread_mutex_unlock(&app_lock);
		return -err;
	}
	/* Whoever had SIGSEGV before us (a sanitizer, say) is chained to. */
	app_action[0] = prev;
	atomic_store(&app_cur, 0);
	atomic_store(&app_reset, false);
	atomic_store(&trap_installed, true);
	pthread_mutex_unlock(&app_lock);
	return 0;
}

int sim_doorbell_app_sigaction(const struct sigaction *act,
			       struct sigaction *old)
{
	unsigned int cur;

	pthread_mutex_lock(&app_lock);
	cur = atomic_load(&app_cur) & 1;
	if (old) {
		*old = app_action[cur];
		if (atomic_load(&app_reset)) {
			old->sa_handler = SIG_DFL;
			old->sa_flags &= ~SA_SIGINFO;
		}
	}
	if (act) {
		app_action[!cur] = *act;
		atomic_store(&app_cur, !cur);
		atomic_store(&app_reset, false);
	}
	pthread_mutex_unlock(&app_lock);
	return 0;
}
