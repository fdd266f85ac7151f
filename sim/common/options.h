/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim configuration values: their parsers and the rules that tie them
 * together. Header-only because two programs need them: the launcher checks
 * the user's options before it execs anything, and config.c checks the same
 * values again when the library is preloaded by hand. Both reach libc
 * through the gateway (libc.h).
 *
 * Every parser returns 0 or an errno, and never writes *out on failure.
 */
#ifndef PVRDMA_SIM_OPTIONS_H
#define PVRDMA_SIM_OPTIONS_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <infiniband/verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "libc.h"

/* The environment that carries the launcher's options into the library. */
#define SIM_ENV_ADAPTERS	"PVRDMA_SIM_ADAPTERS"
#define SIM_ENV_HW_VERSION	"PVRDMA_SIM_HW_VERSION"
#define SIM_ENV_ROCE		"PVRDMA_SIM_ROCE"
#define SIM_ENV_NAMESPACES	"PVRDMA_SIM_NAMESPACES"
#define SIM_ENV_MAX_UD_QPS	"PVRDMA_SIM_MAX_UD_QPS"
#define SIM_ENV_MTU		"PVRDMA_SIM_MTU"
#define SIM_ENV_MAC		"PVRDMA_SIM_MAC"
#define SIM_ENV_IPV4		"PVRDMA_SIM_IPV4"
#define SIM_ENV_NETDEV		"PVRDMA_SIM_NETDEV"
#define SIM_ENV_TCP_PORT	"PVRDMA_SIM_TCP_PORT"
#define SIM_ENV_RUNDIR		"PVRDMA_SIM_RUNDIR"
#define SIM_ENV_STATS		"PVRDMA_SIM_STATS"
#define SIM_ENV_STATS_FILE	"PVRDMA_SIM_STATS_FILE"
#define SIM_ENV_PROVIDER	"PVRDMA_SIM_PROVIDER"
#define SIM_ENV_MAX_QP_WR	"PVRDMA_SIM_MAX_QP_WR"
#define SIM_ENV_MAX_SRQ_WR	"PVRDMA_SIM_MAX_SRQ_WR"
#define SIM_ENV_MAX_CQE		"PVRDMA_SIM_MAX_CQE"
#define SIM_ENV_SINGLE_COPY	"PVRDMA_SIM_SINGLE_COPY"
#define SIM_ENV_ASYNC_MODE	"PVRDMA_SIM_ASYNC_MODE"
#define SIM_ENV_WIRE		"PVRDMA_SIM_WIRE"

#define SIM_HW_VERSION_DEFAULT	18u
/* Where adapters listen for other hosts: RoCE v2's port number, on TCP. */
#define SIM_TCP_PORT_DEFAULT	4791u
#define SIM_MTU_DEFAULT		IBV_MTU_1024
/* RoCE v2 arrived with virtual hardware 14, namespaces with 17. */
#define SIM_HW_MIN_ROCE_V2	14u
#define SIM_HW_MIN_NAMESPACES	17u
#define SIM_HW_MIN_SRQ		14u

/*
 * Queue depth limits, as QEMU's model derives them (init_dev_caps): a ring
 * lives in what one page table maps, 512 pages, less its ring-state page;
 * each limit is the largest power of two of entries that fits: a 128 B
 * send WQE (max_qp_wr 8192), a 32 B receive WQE (max_srq_wr 32768), a 64 B
 * CQE (max_cqe 16384). The options may raise them up to what the whole
 * page directory (512 x 512 pages) maps.
 */
#define SIM_PAGE_TABLE_PAGES	512u
#define SIM_RING_ENTRY_BYTES	((SIM_PAGE_TABLE_PAGES - 1) * 4096u)

static inline unsigned int sim_ring_max_entries(unsigned int entry_bytes)
{
	unsigned int fit = SIM_RING_ENTRY_BYTES / entry_bytes, n = 1;

	while (n * 2 <= fit)
		n *= 2;
	return n;
}

/* A WQE's size as the driver lays it out: a power of two. */
static inline unsigned int sim_wqe_bytes(size_t hdr, unsigned int sges)
{
	size_t sz = hdr + sges * sizeof(struct pvrdma_sge);
	unsigned int n = 1;

	while (n < sz)
		n *= 2;
	return n;
}

static inline unsigned int sim_default_max_qp_wr(void)
{
	unsigned int sq = sim_wqe_bytes(sizeof(struct pvrdma_sq_wqe_hdr), 1);
	unsigned int rq = sim_wqe_bytes(sizeof(struct pvrdma_rq_wqe_hdr), 1);

	return sim_ring_max_entries(sq > rq ? sq : rq);
}

static inline unsigned int sim_default_max_srq_wr(void)
{
	return sim_ring_max_entries(
		sim_wqe_bytes(sizeof(struct pvrdma_rq_wqe_hdr), 1));
}

static inline unsigned int sim_default_max_cqe(void)
{
	return sim_ring_max_entries(sizeof(struct pvrdma_cqe));
}

/* The most an option may raise a queue limit to. */
#define SIM_QUEUE_LIMIT_MAX	262144u

static inline int sim_opt_uint(const char *s, unsigned long min,
			       unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return EINVAL;
	if (v < min || v > max)
		return ERANGE;
	*out = (unsigned int)v;
	return 0;
}

static inline int sim_opt_hw_version(const char *s, unsigned int *out)
{
	unsigned int v;

	if (sim_opt_uint(s, 0, 1000, &v) || (v != 13 && v != 14 && v != 18))
		return EINVAL;
	*out = v;
	return 0;
}

static inline int sim_opt_roce(const char *s, unsigned int *out)
{
	unsigned int v;

	if (sim_opt_uint(s, 1, 2, &v))
		return EINVAL;
	*out = v;
	return 0;
}

static inline int sim_opt_bool(const char *s, bool *out)
{
	if (!s)
		return EINVAL;
	if (!strcmp(s, "on") || !strcmp(s, "1") || !strcmp(s, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "off") || !strcmp(s, "0") || !strcmp(s, "no")) {
		*out = false;
		return 0;
	}
	return EINVAL;
}

/* "256".."4096" bytes -> the verbs enum. */
static inline int sim_opt_mtu(const char *s, enum ibv_mtu *out)
{
	static const unsigned int bytes[] = { 256, 512, 1024, 2048, 4096 };
	unsigned int v, i;

	if (sim_opt_uint(s, 0, 65536, &v))
		return EINVAL;
	for (i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		if (bytes[i] == v) {
			*out = (enum ibv_mtu)(IBV_MTU_256 + i);
			return 0;
		}
	}
	return EINVAL;
}

/*
 * "XX:XX:XX:XX:XX:XX", unicast only: the RoCE GIDs and the node GUID are
 * made from it, and a multicast source address is not an adapter's.
 */
static inline int sim_opt_mac(const char *s, uint8_t mac[6])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[6] = { 0 };
	int i;

	if (!s || strlen(s) != 17)
		return EINVAL;
	for (i = 0; i < 17; i++) {
		const char *d;

		if (i % 3 == 2) {
			if (s[i] != ':')
				return EINVAL;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]))
			return EINVAL;
		d = strchr(hex, tolower((unsigned char)s[i]));
		b[i / 3] = (uint8_t)(b[i / 3] << 4 | (d - hex));
	}
	if (b[0] & 1)
		return EINVAL;
	if (!(b[0] | b[1] | b[2] | b[3] | b[4] | b[5]))
		return EINVAL;
	memcpy(mac, b, 6);
	return 0;
}

/*
 * IPv4 of the adapters: "auto" (a per-process loopback address derived
 * like the MAC), "off", or a unicast dotted quad. An address in 127/8
 * keeps the adapter on this host; any other must be an address of one of
 * the host's interfaces, where the adapter listens for adapters on other
 * hosts (fabric/tcp.c). *out is network order; *autop tells "auto" apart.
 */
static inline int sim_opt_ipv4(const char *s, uint32_t *out, bool *autop)
{
	struct in_addr a;

	if (!s)
		return EINVAL;
	if (!strcmp(s, "auto")) {
		*out = 0;
		*autop = true;
		return 0;
	}
	if (!strcmp(s, "off")) {
		*out = 0;
		*autop = false;
		return 0;
	}
	if (inet_pton(AF_INET, s, &a) != 1)
		return EINVAL;
	/* not "this network", multicast or reserved */
	if ((ntohl(a.s_addr) >> 24) == 0 || ntohl(a.s_addr) >= 0xe0000000u)
		return EINVAL;
	if ((ntohl(a.s_addr) >> 24) == 127 &&
	    ((ntohl(a.s_addr) & 0xffffff) == 0 ||
	     (ntohl(a.s_addr) & 0xffffff) == 0xffffff))
		return EINVAL;
	*out = a.s_addr;
	*autop = false;
	return 0;
}

/* TCP port the adapters listen on for other hosts (--tcp-port). */
static inline int sim_opt_tcp_port(const char *s, unsigned int *out)
{
	return sim_opt_uint(s, 1, 65535, out);
}

/*
 * How adapters reach adapters on other hosts (--wire): the sim's own
 * frames over TCP, or RoCE v2 (UDP port 4791, fabric/roce.c), which
 * native endpoints speak. Adapters of one host share memory either way.
 */
enum sim_wire {
	SIM_WIRE_SIM = 0,
	SIM_WIRE_ROCE,
};

static inline int sim_opt_wire(const char *s, enum sim_wire *out)
{
	if (!s)
		return EINVAL;
	if (!strcmp(s, "sim")) {
		*out = SIM_WIRE_SIM;
		return 0;
	}
	if (!strcmp(s, "roce")) {
		*out = SIM_WIRE_ROCE;
		return 0;
	}
	return EINVAL;
}

/*
 * The IPv4 address of interface ifname (--netdev), network order: ENODEV
 * when there is no such interface, EADDRNOTAVAIL when it has no IPv4
 * address. With name set, the other way round: the interface that holds
 * *out (name has IF_NAMESIZE bytes), ENODEV when none does.
 */
static inline int sim_iface_ipv4(const char *ifname, uint32_t *out,
				 char *name)
{
	struct ifaddrs *ifa, *i;
	int ret = ENODEV;

	if (sim_libc.getifaddrs(&ifa))
		return errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *sin =
			(const struct sockaddr_in *)i->ifa_addr;

		if (name) {
			if (!sin || sin->sin_family != AF_INET ||
			    sin->sin_addr.s_addr != *out)
				continue;
			snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
			ret = 0;
			break;
		}
		if (strcmp(i->ifa_name, ifname))
			continue;
		ret = EADDRNOTAVAIL;
		if (sin && sin->sin_family == AF_INET) {
			*out = sin->sin_addr.s_addr;
			ret = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return ret;
}

/*
 * The combination rules of the virtual hardware. Returns a static message
 * naming the conflict, or NULL when the combination is valid.
 */
static inline const char *sim_opt_conflict(unsigned int hw_version,
					   unsigned int roce, bool namespaces)
{
	if (roce == 2 && hw_version < SIM_HW_MIN_ROCE_V2)
		return "RoCE v2 needs virtual hardware version 14 or later";
	if (namespaces && hw_version < SIM_HW_MIN_NAMESPACES)
		return "namespaces need virtual hardware version 17 or later";
	return NULL;
}

static inline unsigned int sim_opt_default_roce(unsigned int hw_version)
{
	return hw_version >= SIM_HW_MIN_ROCE_V2 ? 2 : 1;
}

static inline bool sim_opt_default_namespaces(unsigned int hw_version)
{
	return hw_version >= SIM_HW_MIN_NAMESPACES;
}

#endif /* PVRDMA_SIM_OPTIONS_H */
