// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CM agent's thread and fork() (cm_agent.c): opening rdma_cm starts
 * the agent, and by the time the open returns the thread runtime is done
 * setting the agent's thread up, so a fork() right after it leaves the
 * child none of the runtime's locks held (the child's own agent would
 * hang on one, and its rdma_cm events never come). The runtime is
 * tests/sim/common/slow_thread_start.h's, slow and holding a lock
 * meanwhile, as a sanitizer's allocator does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cm.h"
#include "../common/slow_thread_start.h"

static char rundir[] = "/tmp/test_cm_agent.XXXXXX";

static int setup(void **state)
{
	struct sim_dev *dev = &sim_devs[0];
	struct in_addr a;

	(void)state;
	if (!mkdtemp(rundir))
		return -1;
	snprintf(sim_global.rundir, sizeof(sim_global.rundir), "%s", rundir);
	sim_global.num_adapters = 1;
	memset(dev, 0, sizeof(*dev));
	dev->cfg.roce = 2;
	dev->cfg.hw_version = 18;
	dev->cfg.mtu = IBV_MTU_1024;
	dev->cfg.mac[1] = 0x50;
	dev->cfg.mac[2] = 0x56;
	dev->cfg.mac[5] = 0x21;
	inet_pton(AF_INET, "127.9.1.1", &a);
	dev->cfg.ipv4 = a.s_addr;
	sim_dev_init_identity(dev);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(rundir);
	return 0;
}

static void test_agent_started_before_open_returns(void **state)
{
	struct ucma_file *f;
	int fd = eventfd(0, EFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	sim_libc.pthread_create = slow_pthread_create;
	f = ucma_open(fd);		/* the process's first: the agent */
	sim_libc.pthread_create = pthread_create;
	assert_non_null(f);
	/* A program forking right after rdma_create_event_channel(). */
	assert_true(fork_sees_runtime_free());
	ucma_close(f);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_started_before_open_returns),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
