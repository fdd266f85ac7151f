// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric between hosts: TCP links.
 *
 * A port's IPv4 address (GID index 1, ::ffff:A.B.C.D) says where the port
 * lives. Adapters of this process are reached in memory, adapters of other
 * processes sharing the run directory through its GID registry and Unix
 * sockets (fabric.c); a GID found in neither, whose address is outside
 * 127/8, belongs to an adapter on another host, reached over TCP at that
 * address and the well-known port (--tcp-port, default 4791: the RoCE v2
 * port number, here on TCP). Each adapter whose address is outside 127/8
 * listens at that address only (never on a wildcard address), so the
 * address must be one of the host's, and so the GID alone names where to
 * connect: no shared run directory, no registry between hosts.
 *
 * A TCP link carries exactly what a Unix socket link carries: the same
 * frames (struct fab_hdr and its payload), the same non-blocking sends with
 * an out-queue, the same reads straight into registered memory after the
 * receiver's rkey checks. Flow control is TCP's: a requester whose link holds
 * unsent bytes waits for it to drain (fabric_link_busy), so a peer
 * that stops reading stalls its requesters, whose ACK timers then decide
 * (retries, RETRY_EXC_ERR), and the sim buffers no more than the socket
 * buffers and the packet that did not fit. Responses are held the same
 * way: while a connection the peer made holds a response the socket did
 * not take, its further requests are left unread (fab_link_held), so a
 * peer that sends READs and stops reading gets one response queued, not
 * one per READ it has outstanding.
 *
 * The connecting side opens with a HELLO naming itself ("tcp:A.B.C.D:PORT",
 * the frame version in its opcode); the accepting side takes nothing else
 * first, and takes the name only if A.B.C.D is the address the connection
 * comes from, so a connection never speaks for another host. Even so, any
 * process of that host could connect: a port sends its requests only over
 * connections it made itself (to the peer's listening address), and only
 * responses over the connection a request came by. Two ports that both
 * send requests thus use two connections, one each way. Every header
 * read from any link is checked (magic, type, lengths, QPN and PSN ranges,
 * fab_hdr_check): a bad one drops the connection with one log line, before
 * any of its payload is read. Nothing from the network reaches memory but
 * through the receiving adapter, which writes only what a valid rkey or
 * a posted receive grants.
 *
 * A broken or refused connection is a dead link: its packets are lost, the
 * requester's ACK timer resends, and each resend after a timeout resolves
 * the GID again, which connects anew. The adapters' PSN logic makes resends
 * over the new connection safe (a duplicate request is acknowledged again,
 * or answered from the responder's saved results, never executed twice).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "link.h"

/* The largest UD payload: the largest MTU. */
#define FAB_MAX_UD_PAYLOAD	4096u
#define FAB_PSN_MASK		0xffffffu
#define FAB_QPN_MASK		0xffffffu

bool fab_tcp_addr(uint32_t ipv4)
{
	uint32_t a = ntohl(ipv4);

	return a >> 24 != 0 && a >> 24 != 127 && a < 0xe0000000u;
}

bool fab_tcp_gid_addr(const uint8_t gid[16], uint32_t *ipv4)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	uint32_t a;

	if (memcmp(gid, mapped, sizeof(mapped)))
		return false;
	memcpy(&a, gid + 12, 4);
	if (!fab_tcp_addr(a))
		return false;
	*ipv4 = a;
	return true;
}

void fab_tcp_name(uint32_t ipv4, uint16_t port, char *buf, size_t len)
{
	char a[INET_ADDRSTRLEN];
	struct in_addr in = { .s_addr = ipv4 };

	inet_ntop(AF_INET, &in, a, sizeof(a));
	snprintf(buf, len, "tcp:%s:%u", a, port);
}

static struct sockaddr_in sin_of(uint32_t ipv4, uint16_t port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = ipv4,
	};

	return sa;
}

/* A listening socket at ipv4:port; -errno if it cannot be had. */
static int listen_at(uint32_t ipv4, uint16_t port)
{
	struct sockaddr_in sa = sin_of(ipv4, port);
	int fd, one = 1, err;

	fd = sim_fd_own(sim_libc.socket(AF_INET, SOCK_STREAM |
					SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -errno;
	/* A restarted process takes its address back at once. */
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sim_libc.bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd,
			  128)) {
		err = errno;
		sim_fd_close(fd);
		return -err;
	}
	return fd;
}

int fab_tcp_listen_slot(uint32_t ipv4, uint16_t port, unsigned int slots,
			unsigned int *slot)
{
	char name[FAB_TCP_NAME_MAX];
	unsigned int k;
	int fd = -EADDRINUSE;

	for (k = 0; k < slots && fd == -EADDRINUSE; k++) {
		if (port + 2u * k > 65535)
			break;
		fd = listen_at(ipv4, (uint16_t)(port + 2 * k));
		*slot = k;
	}
	if (fd >= 0)
		return fd;
	fab_tcp_name(ipv4, port, name, sizeof(name));
	fprintf(stderr,
		"pvrdma-sim: cannot listen at %s%s: %s; adapters on other hosts cannot reach this one\n",
		name + 4, fd == -EADDRINUSE && slots > 1 ?
		" nor at the next ports of its address" : "", strerror(-fd));
	return -1;
}

int fab_tcp_connect(uint32_t src, uint32_t dst, uint16_t port)
{
	struct sockaddr_in from = sin_of(src, 0), to = sin_of(dst, port);
	int fd;

	fd = sim_fd_own(sim_libc.socket(AF_INET, SOCK_STREAM |
					SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -1;
	/* From the port's own address: the peer checks the HELLO by it. */
	if (sim_libc.bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
	    (sim_libc.connect(fd, (struct sockaddr *)&to, sizeof(to)) &&
	     errno != EINPROGRESS)) {
		sim_fd_close(fd);
		return -1;
	}
	fab_tcp_tune(fd);
	return fd;
}

void fab_tcp_keepalive(int fd)
{
	int one = 1, idle = FAB_TCP_KEEPIDLE_S, intvl = FAB_TCP_KEEPINTVL_S;
	int cnt = FAB_TCP_KEEPCNT, user = FAB_TCP_USER_TIMEOUT_MS;

	sim_libc.setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	sim_libc.setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	sim_libc.setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
			    sizeof(intvl));
	sim_libc.setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	sim_libc.setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user,
			    sizeof(user));
}

void fab_tcp_tune(int fd)
{
	int one = 1;

	/* Frames are whole messages: an ACK or a ping-pong message must
	 * not wait for more bytes to fill a segment. */
	sim_libc.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fab_tcp_keepalive(fd);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t fab_tcp_hello_due(void)
{
	return now_ns() + FAB_TCP_HELLO_MS * 1000000ull;
}

/* Bytes wait unread: a link whose HELLO came while this process was
 * stopped (a debugger, SIGSTOP) is not a silent one. */
static bool link_readable(const struct fab_link *link)
{
	struct pollfd p = { .fd = link->fd, .events = POLLIN };
	struct timespec zero = { 0, 0 };

	return sim_libc.ppoll(&p, 1, &zero, NULL) == 1;
}

void fab_tcp_expire_hello(struct fab_port *port)
{
	uint64_t now = now_ns();
	struct fab_link *link;

	for (link = port->links; link; link = link->next)
		if (link->tcp && !link->verified && !link->dead &&
		    link->hello_by_ns <= now && !link_readable(link))
			fab_link_kill(link);
}

bool fab_tcp_admit(struct fab_port *port, int fd, uint32_t *ipv4)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	const struct fab_link *link;
	unsigned int same = 0;

	*ipv4 = 0;
	if (!sim_libc.getpeername(fd, (struct sockaddr *)&sa, &len) &&
	    sa.sin_family == AF_INET)
		*ipv4 = sa.sin_addr.s_addr;
	fab_tcp_expire_hello(port);
	if (port->tcp_unverified >= FAB_TCP_UNVERIFIED)
		return false;
	for (link = port->links; link; link = link->next)
		same += link->tcp && !link->verified && !link->dead &&
			link->peer_ipv4 == *ipv4;
	return same < FAB_TCP_UNVERIFIED_PEER;
}

void fab_tcp_hello_taken(struct fab_link *link)
{
	struct fab_link *l;
	unsigned int same = 0;

	/* Newest first: the oldest links from the address go. */
	for (l = link->port->links; l; l = l->next)
		if (l->tcp && !l->outgoing && l->verified && !l->dead &&
		    l->peer_ipv4 == link->peer_ipv4 &&
		    ++same > FAB_TCP_LINKS_PER_PEER)
			fab_link_kill(l);
}

bool fab_tcp_hello_matches(int fd, const char *name)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char a[INET_ADDRSTRLEN], want[FAB_TCP_NAME_MAX];
	const char *colon;
	size_t n;

	if (sim_libc.getpeername(fd, (struct sockaddr *)&sa, &len) ||
	    sa.sin_family != AF_INET)
		return false;
	inet_ntop(AF_INET, &sa.sin_addr, a, sizeof(a));
	snprintf(want, sizeof(want), "tcp:%s:", a);
	n = strlen(want);
	if (strncmp(name, want, n))
		return false;
	/* then a port number and nothing else */
	colon = name + n;
	if (!*colon || strlen(colon) > 5)
		return false;
	for (; *colon; colon++)
		if (*colon < '0' || *colon > '9')
			return false;
	return true;
}

void fab_tcp_peer_text(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	if (sim_libc.getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		snprintf(buf, len, "a peer");
		return;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s->sin_port));
	} else {
		snprintf(buf, len, "a local process");
	}
}

const char *fab_hdr_check_link(const struct fab_hdr *h, bool tcp)
{
	const char *why = fab_hdr_check(h);

	if (!why && tcp && h->type == FAB_NOTIFY)
		why = "NOTIFY from another host";
	return why;
}

const char *fab_hdr_check(const struct fab_hdr *h)
{
	if (h->magic != FAB_MAGIC)
		return "bad magic";
	switch (h->type) {
	case FAB_HELLO:
		if (h->opcode != FAB_VERSION)
			return "unknown frame version";
		if (!h->len ||
		    h->len > sizeof(((struct sockaddr_un *)0)->sun_path))
			return "bad HELLO length";
		return NULL;
	case FAB_UD_SEND:
		if (h->len > FAB_MAX_UD_PAYLOAD)
			return "UD payload longer than the MTU";
		if (h->src_qpn > FAB_QPN_MASK)
			return "QPN out of range";
		return NULL;
	case FAB_REQ:
		if (h->len > FAB_MAX_MSG_SIZE || h->read_len > FAB_MAX_MSG_SIZE)
			return "message longer than the adapter's maximum";
		break;
	case FAB_READ_RESP:
		if (h->len > FAB_MAX_MSG_SIZE)
			return "message longer than the adapter's maximum";
		break;
	case FAB_NAK:
		if (h->opcode < FAB_NAK_RNR || h->opcode > FAB_NAK_REM_OP)
			return "unknown NAK code";
		/* fall through */
	case FAB_ACK:
		if (h->type == FAB_ACK && h->opcode > FAB_ACK_PARTIAL)
			return "unknown ACK kind";
		/* fall through */
	case FAB_ATOMIC_RESP:
	case FAB_NOTIFY:
		if (h->len)
			return "payload on a response that has none";
		break;
	default:
		return "unknown frame type";
	}
	/* The destination QPN keeps the bits above 24 the application gave
	 * (the adapter takes the low 24, as the wire's BTH): a QP of ours
	 * sends only 24-bit source QPNs. */
	if (h->src_qpn > FAB_QPN_MASK)
		return "QPN out of range";
	if (h->psn > FAB_PSN_MASK)
		return "PSN out of range";
	return NULL;
}
