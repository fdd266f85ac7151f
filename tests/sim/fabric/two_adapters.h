/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two adapters of the test process on the fabric, in a run directory of
 * their own: adapter 0 the requester, adapter 1 the target whose shared
 * segment the tests read through the link between them (no packet is
 * sent: a receive fails the test), and a try of a segment's lock from
 * another thread. For tests/sim/fabric/test_shared.c,
 * tests/sim/device/test_view.c and tests/sim/device/test_publish.c.
 */
#ifndef PVRDMA_TEST_TWO_ADAPTERS_H
#define PVRDMA_TEST_TWO_ADAPTERS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fabric.h"
#include "shared.h"

static struct {
	pthread_mutex_t lock;
	union ibv_gid gid[SIM_GID_TABLE_LEN];
	unsigned int gid_count;
} adapter[2];
static struct fab_port *port[2];

static void no_rx(void *owner, struct fab_link *from,
		  const struct fab_hdr *h, struct fab_rx *rx)
{
	(void)owner;
	(void)from;
	(void)h;
	(void)rx;
	fail();
}

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

/* rundir: a mkdtemp(3) template. */
static void two_adapters_open(const char *rundir)
{
	snprintf(sim_global.rundir, sizeof(sim_global.rundir), "%s", rundir);
	assert_non_null(mkdtemp(sim_global.rundir));
	sim_global.num_adapters = 2;
	port_open(0);
	port_open(1);
}

static int two_adapters_close(void)
{
	char cmd[300];

	fabric_close(port[0]);
	fabric_close(port[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sim_global.rundir);
	return system(cmd) ? -1 : 0;
}

static inline void *trylock_thread(void *seg)
{
	bool got = shared_trylock(seg);

	if (got)
		shared_unlock(seg);
	return (void *)(uintptr_t)got;
}

/* shared_trylock() from a thread that holds nothing. */
static inline bool trylock_elsewhere(struct shared_seg *seg)
{
	pthread_t t;
	void *got;

	assert_int_equal(pthread_create(&t, NULL, trylock_thread, seg), 0);
	assert_int_equal(pthread_join(t, &got), 0);
	return got != NULL;
}

#endif /* PVRDMA_TEST_TWO_ADAPTERS_H */
