// SPDX-License-Identifier: BSD-2-Clause
/*
 * The same-host shared segment (sim/fabric/shared.c), seen from a requester:
 * two adapters of this process, the second publishing, the first looking at
 * it through the fabric link between them.
 *
 *   - no segment before the target published anything;
 *   - an MR is found with its range, access and PD, and is gone once
 *     withdrawn; an MR whose pages moved aside (pinning) is never published;
 *   - a QP is found with its responder state, follows its changes, and is
 *     gone once withdrawn; a QP whose slot another live QP holds is not
 *     published (its requesters use the socket fabric) and leaves the
 *     holder alone;
 *   - the segment names this process and its lock can be taken; a
 *     requester gives up on a lock held too long.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fabric.h"
#include "shared.h"

/* This file stands in for the engine. */
void engine_rx(struct sim_dev *d, struct fab_link *from,
	       const struct fab_hdr *h, struct fab_rx *rx)
{
	(void)d;
	(void)from;
	(void)h;
	(void)rx;
}

static struct fab_port *port[2];
static struct sim_pd pd = { .pdn = 7 };

static void dev_init(unsigned int i)
{
	struct sim_dev *dev = &sim_devs[i];

	memset(dev, 0, sizeof(*dev));
	dev->index = i;
	dev->gid_count = 1;
	dev->gid[0].raw[0] = 0xfe;
	dev->gid[0].raw[1] = 0x80;
	dev->gid[0].raw[15] = (uint8_t)(i + 1);
	port[i] = fabric_open(dev);
	assert_non_null(port[i]);
}

static int setup(void **unused)
{
	snprintf(sim_global.rundir, sizeof(sim_global.rundir),
		 "/tmp/pvrdma-test-shared.XXXXXX");
	assert_non_null(mkdtemp(sim_global.rundir));
	sim_global.num_adapters = 2;
	dev_init(0);
	dev_init(1);
	return 0;
}

static int teardown(void **unused)
{
	char cmd[300];

	fabric_close(port[0]);
	fabric_close(port[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sim_global.rundir);
	return system(cmd) ? -1 : 0;
}

static struct fab_link *link_to_target(void)
{
	struct fab_link *l = fabric_resolve(port[0], sim_devs[1].gid[0].raw);

	assert_non_null(l);
	return l;
}

static void test_publish_lookup(void **unused)
{
	static uint8_t mem[8192];
	struct sim_dev *target = &sim_devs[1];
	struct sim_mr mr = {
		.pd = &pd, .addr = (uintptr_t)mem, .iova = 0x40000,
		.length = sizeof(mem), .lkey = 42, .rkey = 42,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct sim_qp qp = { .qpn = 0x123, .type = IBV_QPT_RC, .pd = &pd };
	struct sim_qp other = { .qpn = 0x123 + 65536, .type = IBV_QPT_RC,
				.pd = &pd };
	struct shared_mr_view m;
	struct shared_qp_view q;
	struct shared_seg *seg;

	/* Nothing published yet: no segment to find. */
	assert_null(shared_peer(link_to_target()));

	shared_mr_publish(target, &mr);
	qp.attr.state = IBV_QPS_RTR;
	qp.attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	shared_qp_publish(target, &qp);

	/* A requester that missed retries after a while, not at once. */
	seg = NULL;
	for (int i = 0; i < 1024 && !seg; i++)
		seg = shared_peer(link_to_target());
	assert_non_null(seg);
	assert_int_equal(shared_pid(seg), getpid());
	assert_true(shared_lock(seg));

	assert_true(shared_mr_find(seg, 42, &m));
	assert_int_equal(m.addr, (uintptr_t)mem);
	assert_int_equal(m.iova, 0x40000);
	assert_int_equal(m.length, sizeof(mem));
	assert_int_equal(m.access, mr.access);
	assert_int_equal(m.pdn, 7);
	assert_false(shared_mr_find(seg, 43, &m));
	assert_false(shared_mr_find(seg, 0, &m));

	assert_true(shared_qp_find(seg, 0x123, &q));
	assert_int_equal(q.state, IBV_QPS_RTR);
	assert_int_equal(q.type, IBV_QPT_RC);
	assert_int_equal(q.access, IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(q.pdn, 7);
	shared_unlock(seg);

	/* Changes are seen; a QP of the same slot does not displace it. */
	qp.attr.state = IBV_QPS_ERR;
	shared_qp_publish(target, &qp);
	shared_qp_publish(target, &other);
	assert_true(shared_lock(seg));
	assert_true(shared_qp_find(seg, 0x123, &q));
	assert_int_equal(q.state, IBV_QPS_ERR);
	assert_false(shared_qp_find(seg, 0x123 + 65536, &q));
	shared_unlock(seg);
	/* Withdrawing the one not published leaves the holder. */
	shared_qp_withdraw(target, &other);
	assert_true(shared_lock(seg));
	assert_true(shared_qp_find(seg, 0x123, &q));
	shared_unlock(seg);

	shared_mr_withdraw(target, &mr);
	shared_qp_withdraw(target, &qp);
	assert_true(shared_lock(seg));
	assert_false(shared_mr_find(seg, 42, &m));
	assert_false(shared_qp_find(seg, 0x123, &q));
	shared_unlock(seg);

	/* Pages the MR keeps for itself are the device's: not published. */
	mr.pin_lost = true;
	shared_mr_publish(target, &mr);
	assert_true(shared_lock(seg));
	assert_false(shared_mr_find(seg, 42, &m));
	shared_unlock(seg);

	/* Atomics of the target's own responder take the same lock. */
	shared_atomic_lock(target);
	shared_atomic_unlock(target);
	assert_true(shared_lock(seg));
	shared_unlock(seg);

	/* A requester does not wait for good on a held lock. */
	shared_atomic_lock(target);
	assert_false(shared_trylock(seg));
	shared_atomic_unlock(target);
	assert_true(shared_trylock(seg));
	shared_unlock(seg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_lookup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
