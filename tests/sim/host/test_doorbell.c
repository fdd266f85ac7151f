// SPDX-License-Identifier: BSD-2-Clause
/*
 * The UAR doorbell trap in a live process: stores of every decoded form
 * reach engine_doorbell() with the right offset and value and never land
 * in the page; faults elsewhere go to the application's handler, or kill
 * the process as they would without the sim, or when the thread's view
 * blocks SIGSEGV; a sent one waits while blocked; an undecodable UAR store
 * aborts.
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

#include "host.h"

/* The device side, recorded: this test stands in for dispatch.c. */
#define MAX_DB 16
static struct {
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
} db[MAX_DB];
static volatile sig_atomic_t ndb;

void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value)
{
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
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
