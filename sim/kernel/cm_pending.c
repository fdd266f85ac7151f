// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the connections a CM agent accepted that have not
 * sent their REQ yet (cm_lock held throughout). Each has CM_PENDING_MS to
 * send it, then it is closed; from another host (TCP) at most
 * CM_TCP_PENDING_MAX wait at once, CM_TCP_PENDING_PER_PEER from any one
 * address, and a connection over either limit is closed as it is
 * accepted. So a flood of connections, or connections that never speak
 * (half-open ones included), cost a bounded number of descriptors and
 * bytes, and one peer's flood leaves room for the others.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cm_msg.h"
#include "fds.h"

/* The peer's IPv4 address, or 0 for a connection of this host (Unix). */
static uint32_t peer_ipv4(int sock)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (sim_libc.getpeername(sock, (struct sockaddr *)&ss, &len) ||
	    ss.ss_family != AF_INET)
		return 0;
	return ((struct sockaddr_in *)&ss)->sin_addr.s_addr;
}

/* Whether one more connection from ipv4 is within the limits. */
static bool pending_room(uint32_t ipv4)
{
	const struct cm_pending *p;
	unsigned int all = 0, same = 0;

	if (!ipv4)
		return true;
	for (p = cm_agent.pending; p; p = p->next) {
		if (!p->ipv4)
			continue;
		all++;
		same += p->ipv4 == ipv4;
	}
	return all < CM_TCP_PENDING_MAX && same < CM_TCP_PENDING_PER_PEER;
}

void cm_pending_accept(int listen_fd)
{
	struct cm_pending *pend;
	uint32_t ipv4;
	int s;

	for (;;) {
		s = sim_fd_own(accept4(listen_fd, NULL, NULL,
				       SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (s < 0)
			return;
		ipv4 = peer_ipv4(s);
		pend = pending_room(ipv4) ? calloc(1, sizeof(*pend)) : NULL;
		if (!pend) {
			sim_fd_close(s);
			continue;
		}
		pend->sock = s;
		pend->ipv4 = ipv4;
		pend->deadline_ns = cm_now_ns() + CM_PENDING_MS * 1000000ull;
		pend->next = cm_agent.pending;
		cm_agent.pending = pend;
	}
}

void cm_pending_drop(struct cm_pending **p, bool close_sock)
{
	struct cm_pending *pend = *p;

	*p = pend->next;
	if (close_sock)
		sim_fd_close(pend->sock);
	free(pend);
}

uint64_t cm_pending_expire(uint64_t now)
{
	struct cm_pending **p = &cm_agent.pending, *pend;
	uint64_t next = 0;

	while ((pend = *p)) {
		struct pollfd ready = { .fd = pend->sock, .events = POLLIN };

		/* A REQ that came while this process was stopped (a
		 * debugger, SIGSTOP) waits to be read: not a silent peer. */
		if (pend->deadline_ns <= now && poll(&ready, 1, 0) != 1) {
			cm_pending_drop(p, true);
			continue;
		}
		if (!next || pend->deadline_ns < next)
			next = pend->deadline_ns;
		p = &pend->next;
	}
	return next;
}
