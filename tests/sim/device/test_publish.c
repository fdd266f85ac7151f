// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the device publishes for same-host requesters (sim/device/publish.c),
 * read back as a requester reads it (sim/fabric/shared.c):
 *
 *   - an MR is published with its range, access and PD, and withdrawn;
 *     an MR whose pages the device keeps for itself (pinning) is not;
 *   - a QP is published with its PD, remote access flags, state and type,
 *     and withdrawn.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "direct.h"
#include "fabric.h"
#include "shared.h"

static struct sim_dev target;
static struct sim_ucontext uctx = { .dev = &target };
static struct sim_pd pd = { .pdn = 9 };
static struct fab_port *port[2];
static struct {
	pthread_mutex_t lock;
	union ibv_gid gid[SIM_GID_TABLE_LEN];
	unsigned int gid_count;
} adapter[2];

static void no_rx(void *owner, struct fab_link *from,
		  const struct fab_hdr *h, struct fab_rx *rx)
{
	(void)owner;
	(void)from;
	(void)h;
	(void)rx;
	fail();
}

/* The fabric ports of adapter 0 (the requester) and 1 (the target). */
static void port_open(unsigned int i)
{
	pthread_mutex_init(&adapter[i].lock, NULL);
	adapter[i].gid_count = 1;
	adapter[i].gid[0].raw[0] = 0xfe;
	adapter[i].gid[0].raw[1] = 0x80;
	adapter[i].gid[0].raw[15] = (uint8_t)(i + 1);
	port[i] = fabric_open(&(struct fab_adapter){
		.index = i, .gid = adapter[i].gid,
		.gid_count = &adapter[i].gid_count, .lock = &adapter[i].lock,
		.rx = no_rx, .owner = &adapter[i] });
	assert_non_null(port[i]);
}

static int setup(void **unused)
{
	snprintf(sim_global.rundir, sizeof(sim_global.rundir),
		 "/tmp/pvrdma-test-publish.XXXXXX");
	assert_non_null(mkdtemp(sim_global.rundir));
	sim_global.num_adapters = 2;
	target.index = 1;
	port_open(0);
	port_open(1);
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

/* The target's segment, as a requester on adapter 0 finds it. */
static struct shared_seg *target_seg(void)
{
	struct fab_link *l = fabric_resolve(port[0], adapter[1].gid[0].raw);
	struct shared_seg *seg = NULL;
	int i;

	assert_non_null(l);
	/* a requester that found none retries after a few operations */
	for (i = 0; i < 1024 && !seg; i++)
		seg = shared_peer(l);
	assert_non_null(seg);
	return seg;
}

static void test_mr_and_qp(void **unused)
{
	static uint8_t mem[4096];
	struct sim_mr mr = {
		.pd = &pd, .addr = (uintptr_t)mem, .iova = 0x7000,
		.length = sizeof(mem), .lkey = 5, .rkey = 5,
		.access = IBV_ACCESS_REMOTE_READ,
	};
	struct sim_qp qp = {
		.qpn = 0x44, .type = IBV_QPT_RC, .pd = &pd, .uctx = &uctx,
		.attr = { .state = IBV_QPS_RTS,
			  .qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC },
	};
	struct shared_mr_view m;
	struct shared_qp_view q;
	struct shared_seg *seg;

	sim_dev_shared_open(&target);
	sim_mr_publish(&target, &mr);
	direct_qp_publish(&qp);
	seg = target_seg();
	assert_true(shared_lock(seg));
	assert_true(shared_mr_find(seg, 5, &m));
	assert_int_equal(m.addr, (uintptr_t)mem);
	assert_int_equal(m.iova, 0x7000);
	assert_int_equal(m.length, sizeof(mem));
	assert_int_equal(m.access, IBV_ACCESS_REMOTE_READ);
	assert_int_equal(m.pdn, 9);
	assert_true(shared_qp_find(seg, 0x44, &q));
	assert_int_equal(q.pdn, 9);
	assert_int_equal(q.access, IBV_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(q.state, IBV_QPS_RTS);
	assert_int_equal(q.type, IBV_QPT_RC);
	shared_unlock(seg);

	sim_mr_withdraw(&target, &mr);
	direct_qp_withdraw(&qp);
	assert_true(shared_lock(seg));
	assert_false(shared_mr_find(seg, 5, &m));
	assert_false(shared_qp_find(seg, 0x44, &q));
	shared_unlock(seg);

	/* Pages the MR keeps for itself are the device's: not published. */
	mr.pin_lost = true;
	sim_mr_publish(&target, &mr);
	assert_true(shared_lock(seg));
	assert_false(shared_mr_find(seg, 5, &m));
	shared_unlock(seg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mr_and_qp),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
