// SPDX-License-Identifier: BSD-2-Clause
/*
 * The host's interface calls, with the ports' netdevs (netdev.c) added to
 * their answers: getifaddrs, if_nametoindex, if_indextoname, if_nameindex,
 * and the interface ioctls devfile.c hands over. Everything the host has
 * is still listed; nothing is removed from any answer.
 */
#include "preload.h"

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
#include <linux/sockios.h>
#include <sys/socket.h>

#include "netdev.h"
#include "uaccess.h"

static void sin_of(struct sockaddr_in *sin, uint32_t s_addr)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = s_addr;
}

/* The IPv4 netmask and broadcast: all of 127/8 is on the link. */
#define NETDEV_IPV4_MASK	htonl(0xff000000u)

/* ---- getifaddrs ---- */

/* Room for one entry and what it points at, in one block. */
struct netdev_ifaddr {
	struct ifaddrs ifa;
	struct sockaddr_storage addr, netmask, broad;
	struct rtnl_link_stats stats;
	char name[IFNAMSIZ];
};

static void copy_sa(struct sockaddr **to, struct sockaddr_storage *room,
		    const struct sockaddr *from)
{
	size_t len;

	if (!from) {
		*to = NULL;
		return;
	}
	switch (from->sa_family) {
	case AF_INET:
		len = sizeof(struct sockaddr_in);
		break;
	case AF_INET6:
		len = sizeof(struct sockaddr_in6);
		break;
	case AF_PACKET:
		len = sizeof(struct sockaddr_ll);
		break;
	default:
		len = sizeof(struct sockaddr);
		break;
	}
	memcpy(room, from, len);
	*to = (struct sockaddr *)room;
}

/* An entry of the host's list, moved into the new block. */
static void copy_real(struct netdev_ifaddr *e, const struct ifaddrs *ifa)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", ifa->ifa_name);
	e->ifa.ifa_name = e->name;
	e->ifa.ifa_flags = ifa->ifa_flags;
	copy_sa(&e->ifa.ifa_addr, &e->addr, ifa->ifa_addr);
	copy_sa(&e->ifa.ifa_netmask, &e->netmask, ifa->ifa_netmask);
	copy_sa(&e->ifa.ifa_broadaddr, &e->broad, ifa->ifa_broadaddr);
	if (ifa->ifa_data && ifa->ifa_addr &&
	    ifa->ifa_addr->sa_family == AF_PACKET) {
		memcpy(&e->stats, ifa->ifa_data, sizeof(e->stats));
		e->ifa.ifa_data = &e->stats;
	}
}

static void fill_packet(struct netdev_ifaddr *e, const struct sim_dev *dev)
{
	struct sockaddr_ll *ll = (struct sockaddr_ll *)&e->addr;
	struct sockaddr_ll *bc = (struct sockaddr_ll *)&e->broad;

	ll->sll_family = AF_PACKET;
	ll->sll_ifindex = (int)sim_netdev_ifindex(dev);
	ll->sll_hatype = ARPHRD_ETHER;
	ll->sll_halen = 6;
	memcpy(ll->sll_addr, dev->cfg.mac, 6);
	*bc = *ll;
	memset(bc->sll_addr, 0xff, 6);
	e->ifa.ifa_addr = (struct sockaddr *)ll;
	e->ifa.ifa_broadaddr = (struct sockaddr *)bc;
	e->ifa.ifa_data = &e->stats;
}

static bool fill_ipv4(struct netdev_ifaddr *e, const struct sim_dev *dev)
{
	struct in_addr a;

	if (!sim_netdev_ipv4(dev, &a))
		return false;
	sin_of((struct sockaddr_in *)&e->addr, a.s_addr);
	sin_of((struct sockaddr_in *)&e->netmask, NETDEV_IPV4_MASK);
	sin_of((struct sockaddr_in *)&e->broad,
	       a.s_addr | ~NETDEV_IPV4_MASK);
	e->ifa.ifa_addr = (struct sockaddr *)&e->addr;
	e->ifa.ifa_netmask = (struct sockaddr *)&e->netmask;
	e->ifa.ifa_broadaddr = (struct sockaddr *)&e->broad;
	return true;
}

static bool fill_ipv6(struct netdev_ifaddr *e, const struct sim_dev *dev)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&e->addr;
	struct sockaddr_in6 *mask = (struct sockaddr_in6 *)&e->netmask;

	if (!sim_netdev_ipv6(dev, &sin6->sin6_addr))
		return false;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_scope_id = sim_netdev_ifindex(dev);
	mask->sin6_family = AF_INET6;
	memset(&mask->sin6_addr, 0xff, 8);	/* fe80::/64 */
	e->ifa.ifa_addr = (struct sockaddr *)sin6;
	e->ifa.ifa_netmask = (struct sockaddr *)mask;
	return true;
}

int getifaddrs(struct ifaddrs **out)
{
	int (*real_getifaddrs)(struct ifaddrs **) = get_getifaddrs();
	void (*real_freeifaddrs)(struct ifaddrs *) = get_freeifaddrs();
	unsigned int nreal = 0, nall, d, i = 0, kind;
	struct netdev_ifaddr *block;
	struct ifaddrs *list, *ifa;

	if (!real_getifaddrs || !real_freeifaddrs) {
		errno = ENOSYS;
		return -1;
	}
	if (real_getifaddrs(&list))
		return -1;
	if (!sim_global.num_adapters) {
		*out = list;
		return 0;
	}
	for (ifa = list; ifa; ifa = ifa->ifa_next)
		nreal++;
	nall = nreal + 3 * sim_global.num_adapters;
	block = calloc(nall, sizeof(*block));
	if (!block) {
		real_freeifaddrs(list);
		errno = ENOMEM;
		return -1;
	}
	for (ifa = list; ifa; ifa = ifa->ifa_next)
		copy_real(&block[i++], ifa);
	real_freeifaddrs(list);
	/* As glibc orders them: every link first, then the addresses. */
	for (kind = 0; kind < 3; kind++) {
		for (d = 0; d < sim_global.num_adapters; d++) {
			struct netdev_ifaddr *e = &block[i];
			const struct sim_dev *dev = &sim_devs[d];

			if (!sim_netdev_simulated(dev))
				continue;
			sim_netdev_name(dev, e->name);
			e->ifa.ifa_name = e->name;
			e->ifa.ifa_flags = NETDEV_FLAGS;
			if (kind == 0)
				fill_packet(e, dev);
			else if (kind == 1 ? !fill_ipv4(e, dev) :
					     !fill_ipv6(e, dev))
				continue;
			i++;
		}
	}
	for (d = 0; d + 1 < i; d++)
		block[d].ifa.ifa_next = &block[d + 1].ifa;
	block[i - 1].ifa.ifa_next = NULL;
	*out = &block[0].ifa;
	return 0;
}

/* ---- if_nametoindex & co. ---- */

unsigned int if_nametoindex(const char *name)
{
	unsigned int (*real)(const char *) = get_if_nametoindex();
	struct sim_dev *dev = name ? sim_netdev_by_name(name) : NULL;

	if (dev)
		return sim_netdev_ifindex(dev);
	if (!real) {
		errno = ENODEV;
		return 0;
	}
	return real(name);
}

char *if_indextoname(unsigned int ifindex, char name[IF_NAMESIZE])
{
	char *(*real)(unsigned int, char *) = get_if_indextoname();
	struct sim_dev *dev = sim_netdev_by_index(ifindex);

	if (dev) {
		sim_netdev_name(dev, name);
		return name;
	}
	if (!real) {
		errno = ENXIO;
		return NULL;
	}
	return real(ifindex, name);
}

struct if_nameindex *if_nameindex(void)
{
	struct if_nameindex *(*real)(void) = get_if_nameindex();
	struct if_nameindex *all, *more;
	unsigned int n = 0, d, added = 0;

	all = real ? real() : NULL;
	if (!all || !sim_global.num_adapters)
		return all;
	while (all[n].if_index || all[n].if_name)
		n++;
	more = calloc(n + sim_global.num_adapters + 1, sizeof(*more));
	if (!more)
		goto nomem;
	/* The host's names move over: if_freenameindex frees each. */
	memcpy(more, all, n * sizeof(*more));
	for (d = 0; d < sim_global.num_adapters; d++) {
		struct if_nameindex *e = &more[n + added];
		char name[IFNAMSIZ];

		if (!sim_netdev_simulated(&sim_devs[d]))
			continue;
		sim_netdev_name(&sim_devs[d], name);
		e->if_index = sim_netdev_ifindex(&sim_devs[d]);
		e->if_name = strdup(name);
		if (!e->if_name) {
			while (added--)
				free(more[n + added].if_name);
			free(more);
			goto nomem;
		}
		added++;
	}
	free(all);
	return more;
nomem:
	if_freenameindex(all);
	errno = ENOBUFS;
	return NULL;
}

/* ---- ioctl ---- */

static int ifreq_answer(const struct sim_dev *dev, unsigned long request,
			struct ifreq *ifr)
{
	struct in_addr a;

	switch (request) {
	case SIOCGIFINDEX:
		ifr->ifr_ifindex = (int)sim_netdev_ifindex(dev);
		return 0;
	case SIOCGIFFLAGS:
		ifr->ifr_flags = NETDEV_FLAGS;
		return 0;
	case SIOCGIFMTU:
		ifr->ifr_mtu = (int)sim_netdev_mtu(dev);
		return 0;
	case SIOCGIFMETRIC:
		ifr->ifr_metric = 0;
		return 0;
	case SIOCGIFTXQLEN:
		ifr->ifr_qlen = 1000;
		return 0;
	case SIOCGIFHWADDR:
		memset(&ifr->ifr_hwaddr, 0, sizeof(ifr->ifr_hwaddr));
		ifr->ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr->ifr_hwaddr.sa_data, dev->cfg.mac, 6);
		return 0;
	case SIOCGIFADDR:
	case SIOCGIFNETMASK:
	case SIOCGIFBRDADDR:
		/* The kernel's answer for an interface with no IPv4. */
		if (!sim_netdev_ipv4(dev, &a))
			return -EADDRNOTAVAIL;
		sin_of((struct sockaddr_in *)&ifr->ifr_addr,
		       request == SIOCGIFADDR ? a.s_addr :
		       request == SIOCGIFNETMASK ? NETDEV_IPV4_MASK :
		       (a.s_addr | ~NETDEV_IPV4_MASK));
		return 0;
	case SIOCETHTOOL:
		return sim_netdev_ethtool(dev, (uintptr_t)ifr->ifr_data);
	default:
		return -ENODEV;	/* what the kernel said of the name */
	}
}

/* SIOCGIFCONF: the adapters' IPv4 addresses after the host's, as many
 * whole entries as the caller's buffer still holds. */
static int ifconf_append(unsigned long long user, const struct ifconf *given)
{
	struct ifconf got;
	unsigned int d;

	if (sim_copy_from_user(&got, user, sizeof(got)))
		return -EFAULT;
	for (d = 0; d < sim_global.num_adapters; d++) {
		struct ifreq ifr;
		struct in_addr a;

		if (!sim_netdev_simulated(&sim_devs[d]) ||
		    !sim_netdev_ipv4(&sim_devs[d], &a))
			continue;
		if (!given->ifc_req) {
			got.ifc_len += (int)sizeof(ifr);
			continue;
		}
		if (given->ifc_len - got.ifc_len < (int)sizeof(ifr))
			break;
		memset(&ifr, 0, sizeof(ifr));
		sim_netdev_name(&sim_devs[d], ifr.ifr_name);
		sin_of((struct sockaddr_in *)&ifr.ifr_addr, a.s_addr);
		if (sim_copy_to_user((uintptr_t)given->ifc_buf + got.ifc_len,
				     &ifr, sizeof(ifr)))
			return -EFAULT;
		got.ifc_len += (int)sizeof(ifr);
	}
	if (sim_copy_to_user(user, &got, sizeof(got)))
		return -EFAULT;
	return 0;
}

int sim_netdev_ioctl(sim_ioctl_fn real_ioctl, int fd, unsigned long request,
		     void *arg)
{
	unsigned long long user = (uintptr_t)arg;
	struct sim_dev *dev;
	struct ifconf given;
	struct ifreq ifr;
	int ret, err;

	if (!sim_global.num_adapters || (request & ~0xffUL) != 0x8900)
		return real_ioctl(fd, request, arg);
	if (request == SIOCGIFCONF) {
		/* The caller's room, before the kernel rewrites it. */
		if (sim_copy_from_user(&given, user, sizeof(given)))
			return real_ioctl(fd, request, arg);
		ret = real_ioctl(fd, request, arg);
		if (ret)
			return ret;
		err = ifconf_append(user, &given);
		goto done;
	}
	ret = real_ioctl(fd, request, arg);
	/* Only what the kernel refused for a name (or an index) it does
	 * not know can be an adapter's. */
	if (ret != -1 || errno != ENODEV)
		return ret;
	if (sim_copy_from_user(&ifr, user, sizeof(ifr)))
		goto not_ours;
	if (request == SIOCGIFNAME) {
		dev = sim_netdev_by_index((unsigned int)ifr.ifr_ifindex);
		if (!dev)
			goto not_ours;
		sim_netdev_name(dev, ifr.ifr_name);
		err = 0;
	} else {
		dev = sim_netdev_by_name(ifr.ifr_name);
		if (!dev)
			goto not_ours;
		err = ifreq_answer(dev, request, &ifr);
	}
	if (!err && sim_copy_to_user(user, &ifr, sizeof(ifr)))
		err = -EFAULT;
done:
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
not_ours:
	errno = ENODEV;
	return -1;
}
