/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim: the IP interface (netdev) of each simulated RoCE port, as
 * the host's network interface calls report it (netdev.c).
 */
#ifndef PVRDMA_SIM_NETDEV_H
#define PVRDMA_SIM_NETDEV_H

#include <net/if.h>

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "host.h"

/* Whether the port has a netdev of its own (below): its address is a
 * simulated one (127/8). A port whose address is one of the host's
 * interfaces' (--ipv4, --netdev) has that interface as its netdev
 * (sim_config.netdev), which the host's own calls already report. */
bool sim_netdev_simulated(const struct sim_dev *dev);
/* "pvrdma<N>" for the adapter vmw_pvrdma<N>. */
void sim_netdev_name(const struct sim_dev *dev, char name[IFNAMSIZ]);
/* An index no interface of the host has, the same in every sim process
 * of the host for the same adapter number. */
unsigned int sim_netdev_ifindex(const struct sim_dev *dev);
/* The interface MTU whose RoCE path MTU is the port's active MTU. */
unsigned int sim_netdev_mtu(const struct sim_dev *dev);

/* The adapter whose netdev has this name or index, or NULL. */
struct sim_dev *sim_netdev_by_name(const char *name);
struct sim_dev *sim_netdev_by_index(unsigned int ifindex);
/* The port's IPv4 address (GID index 1) and IPv6 link-local (index 0). */
bool sim_netdev_ipv4(const struct sim_dev *dev, struct in_addr *addr);
bool sim_netdev_ipv6(const struct sim_dev *dev, struct in6_addr *addr);

#define NETDEV_FLAGS	(IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST)

/* SIOCETHTOOL on the netdev of dev, the command at user (ethtool.c):
 * 0 or a negative errno. */
int sim_netdev_ethtool(const struct sim_dev *dev, uint64_t user);

typedef int (*sim_ioctl_fn)(int fd, unsigned long request, ...);
/* ioctl() on any fd that is not the sim's: the interface requests
 * (SIOCGIFCONF, SIOCGIFNAME, SIOCGIF* by name) also see the adapters'
 * netdevs; everything else is real_ioctl's answer (ifaddrs.c). */
int sim_netdev_ioctl(sim_ioctl_fn real_ioctl, int fd, unsigned long request,
		     void *arg);

#endif
