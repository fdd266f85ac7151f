// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm between hosts: the CM agents of processes on
 * different hosts talk over TCP.
 *
 * On one host a CM agent answers for each GID of its adapters on an
 * abstract Unix socket (cm_addr.c); those names are per host (per network
 * namespace, in fact), like the run directory. An adapter whose address is
 * outside 127/8 is reached from other hosts over TCP (sim/fabric/tcp.c),
 * and so is its CM agent: at the adapter's address, port --tcp-port + 1
 * (4792 by default), where the agent listens besides its Unix sockets. A
 * connection to a GID that no agent of this host answers for, and that
 * carries such an address, goes there, from the address of an adapter of
 * this process that has one (the way out, as cm_addr_route picks it). The
 * messages are the same struct cm_msg as on the Unix sockets, whole ones
 * only: the sockets' receive low-water mark is a message, so the agent
 * never sees half of one, and cm.c checks every message it reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "cm.h"
#include "fds.h"
#include "options.h"
#include "tcp.h"

static uint16_t cm_tcp_port(void)
{
	unsigned int port = sim_global.tcp_port ? sim_global.tcp_port :
						  SIM_TCP_PORT_DEFAULT;

	return (uint16_t)(port == 65535 ? 1 : port + 1);
}

/* The first adapter of this process that other hosts can reach. */
static const struct sim_dev *tcp_dev(void)
{
	unsigned int d;

	for (d = 0; d < sim_global.num_adapters; d++)
		if (fab_tcp_addr(sim_devs[d].cfg.ipv4))
			return &sim_devs[d];
	return NULL;
}

bool cm_tcp_gid(const union ibv_gid *gid)
{
	uint32_t a;

	return tcp_dev() && fab_tcp_gid_addr(gid->raw, &a);
}

struct sim_dev *cm_tcp_route(const struct sockaddr *dst,
			     unsigned int *gid_index)
{
	const struct sim_dev *dev = tcp_dev();
	unsigned int i;

	if (!dev || dst->sa_family != AF_INET ||
	    !fab_tcp_addr(((const struct sockaddr_in *)dst)->sin_addr.s_addr))
		return NULL;
	for (i = 0; i < dev->gid_count; i++)
		if (!memcmp(dev->gid[i].raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff",
			    12)) {
			*gid_index = i;
			return (struct sim_dev *)dev;
		}
	return NULL;
}

static void tune(int s, size_t msg_size)
{
	int one = 1, lowat = (int)msg_size;

	sim_libc.setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sim_libc.setsockopt(s, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
	fab_tcp_keepalive(s);
}

int cm_tcp_listen(const struct sim_dev *dev, size_t msg_size)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(cm_tcp_port()),
		.sin_addr.s_addr = dev->cfg.ipv4,
	};
	int s, one = 1;

	if (!fab_tcp_addr(dev->cfg.ipv4))
		return -1;
	s = sim_fd_own(sim_libc.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
				       SOCK_CLOEXEC, 0));
	if (s < 0)
		return -1;
	sim_libc.setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* accepted connections inherit both options */
	tune(s, msg_size);
	if (sim_libc.bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s,
			  128)) {
		sim_fd_close(s);
		return -1;
	}
	return s;
}

int cm_tcp_connect(const union ibv_gid *gid, size_t msg_size)
{
	const struct sim_dev *dev = tcp_dev();
	struct sockaddr_in from = { .sin_family = AF_INET };
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(cm_tcp_port()),
	};
	int s, err;

	if (!dev || !fab_tcp_gid_addr(gid->raw, &to.sin_addr.s_addr)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	from.sin_addr.s_addr = dev->cfg.ipv4;
	s = sim_fd_own(sim_libc.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
				       SOCK_CLOEXEC, 0));
	if (s < 0)
		return -1;
	tune(s, msg_size);
	if (sim_libc.bind(s, (struct sockaddr *)&from, sizeof(from)))
		goto fail;
	/* Made in the background: the agent sends the REQ once it is
	 * (cm.c), so a host that does not answer holds up no one. */
	if (sim_libc.connect(s, (struct sockaddr *)&to, sizeof(to)) &&
	    errno != EINPROGRESS)
		goto fail;
	return s;
fail:
	err = errno;
	sim_fd_close(s);
	errno = err;
	return -1;
}
