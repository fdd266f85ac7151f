// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UAR trap: how the "hypervisor" sees doorbells, and the registry of
 * the UAR pages it traps.
 *
 * A UAR page is mapped read-only, so each doorbell store faults like an
 * MMIO write to a trapping BAR. The SIGSEGV handler finds the page in a
 * lock-free registry, decodes the store at the faulting RIP, hands offset
 * and value to engine_doorbell() and steps past the instruction. Any
 * other fault goes to the application's action (signals.c, which owns
 * SIGSEGV and SIGBUS for the trap).
 *
 * A fault of the device's guarded code (common/fault_guard.c: its copies
 * to and from application memory) is caught first, before the UAR
 * look-up, so a guarded copy onto a UAR page fails as any other bad page.
 *
 * SIGBUS is taken for mappings of the uverbs file made behind the sim's
 * back (an mmap hook that reaches libc by dlsym(RTLD_NEXT), a raw
 * syscall): such a page lies beyond the backing file's end, so its first
 * store raises SIGBUS, and the fixup mmap.c registers turns the page
 * into the context's UAR in place; the store then restarts and traps.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "fault_guard.h"
#include "host.h"
#include "sys.h"
#include "x86_store.h"

/* UAR pages alive at once: one per open device context. */
#define UAR_SLOTS	1024

struct uar_slot {
	_Atomic(uintptr_t) page;
	_Atomic(struct sim_ucontext *) uctx;
};

static struct uar_slot uar_slots[UAR_SLOTS];
static atomic_uint uar_slots_used;	/* high-water mark of the scan */
static _Atomic(sim_bus_fixup_fn) bus_fixup;

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

/*
 * A fork()ed child has no UAR page (VM_DONTCOPY, here MADV_DONTFORK): a
 * store there is its own fault. It gets an inaccessible page in its place,
 * not a hole where its own UAR could land and be unmapped by the
 * provider's munmap of the inherited context's UAR at close.
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
	sim_signal_watch_start();
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

	/* The device's guarded access to application memory (a store onto
	 * a UAR page included) fails there: this does not return. */
	if (si->si_code > 0)
		sim_fault_guard_catch(sig, si);
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
		sim_signal_chain(sig, si, ctx);
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

int sim_doorbell_trap_install(void)
{
	int ret;

	if (sim_doorbell_trap_installed())
		return 0;
	sim_trap_resume_init();
	ret = sim_signal_take(trap_handler);
	if (ret)
		return ret;
	pthread_atfork(NULL, NULL, doorbell_forked);
	/* trap_handler catches for the device's guarded copies */
	sim_fault_guard_enable(true);
	return 0;
}
