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
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "host.h"
#include "../common/slow_thread_start.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_started_before_map_returns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
