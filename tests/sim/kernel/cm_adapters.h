/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Adapters of the test process for the rdma_cm tests, in a run directory
 * of their own: RoCE v2 adapters with a MAC each and the IPv4 address the
 * test gives them, and the GID table and node GUID sim_dev_init_identity()
 * makes of those. No device runs: the CM maps an address to the adapter
 * whose GID it is, and names its agents' sockets after the run directory
 * (cm_addr.c), so a test's connections stay among its own adapters. For
 * tests/sim/kernel/test_ucma.c and tests/sim/kernel/test_cm_agent.c.
 */
#ifndef TEST_CM_ADAPTERS_H
#define TEST_CM_ADAPTERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cm.h"

/* Adapter i: MAC 00:50:56:00:00:<i + 1>, IPv4 address ip. */
static int cm_adapter(unsigned int i, const char *ip)
{
	struct sim_dev *dev = &sim_devs[i];
	struct in_addr a;

	if (inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	memset(dev, 0, sizeof(*dev));
	dev->index = i;
	dev->cfg.roce = 2;
	dev->cfg.hw_version = 18;
	dev->cfg.mtu = IBV_MTU_1024;
	dev->cfg.mac[1] = 0x50;
	dev->cfg.mac[2] = 0x56;
	dev->cfg.mac[5] = (uint8_t)(i + 1);
	dev->cfg.ipv4 = a.s_addr;
	sim_dev_init_identity(dev);
	return 0;
}

/*
 * rundir: a mkdtemp(3) template; adapter i gets the address ip[i]. A
 * cmocka group set-up's return: 0, or -1 (the group fails).
 */
static int cm_adapters_open(const char *rundir, const char *const ip[],
			    unsigned int n)
{
	unsigned int i;

	snprintf(sim_global.rundir, sizeof(sim_global.rundir), "%s", rundir);
	if (!mkdtemp(sim_global.rundir))
		return -1;
	sim_global.num_adapters = n;
	for (i = 0; i < n; i++)
		if (cm_adapter(i, ip[i]))
			return -1;
	return 0;
}

static int cm_adapters_close(void)
{
	rmdir(sim_global.rundir);
	return 0;
}

#endif /* TEST_CM_ADAPTERS_H */
