// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fault guard (sim/common/fault_guard.c) under a SIGSEGV/SIGBUS
 * handler that asks it first, as the host's trap does: guarded copies to
 * and from a page made inaccessible or unmapped behind libc's back stop
 * with the exact count of bytes before it, a running CRC over such a page
 * fails, faults are caught again and again in one thread, also inside a
 * SIGSEGV handler and on an alternate stack, and a fault outside any
 * guard still reaches the handler's own path. Without such a handler
 * the copies fall back to process_vm_readv/writev.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "common.h"
#include "fault_guard.h"
#include "sys.h"

#define PG	SIM_PAGE_SIZE

/*
 * cmocka catches SIGSEGV and SIGBUS around each test with signal(): the
 * handler under test keeps them, as the host's trap keeps them from the
 * application's signal() in a preloaded process.
 */
sighandler_t signal(int sig, sighandler_t handler)
{
	static sighandler_t (*real_signal)(int, sighandler_t);

	if (sig == SIGSEGV || sig == SIGBUS)
		return SIG_DFL;
	if (!real_signal)
		real_signal = (sighandler_t (*)(int, sighandler_t))
			dlsym(RTLD_NEXT, "signal");
	return real_signal(sig, handler);
}

/* Faults that were not the guard's: the "application's" handler. */
static volatile sig_atomic_t app_faults;
static sigjmp_buf app_jmp;
/* Work the handler does for a fault it handles (the trap's doorbell). */
static void (*volatile in_handler)(void);
/* The handler returns (a sent signal's) rather than jumping out. */
static volatile bool app_returns;

static void trap(int sig, siginfo_t *si, void *ctx)
{
	sim_fault_guard_catch(sig, si);
	app_faults++;
	if (in_handler) {
		in_handler();
		in_handler = NULL;
	}
	if (!app_returns)
		siglongjmp(app_jmp, 1);
}

static void install(int extra_flags)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = trap;
	act.sa_flags = SA_SIGINFO | SA_ONSTACK | extra_flags;
	sigemptyset(&act.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &act, NULL), 0);
	assert_int_equal(sigaction(SIGBUS, &act, NULL), 0);
	sim_fault_guard_enable(true);
}

static int setup(void **state)
{
	install(SA_NODEFER);
	return 0;
}

static int teardown(void **state)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sim_fault_guard_enable(false);
	sigaction(SIGSEGV, &dfl, NULL);
	sigaction(SIGBUS, &dfl, NULL);
	return 0;
}

/* Three pages filled with 0x11; the last one made bad by how. */
enum bad { BAD_NONE, BAD_PROT_NONE, BAD_UNMAPPED, BAD_READ_ONLY };

static uint8_t *pages(enum bad how)
{
	uint8_t *p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0x11, 3 * PG);
	/* raw system calls: nothing of libc's or the sim's sees them */
	if (how == BAD_PROT_NONE)
		assert_int_equal(sim_sys(SYS_mprotect, p + 2 * PG, PG,
					 PROT_NONE), 0);
	else if (how == BAD_READ_ONLY)
		assert_int_equal(sim_sys(SYS_mprotect, p + 2 * PG, PG,
					 PROT_READ), 0);
	else if (how == BAD_UNMAPPED)
		assert_int_equal(sim_sys(SYS_munmap, p + 2 * PG, PG, 0), 0);
	return p;
}

static void unmap(uint8_t *p)
{
	sim_sys(SYS_munmap, p, 3 * PG, 0);
}

/* 5000 bytes from 100 bytes before the bad page's end of its neighbour:
 * the pieces cross the first page boundary, then fault at the second. */
static void copy_in_stops_at(enum bad how)
{
	uint8_t *p = pages(how), src[3 * PG];
	struct iovec d[2] = {
		{ .iov_base = p + 100, .iov_len = PG },
		{ .iov_base = p + PG + 100, .iov_len = 2 * PG },
	};
	struct iovec s[2] = {
		{ .iov_base = src, .iov_len = 7 },
		{ .iov_base = src + 7, .iov_len = sizeof(src) - 7 },
	};

	memset(src, 0x22, sizeof(src));
	assert_int_equal(sim_app_copy_in(d, 2, s, 2), 2 * PG - 100);
	assert_int_equal(p[99], 0x11);
	assert_int_equal(p[100], 0x22);
	assert_int_equal(p[2 * PG - 1], 0x22);
	/* a copy that starts on the bad page places nothing */
	d[0].iov_base = p + 2 * PG + 8;
	assert_int_equal(sim_app_copy_in(d, 1, s, 2), 0);
	unmap(p);
}

static void test_copy_in_prot_none(void **unused)
{
	copy_in_stops_at(BAD_PROT_NONE);
}

static void test_copy_in_unmapped(void **unused)
{
	copy_in_stops_at(BAD_UNMAPPED);
}

static void test_copy_in_read_only(void **unused)
{
	copy_in_stops_at(BAD_READ_ONLY);
}

static void copy_out_stops_at(enum bad how)
{
	uint8_t *p = pages(how), dst[3 * PG];
	struct iovec s = { .iov_base = p + 1, .iov_len = 3 * PG - 1 };
	struct iovec d[3] = {
		{ .iov_base = dst, .iov_len = 10 },
		{ .iov_base = dst + 10, .iov_len = PG },
		{ .iov_base = dst + 10 + PG, .iov_len = 2 * PG - 10 },
	};

	memset(dst, 0, sizeof(dst));
	assert_int_equal(sim_app_copy_out(d, 3, &s, 1), 2 * PG - 1);
	assert_int_equal(dst[2 * PG - 2], 0x11);
	assert_int_equal(dst[2 * PG - 1], 0);
	unmap(p);
}

static void test_copy_out_prot_none(void **unused)
{
	copy_out_stops_at(BAD_PROT_NONE);
}

static void test_copy_out_unmapped(void **unused)
{
	copy_out_stops_at(BAD_UNMAPPED);
}

static uint32_t fold_sum(uint32_t acc, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		acc = acc * 31 + *b++;
	return acc;
}

static void test_fold(void **unused)
{
	uint8_t *p = pages(BAD_UNMAPPED);
	struct iovec v[2] = {
		{ .iov_base = p + 5, .iov_len = 300 },
		{ .iov_base = p + PG - 3, .iov_len = PG },
	};
	uint32_t acc = 7, want = fold_sum(fold_sum(7, p + 5, 300),
					 p + PG - 3, PG);

	assert_true(sim_app_fold32(&acc, fold_sum, v, 2));
	assert_int_equal(acc, want);
	v[1].iov_base = p + PG + 10;	/* runs into the hole */
	assert_false(sim_app_fold32(&acc, fold_sum, v, 2));
	/* the same without the guard: read a bounce at a time */
	sim_fault_guard_enable(false);
	acc = 7;
	assert_false(sim_app_fold32(&acc, fold_sum, v, 2));
	v[1].iov_base = p + PG - 3;
	acc = 7;
	assert_true(sim_app_fold32(&acc, fold_sum, v, 2));
	assert_int_equal(acc, want);
	sim_fault_guard_enable(true);
	unmap(p);
}

/* Runs under one guard: those before the one that faults are done, with
 * their values, guarded or bounced. */
static void test_fold_runs(void **unused)
{
	uint8_t *p = pages(BAD_UNMAPPED);
	struct iovec v[3] = { { p + 9, 100 }, { p + 2 * PG - 40, 40 },
			      { p + 2 * PG - 8, 16 } };
	struct sim_fold32_run r[3];
	int guarded, k;

	(void)unused;
	for (guarded = 1; guarded >= 0; guarded--) {
		sim_fault_guard_enable(guarded);
		for (k = 0; k < 3; k++)
			r[k] = (struct sim_fold32_run){ .acc = (uint32_t)k,
							.src = &v[k], .n = 1 };
		/* the third runs into the hole */
		assert_int_equal(sim_app_fold32_runs(fold_sum, r, 3), 2);
		assert_int_equal(r[0].acc, fold_sum(0, p + 9, 100));
		assert_int_equal(r[1].acc, fold_sum(1, p + 2 * PG - 40, 40));
		assert_int_equal(sim_app_fold32_runs(fold_sum, r, 0), 0);
	}
	sim_fault_guard_enable(true);
	unmap(p);
}

static bool signal_blocked(int sig)
{
	sigset_t now;

	assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	return sigismember(&now, sig) == 1;
}

/* Fault after fault in one thread, each caught: nothing is left blocked
 * that would make the next one fatal, and none reaches the handler's
 * own path. */
static void test_repeated(void **unused)
{
	uint8_t *p = pages(BAD_PROT_NONE), src[64] = { 0 };
	struct iovec d = { .iov_base = p + 2 * PG - 32, .iov_len = 64 };
	struct iovec s = { .iov_base = src, .iov_len = sizeof(src) };
	int i;

	app_faults = 0;
	for (i = 0; i < 1000; i++)
		assert_int_equal(sim_app_copy_in(&d, 1, &s, 1), 32);
	assert_int_equal(app_faults, 0);
	assert_false(signal_blocked(SIGSEGV));
	unmap(p);
}

/* A handler that let the kernel block SIGSEGV (no SA_NODEFER): the guard
 * unblocks it once it caught the fault, so the next one is caught too
 * rather than killing the process. */
static void test_mask_restored(void **unused)
{
	uint8_t *p = pages(BAD_UNMAPPED), src[64] = { 0 };
	struct iovec d = { .iov_base = p + 2 * PG - 16, .iov_len = 64 };
	struct iovec s = { .iov_base = src, .iov_len = sizeof(src) };

	install(0);
	assert_int_equal(sim_app_copy_in(&d, 1, &s, 1), 16);
	assert_false(signal_blocked(SIGSEGV));
	assert_int_equal(sim_app_copy_in(&d, 1, &s, 1), 16);
	install(SA_NODEFER);
	unmap(p);
}

/* Outside a guard a fault is the handler's own, before and after guarded
 * ones. */
static void test_unguarded_fault_passes(void **unused)
{
	uint8_t *p = pages(BAD_PROT_NONE), src[64] = { 0 };
	struct iovec d = { .iov_base = p + 2 * PG - 8, .iov_len = 64 };
	struct iovec s = { .iov_base = src, .iov_len = sizeof(src) };
	int i;

	app_faults = 0;
	for (i = 0; i < 3; i++) {
		if (!sigsetjmp(app_jmp, 0))
			*(volatile uint8_t *)(p + 2 * PG) = 1;
		assert_int_equal(app_faults, i + 1);
		assert_int_equal(sim_app_copy_in(&d, 1, &s, 1), 8);
	}
	assert_int_equal(app_faults, 3);
	unmap(p);
}

/* A SIGSEGV sent to the thread while it runs guarded code is not a
 * fault of that code: the handler's own path takes it, the guarded body
 * goes on. */
static uint32_t fold_raising(uint32_t acc, const void *p, size_t n)
{
	raise(SIGSEGV);
	return fold_sum(acc, p, n);
}

static void test_sent_signal_passes(void **unused)
{
	uint8_t buf[16] = { 1 };
	struct iovec v = { .iov_base = buf, .iov_len = sizeof(buf) };
	uint32_t acc = 0;

	app_faults = 0;
	app_returns = true;
	assert_true(sim_app_fold32(&acc, fold_raising, &v, 1));
	app_returns = false;
	assert_int_equal(app_faults, 1);
	assert_int_equal(acc, fold_sum(0, buf, sizeof(buf)));
}

/* The doorbell case: a guarded copy inside the handler of another fault,
 * on the thread's stack and on an alternate one. */
static uint8_t *nested_page;
static volatile size_t nested_got;

static void nested_copy(void)
{
	uint8_t src[200];
	struct iovec d = { .iov_base = nested_page + 2 * PG - 50,
			   .iov_len = sizeof(src) };
	struct iovec s = { .iov_base = src, .iov_len = sizeof(src) };

	memset(src, 0x33, sizeof(src));
	nested_got = sim_app_copy_in(&d, 1, &s, 1);
}

static void fault_with_nested_copy(void)
{
	nested_got = 0;
	app_faults = 0;
	in_handler = nested_copy;
	if (!sigsetjmp(app_jmp, 0))
		*(volatile uint8_t *)(nested_page + 2 * PG + 1) = 1;
	assert_int_equal(app_faults, 1);
	assert_int_equal(nested_got, 50);
	assert_int_equal(nested_page[2 * PG - 1], 0x33);
	memset(nested_page, 0x11, 2 * PG);
}

static void test_nested_in_handler(void **unused)
{
	static uint8_t alt[64 << 10] __attribute__((aligned(64)));
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };

	nested_page = pages(BAD_PROT_NONE);
	fault_with_nested_copy();
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	fault_with_nested_copy();
	fault_with_nested_copy();
	ss.ss_flags = SS_DISABLE;
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	unmap(nested_page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_in_prot_none),
		cmocka_unit_test(test_copy_in_unmapped),
		cmocka_unit_test(test_copy_in_read_only),
		cmocka_unit_test(test_copy_out_prot_none),
		cmocka_unit_test(test_copy_out_unmapped),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_fold_runs),
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_mask_restored),
		cmocka_unit_test(test_unguarded_fault_passes),
		cmocka_unit_test(test_sent_signal_passes),
		cmocka_unit_test(test_nested_in_handler),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
