// SPDX-License-Identifier: BSD-2-Clause
/*
 * The doorbell trap's signal watch thread and fork(): the first UAR
 * mapped starts the thread, and by the time the mapping returns the
 * thread runtime is done setting it up, so a program that forks right
 * after opening a device leaves its child none of the runtime's locks
 * held. The runtime is tests/sim/common/slow_thread_start.h's, slow and
 * holding a lock meanwhile, as a sanitizer's allocator does; this test
 * interposes pthread_create() to put it under every thread the sim
 * starts, whichever way it starts it.
 *
 * And the lock the watch takes: a fork() while it holds it leaves the
 * child that lock free.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "host.h"
#include "../common/slow_thread_start.h"
#include "../fork_while_held.h"

/* No store reaches the page here: this test stands in for dispatch.c. */
void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value)
{
	(void)uctx;
	(void)offset;
	(void)value;
	fail();
}

static atomic_bool slow;

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	if (slow_real_create == pthread_create)
		slow_real_create = (int (*)(pthread_t *,
					    const pthread_attr_t *,
					    void *(*)(void *), void *))
				   dlsym(RTLD_NEXT, "pthread_create");
	if (atomic_load(&slow))
		return slow_pthread_create(thread, attr, fn, arg);
	return slow_real_create(thread, attr, fn, arg);
}

static void test_watch_started_before_map_returns(void **state)
{
	static struct sim_ucontext uctx;
	void *uar;

	(void)state;
	assert_int_equal(sim_doorbell_trap_install(), 0);
	atomic_store(&slow, true);
	uar = sim_uar_map(&uctx, NULL);	/* the first UAR: the watch */
	atomic_store(&slow, false);
	assert_true(uar != MAP_FAILED);
	assert_true(fork_sees_runtime_free());
	sim_uar_unmap(&uctx, uar);
}

/*
 * The watch holds its lock while another thread forks: the child must
 * find it free (within the alarm, or it dies of SIGALRM).
 */
static void hold_a_while(void *arg)
{
	(void)arg;
	fork_hold_a_while();
}

static void *app_lock_holder(void *arg)
{
	sim_signal_locked_call(hold_a_while, arg);
	return NULL;
}

static int child_sigaction(void)
{
	struct sigaction old;

	return sim_signal_app_action(SIGSEGV, NULL, &old) ? 1 : 0;
}

static void test_fork_while_watch_holds_app_lock(void **state)
{
	(void)state;
	assert_int_equal(sim_doorbell_trap_install(), 0);
	fork_while_held(app_lock_holder, NULL, child_sigaction);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_started_before_map_returns),
		cmocka_unit_test(test_fork_while_watch_holds_app_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
