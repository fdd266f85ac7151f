// SPDX-License-Identifier: BSD-2-Clause
/*
 * The MTU of a host interface a RoCE port sends on, and the IB MTU its
 * packets may carry there. Each asks the kernel through raw system calls
 * (sys.h), so the preload library's own answers for the adapters'
 * simulated netdevs never come back here: a real interface has a real
 * MTU, and only its owner (ip link set mtu) changes it.
 */
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common.h"
#include "sys.h"

int sim_iface_mtu(const char *ifname)
{
	struct ifreq ifr;
	long fd, ret;

	fd = sim_sys(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name) - 1);
	ret = sim_sys(SYS_ioctl, fd, SIOCGIFMTU, (long)&ifr);
	sim_sys(SYS_close, fd, 0, 0);
	return ret || ifr.ifr_mtu <= 0 ? 0 : ifr.ifr_mtu;
}

enum ibv_mtu sim_ib_mtu_of_iface(int iface_mtu)
{
	int room = iface_mtu - SIM_ROCE_HEADROOM;
	enum ibv_mtu m = IBV_MTU_4096;

	while (m > IBV_MTU_256 && (128 << m) > room)
		m--;
	return m;
}
