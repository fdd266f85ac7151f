// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric's receive side: reading packets from socket links (header,
 * then the payload straight where the device's receive callback puts it),
 * the in-process queue, accepting connections and HELLOs, and the waits
 * of the device thread. See fabric_tx.c for the sending side.
 */
#include "link.h"
#include "shared.h"

/* n bytes were read from the link's socket. */
static void link_took(struct fab_link *link, size_t n)
{
	link->rx_known = link->rx_known > n ? link->rx_known - n : 0;
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
				fab_link_flush(ls[i]);
		if (pfd[0].revents)
			return true;
		waited += 100;
	}
	return false;
}

/* Reads exactly iov[0..iovcnt) from a socket link; with ahead, each readv
 * also offers the link's read-ahead room: the next packet's header at no
 * extra system call. */
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
		n = sim_libc.readv(link->fd, v, nv);
		if (n > 0) {
			link_took(link, (size_t)n);
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
		fab_link_kill(link);
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
	fab_link_kill(link);
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
		fab_tcp_hello_taken(link);
	}
	memcpy(link->path, path, sizeof(path));
}

/*
 * Whether a TCP frame's payload is all in the socket (up to FAB_TCP_WHOLE).
 * If not, SO_RCVLOWAT is raised to it, so the device sleeps rather than
 * wait inside the payload with dev->lock held; with hup, it never will be
 * and the link is dead. FIONREAD only when what the socket was known to
 * hold does not cover the frame: one ask per burst.
 */
static bool frame_arrived(struct fab_link *link, const struct fab_hdr *hdr,
			  bool hup)
{
	int avail = 0, lowat;

	if (!link->tcp || !hdr->len || hdr->len > FAB_TCP_WHOLE ||
	    link->rx_known >= hdr->len) {
		avail = (int)hdr->len;
	} else if (sim_libc.ioctl(link->fd, FIONREAD, &avail)) {
		return true;	/* the read will tell what is wrong */
	} else {
		/* One ask covers every frame that arrived with this one. */
		link->rx_known = avail > 0 ? (uint64_t)avail : 0;
	}
	if ((uint32_t)avail >= hdr->len) {
		if (link->lowat) {
			lowat = 1;
			sim_libc.setsockopt(link->fd, SOL_SOCKET, SO_RCVLOWAT,
					    &lowat,
				   sizeof(lowat));
			link->lowat = 0;
		}
		return true;
	}
	if (hup) {
		fab_link_kill(link);	/* EOF, reset or error inside it */
		return false;
	}
	lowat = (int)hdr->len;
	if (link->lowat != hdr->len &&
	    !sim_libc.setsockopt(link->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat,
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

	while (count < FAB_BURST && !link->dead && !fab_link_held(link)) {
		if (link->ahead_len < sizeof(link->ahead)) {
			n = sim_libc.recvfrom(link->fd,
				 (uint8_t *)&link->ahead + link->ahead_len,
				 sizeof(link->ahead) - link->ahead_len,
				 MSG_DONTWAIT, NULL, NULL);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0) {
				fab_link_kill(link);   /* EOF or reset: peer gone */
				break;
			}
			/* A header that arrived in part waits for the rest
			 * in the link, nobody waits for it. */
			link_took(link, (size_t)n);
			link->ahead_len += n;
			if (link->ahead_len < sizeof(link->ahead))
				break;
		}
		hdr = link->ahead;
		why = fab_hdr_check_link(&hdr, link->tcp);
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
	struct fab_link *link;
	uint32_t ipv4 = 0;
	char peer[64];
	int fd;

	for (;;) {
		fd = sim_fd_own(accept4(listen_fd, NULL, NULL,
					SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (fd < 0)
			return;
		if (tcp && !fab_tcp_admit(port, fd, &ipv4)) {
			/* A line at the 1st, 2nd, 4th, ... : a flood of
			 * connections is not a flood of lines. */
			port->tcp_refused++;
			if (!(port->tcp_refused & (port->tcp_refused - 1))) {
				fab_tcp_peer_text(fd, peer, sizeof(peer));
				fprintf(stderr,
					"pvrdma-sim: %s: refused a link from %s: too many links before HELLO (%lu so far)\n",
					port->adapter.name, peer,
					port->tcp_refused);
			}
			fab_sys_close(fd);
			continue;
		}
		if (tcp)
			fab_tcp_tune(fd);
		link = fab_link_new(port, fd, NULL, tcp);
		if (link && tcp) {
			link->peer_ipv4 = ipv4;
			link->hello_by_ns = fab_tcp_hello_due();
		}
	}
}

/* Frees the dead links the adapter never saw (connections dropped before
 * or at their HELLO): a stream of bad connections must not grow the list
 * every receive walks. Runs where no pointer to a link is held. */
static void links_prune(struct fab_port *port)
{
	struct fab_link **pp = &port->links, *link;

	if (port->tcp_unverified)
		fab_tcp_expire_hello(port);
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
			(void)!fab_sys_read(port->evfd, &v, sizeof(v));
		} else if (p == &port->listen_fd) {
			port_accept(port, port->listen_fd, false);
		} else if (p == &port->tcp_fd) {
			port_accept(port, port->tcp_fd, true);
		} else if (p == &port->roce_fd) {
			count += roce_rx(port);
		} else {
			struct fab_link *link = p;

			/* A link killed earlier in this batch is freed only
			 * by fabric_close: the pointer stays valid. */
			if (link->dead)
				continue;
			if (events & EPOLLOUT)
				fab_link_flush(link);
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

/* skip_unix: leave alone the Unix links with nothing read ahead. */
static int rx_poll(struct fab_port *port, bool skip_unix, bool skip_roce)
{
	struct fab_link *link;
	int count = inq_deliver(port), unix_count = 0, n;

	if (port->roce_fd >= 0 && !skip_roce)
		count += roce_rx(port);
	for (link = port->links; link; link = link->next) {
		if (link->dead)
			continue;
		if (link->out_head)
			fab_link_flush(link);
		if (skip_unix && !link->tcp && !link->ahead_len)
			continue;
		n = link_receive(port, link, false);
		count += n;
		if (!link->tcp)
			unix_count += n;
	}
	if (!skip_unix)
		port->unix_idle = !unix_count;
	return count;
}

/* The frames same-host senders counted, before the reads of every Unix
 * link: a frame counted later is read later. */
static void frames_mark(struct fab_port *port)
{
	uint64_t in;

	if (shared_frames_in(port->adapter.index, &in))
		port->frames_seen = in;
	else
		port->frames_seen = ~port->frames_seen;
}

int fabric_rx_poll(struct fab_port *port)
{
	frames_mark(port);
	return rx_poll(port, false, false);
}

/*
 * Same-host senders count each frame in the target adapter's segment
 * after they wrote it. The count read before a poll that found the Unix
 * links empty, and unchanged since, says they are empty still. A sender
 * that cannot count (no segment of ours mapped) is read by the device
 * thread, which watches every link, or at the next poll that reads all.
 */
int fabric_rx_poll_hinted(struct fab_port *port, bool roce)
{
	uint64_t in;

	if (port->unix_idle && shared_frames_in(port->adapter.index, &in) &&
	    in == port->frames_seen)
		return rx_poll(port, true, !roce);
	frames_mark(port);
	return rx_poll(port, false, !roce);
}

bool fabric_link_busy(const struct fab_link *link)
{
	return link && !link->dead && link->out_head;
}

uint64_t fabric_link_tx_bytes(const struct fab_link *link)
{
	return link ? link->tx_bytes : 0;
}

uint64_t fabric_link_push(struct fab_link *link)
{
	if (!link)
		return 0;
	if (!link->dead && link->out_head)
		fab_link_flush(link);
	return link->tx_bytes;
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
