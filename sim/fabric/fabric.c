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
 * other. Receiving is in fabric_rx.c; link.h holds what both share.
 */
#include <dirent.h>
#include <limits.h>
#include <signal.h>

#include "link.h"
#include "shared.h"

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

static void gid_hex(const uint8_t gid[16], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[gid[i] >> 4];
		out[2 * i + 1] = hex[gid[i] & 15];
	}
	out[32] = 0;
}

static bool gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return !memcmp(gid, zero, 16);
}

/* gid/<hex>, or gid/<hex>.<slot> for a slot of a shared address. */
static void registry_path(char *buf, size_t len, const uint8_t gid[16],
			  unsigned int slot)
{
	char hex[33];

	gid_hex(gid, hex);
	if (slot)
		snprintf(buf, len, "%s/gid/%s.%u", sim_global.rundir, hex,
			 slot);
	else
		snprintf(buf, len, "%s/gid/%s", sim_global.rundir, hex);
}

/* The slot under which the port files gid. */
static unsigned int port_gid_slot(const struct fab_port *port,
				  const uint8_t gid[16])
{
	uint32_t a;

	return fab_tcp_gid_addr(gid, &a) ? port->tcp_slot : 0;
}

/* The process, other than this one, whose socket the registry entry at
 * path names (*alive: it still runs); 0 if none. */
static pid_t entry_pid(const char *path, bool *alive)
{
	char target[512];
	const char *base;
	unsigned int index;
	ssize_t n;
	int pid;

	*alive = false;
	n = sim_libc.readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (sscanf(base, "fabric-%d-%u.sock", &pid, &index) != 2 ||
	    pid <= 0 || pid == getpid())
		return 0;
	*alive = !(kill(pid, 0) && errno == ESRCH);
	return pid;
}

static pid_t entry_owner(const char *path)
{
	bool alive;
	pid_t pid = entry_pid(path, &alive);

	return alive ? pid : 0;
}

/* Publishes each GID of the adapter: an atomic replace of the symlink, so
 * that a stale entry of a dead process is taken over. A live process's
 * entry is not: a GID is one adapter's (the same --mac given to two
 * processes, or to a process that forks one that uses the device). */
static void registry_publish(struct fab_port *port)
{
	const struct fab_adapter *ad = &port->adapter;
	char path[512], tmp[600];
	unsigned int i;
	pid_t owner;

	snprintf(path, sizeof(path), "%s/gid", sim_global.rundir);
	mkdir(path, 0777);
	for (i = 0; i < *ad->gid_count && i < SIM_GID_TABLE_LEN; i++) {
		if (gid_is_zero(ad->gid[i].raw))
			continue;
		registry_path(path, sizeof(path), ad->gid[i].raw,
			      port_gid_slot(port, ad->gid[i].raw));
		owner = entry_owner(path);
		if (owner) {
			fprintf(stderr, "pvrdma-sim: %s: GID index %u is the "
				"adapter of process %d already; peers cannot "
				"find this one by it\n",
				ad->name ? ad->name : "adapter", i,
				(int)owner);
			continue;
		}
		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
		unlink(tmp);
		if (symlink(port->sock_path, tmp) || rename(tmp, path)) {
			fprintf(stderr, "pvrdma-sim: cannot publish %s: %s\n",
				path, strerror(errno));
			unlink(tmp);
		}
	}
}

static void registry_withdraw(struct fab_port *port)
{
	const struct fab_adapter *ad = &port->adapter;
	char path[512], target[512];
	unsigned int i;
	ssize_t n;

	for (i = 0; i < *ad->gid_count && i < SIM_GID_TABLE_LEN; i++) {
		registry_path(path, sizeof(path), ad->gid[i].raw,
			      port_gid_slot(port, ad->gid[i].raw));
		n = sim_libc.readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, port->sock_path))
			unlink(path);
	}
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

/* GID registry entries of processes that are gone (a process killed by a
 * signal withdraws none): a GID is taken over when it is published again,
 * but most never are. */
static void prune_dead_entries(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct dirent *de;
	bool alive;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/gid", sim_global.rundir);
	d = sim_libc.opendir(dir);
	if (!d)
		return;
	while ((de = sim_libc.readdir(d)))
		if (de->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path) && entry_pid(path, &alive) && !alive)
			unlink(path);
	sim_libc.closedir(d);
}

/*
 * The socket and segment files of processes that are gone: a process
 * killed by a signal leaves its own behind, and nothing else would ever
 * remove them. A pid alive again belongs to a new process, which makes
 * its files anew; that one's are kept.
 */
static void prune_dead_files(void)
{
	struct dirent *de;
	DIR *d = sim_libc.opendir(sim_global.rundir);
	char path[PATH_MAX];
	unsigned int index;
	char suffix[8];
	int pid;

	if (!d)
		return;
	while ((de = sim_libc.readdir(d))) {
		if (sscanf(de->d_name, "fabric-%d-%u.%7s", &pid, &index,
			   suffix) != 3 || pid <= 0 || pid == getpid() ||
		    (strcmp(suffix, "sock") && strcmp(suffix, "mem")))
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", sim_global.rundir,
			     de->d_name) < (int)sizeof(path))
			unlink(path);
	}
	sim_libc.closedir(d);
	prune_dead_entries();
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
	prune_dead_files();
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
	registry_publish(port);
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
		registry_withdraw(port);
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

static bool link_send(struct fab_port *port, struct fab_link *link,
		      const struct fab_hdr *hdr, const struct iovec *iov,
		      int iovcnt, bool in_place);

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
	link_send(port, link, &h, &v, 1, false);
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
	registry_path(reg, sizeof(reg), gid, slot);
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

	if (gid_is_zero(gid))
		return NULL;
	for (i = 0; i < SIM_MAX_ADAPTERS; i++) {
		struct fab_port *p = local_ports[i];

		if (!p)
			continue;
		for (g = 0; g < *p->adapter.gid_count && g < SIM_GID_TABLE_LEN;
		     g++)
			if (!memcmp(p->adapter.gid[g].raw, gid, 16) &&
			    port_gid_slot(p, gid) == slot)
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

/* EPOLLOUT while the out-queue holds bytes; EPOLLIN unless the link is
 * held meanwhile (fab_link_held: level-triggered readiness of a link
 * nobody reads would spin the device thread). */
static void link_want_out(struct fab_link *link, bool want)
{
	struct epoll_event ev = { .data.ptr = link };

	if (link->want_out == want)
		return;
	link->want_out = want;
	ev.events = want ? EPOLLOUT : 0;
	if (!fab_link_held(link))
		ev.events |= EPOLLIN | EPOLLRDHUP;
	epoll_ctl(link->port->epfd, EPOLL_CTL_MOD, link->fd, &ev);
}

/* The pieces of iov[0..n) from byte skip on, into rest; their number. */
static int iov_tail(struct iovec *rest, const struct iovec *iov, int n,
		    size_t skip)
{
	int i, k = 0;

	for (i = 0; i < n && k < FAB_MAX_IOV; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		rest[k].iov_base = (uint8_t *)iov[i].iov_base + skip;
		rest[k].iov_len = l - skip;
		k++;
		skip = 0;
	}
	return k;
}

/* Bytes went on link: a same-host target's traps are told to read it. */
static void link_sent(struct fab_link *link, ssize_t n)
{
	if (n > 0 && link->kind == LINK_SOCK && !link->tcp)
		shared_frame_sent(link);
}

/* Writes the rest of o, as far as the socket takes it: bytes written, or
 * -errno. */
static ssize_t out_write(struct fab_link *link, struct fab_out *o)
{
	struct iovec rest[FAB_MAX_IOV];
	struct msghdr msg = { .msg_iov = rest };
	ssize_t n;

	if (!o->niov) {
		n = sim_libc.sendto(link->fd, o->data + o->off, o->len - o->off,
			 MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
	} else {
		msg.msg_iovlen = iov_tail(rest, o->iov, o->niov, o->off);
		n = sim_libc.sendmsg(link->fd, &msg,
				     MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	if (n < 0)
		return -errno;
	link_sent(link, n);
	return n;
}

static void out_pop(struct fab_link *link)
{
	struct fab_out *o = link->out_head;

	link->out_head = o->next;
	if (!link->out_head)
		link->out_tail = NULL;
	free(o);
}

/* A copy of what the in-place entry o has left to send: the rest of its
 * header, and its payload as the memory holds it now, zeros where the
 * memory is gone (as a DMA of memory taken away reads garbage). NULL
 * without memory for it. */
static struct fab_out *out_copy(const struct fab_out *o)
{
	size_t left = o->len - o->off, skip = o->off, done = 0;
	struct fab_out *c = malloc(sizeof(*c) + left);
	struct iovec piece;
	int i;

	if (!c)
		return NULL;
	c->next = o->next;
	c->len = left;
	c->off = 0;
	c->niov = 0;
	c->iov = NULL;
	for (i = 0; i < o->niov && done < left; i++) {
		if (skip >= o->iov[i].iov_len) {
			skip -= o->iov[i].iov_len;
			continue;
		}
		piece.iov_base = (uint8_t *)o->iov[i].iov_base + skip;
		piece.iov_len = o->iov[i].iov_len - skip;
		skip = 0;
		if (!i)			/* the header: ours */
			memcpy(c->data + done, piece.iov_base, piece.iov_len);
		else if (!sim_app_read(c->data + done, &piece, 1,
				       piece.iov_len))
			memset(c->data + done, 0, piece.iov_len);
		done += piece.iov_len;
	}
	return c;
}

/* Replaces the in-place entry *slot with its copy; false if there is no
 * memory for it. */
static bool out_settle(struct fab_link *link, struct fab_out **slot)
{
	struct fab_out *o = *slot, *c = out_copy(o);

	if (!c)
		return false;
	*slot = c;
	if (link->out_tail == o)
		link->out_tail = c;
	free(o);
	return true;
}

void fabric_copy_in_place(struct fab_port *port)
{
	struct fab_out **slot;
	struct fab_link *link;

	if (!port)
		return;
	for (link = port->links; link; link = link->next) {
		for (slot = &link->out_head; !link->dead && *slot;
		     slot = &(*slot)->next) {
			if (!(*slot)->niov)
				continue;
			if (!out_settle(link, slot)) {
				fab_link_kill(link);	/* no hole */
				break;
			}
		}
	}
}

/* Writes what the out-queue holds, as far as the socket takes it. */
void fab_link_flush(struct fab_link *link)
{
	struct fab_out *o;
	ssize_t n;

	while (!link->dead && (o = link->out_head)) {
		n = out_write(link, o);
		if (n == -EINTR)
			continue;
		/* A payload sent in place that is gone (the application
		 * unmapped registered memory): none of it on the wire, the
		 * packet is dropped; part of it, its copy (zeros for what
		 * is gone) goes on, so the stream and the link's other
		 * packets stay whole. */
		if (n == -EFAULT && o->niov > 0) {
			if (!o->off)
				out_pop(link);
			else if (!out_settle(link, &link->out_head))
				fab_link_kill(link);
			continue;
		}
		if (n < 0) {
			if (n != -EAGAIN)
				fab_link_kill(link);
			break;
		}
		o->off += n;
		link->tx_bytes += n;
		if (o->off < o->len)
			break;
		out_pop(link);
	}
	if (!link->dead)
		link_want_out(link, link->out_head != NULL);
}

static void out_append(struct fab_link *link, struct fab_out *o)
{
	o->next = NULL;
	if (link->out_tail)
		link->out_tail->next = o;
	else
		link->out_head = o;
	link->out_tail = o;
	link_want_out(link, true);
}

/*
 * Copies the unsent tail (skip bytes already written) to the out-queue.
 * The payload is registered memory: it is read with the fault-safe copy.
 * A payload that cannot be read (the application took the memory away
 * behind the sim's back) is not sent (errno EFAULT) when none of the
 * packet left yet, else it breaks the link rather than the process.
 */
static bool link_queue(struct fab_link *link, const struct iovec *iov,
		       int iovcnt, size_t total, size_t skip)
{
	struct fab_out *o = malloc(sizeof(*o) + total - skip);
	struct iovec rest[FAB_MAX_IOV];
	bool started = skip > 0;
	int n;

	if (!o) {
		fab_link_kill(link);	/* a hole in the stream is no option */
		return false;
	}
	o->len = total - skip;
	o->off = 0;
	o->niov = 0;
	o->iov = NULL;
	n = iov_tail(rest, iov, iovcnt, skip);
	if (!sim_app_read(o->data, rest, n, o->len)) {
		free(o);
		if (!started) {
			errno = EFAULT;
			return false;
		}
		fab_link_kill(link);	/* half a packet is on the wire */
		errno = EPIPE;
		return false;
	}
	out_append(link, o);
	return true;
}

/* Queues the packet whose first skip bytes were written without copying
 * its payload: iov[0] is the header (copied), the rest stays in place. */
static bool link_queue_in_place(struct fab_link *link,
				const struct iovec *iov, int iovcnt,
				size_t total, size_t skip)
{
	size_t hlen = iov[0].iov_len;
	size_t hroom = (hlen + 15) & ~(size_t)15;
	struct fab_out *o = malloc(sizeof(*o) + hroom +
				   iovcnt * sizeof(struct iovec));

	if (!o) {
		fab_link_kill(link);	/* a hole in the stream is no option */
		return false;
	}
	memcpy(o->data, iov[0].iov_base, hlen);
	o->iov = (struct iovec *)(o->data + hroom);
	memcpy(o->iov, iov, iovcnt * sizeof(struct iovec));
	o->iov[0].iov_base = o->data;
	o->niov = iovcnt;
	o->len = total;
	o->off = skip;
	out_append(link, o);
	return true;
}

static bool send_local(struct fab_port *from, struct fab_port *to,
		       const struct fab_hdr *hdr, const struct iovec *iov,
		       int iovcnt)
{
	struct fab_pkt *p = malloc(sizeof(*p) + hdr->len);

	if (!p)
		return false;	/* ENOMEM: the packet is lost */
	p->next = NULL;
	p->from = &from->self;
	p->hdr = *hdr;
	if (!sim_app_read(p->data, iov, iovcnt, hdr->len)) {
		free(p);
		errno = EFAULT;
		return false;
	}
	pthread_mutex_lock(&to->inq_lock);
	if (to->inq_tail)
		to->inq_tail->next = p;
	else
		to->inq_head = p;
	to->inq_tail = p;
	atomic_store(&to->inq_nonempty, true);
	pthread_mutex_unlock(&to->inq_lock);
	fabric_wake(to);
	return true;
}

bool fabric_send(struct fab_port *port, struct fab_link *link,
		 const struct fab_hdr *hdr, const struct iovec *iov,
		 int iovcnt)
{
	return link_send(port, link, hdr, iov, iovcnt, false);
}

bool fabric_send_in_place(struct fab_port *port, struct fab_link *link,
			  const struct fab_hdr *hdr, const struct iovec *iov,
			  int iovcnt)
{
	return link_send(port, link, hdr, iov, iovcnt, true);
}

static bool link_send(struct fab_port *port, struct fab_link *link,
		      const struct fab_hdr *hdr, const struct iovec *iov,
		      int iovcnt, bool in_place)
{
	struct iovec v[FAB_MAX_IOV];
	struct msghdr msg = { .msg_iov = v };
	size_t total = sizeof(*hdr);
	ssize_t n;
	int i;

	if (!link || link->dead) {
		errno = EPIPE;		/* never a stale EFAULT */
		return false;
	}
	if (link->kind == LINK_LOCAL)
		return send_local(port, link->port, hdr, iov, iovcnt);
	if (link->kind == LINK_ROCE)
		return roce_send(port, link, hdr, iov, iovcnt);

	if (iovcnt > FAB_MAX_IOV - 1)
		iovcnt = FAB_MAX_IOV - 1;
	v[0].iov_base = (void *)hdr;
	v[0].iov_len = sizeof(*hdr);
	for (i = 0; i < iovcnt; i++) {
		v[i + 1] = iov[i];
		total += iov[i].iov_len;
	}
	msg.msg_iovlen = iovcnt + 1;
	if (link->out_head)	/* keep the stream in order */
		return in_place ?
		       link_queue_in_place(link, v, iovcnt + 1, total, 0) :
		       link_queue(link, v, iovcnt + 1, total, 0);
	do {
		n = sim_libc.sendmsg(link->fd, &msg,
				     MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EFAULT)
		return false;	/* nothing sent: the link is fine */
	if (n < 0) {
		if (errno != EAGAIN) {
			fab_link_kill(link);
			return false;
		}
		n = 0;
	}
	link->tx_bytes += n;
	link_sent(link, n);
	if ((size_t)n == total)
		return true;
	if (in_place)
		return link_queue_in_place(link, v, iovcnt + 1, total, n);
	return link_queue(link, v, iovcnt + 1, total, n);
}
