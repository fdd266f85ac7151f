// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UAR doorbell trap in a live process: stores of every decoded form
 * reach engine_doorbell() with the right offset and value and never land
 * in the page; faults elsewhere go to the application's handler, or kill
 * the process as they would without the sim, or when the thread's view
 * blocks SIGSEGV; a sent one waits while blocked; an undecodable UAR store
 * aborts; the trapping thread's registers, flags, vector registers and red
 * zone are kept. The device's guarded copies (common/fault_guard.h) that
 * fault are caught before anything else, a copy onto a UAR page among
 * them, also inside the trap itself, and leave the application's faults
 * as they were.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "fault_guard.h"
#include "host.h"
#include "sys.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM	(1u << 31)
#endif

/* The device side, recorded: this test stands in for dispatch.c. */
#define MAX_DB 16
static struct {
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
} db[MAX_DB];
static volatile sig_atomic_t ndb;
/* What the device does for a doorbell, inside the trap. */
static void (*volatile doorbell_work)(void);

void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value)
{
	if (doorbell_work)
		doorbell_work();
	/* as the device's code may: the trap must give them back */
	asm volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm13, %%xmm13\n\t"
		     "pcmpeqd %%xmm7, %%xmm7" : : : "xmm0", "xmm7", "xmm13");
	if (ndb < MAX_DB) {
		db[ndb].uctx = uctx;
		db[ndb].offset = offset;
		db[ndb].value = value;
	}
	ndb++;
}

/*
 * cmocka catches SIGSEGV around each test with signal(); route that as
 * sigcalls.c routes it in a preloaded process, so the trap keeps SIGSEGV
 * and cmocka's handler is the application handler it chains to.
 */
sighandler_t signal(int sig, sighandler_t handler)
{
	static sighandler_t (*real_signal)(int, sighandler_t);
	struct sigaction act = { .sa_handler = handler }, old;

	if (sig != SIGSEGV || !sim_doorbell_trap_installed()) {
		if (!real_signal)
			real_signal = (sighandler_t (*)(int, sighandler_t))
				dlsym(RTLD_NEXT, "signal");
		return real_signal(sig, handler);
	}
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_RESTART;
	sim_doorbell_app_sigaction(&act, &old);
	return old.sa_handler;
}

static struct sim_ucontext uctx_a, uctx_b;

static int setup(void **state)
{
	ndb = 0;
	return sim_doorbell_trap_install() ? -1 : 0;
}

static void expect_db(int i, struct sim_ucontext *uctx, uint32_t offset,
		      uint32_t value)
{
	assert_true(i < ndb);
	assert_ptr_equal(db[i].uctx, uctx);
	assert_int_equal(db[i].offset, offset);
	assert_int_equal(db[i].value, value);
}

static void test_store_forms(void **state)
{
	uint8_t *uar = sim_uar_map(&uctx_a, NULL);
	uint64_t wide = 0xdeadbeef00000000ull | 0x80000005u;
	uint32_t v = 0x40000003;
	unsigned int i;

	assert_true(uar != MAP_FAILED && uar);
	assert_ptr_equal(sim_uar_lookup(uar + 8), &uctx_a);
	ndb = 0;

	asm volatile("movl %k0, (%1)" : : "r"(v), "r"(uar) : "memory");
	/* A source register that needs REX.R. */
	asm volatile("movl $0x20000011, %%r9d\n\tmovl %%r9d, 4(%0)"
		     : : "r"(uar) : "r9", "memory");
	asm volatile("movl $0x40000007, 8(%0)" : : "r"(uar) : "memory");
	asm volatile("movnti %k0, 4(%1)" : : "r"(v), "r"(uar) : "memory");
	asm volatile("movq %0, 8(%1)" : : "r"(wide), "r"(uar) : "memory");
	*(volatile uint32_t *)(uar + 4) = 0x80000000u | 42;

	assert_int_equal(ndb, 6);
	expect_db(0, &uctx_a, 0, 0x40000003);
	expect_db(1, &uctx_a, 4, 0x20000011);
	expect_db(2, &uctx_a, 8, 0x40000007);
	expect_db(3, &uctx_a, 4, 0x40000003);
	expect_db(4, &uctx_a, 8, 0x80000005);
	expect_db(5, &uctx_a, 4, 0x80000000u | 42);
	/* The device consumed the stores: nothing landed in memory. */
	for (i = 0; i < SIM_PAGE_SIZE; i++)
		assert_int_equal(uar[i], 0);
	sim_uar_unmap(&uctx_a, uar);
	assert_null(sim_uar_lookup(uar));
}

static void test_two_contexts(void **state)
{
	uint8_t *a = sim_uar_map(&uctx_a, NULL);
	uint8_t *b = sim_uar_map(&uctx_b, NULL);

	ndb = 0;
	*(volatile uint32_t *)(b + 8) = 0x40000001;
	*(volatile uint32_t *)(a + 0) = 0x80000002;
	assert_int_equal(ndb, 2);
	expect_db(0, &uctx_b, 8, 0x40000001);
	expect_db(1, &uctx_a, 0, 0x80000002);
	sim_uar_unmap(&uctx_a, a);
	sim_uar_unmap(&uctx_b, b);
}

static sigjmp_buf app_jmp;
static volatile sig_atomic_t app_calls;
static void *volatile app_addr;

static void app_handler(int sig, siginfo_t *si, void *ctx)
{
	app_calls++;
	app_addr = si->si_addr;
	siglongjmp(app_jmp, 1);
}

static void test_foreign_fault_reaches_app(void **state)
{
	struct sigaction act, old;
	uint8_t *page = mmap(NULL, SIM_PAGE_SIZE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(page != MAP_FAILED);
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = app_handler;
	act.sa_flags = SA_SIGINFO;
	sigemptyset(&act.sa_mask);
	assert_int_equal(sim_doorbell_app_sigaction(&act, NULL), 0);
	assert_int_equal(sim_doorbell_app_sigaction(NULL, &old), 0);
	assert_ptr_equal(old.sa_sigaction, app_handler);

	app_calls = 0;
	ndb = 0;
	if (!sigsetjmp(app_jmp, 1))
		*(volatile uint32_t *)(page + 12) = 1;
	else
		sim_signal_set_blocked(0);	/* exec.c's siglongjmp */
	assert_int_equal(app_calls, 1);
	assert_ptr_equal(app_addr, page + 12);
	assert_int_equal(ndb, 0);

	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_DFL;
	sim_doorbell_app_sigaction(&act, NULL);
	munmap(page, SIM_PAGE_SIZE);
}

/* Runs fn in a child and returns the signal that killed it (0: none). */
static int child_signal(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);	/* expected crashes */
		fn();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* A page no store may touch. */
static volatile uint32_t *guard_page(void)
{
	void *p = mmap(NULL, SIM_PAGE_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(100);
	return p;
}

static void null_store(void)
{
	struct sigaction act = { .sa_handler = SIG_DFL };

	sim_doorbell_app_sigaction(&act, NULL);
	*guard_page() = 1;
}

static void test_foreign_fault_default_kills(void **state)
{
	assert_int_equal(child_signal(null_store), SIGSEGV);
}

static volatile sig_atomic_t reset_calls;

static void resethand_handler(int sig)
{
	reset_calls++;
}

/* SA_RESETHAND: the handler runs once, the re-executed fault kills. */
static void resethand_store(void)
{
	struct sigaction act = { .sa_handler = resethand_handler,
				 .sa_flags = SA_RESETHAND };

	sigemptyset(&act.sa_mask);
	sim_doorbell_app_sigaction(&act, NULL);
	*guard_page() = 1;
	_exit(reset_calls);	/* not reached */
}

static void test_resethand(void **state)
{
	assert_int_equal(child_signal(resethand_store), SIGSEGV);
}

static volatile sig_atomic_t sent_calls;

static void sent_handler(int sig)
{
	sent_calls++;
}

static void install_sent_handler(void)
{
	struct sigaction act = { .sa_handler = sent_handler };

	sigemptyset(&act.sa_mask);
	sim_doorbell_app_sigaction(&act, NULL);
}

/* A fault while the thread "blocks" SIGSEGV kills, handler or not, as
 * the kernel's forced signal does; the kernel mask never blocked it. */
static void blocked_fault(void)
{
	install_sent_handler();
	sim_signal_set_blocked(1);
	*guard_page() = 1;
	_exit(sent_calls ? 3 : 4);
}

static void test_blocked_fault_kills(void **state)
{
	assert_int_equal(child_signal(blocked_fault), SIGSEGV);
}

/* A sent SIGSEGV waits while blocked and runs the handler on unblocking;
 * a doorbell rings meanwhile. */
static void test_sent_waits_while_blocked(void **state)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	uint8_t *uar = sim_uar_map(&uctx_a, NULL);

	install_sent_handler();
	sent_calls = 0;
	ndb = 0;
	sim_signal_set_blocked(1);
	assert_int_equal(raise(SIGSEGV), 0);
	assert_int_equal(sent_calls, 0);
	assert_int_equal(sim_signal_pending(), 1);
	*(volatile uint32_t *)uar = 0x40000001;
	assert_int_equal(ndb, 1);
	sim_signal_set_blocked(0);
	assert_int_equal(sent_calls, 1);
	assert_int_equal(sim_signal_pending(), 0);
	sim_uar_unmap(&uctx_a, uar);
	sim_doorbell_app_sigaction(&dfl, NULL);
}

static void undecodable_store(void)
{
	uint8_t *uar = sim_uar_map(&uctx_a, NULL);

	/* A 16-bit store: no doorbell is written that way. */
	asm volatile("movw $1, (%0)" : : "r"(uar) : "memory");
}

static void test_undecodable_aborts(void **state)
{
	assert_int_equal(child_signal(undecodable_store), SIGABRT);
}

/*
 * What the trapping thread had is what it has after the store: every
 * general register, the flags (DF and CF set), the vector registers
 * (the device side here clobbers its own), and the red zone below the
 * stack pointer. The store and the reads after it are one asm block, so
 * that nothing of the compiler's comes between.
 */
static uint8_t *ctx_uar;
static uint64_t ctx_gpr[14], ctx_xmm[16], ctx_red[2], ctx_flags;

static void store_and_check(void)
{
	static const uint64_t pat = 0x0101010101010101ull;
	unsigned int i;

	ctx_uar = sim_uar_map(&uctx_a, NULL);
	assert_true(ctx_uar != MAP_FAILED && ctx_uar);
	ndb = 0;
	asm volatile(
		"mov ctx_uar(%%rip), %%rax\n\t"
		"movabs $0x0101010101010101, %%rbx\n\t"
		"lea (%%rbx,%%rbx), %%rcx\n\t"
		"lea (%%rcx,%%rbx), %%rdx\n\t"
		"lea (%%rdx,%%rbx), %%rsi\n\t"
		"lea (%%rsi,%%rbx), %%rdi\n\t"
		"lea (%%rdi,%%rbx), %%r8\n\t"
		"lea (%%r8,%%rbx), %%r9\n\t"
		"lea (%%r9,%%rbx), %%r10\n\t"
		"lea (%%r10,%%rbx), %%r11\n\t"
		"lea (%%r11,%%rbx), %%r12\n\t"
		"lea (%%r12,%%rbx), %%r13\n\t"
		"lea (%%r13,%%rbx), %%r14\n\t"
		"lea (%%r14,%%rbx), %%r15\n\t"
		"movq %%rbx, %%xmm0\n\t"  "movq %%rcx, %%xmm1\n\t"
		"movq %%rdx, %%xmm2\n\t"  "movq %%rsi, %%xmm3\n\t"
		"movq %%rdi, %%xmm4\n\t"  "movq %%r8, %%xmm5\n\t"
		"movq %%r9, %%xmm6\n\t"   "movq %%r10, %%xmm7\n\t"
		"movq %%r11, %%xmm8\n\t"  "movq %%r12, %%xmm9\n\t"
		"movq %%r13, %%xmm10\n\t" "movq %%r14, %%xmm11\n\t"
		"movq %%r15, %%xmm12\n\t" "movq %%rbx, %%xmm13\n\t"
		"movq %%rcx, %%xmm14\n\t" "movq %%rdx, %%xmm15\n\t"
		"mov %%rbx, -8(%%rsp)\n\t"
		"mov %%rcx, -128(%%rsp)\n\t"
		"std\n\t"
		"stc\n\t"
		"movl $0x80000007, 4(%%rax)\n\t"
		"mov %%rax, ctx_gpr+104(%%rip)\n\t"
		"mov -8(%%rsp), %%rax\n\t"
		"mov %%rax, ctx_red+0(%%rip)\n\t"
		"mov -128(%%rsp), %%rax\n\t"
		"mov %%rax, ctx_red+8(%%rip)\n\t"
		"pushfq\n\t"
		"cld\n\t"
		"pop ctx_flags(%%rip)\n\t"
		"mov %%rbx, ctx_gpr+0(%%rip)\n\t"
		"mov %%rcx, ctx_gpr+8(%%rip)\n\t"
		"mov %%rdx, ctx_gpr+16(%%rip)\n\t"
		"mov %%rsi, ctx_gpr+24(%%rip)\n\t"
		"mov %%rdi, ctx_gpr+32(%%rip)\n\t"
		"mov %%r8, ctx_gpr+40(%%rip)\n\t"
		"mov %%r9, ctx_gpr+48(%%rip)\n\t"
		"mov %%r10, ctx_gpr+56(%%rip)\n\t"
		"mov %%r11, ctx_gpr+64(%%rip)\n\t"
		"mov %%r12, ctx_gpr+72(%%rip)\n\t"
		"mov %%r13, ctx_gpr+80(%%rip)\n\t"
		"mov %%r14, ctx_gpr+88(%%rip)\n\t"
		"mov %%r15, ctx_gpr+96(%%rip)\n\t"
		"movq %%xmm0, ctx_xmm+0(%%rip)\n\t"
		"movq %%xmm1, ctx_xmm+8(%%rip)\n\t"
		"movq %%xmm2, ctx_xmm+16(%%rip)\n\t"
		"movq %%xmm3, ctx_xmm+24(%%rip)\n\t"
		"movq %%xmm4, ctx_xmm+32(%%rip)\n\t"
		"movq %%xmm5, ctx_xmm+40(%%rip)\n\t"
		"movq %%xmm6, ctx_xmm+48(%%rip)\n\t"
		"movq %%xmm7, ctx_xmm+56(%%rip)\n\t"
		"movq %%xmm8, ctx_xmm+64(%%rip)\n\t"
		"movq %%xmm9, ctx_xmm+72(%%rip)\n\t"
		"movq %%xmm10, ctx_xmm+80(%%rip)\n\t"
		"movq %%xmm11, ctx_xmm+88(%%rip)\n\t"
		"movq %%xmm12, ctx_xmm+96(%%rip)\n\t"
		"movq %%xmm13, ctx_xmm+104(%%rip)\n\t"
		"movq %%xmm14, ctx_xmm+112(%%rip)\n\t"
		"movq %%xmm15, ctx_xmm+120(%%rip)\n\t"
		/* named so that the compiler knows what the block does */
		: "=m"(ctx_gpr), "=m"(ctx_xmm), "=m"(ctx_red), "=m"(ctx_flags)
		: "m"(ctx_uar)
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9",
		      "r10", "r11", "r12", "r13", "r14", "r15", "xmm0", "xmm1",
		      "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
		      "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
		      "xmm15", "cc", "memory");
	assert_int_equal(ndb, 1);
	expect_db(0, &uctx_a, 4, 0x80000007);
	for (i = 0; i < 13; i++)
		assert_int_equal(ctx_gpr[i], pat * (i + 1));
	assert_ptr_equal((void *)(uintptr_t)ctx_gpr[13], ctx_uar);
	for (i = 0; i < 16; i++)
		assert_int_equal(ctx_xmm[i], pat * (i < 13 ? i + 1 : i - 12));
	assert_int_equal(ctx_red[0], pat);
	assert_int_equal(ctx_red[1], 2 * pat);
	assert_true(ctx_flags & 0x400);		/* DF */
	assert_true(ctx_flags & 0x1);		/* CF */
	sim_uar_unmap(&uctx_a, ctx_uar);
}

static void test_context_kept(void **state)
{
	store_and_check();
}

/* The same with the trap on an alternate signal stack; one armed with
 * SS_AUTODISARM is armed again once the store returned. */
static void test_context_kept_on_altstack(void **state)
{
	static uint8_t alt[2][64 << 10] __attribute__((aligned(64)));
	const int flags[2] = { 0, SS_AUTODISARM };
	stack_t ss, now;
	int i;

	for (i = 0; i < 2; i++) {
		ss.ss_sp = alt[i];
		ss.ss_size = sizeof(alt[i]);
		ss.ss_flags = flags[i];
		assert_int_equal(sigaltstack(&ss, NULL), 0);
		store_and_check();
		assert_int_equal(sigaltstack(NULL, &now), 0);
		assert_ptr_equal(now.ss_sp, alt[i]);
		assert_int_equal(now.ss_size, sizeof(alt[i]));
		assert_false(now.ss_flags & SS_DISABLE);
	}
	ss.ss_flags = SS_DISABLE;
	assert_int_equal(sigaltstack(&ss, NULL), 0);
}

/* A page the application took away behind the sim's back. */
static uint8_t *bad_page(void)
{
	uint8_t *p = mmap(NULL, 2 * SIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	assert_int_equal(sim_sys(SYS_mprotect, p + SIM_PAGE_SIZE,
				 SIM_PAGE_SIZE, PROT_NONE), 0);
	return p;
}

static uint8_t *copy_page;
static volatile size_t copy_got;

/* 100 bytes from 40 before the bad page: 40 placed. */
static void guarded_copy(void)
{
	uint8_t src[100];
	struct iovec d = { .iov_base = copy_page + SIM_PAGE_SIZE - 40,
			   .iov_len = sizeof(src) };
	struct iovec s = { .iov_base = src, .iov_len = sizeof(src) };

	memset(src, 0x5a, sizeof(src));
	copy_got = sim_app_copy_in(&d, 1, &s, 1);
}

/* A guarded copy onto a UAR page fails: it is no doorbell. */
static void test_guard_onto_uar(void **state)
{
	uint8_t *uar = sim_uar_map(&uctx_a, NULL);
	uint32_t v = 0x40000001;
	struct iovec d = { .iov_base = uar, .iov_len = sizeof(v) };
	struct iovec s = { .iov_base = &v, .iov_len = sizeof(v) };

	assert_true(sim_fault_guard_enabled());
	ndb = 0;
	assert_int_equal(sim_app_copy_in(&d, 1, &s, 1), 0);
	assert_int_equal(ndb, 0);
	assert_int_equal(*(volatile uint32_t *)uar, 0);
	/* and the page still traps */
	*(volatile uint32_t *)uar = v;
	assert_int_equal(ndb, 1);
	sim_uar_unmap(&uctx_a, uar);
}

/* The device's send runs inside the trap: its guarded copy faults there,
 * on the thread's stack and on an alternate one (SS_AUTODISARM too), and
 * the doorbell returns as ever. */
static void doorbell_with_fault(uint8_t *uar)
{
	copy_got = 0;
	ndb = 0;
	doorbell_work = guarded_copy;
	*(volatile uint32_t *)(uar + 4) = 0x80000003;
	doorbell_work = NULL;
	assert_int_equal(ndb, 1);
	expect_db(0, &uctx_a, 4, 0x80000003);
	assert_int_equal(copy_got, 40);
	assert_int_equal(copy_page[SIM_PAGE_SIZE - 1], 0x5a);
	assert_int_equal(copy_page[SIM_PAGE_SIZE - 41], 0);
}

static void test_guard_inside_trap(void **state)
{
	static uint8_t alt[2][64 << 10] __attribute__((aligned(64)));
	const int flags[2] = { 0, SS_AUTODISARM };
	uint8_t *uar = sim_uar_map(&uctx_a, NULL);
	stack_t ss, now;
	int i;

	copy_page = bad_page();
	doorbell_with_fault(uar);
	doorbell_with_fault(uar);
	for (i = 0; i < 2; i++) {
		ss.ss_sp = alt[i];
		ss.ss_size = sizeof(alt[i]);
		ss.ss_flags = flags[i];
		assert_int_equal(sigaltstack(&ss, NULL), 0);
		doorbell_with_fault(uar);
		doorbell_with_fault(uar);
		assert_int_equal(sigaltstack(NULL, &now), 0);
		assert_ptr_equal(now.ss_sp, alt[i]);
		assert_false(now.ss_flags & SS_DISABLE);
	}
	ss.ss_flags = SS_DISABLE;
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	sim_uar_unmap(&uctx_a, uar);
	munmap(copy_page, 2 * SIM_PAGE_SIZE);
}

/* After guarded faults the application's own faults are its own: its
 * handler runs, or without one the process dies of it. */
static void test_guard_leaves_app_faults(void **state)
{
	struct sigaction act, dfl = { .sa_handler = SIG_DFL };
	int i;

	copy_page = bad_page();
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = app_handler;
	act.sa_flags = SA_SIGINFO;
	sigemptyset(&act.sa_mask);
	assert_int_equal(sim_doorbell_app_sigaction(&act, NULL), 0);
	app_calls = 0;
	for (i = 0; i < 3; i++) {
		guarded_copy();
		assert_int_equal(copy_got, 40);
		if (!sigsetjmp(app_jmp, 1))
			*(volatile uint32_t *)(copy_page + SIM_PAGE_SIZE) = 1;
		else
			sim_signal_set_blocked(0);	/* exec.c's */
		assert_int_equal(app_calls, i + 1);
		assert_ptr_equal(app_addr, copy_page + SIM_PAGE_SIZE);
	}
	sim_doorbell_app_sigaction(&dfl, NULL);
	munmap(copy_page, 2 * SIM_PAGE_SIZE);
}

static void guarded_then_unguarded(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sim_doorbell_app_sigaction(&dfl, NULL);
	copy_page = bad_page();
	guarded_copy();
	if (copy_got != 40)
		_exit(5);
	guarded_copy();
	*(volatile uint32_t *)(copy_page + SIM_PAGE_SIZE) = 1;
}

static void test_guard_then_default_kills(void **state)
{
	assert_int_equal(child_signal(guarded_then_unguarded), SIGSEGV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_forms),
		cmocka_unit_test(test_two_contexts),
		cmocka_unit_test(test_foreign_fault_reaches_app),
		cmocka_unit_test(test_foreign_fault_default_kills),
		cmocka_unit_test(test_resethand),
		cmocka_unit_test(test_blocked_fault_kills),
		cmocka_unit_test(test_sent_waits_while_blocked),
		cmocka_unit_test(test_undecodable_aborts),
		cmocka_unit_test(test_context_kept),
		cmocka_unit_test(test_context_kept_on_altstack),
		cmocka_unit_test(test_guard_onto_uar),
		cmocka_unit_test(test_guard_inside_trap),
		cmocka_unit_test(test_guard_leaves_app_faults),
		cmocka_unit_test(test_guard_then_default_kills),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
