// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: addresses of the simulated RoCE ports.
 *
 * Each adapter's port has an IP interface: the IPv4 address behind GID
 * index 1 (a 127/8 address, carried by the host's loopback; the port's
 * netdev is host/netdev.c's) and the IPv6 link-local address behind GID
 * index 0. An IP address maps to the
 * GID it is on the port (IPv4-mapped for IPv4), and a destination is
 * reachable when an adapter of this process or of another process sharing
 * the run directory owns that GID. The neighbour table is what every sim
 * process publishes in the run directory from its start: its sysfs tree
 * (<rundir>/sysfs-<pid>/, GID tables of its ports, the pid alive), and
 * once its device runs, the fabric's GID registry (<rundir>/gid/<hex>).
 *
 * The CM agent of a process (cm.c) answers for its GIDs on abstract Unix
 * sockets named after the run directory and the GID; abstract names go
 * away with the process, so a killed peer is never "reachable" through a
 * stale file.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "cm.h"

socklen_t cm_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

bool cm_addr_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];

	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == 0;
	case AF_INET6:
		return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			       zero, 16);
	case AF_IB:
		return !memcmp(&((const struct sockaddr_ib *)sa)->sib_addr,
			       zero, 16);
	default:
		return true;
	}
}

bool cm_addr_multicast(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(
			((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

bool cm_addr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			>> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

uint16_t cm_addr_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case AF_IB: {
		uint64_t sid = ((const struct sockaddr_ib *)sa)->sib_sid;

		return (uint16_t)be64toh(sid);
	}
	default:
		return 0;
	}
}

void cm_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	switch (sa->sa_family) {
	case AF_INET:
		((struct sockaddr_in *)sa)->sin_port = htons(port);
		break;
	case AF_INET6:
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
		break;
	default:
		break;
	}
}

bool cm_addr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	switch (sa->sa_family) {
	case AF_INET:
		sim_gid_from_ipv4(((const struct sockaddr_in *)sa)->sin_addr.s_addr,
				  gid);
		return true;
	case AF_INET6:
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
		return true;
	case AF_IB:
		memcpy(gid->raw, &((const struct sockaddr_ib *)sa)->sib_addr,
		       16);
		return true;
	default:
		return false;
	}
}

struct sim_dev *cm_addr_local(const struct sockaddr *sa,
			      unsigned int *gid_index)
{
	union ibv_gid gid;
	unsigned int d, i;

	if (!cm_addr_gid(sa, &gid))
		return NULL;
	for (d = 0; d < sim_global.num_adapters; d++) {
		struct sim_dev *dev = &sim_devs[d];

		for (i = 0; i < dev->gid_count; i++) {
			if (memcmp(dev->gid[i].raw, gid.raw, 16))
				continue;
			/* An IPv4 address is never the link-local GID. */
			if (sa->sa_family == AF_INET && gid.raw[0] == 0xfe)
				continue;
			*gid_index = i;
			return dev;
		}
	}
	return NULL;
}

/* The GID slot of dev that carries addresses of the family. */
static bool family_gid(const struct sim_dev *dev, int family,
		       unsigned int *gid_index)
{
	unsigned int i;

	for (i = 0; i < dev->gid_count; i++) {
		bool v4 = !memcmp(dev->gid[i].raw,
				  "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);

		if ((family == AF_INET) == v4 &&
		    (family == AF_INET || family == AF_INET6 ||
		     family == AF_IB)) {
			*gid_index = i;
			return true;
		}
	}
	return false;
}

struct sim_dev *cm_addr_route(const struct sockaddr *dst,
			      unsigned int *gid_index)
{
	struct sim_dev *dev = cm_addr_local(dst, gid_index);
	unsigned int d;

	if (dev)
		return dev;	/* loopback to an adapter of ours */
	/* Another host's address: an adapter that has one is the way out. */
	dev = cm_tcp_route(dst, gid_index);
	if (dev)
		return dev;
	/* Every other simulated address is on "lo": the first adapter with
	 * an address of the family is the way out. */
	for (d = 0; d < sim_global.num_adapters; d++)
		if (family_gid(&sim_devs[d], dst->sa_family, gid_index))
			return &sim_devs[d];
	return NULL;
}

static void gid_hex(const union ibv_gid *gid, char hex[33])
{
	static const char digits[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < 16; i++) {
		hex[2 * i] = digits[gid->raw[i] >> 4];
		hex[2 * i + 1] = digits[gid->raw[i] & 15];
	}
	hex[32] = 0;
}

/* Whether a live sim process's sysfs tree in the run directory has gid
 * in a GID table. */
static bool sysfs_owner(const union ibv_gid *gid)
{
	char path[PATH_MAX], text[64];
	struct dirent *de, *ie;
	bool found = false;
	DIR *d, *ib;

	d = sim_libc.opendir(sim_global.rundir);
	if (!d)
		return false;
	while (!found && (de = sim_libc.readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, "sysfs-", 6))
			continue;
		pid = strtol(de->d_name + 6, &end, 10);
		if (*end || pid <= 0 ||
		    (kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%s/class/infiniband",
			 sim_global.rundir, de->d_name);
		ib = sim_libc.opendir(path);
		if (!ib)
			continue;
		while (!found && (ie = sim_libc.readdir(ib))) {
			unsigned int i;

			if (ie->d_name[0] == '.')
				continue;
			for (i = 0; !found && i < SIM_GID_TABLE_LEN; i++) {
				struct in6_addr a;
				ssize_t n;
				int fd;

				snprintf(path, sizeof(path),
					 "%s/%s/class/infiniband/%s/ports/1/gids/%u",
					 sim_global.rundir, de->d_name,
					 ie->d_name, i);
				fd = sim_libc.open(path, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					continue;
				n = sim_libc.read(fd, text, sizeof(text) - 1);
				sim_libc.close(fd);
				if (n <= 0)
					continue;
				text[n] = 0;
				text[strcspn(text, "\n")] = 0;
				found = inet_pton(AF_INET6, text, &a) == 1 &&
					!memcmp(&a, gid->raw, 16);
			}
		}
		sim_libc.closedir(ib);
	}
	sim_libc.closedir(d);
	return found;
}

bool cm_addr_reachable(const union ibv_gid *gid)
{
	char path[sizeof(sim_global.rundir) + 64], hex[33];
	struct stat st;
	unsigned int d, i;

	for (d = 0; d < sim_global.num_adapters; d++)
		for (i = 0; i < sim_devs[d].gid_count; i++)
			if (!memcmp(sim_devs[d].gid[i].raw, gid->raw, 16))
				return true;
	if (!sim_global.rundir[0])
		return false;
	gid_hex(gid, hex);
	snprintf(path, sizeof(path), "%s/gid/%s", sim_global.rundir, hex);
	/* The link names the owner's fabric socket: both must exist. */
	if (!sim_libc.lstat(path, &st) && !sim_libc.stat(path, &st))
		return true;
	/* On another host: its CM agent says whether it is there. */
	return sysfs_owner(gid) || cm_tcp_gid(gid);
}

/*
 * "@pvrdma-sim-cm:<rundir>/<gid hex>", so that ss -xl shows which process
 * answers for which GID of which run directory; a run directory too long
 * for that is named by its hash.
 */
socklen_t cm_agent_sockaddr(const union ibv_gid *gid, struct sockaddr *sa)
{
	struct sockaddr_un *un = (struct sockaddr_un *)sa;
	size_t room = sizeof(un->sun_path) - 1;
	const char *p = sim_global.rundir;
	uint64_t hash = 0xcbf29ce484222325ull;	/* FNV-1a of the run dir */
	char hex[33];
	int n;

	gid_hex(gid, hex);
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (!sim_global.rundir[0]) {
		/* No shared directory: only this process. */
		n = snprintf(un->sun_path + 1, room, "pvrdma-sim-cm:#%d/%s",
			     (int)getpid(), hex);
	} else {
		n = snprintf(un->sun_path + 1, room, "pvrdma-sim-cm:%s/%s",
			     sim_global.rundir, hex);
		if (n < 0 || (size_t)n >= room) {
			for (; *p; p++)
				hash = (hash ^ (uint8_t)*p) *
				       0x100000001b3ull;
			n = snprintf(un->sun_path + 1, room,
				     "pvrdma-sim-cm:#%016llx/%s",
				     (unsigned long long)hash, hex);
		}
	}
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

bool cm_addr_listen_match(const struct sockaddr *lsa, bool afonly,
			  const struct sockaddr *dst)
{
	if (cm_addr_port(lsa) != cm_addr_port(dst))
		return false;
	if (cm_addr_any(lsa)) {
		if (lsa->sa_family == dst->sa_family)
			return true;
		/* An IPv6 wildcard takes IPv4 unless AFONLY; AF_IB takes
		 * every family. */
		return (lsa->sa_family == AF_INET6 && !afonly &&
			dst->sa_family == AF_INET) || lsa->sa_family == AF_IB;
	}
	if (lsa->sa_family != dst->sa_family)
		return false;
	if (lsa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)lsa)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)dst)->sin_addr.s_addr;
	if (lsa->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)lsa)->sin6_addr,
			       &((const struct sockaddr_in6 *)dst)->sin6_addr,
			       16);
	return false;
}
