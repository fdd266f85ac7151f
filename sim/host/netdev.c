// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IP interface of each simulated RoCE port, as a host with the
 * adapter would show it: an Ethernet netdev "pvrdma<N>" for vmw_pvrdma<N>
 * (a real PVRDMA function shares the netdev of its paired vmxnet3
 * function), up and running, the port's MAC, the IPv4 address behind GID
 * index 1 and the IPv6 link-local address behind GID index 0.
 *
 * Programs find a RoCE adapter's addresses by enumerating interfaces and
 * skip the loopback one (libfabric's verbs provider does, by IFF_LOOPBACK):
 * the port's addresses must be on an interface of their own. The host's
 * interfaces are all still listed, and nothing is removed from any
 * answer; the adapters' netdevs are added to what these report:
 *
 *   getifaddrs()                     one AF_PACKET, AF_INET, AF_INET6
 *                                    entry each (one block: glibc's
 *                                    freeifaddrs frees it)
 *   if_nametoindex, if_indextoname,  the netdev's name and index
 *   if_nameindex
 *   ioctl SIOCGIFCONF                its IPv4 address
 *   ioctl SIOCGIFNAME, SIOCGIFINDEX, as the kernel answers them for an
 *   SIOCGIFFLAGS, SIOCGIFADDR, ...   Ethernet interface
 *
 * (the calls themselves are the preload library's, in ifaddrs.c), and
 * sysfs.c names it in gid_attrs/ndevs, device/net/ and class/net/.
 *
 * A port whose address belongs to one of the host's interfaces (adapters
 * across hosts, --ipv4 or --netdev) has no pvrdma<N>: that interface is
 * its netdev, listed by the host's calls with the address already, so
 * nothing is added for it and the address is never listed twice.
 *
 * Every simulated address is in 127/8 (or link-local), which the host's
 * loopback carries: sockets bound to or connecting to the port's IPv4
 * address keep working through the real kernel, so the sim's fabric and
 * a program's own TCP connections are unaffected. A link-local address
 * needs its scope: glibc resolves "%pvrdma0" by itself (no interposition
 * reaches it), so a program gives the numeric index or "%lo"; the
 * simulated rdma_cm does not route by scope.
 *
 * The index is past every index of the host's interfaces when the process
 * first asks, so it names nothing real; a process keeps it for its life.
 */
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "netdev.h"
#include "uaccess.h"

static unsigned int ifindex_base;
static pthread_once_t ifindex_once = PTHREAD_ONCE_INIT;

static void *real_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void find_ifindex_base(void)
{
	struct if_nameindex *(*real_nameindex)(void) =
		real_fn("if_nameindex");
	void (*real_free)(struct if_nameindex *) =
		real_fn("if_freenameindex");
	struct if_nameindex *all, *p;
	unsigned int max = 0;

	all = real_nameindex ? real_nameindex() : NULL;
	for (p = all; p && p->if_index; p++)
		if (p->if_index > max)
			max = p->if_index;
	if (all && real_free)
		real_free(all);
	ifindex_base = max + 1;
}

bool sim_netdev_simulated(const struct sim_dev *dev)
{
	return !dev->cfg.netdev[0];
}

void sim_netdev_name(const struct sim_dev *dev, char name[IFNAMSIZ])
{
	snprintf(name, IFNAMSIZ, "pvrdma%u", dev->index);
}

unsigned int sim_netdev_ifindex(const struct sim_dev *dev)
{
	pthread_once(&ifindex_once, find_ifindex_base);
	return ifindex_base + dev->index;
}

unsigned int sim_netdev_mtu(const struct sim_dev *dev)
{
	/* The kernel's RoCE path MTU is the largest IB MTU that fits the
	 * netdev's MTU less the RoCE headers; these give the port's. */
	switch (dev->cfg.mtu) {
	case IBV_MTU_256:
		return 576;
	case IBV_MTU_512:
		return 1000;
	case IBV_MTU_2048:
		return 4096;
	case IBV_MTU_4096:
		return 9000;
	default:
		return 1500;
	}
}

/* The adapter whose netdev is named name, or NULL. */
struct sim_dev *sim_netdev_by_name(const char *name)
{
	char own[IFNAMSIZ];
	unsigned int d;

	for (d = 0; d < sim_global.num_adapters; d++) {
		if (!sim_netdev_simulated(&sim_devs[d]))
			continue;
		sim_netdev_name(&sim_devs[d], own);
		if (!strncmp(name, own, IFNAMSIZ))
			return &sim_devs[d];
	}
	return NULL;
}

struct sim_dev *sim_netdev_by_index(unsigned int ifindex)
{
	unsigned int d;

	for (d = 0; d < sim_global.num_adapters; d++)
		if (sim_netdev_simulated(&sim_devs[d]) &&
		    sim_netdev_ifindex(&sim_devs[d]) == ifindex)
			return &sim_devs[d];
	return NULL;
}

/* The port's IPv4 address (network order), from its IPv4-mapped GID. */
bool sim_netdev_ipv4(const struct sim_dev *dev, struct in_addr *addr)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	unsigned int i;

	for (i = 0; i < dev->gid_count; i++)
		if (!memcmp(dev->gid[i].raw, mapped, sizeof(mapped))) {
			memcpy(&addr->s_addr, dev->gid[i].raw + 12, 4);
			return true;
		}
	return false;
}

/* The port's IPv6 link-local address (GID index 0). */
bool sim_netdev_ipv6(const struct sim_dev *dev, struct in6_addr *addr)
{
	if (!dev->gid_count || dev->gid[0].raw[0] != 0xfe ||
	    (dev->gid[0].raw[1] & 0xc0) != 0x80)
		return false;
	memcpy(addr, dev->gid[0].raw, 16);
	return true;
}
