// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric: in-memory queues between adapters of this process, Unix
 * stream sockets between processes. See fabric.h for the model.
 *
 * Sockets are non-blocking. A send goes straight from the caller's buffers
 * (registered memory) with one sendmsg; only what the socket does not take
 * is copied to the link's out-queue, flushed when the socket drains. A
 * receive reads the header, then the payload straight into its destination
 * (the device's receive path decides where). Reading a payload that has
 * not fully arrived waits for it, flushing this port's out-queues
 * meanwhile, so two adapters streaming at each other never wait on each
 * other.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "fds.h"
#include "libc.h"
#include "options.h"
#include "sys.h"
#include "tcp.h"

/* A payload stalled this long inside a packet means the peer is gone. */
#define FAB_STALL_MS		5000
/* Packets taken from one socket per poll round, for fairness. */
#define FAB_BURST		64
#define FAB_SOCK_BUF		(4 << 20)
/* A TCP frame up to this long is delivered only once all of it arrived
 * (tcp.c): a network that stalls inside it never stalls the adapter. */
#define FAB_TCP_WHOLE		(1u << 20)
/* Accepted TCP connections that have not said HELLO yet, per port: more
 * are closed at once (a flood must not take the sim's descriptors). */
#define FAB_TCP_UNVERIFIED	64
/* Readiness events taken per wait. */
#define FAB_EVENTS		32
/* Pieces of one packet: header, payload pieces, read-ahead. */
#define FAB_MAX_IOV		((int)SIM_MAX_IOV + 2)

enum fab_link_kind { LINK_LOCAL, LINK_SOCK };

struct fab_out {
	struct fab_out *next;
	size_t len, off;
	uint8_t data[];
};

struct fab_link {
	enum fab_link_kind kind;
	struct fab_port *port;		/* LOCAL: target; SOCK: owner */
	int fd;
	bool dead;
	bool want_out;			/* EPOLLOUT armed */
	bool tcp;			/* to another host (tcp.c) */
	bool outgoing;			/* we connected it */
	bool verified;			/* frames may reach the engine: we
					 * connected, or the peer's HELLO
					 * named the address it came from */
	bool exposed;			/* the engine may hold a pointer */
	uint32_t lowat;			/* SO_RCVLOWAT raised for a frame */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct fab_out *out_head, *out_tail;
	struct fab_link *next;		/* port's list */

	/* The next packet's header, read ahead with the end of a payload
	 * (one readv per packet instead of two) or arrived in part. */
	struct fab_hdr ahead;
	size_t ahead_len;

	void *shared;			/* shared.c: the peer's segment */
};

struct fab_pkt {
	struct fab_pkt *next;
	struct fab_link *from;
	struct fab_hdr hdr;
	uint8_t data[];
};

struct fab_port {
	struct fab_adapter adapter;
	int epfd;
	int evfd;
	int listen_fd;
	int tcp_fd;			/* listening at ipv4:tcp_port */
	unsigned int tcp_unverified;	/* accepted links before HELLO */
	char tcp_name[FAB_TCP_NAME_MAX];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pid_t owner;			/* the process that made sock_path */
	atomic_int sleeping;
	struct fab_link self;		/* how others in this process reach us */
	struct fab_link *links;		/* socket links */

	pthread_mutex_t inq_lock;
	struct fab_pkt *inq_head, *inq_tail;
	atomic_bool inq_nonempty;

	/* What the last fabric_wait() saw, for fabric_deliver(). */
	struct epoll_event ev[FAB_EVENTS];
	int nev;
};

static struct fab_port *local_ports[SIM_MAX_ADAPTERS];

/* The sim interposes libc in the application; the device talks to the
 * kernel directly so that none of its calls is ever taken for the app's.
 * Its fds are its own (fds.c): out of the application's way. */
static int sys_close(int fd)
{
	return sim_fd_close(fd);
}

static ssize_t sys_read(int fd, void *buf, size_t len)
{
	ssize_t ret = sim_sys(SYS_read, fd, buf, len);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static ssize_t sys_write(int fd, const void *buf, size_t len)
{
	ssize_t ret = sim_sys(SYS_write, fd, buf, len);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

void fabric_wake(struct fab_port *port)
{
	uint64_t one = 1;

	/* Pairs with fabric_sleep_prepare(): the work published before this
	 * call is seen by the sleeper, or the sleeper is seen here. */
	atomic_thread_fence(memory_order_seq_cst);
	if (port && atomic_load(&port->sleeping))
		(void)!sys_write(port->evfd, &one, sizeof(one));
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

static void registry_path(char *buf, size_t len, const uint8_t gid[16])
{
	char hex[33];

	gid_hex(gid, hex);
	snprintf(buf, len, "%s/gid/%s", sim_global.rundir, hex);
}

/* Publishes each GID of the adapter: an atomic replace of the symlink, so
 * that a stale entry of a dead process is taken over. */
static void registry_publish(struct fab_port *port)
{
	const struct fab_adapter *ad = &port->adapter;
	char path[512], tmp[600];
	unsigned int i;

	snprintf(path, sizeof(path), "%s/gid", sim_global.rundir);
	mkdir(path, 0777);
	for (i = 0; i < *ad->gid_count && i < SIM_GID_TABLE_LEN; i++) {
		if (gid_is_zero(ad->gid[i].raw))
			continue;
		registry_path(path, sizeof(path), ad->gid[i].raw);
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
		registry_path(path, sizeof(path), ad->gid[i].raw);
		n = readlink(path, target, sizeof(target) - 1);
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

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
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
	strcpy(sa.sun_path, port->sock_path);
	fd = sim_fd_own(sim_libc.socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				   SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -1;
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		fprintf(stderr, "pvrdma-sim: cannot listen on %s: %s\n",
			sa.sun_path, strerror(errno));
		sys_close(fd);
		port->sock_path[0] = 0;
		return -1;
	}
	port->listen_fd = fd;
	port->owner = getpid();
	epoll_add(port, fd, EPOLLIN, &port->listen_fd);
	registry_publish(port);
	return 0;
}

/* The TCP port of every adapter (a tool that loaded no configuration
 * gets the default). */
static uint16_t fab_tcp_port(void)
{
	return sim_global.tcp_port ? sim_global.tcp_port :
				     (uint16_t)SIM_TCP_PORT_DEFAULT;
}

/* Other hosts reach the port at its address (tcp.c). */
static void port_listen_tcp(struct fab_port *port)
{
	uint32_t ipv4 = port->adapter.ipv4;
	uint16_t tcp_port = fab_tcp_port();

	fab_tcp_name(ipv4, tcp_port, port->tcp_name, sizeof(port->tcp_name));
	port->tcp_fd = fab_tcp_listen(ipv4, tcp_port);
	if (port->tcp_fd >= 0 &&
	    epoll_add(port, port->tcp_fd, EPOLLIN, &port->tcp_fd)) {
		sim_fd_close(port->tcp_fd);
		port->tcp_fd = -1;
	}
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
	if (sim_global.rundir[0])
		port_listen(port);	/* without it: this process only */
	if (fab_tcp_addr(adapter->ipv4))
		port_listen_tcp(port);
	if (adapter->index < SIM_MAX_ADAPTERS)
		local_ports[adapter->index] = port;
	return port;
err:
	if (port->epfd >= 0)
		sys_close(port->epfd);
	if (port->evfd >= 0)
		sys_close(port->evfd);
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

static void link_kill(struct fab_link *link)
{
	struct fab_out *o, *n;

	if (link->dead)
		return;
	link->dead = true;
	if (link->tcp && !link->verified)
		link->port->tcp_unverified--;
	epoll_ctl(link->port->epfd, EPOLL_CTL_DEL, link->fd, NULL);
	sys_close(link->fd);
	link->fd = -1;
	for (o = link->out_head; o; o = n) {
		n = o->next;
		free(o);
	}
	link->out_head = link->out_tail = NULL;
}

static struct fab_link *link_new(struct fab_port *port, int fd,
				 const char *path, bool tcp)
{
	struct fab_link *link = calloc(1, sizeof(*link));

	if (!link) {
		sys_close(fd);
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
		sys_close(fd);
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
		      int iovcnt);

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
	link_send(port, link, &h, &v, 1);
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
				     const uint8_t gid[16])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char reg[512];
	struct fab_link *link;
	ssize_t n;
	int fd;

	if (!sim_global.rundir[0])
		return NULL;
	registry_path(reg, sizeof(reg), gid);
	n = readlink(reg, sa.sun_path, sizeof(sa.sun_path) - 1);
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
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		sys_close(fd);
		return NULL;
	}
	link = link_new(port, fd, sa.sun_path, false);
	if (link)
		link_hello(port, link);
	return link;
}

/* A port on another host, at the address its GID carries (tcp.c). The
 * connection completes later: what is sent meanwhile waits in the link. */
static struct fab_link *resolve_tcp(struct fab_port *port,
				    const uint8_t gid[16])
{
	uint16_t tcp_port = fab_tcp_port();
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
	link = link_new(port, fd, name, true);
	if (link)
		link_hello(port, link);
	return link;
}

struct fab_link *fabric_resolve(struct fab_port *port, const uint8_t gid[16])
{
	struct fab_link *link;
	unsigned int i, g;

	if (gid_is_zero(gid))
		return NULL;
	for (i = 0; i < SIM_MAX_ADAPTERS; i++) {
		struct fab_port *p = local_ports[i];

		if (!p)
			continue;
		for (g = 0; g < *p->adapter.gid_count && g < SIM_GID_TABLE_LEN;
		     g++)
			if (!memcmp(p->adapter.gid[g].raw, gid, 16))
				return &p->self;
	}
	link = resolve_unix(port, gid);
	if (!link)
		link = resolve_tcp(port, gid);
	if (link)
		link->exposed = true;
	return link;
}

static void link_want_out(struct fab_link *link, bool want)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0),
		.data.ptr = link,
	};

	if (link->want_out == want)
		return;
	link->want_out = want;
	epoll_ctl(link->port->epfd, EPOLL_CTL_MOD, link->fd, &ev);
}

/* Writes what the out-queue holds, as far as the socket takes it. */
static void link_flush(struct fab_link *link)
{
	struct fab_out *o;
	ssize_t n;

	while (!link->dead && (o = link->out_head)) {
		n = send(link->fd, o->data + o->off, o->len - o->off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				link_kill(link);
			break;
		}
		o->off += n;
		if (o->off < o->len)
			break;
		link->out_head = o->next;
		if (!link->out_head)
			link->out_tail = NULL;
		free(o);
	}
	if (!link->dead)
		link_want_out(link, link->out_head != NULL);
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
	int i, n = 0;

	if (!o) {
		link_kill(link);	/* a hole in the stream is no option */
		return false;
	}
	o->next = NULL;
	o->len = total - skip;
	o->off = 0;
	for (i = 0; i < iovcnt && n < FAB_MAX_IOV; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		rest[n].iov_base = (uint8_t *)iov[i].iov_base + skip;
		rest[n].iov_len = l - skip;
		n++;
		skip = 0;
	}
	if (!sim_app_read(o->data, rest, n, o->len)) {
		free(o);
		if (!started) {
			errno = EFAULT;
			return false;
		}
		link_kill(link);	/* half a packet is on the wire */
		errno = EPIPE;
		return false;
	}
	if (link->out_tail)
		link->out_tail->next = o;
	else
		link->out_head = o;
	link->out_tail = o;
	link_want_out(link, true);
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
	return link_send(port, link, hdr, iov, iovcnt);
}

static bool link_send(struct fab_port *port, struct fab_link *link,
		      const struct fab_hdr *hdr, const struct iovec *iov,
		      int iovcnt)
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
		return link_queue(link, v, iovcnt + 1, total, 0);
	do {
		n = sendmsg(link->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EFAULT)
		return false;	/* nothing sent: the link is fine */
	if (n < 0) {
		if (errno != EAGAIN) {
			link_kill(link);
			return false;
		}
		n = 0;
	}
	if ((size_t)n == total)
		return true;
	return link_queue(link, v, iovcnt + 1, total, n);
}

/* Waits until fd is readable, flushing every out-queue of the port
 * meanwhile. False when the peer stalls for FAB_STALL_MS. */
static bool wait_readable(struct fab_port *port, struct fab_link *link)
{
	struct pollfd pfd[64];
	struct fab_link *ls[64];
	int waited = 0, n, i;
	struct fab_link *l;

	while (waited < FAB_STALL_MS) {
		n = 0;
		pfd[n].fd = link->fd;
		pfd[n].events = POLLIN;
		ls[n++] = link;
		for (l = port->links; l && n < 64; l = l->next) {
			if (l->dead || !l->out_head)
				continue;
			pfd[n].fd = l->fd;
			pfd[n].events = POLLOUT;
			ls[n++] = l;
		}
		if (poll(pfd, n, 100) < 0 && errno != EINTR)
			return false;
		for (i = 1; i < n; i++)
			if (pfd[i].revents)
				link_flush(ls[i]);
		if (pfd[0].revents)
			return true;
		waited += 100;
	}
	return false;
}

/*
 * Reads exactly the bytes iov[0..iovcnt) names from a socket link. With
 * ahead, each readv also offers the room left in the link's read-ahead
 * header as a last element: bytes the stream holds past the payload start
 * the next packet's header, at no extra system call.
 */
enum link_read { LINK_READ_OK, LINK_READ_BROKEN, LINK_READ_FAULT };

static enum link_read link_read_full(struct fab_port *port,
				     struct fab_link *link,
				     struct iovec *iov, int iovcnt,
				     bool ahead, uint64_t *done)
{
	struct iovec v[FAB_MAX_IOV + 1];
	ssize_t n;
	int i, nv;

	while (iovcnt > 0) {
		if (!iov->iov_len) {
			iov++;
			iovcnt--;
			continue;
		}
		for (i = 0; i < iovcnt; i++)
			v[i] = iov[i];
		nv = iovcnt;
		if (ahead && link->ahead_len < sizeof(link->ahead)) {
			v[nv].iov_base = (uint8_t *)&link->ahead +
					 link->ahead_len;
			v[nv].iov_len = sizeof(link->ahead) - link->ahead_len;
			nv++;
		}
		n = readv(link->fd, v, nv);
		if (n > 0) {
			while (n > 0 && iovcnt > 0) {
				size_t k = (size_t)n < iov->iov_len ?
					   (size_t)n : iov->iov_len;

				iov->iov_base = (uint8_t *)iov->iov_base + k;
				iov->iov_len -= k;
				*done += k;
				n -= k;
				if (!iov->iov_len) {
					iov++;
					iovcnt--;
				}
			}
			link->ahead_len += n;	/* what went past the end */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && wait_readable(port, link))
			continue;
		/* The kernel takes from the socket only what it copied: the
		 * rest of the payload is still there to be discarded. */
		if (n < 0 && errno == EFAULT)
			return LINK_READ_FAULT;
		link_kill(link);
		return LINK_READ_BROKEN;
	}
	return LINK_READ_OK;
}

bool fab_rx_read(struct fab_rx *rx, const struct iovec *iov, int iovcnt)
{
	struct iovec v[FAB_MAX_IOV];
	uint64_t want = 0, done = 0;
	enum link_read r;
	int i, n = 0;

	if (rx->failed || rx->fault)
		return false;
	for (i = 0; i < iovcnt && n < FAB_MAX_IOV && want < rx->left; i++) {
		v[n] = iov[i];
		if (v[n].iov_len > rx->left - want)
			v[n].iov_len = rx->left - want;
		want += v[n].iov_len;
		n++;
	}
	if (!rx->link) {
		bool ok = sim_app_write(v, n, rx->mem, want);

		rx->mem += want;
		rx->left -= want;
		rx->fault = !ok;
		return ok;
	}
	/* The read that ends the payload may start the next header. */
	r = link_read_full(rx->port, rx->link, v, n, want == rx->left, &done);
	if (r == LINK_READ_BROKEN) {
		rx->failed = true;
		return false;
	}
	rx->left -= done;
	if (r == LINK_READ_FAULT) {
		rx->fault = true;
		return false;
	}
	return true;
}

static void rx_discard(struct fab_rx *rx)
{
	static uint8_t sink[65536];
	struct iovec v = { .iov_base = sink };

	rx->fault = false;
	while (rx->left && !rx->failed) {
		v.iov_len = rx->left < sizeof(sink) ? rx->left : sizeof(sink);
		fab_rx_read(rx, &v, 1);
	}
}

/* Ends a connection that does not speak the protocol, with one line. */
static void link_drop(struct fab_link *link, const char *why)
{
	char peer[64];

	if (link->dead)
		return;
	fab_tcp_peer_text(link->fd, peer, sizeof(peer));
	fprintf(stderr, "pvrdma-sim: %s: dropped the link to %s: %s\n",
		link->port->adapter.name, peer, why);
	link_kill(link);
}

/* An accepted link learns the name of the port that connected (its socket
 * path, or its TCP address and port): fabric_resolve() of that port's
 * GIDs finds it from now on. A TCP peer must name the address it
 * connects from, and say it first. */
static void link_hello_rx(struct fab_link *link, struct fab_rx *rx)
{
	char path[sizeof(link->path)];
	struct iovec v = { .iov_base = path, .iov_len = sizeof(path) - 1 };

	memset(path, 0, sizeof(path));
	if (link->path[0] || rx->left >= sizeof(path) ||
	    !fab_rx_read(rx, &v, 1))
		return;
	if (link->tcp && !link->verified) {
		if (!fab_tcp_hello_matches(link->fd, path)) {
			link_drop(link, "HELLO names another address");
			return;
		}
		link->verified = true;
		link->port->tcp_unverified--;
	}
	memcpy(link->path, path, sizeof(path));
}

/*
 * Whether the payload of a TCP frame is all in the socket (frames up to
 * FAB_TCP_WHOLE). If not, the socket's low-water mark is raised to it, so
 * the device sleeps until it is (or the link breaks) instead of waiting
 * inside the payload with dev->lock held while the network is down. With
 * hup (epoll saw the peer close or the link fail), a frame that is not
 * whole never will be: the link is dead (false, with link->dead).
 */
static bool frame_arrived(struct fab_link *link, const struct fab_hdr *hdr,
			  bool hup)
{
	int avail = 0, lowat;

	if (!link->tcp || !hdr->len || hdr->len > FAB_TCP_WHOLE) {
		avail = (int)hdr->len;
	} else if (ioctl(link->fd, FIONREAD, &avail)) {
		return true;	/* the read will tell what is wrong */
	}
	if ((uint32_t)avail >= hdr->len) {
		if (link->lowat) {
			lowat = 1;
			setsockopt(link->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat,
				   sizeof(lowat));
			link->lowat = 0;
		}
		return true;
	}
	if (hup) {
		link_kill(link);	/* EOF, reset or error inside it */
		return false;
	}
	lowat = (int)hdr->len;
	if (link->lowat != hdr->len &&
	    !setsockopt(link->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat,
			sizeof(lowat)))
		link->lowat = hdr->len;
	return false;
}

static int link_receive(struct fab_port *port, struct fab_link *link,
			bool hup)
{
	struct fab_hdr hdr;
	struct fab_rx rx;
	const char *why;
	int count = 0;
	ssize_t n;

	while (count < FAB_BURST && !link->dead) {
		if (link->ahead_len < sizeof(link->ahead)) {
			n = recv(link->fd,
				 (uint8_t *)&link->ahead + link->ahead_len,
				 sizeof(link->ahead) - link->ahead_len,
				 MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0) {
				link_kill(link);   /* EOF or reset: peer gone */
				break;
			}
			/* A header that arrived in part waits for the rest
			 * in the link, nobody waits for it. */
			link->ahead_len += n;
			if (link->ahead_len < sizeof(link->ahead))
				break;
		}
		hdr = link->ahead;
		why = fab_hdr_check(&hdr);
		if (!why && !link->verified && hdr.type != FAB_HELLO)
			why = "no HELLO first";
		if (why) {
			link_drop(link, why);	/* not our protocol */
			break;
		}
		if (!frame_arrived(link, &hdr, hup))
			break;		/* the header waits in link->ahead */
		link->ahead_len = 0;
		rx = (struct fab_rx){ .port = port, .link = link,
				      .left = hdr.len };
		if (hdr.type == FAB_HELLO) {
			link_hello_rx(link, &rx);
		} else {
			link->exposed = true;
			port->adapter.rx(port->adapter.owner, link, &hdr, &rx);
		}
		rx_discard(&rx);
		count++;
	}
	return count;
}

static int inq_deliver(struct fab_port *port)
{
	struct fab_pkt *p, *next;
	struct fab_rx rx;
	int count = 0;

	if (!atomic_load(&port->inq_nonempty))
		return 0;
	pthread_mutex_lock(&port->inq_lock);
	p = port->inq_head;
	port->inq_head = port->inq_tail = NULL;
	atomic_store(&port->inq_nonempty, false);
	pthread_mutex_unlock(&port->inq_lock);
	for (; p; p = next) {
		next = p->next;
		rx = (struct fab_rx){ .port = port, .mem = p->data,
				      .left = p->hdr.len };
		port->adapter.rx(port->adapter.owner, p->from, &p->hdr,
				 &rx);
		free(p);
		count++;
	}
	return count;
}

static void port_accept(struct fab_port *port, int listen_fd, bool tcp)
{
	char peer[64];
	int fd;

	for (;;) {
		fd = sim_fd_own(accept4(listen_fd, NULL, NULL,
					SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (fd < 0)
			return;
		if (tcp && port->tcp_unverified >= FAB_TCP_UNVERIFIED) {
			fab_tcp_peer_text(fd, peer, sizeof(peer));
			fprintf(stderr,
				"pvrdma-sim: %s: refused a link from %s: too many links before HELLO\n",
				port->adapter.name, peer);
			sys_close(fd);
			continue;
		}
		if (tcp)
			fab_tcp_tune(fd);
		link_new(port, fd, NULL, tcp);
	}
}

/* Frees the dead links the engine never saw (connections dropped before
 * or at their HELLO): a stream of bad connections must not grow the list
 * every receive walks. Runs where no pointer to a link is held. */
static void links_prune(struct fab_port *port)
{
	struct fab_link **pp = &port->links, *link;

	while ((link = *pp)) {
		if (link->dead && !link->exposed) {
			*pp = link->next;
			free(link);
		} else {
			pp = &link->next;
		}
	}
}

int fabric_wait(struct fab_port *port, int timeout_ms)
{
	int n;

	if (atomic_load(&port->inq_nonempty))
		timeout_ms = 0;
	n = epoll_wait(port->epfd, port->ev, FAB_EVENTS, timeout_ms);
	atomic_store(&port->sleeping, 0);
	port->nev = n > 0 ? n : 0;
	return port->nev;
}

int fabric_wait_quiet(struct fab_port *port, uint64_t timeout_ns)
{
	struct pollfd pfd[3] = {
		{ .fd = port->evfd, .events = POLLIN },
		{ .fd = port->listen_fd, .events = POLLIN },
		{ .fd = port->tcp_fd, .events = POLLIN },
	};
	static const size_t ev_off[3] = {
		offsetof(struct fab_port, evfd),
		offsetof(struct fab_port, listen_fd),
		offsetof(struct fab_port, tcp_fd),
	};
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};
	int n, i;

	if (atomic_load(&port->inq_nonempty))
		ts.tv_sec = ts.tv_nsec = 0;
	/* ppoll ignores the entries whose fd is -1 */
	n = sim_libc.ppoll(pfd, 3, &ts, NULL);
	atomic_store(&port->sleeping, 0);
	port->nev = 0;
	for (i = 0; n > 0 && i < 3; i++) {
		if (!pfd[i].revents)
			continue;
		port->ev[port->nev].events = EPOLLIN;
		port->ev[port->nev].data.ptr = (uint8_t *)port + ev_off[i];
		port->nev++;
	}
	return port->nev;
}

int fabric_deliver(struct fab_port *port)
{
	int count, i, n = port->nev;
	uint64_t v;

	port->nev = 0;
	count = inq_deliver(port);
	for (i = 0; i < n; i++) {
		void *p = port->ev[i].data.ptr;
		uint32_t events = port->ev[i].events;

		if (p == &port->evfd) {
			(void)!sys_read(port->evfd, &v, sizeof(v));
		} else if (p == &port->listen_fd) {
			port_accept(port, port->listen_fd, false);
		} else if (p == &port->tcp_fd) {
			port_accept(port, port->tcp_fd, true);
		} else {
			struct fab_link *link = p;

			/* A link killed earlier in this batch is freed only
			 * by fabric_close: the pointer stays valid. */
			if (link->dead)
				continue;
			if (events & EPOLLOUT)
				link_flush(link);
			if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
				      EPOLLERR))
				count += link_receive(port, link, events &
						      (EPOLLRDHUP | EPOLLHUP |
						       EPOLLERR));
		}
	}
	count += inq_deliver(port);
	links_prune(port);
	return count;
}

int fabric_rx_poll(struct fab_port *port)
{
	struct fab_link *link;
	int count = inq_deliver(port);

	for (link = port->links; link; link = link->next) {
		if (link->dead)
			continue;
		if (link->out_head)
			link_flush(link);
		count += link_receive(port, link, false);
	}
	return count;
}

bool fabric_link_busy(const struct fab_link *link)
{
	return link && !link->dead && link->out_head;
}

int fabric_poll(struct fab_port *port, int timeout_ms)
{
	int count;

	fabric_wait(port, timeout_ms);
	pthread_mutex_lock(port->adapter.lock);
	count = fabric_deliver(port);
	pthread_mutex_unlock(port->adapter.lock);
	return count;
}
