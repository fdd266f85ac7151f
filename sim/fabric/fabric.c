// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric: in-memory queues between adapters of this process, Unix
 * stream sockets between processes. See fabric.h for the model.
 *
 * Sockets are non-blocking. A send goes straight from the caller's buffers
 * (registered memory) with one sendmsg; only what the socket does not take
 * is copied to the link's out-queue, flushed when the socket drains, or,
 * for a payload that stays in place until then (a request's, a READ
 * response's), only the header and where the payload is. A receive reads
 * the header, then the payload straight into its destination (the
 * device's receive path decides where). Reading a payload that has
 * not fully arrived waits for it, flushing this port's out-queues
 * meanwhile, so two adapters streaming at each other never wait on each
 * other. Sending is in fabric_tx.c, receiving in fabric_rx.c, the GID
 * registry that names ports in registry.c; link.h holds what they share.
 */
#include "link.h"

static struct fab_port *local_ports[SIM_MAX_ADAPTERS];

void fabric_wake(struct fab_port *port)
{
	uint64_t one = 1;

	/* Pairs with fabric_sleep_prepare(): the work published before this
	 * call is seen by the sleeper, or the sleeper is seen here. */
	atomic_thread_fence(memory_order_seq_cst);
	if (port && atomic_load(&port->sleeping))
		(void)!fab_sys_write(port->evfd, &one, sizeof(one));
}

bool fabric_sleep_prepare(struct fab_port *port)
{
	atomic_store(&port->sleeping, 1);
	if (atomic_load(&port->inq_nonempty)) {
		atomic_store(&port->sleeping, 0);
		return false;
	}
	return true;
}

void fabric_sleep_cancel(struct fab_port *port)
{
	atomic_store(&port->sleeping, 0);
}

static int epoll_add(struct fab_port *port, int fd, uint32_t events,
		     void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(port->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void sock_tune(int fd)
{
	int sz = FAB_SOCK_BUF;

	sim_libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

static int port_listen(struct fab_port *port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (snprintf(port->sock_path, sizeof(port->sock_path),
		     "%s/fabric-%d-%u.sock", sim_global.rundir, (int)getpid(),
		     port->adapter.index) >= (int)sizeof(port->sock_path)) {
		fprintf(stderr, "pvrdma-sim: rundir too long for a socket\n");
		port->sock_path[0] = 0;
		return -1;
	}
	fab_prune_dead_files();
	strcpy(sa.sun_path, port->sock_path);
	fd = sim_fd_own(sim_libc.socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				   SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -1;
	unlink(sa.sun_path);
	if (sim_libc.bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd,
			  128)) {
		fprintf(stderr, "pvrdma-sim: cannot listen on %s: %s\n",
			sa.sun_path, strerror(errno));
		fab_sys_close(fd);
		port->sock_path[0] = 0;
		return -1;
	}
	port->listen_fd = fd;
	port->owner = getpid();
	epoll_add(port, fd, EPOLLIN, &port->listen_fd);
	fab_registry_publish(port);
	return 0;
}

/* Other hosts reach the port at its address (tcp.c), at its slot's TCP
 * port (slot.c). */
static void port_listen_tcp(struct fab_port *port)
{
	uint32_t ipv4 = port->adapter.ipv4;

	port->tcp_fd = fab_slot_take(port->adapter.index, ipv4,
				     &port->tcp_slot);
	fab_tcp_name(ipv4, fab_slot_port(port->tcp_slot), port->tcp_name,
		     sizeof(port->tcp_name));
	if (port->tcp_fd >= 0 &&
	    epoll_add(port, port->tcp_fd, EPOLLIN, &port->tcp_fd)) {
		sim_fd_close(port->tcp_fd);
		port->tcp_fd = -1;
	}
}

struct fab_port *fab_local_port(unsigned int index)
{
	return index < SIM_MAX_ADAPTERS ? local_ports[index] : NULL;
}

struct fab_port *fabric_open(const struct fab_adapter *adapter)
{
	struct fab_port *port = calloc(1, sizeof(*port));

	if (!port)
		return NULL;
	port->adapter = *adapter;
	if (!port->adapter.name)
		port->adapter.name = "pvrdma-sim";
	port->listen_fd = -1;
	port->tcp_fd = -1;
	port->self.kind = LINK_LOCAL;
	port->self.port = port;
	port->self.fd = -1;
	pthread_mutex_init(&port->inq_lock, NULL);
	port->epfd = sim_fd_own(epoll_create1(EPOLL_CLOEXEC));
	port->evfd = sim_fd_own(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
	if (port->epfd < 0 || port->evfd < 0)
		goto err;
	if (epoll_add(port, port->evfd, EPOLLIN, &port->evfd))
		goto err;
	/* The TCP slot first: it files the GIDs in the registry. */
	if (fab_tcp_addr(adapter->ipv4))
		port_listen_tcp(port);
	if (sim_global.rundir[0])
		port_listen(port);	/* without it: this process only */
	port->roce_fd = -1;
	if (sim_global.wire == SIM_WIRE_ROCE && fab_tcp_addr(adapter->ipv4) &&
	    roce_open(port) &&
	    epoll_add(port, port->roce_fd, EPOLLIN, &port->roce_fd))
		roce_close(port);
	if (adapter->index < SIM_MAX_ADAPTERS)
		local_ports[adapter->index] = port;
	return port;
err:
	if (port->epfd >= 0)
		fab_sys_close(port->epfd);
	if (port->evfd >= 0)
		fab_sys_close(port->evfd);
	free(port);
	return NULL;
}

void fabric_close(struct fab_port *port)
{
	if (!port)
		return;
	if (port->adapter.index < SIM_MAX_ADAPTERS &&
	    local_ports[port->adapter.index] == port)
		local_ports[port->adapter.index] = NULL;
	/* A forked child's exit must not take its parent's socket and
	 * registry entries off the fabric. */
	if (port->sock_path[0] && port->owner == getpid()) {
		fab_registry_withdraw(port);
		unlink(port->sock_path);
	}
}

void fabric_forget(struct fab_port *port)
{
	struct fab_link *link;

	if (!port)
		return;
	if (port->adapter.index < SIM_MAX_ADAPTERS &&
	    local_ports[port->adapter.index] == port)
		local_ports[port->adapter.index] = NULL;
	/* Closed without a word to the epoll set or the peers: the parent
	 * uses them, and an EPOLL_CTL_DEL here would change its set. */
	for (link = port->links; link; link = link->next)
		if (!link->dead && link->fd >= 0) {
			link->dead = true;
			fab_sys_close(link->fd);
			link->fd = -1;
		}
	if (port->listen_fd >= 0)
		fab_sys_close(port->listen_fd);
	if (port->tcp_fd >= 0)
		fab_sys_close(port->tcp_fd);
	roce_forget(port);
	fab_sys_close(port->evfd);
	fab_sys_close(port->epfd);
	port->listen_fd = port->tcp_fd = port->evfd = port->epfd = -1;
}

void fab_link_kill(struct fab_link *link)
{
	struct fab_out *o, *n;

	if (link->dead)
		return;
	link->dead = true;
	if (link->tcp && !link->verified)
		link->port->tcp_unverified--;
	epoll_ctl(link->port->epfd, EPOLL_CTL_DEL, link->fd, NULL);
	fab_sys_close(link->fd);
	link->fd = -1;
	for (o = link->out_head; o; o = n) {
		n = o->next;
		free(o);
	}
	link->out_head = link->out_tail = NULL;
}

struct fab_link *fab_link_new(struct fab_port *port, int fd,
				  const char *path, bool tcp)
{
	struct fab_link *link = calloc(1, sizeof(*link));

	if (!link) {
		fab_sys_close(fd);
		return NULL;
	}
	link->kind = LINK_SOCK;
	link->port = port;
	link->fd = fd;
	link->tcp = tcp;
	link->outgoing = path != NULL;
	/* A Unix socket is this host's: its peers share the run directory. */
	link->verified = path || !tcp;
	if (path)
		snprintf(link->path, sizeof(link->path), "%s", path);
	sock_tune(fd);
	if (epoll_add(port, fd, EPOLLIN | EPOLLRDHUP, link)) {
		fab_sys_close(fd);
		free(link);
		return NULL;
	}
	if (!link->verified)
		port->tcp_unverified++;
	link->next = port->links;
	port->links = link;
	return link;
}

/* Tells the accepting port who we are: one Unix link per pair of ports
 * carries both directions (half the sockets for the receive paths to
 * read). Between hosts each side sends its requests over the connection it
 * made (link_by_path), its responses over the one the request came by. */
static void link_hello(struct fab_port *port, struct fab_link *link)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_HELLO,
			     .opcode = FAB_VERSION };
	struct iovec v = { .iov_base = link->tcp ? port->tcp_name :
						   port->sock_path };

	v.iov_len = strlen(v.iov_base) + 1;
	h.len = (uint32_t)v.iov_len;
	fab_link_send(port, link, &h, &v, 1, false);
}

bool fabric_link_alive(const struct fab_link *link)
{
	return link && !link->dead;
}

const char *fabric_link_peer_path(const struct fab_link *link)
{
	if (!link || link->dead)
		return NULL;
	return link->kind == LINK_LOCAL ? link->port->sock_path : link->path;
}

void **fabric_link_shared_slot(struct fab_link *link)
{
	return link && !link->dead ? &link->shared : NULL;
}

/* The live link to the port named path. A TCP link is ours only if we
 * connected it: any process on the peer's host may connect from its
 * address and name it in a HELLO, and no request of ours goes there. */
static struct fab_link *link_by_path(struct fab_port *port,
				     const char *path)
{
	struct fab_link *link;

	for (link = port->links; link; link = link->next)
		if (!link->dead && link->verified &&
		    (!link->tcp || link->outgoing) &&
		    !strcmp(link->path, path))
			return link;
	return NULL;
}

/* A port of another process on this host, through the GID registry. */
static struct fab_link *resolve_unix(struct fab_port *port,
				     const uint8_t gid[16], unsigned int slot)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char reg[512];
	struct fab_link *link;
	ssize_t n;
	int fd;

	if (!sim_global.rundir[0])
		return NULL;
	fab_registry_path(reg, sizeof(reg), gid, slot);
	n = sim_libc.readlink(reg, sa.sun_path, sizeof(sa.sun_path) - 1);
	if (n <= 0)
		return NULL;
	sa.sun_path[n] = 0;
	link = link_by_path(port, sa.sun_path);
	if (link)
		return link;

	fd = sim_fd_own(sim_libc.socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
					SOCK_CLOEXEC, 0));
	if (fd < 0)
		return NULL;
	/* A stale entry (its process is gone) refuses: unreachable. */
	if (sim_libc.connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fab_sys_close(fd);
		return NULL;
	}
	link = fab_link_new(port, fd, sa.sun_path, false);
	if (link)
		link_hello(port, link);
	return link;
}

/* A port on another host, at the address its GID carries (tcp.c). The
 * connection completes later: what is sent meanwhile waits in the link. */
static struct fab_link *resolve_tcp(struct fab_port *port,
				    const uint8_t gid[16], unsigned int slot)
{
	uint16_t tcp_port = fab_slot_port(slot);
	char name[FAB_TCP_NAME_MAX];
	struct fab_link *link;
	uint32_t addr;
	int fd;

	if (!fab_tcp_addr(port->adapter.ipv4) || !fab_tcp_gid_addr(gid, &addr))
		return NULL;
	fab_tcp_name(addr, tcp_port, name, sizeof(name));
	link = link_by_path(port, name);
	if (link)
		return link;
	fd = fab_tcp_connect(port->adapter.ipv4, addr, tcp_port);
	if (fd < 0)
		return NULL;
	link = fab_link_new(port, fd, name, true);
	if (link)
		link_hello(port, link);
	return link;
}

struct fab_link *fabric_resolve(struct fab_port *port, const uint8_t gid[16],
				uint32_t qpn)
{
	unsigned int i, g, slot = fab_gid_slot(gid, qpn);
	struct fab_link *link;

	if (fab_gid_is_zero(gid))
		return NULL;
	for (i = 0; i < SIM_MAX_ADAPTERS; i++) {
		struct fab_port *p = local_ports[i];

		if (!p)
			continue;
		for (g = 0; g < *p->adapter.gid_count && g < SIM_GID_TABLE_LEN;
		     g++)
			if (!memcmp(p->adapter.gid[g].raw, gid, 16) &&
			    fab_port_gid_slot(p, gid) == slot)
				return &p->self;
	}
	link = resolve_unix(port, gid, slot);
	/* another host: over RoCE v2 when the port speaks it; UDP 4791 of
	 * an address is its first slot's */
	if (!link && !slot)
		link = roce_resolve(port, gid);
	if (!link)
		link = resolve_tcp(port, gid, slot);
	if (link)
		link->exposed = true;
	return link;
}
