// SPDX-License-Identifier: BSD-2-Clause
/*
 * Leaving the UAR trap without rt_sigreturn. A doorbell's SIGSEGV handler
 * (doorbell.c) returns through the kernel's sigreturn, a system call that
 * restores the FPU state and the registers from the signal frame: about a
 * fifth of a trap. The handler changes nothing sigreturn would undo (the
 * trap runs with SA_NODEFER and an empty sa_mask: the kernel left the
 * thread's mask alone), so it may restore the interrupted context itself,
 * as a longjmp out of a handler does: XRSTOR of the frame's FPU state,
 * then the registers, the flags and the instruction pointer.
 *
 * The flags and the instruction pointer go on the interrupted stack just
 * below its red zone (the ABI lets a signal write there any time), where
 * popfq; ret $128 takes them and lands on the interrupted stack pointer;
 * the other registers are popped from the frame's gregs, so that any
 * signal coming meanwhile builds its frame below what is still to be read.
 *
 * Not taken (the handler returns through sigreturn) with a shadow stack
 * (sigreturn checks its token), with an alternate stack armed with
 * SS_AUTODISARM (sigreturn re-arms it), with a frame that has no XSAVE
 * area (one made by an emulator), with PVRDMA_SIM_TRAP_SIGRETURN set, or
 * in an AddressSanitizer build: leaving frames unreturned needs its
 * no-return hook, which on an alternate stack (ASan's own) reads the
 * process's memory map at each trap.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
#include <sys/syscall.h>

#include "host.h"
#include "sys.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRAP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TRAP_ASAN 1
#endif

#ifndef SS_AUTODISARM
#define SS_AUTODISARM		(1u << 31)	/* uapi linux/signal.h */
#endif
#define TRAP_FP_XSTATE_MAGIC1	0x46505853u	/* "FPXS": an XSAVE frame */
#define TRAP_FP_SW_OFFSET	464		/* in the FXSAVE area */
#define TRAP_ARCH_SHSTK_STATUS	0x5005
#define TRAP_SHSTK_ENABLED	1ul

/* The kernel's struct _fpx_sw_bytes (uapi asm/sigcontext.h). */
struct trap_fpx_sw {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

/* gregs: the frame's registers; fp: its XSAVE area; mask: its features. */
void sim_trap_resume_regs(greg_t *gregs, void *fp, uint64_t mask)
	__attribute__((noreturn, visibility("hidden")));

/* greg_t indices: R8..R15 0-7, RDI 8, RSI 9, RBP 10, RBX 11, RDX 12,
 * RAX 13, RCX 14, RSP 15, RIP 16, EFL 17. */
__asm__(
	".text\n"
	".globl sim_trap_resume_regs\n"
	".hidden sim_trap_resume_regs\n"
	".type sim_trap_resume_regs, @function\n"
	"sim_trap_resume_regs:\n"
	"	mov %rdx, %rax\n"
	"	shr $32, %rdx\n"
	"	xrstor64 (%rsi)\n"
	"	mov 120(%rdi), %rsi\n"		/* RSP */
	"	sub $144, %rsi\n"		/* below the red zone */
	"	mov 136(%rdi), %rax\n"		/* EFL */
	"	mov %rax, (%rsi)\n"
	"	mov 128(%rdi), %rax\n"		/* RIP */
	"	mov %rax, 8(%rsi)\n"
	"	mov %rsi, 120(%rdi)\n"
	"	mov %rdi, %rsp\n"
	"	pop %r8\n"
	"	pop %r9\n"
	"	pop %r10\n"
	"	pop %r11\n"
	"	pop %r12\n"
	"	pop %r13\n"
	"	pop %r14\n"
	"	pop %r15\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rbp\n"
	"	pop %rbx\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	pop %rcx\n"
	"	pop %rsp\n"
	"	popfq\n"
	"	ret $128\n"
	".size sim_trap_resume_regs, .-sim_trap_resume_regs\n");

static bool resume_usable;

void sim_trap_resume_init(void)
{
	unsigned long shstk = 0;

#ifdef TRAP_ASAN
	return;
#endif
	if (getenv("PVRDMA_SIM_TRAP_SIGRETURN"))
		return;
	if (!sim_sys(SYS_arch_prctl, TRAP_ARCH_SHSTK_STATUS, (long)&shstk, 0) &&
	    (shstk & TRAP_SHSTK_ENABLED))
		return;
	resume_usable = true;
}

void sim_trap_resume(ucontext_t *uc)
{
	void *fp = uc->uc_mcontext.fpregs;
	const struct trap_fpx_sw *sw;

	if (!resume_usable || !fp || ((uintptr_t)fp & 63) ||
	    ((unsigned int)uc->uc_stack.ss_flags & SS_AUTODISARM))
		return;
	sw = (const struct trap_fpx_sw *)((const uint8_t *)fp +
					  TRAP_FP_SW_OFFSET);
	if (sw->magic1 != TRAP_FP_XSTATE_MAGIC1)
		return;
	sim_trap_resume_regs(uc->uc_mcontext.gregs, fp, sw->xfeatures);
}
