// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sending on a link (see fabric.c for the model): one sendmsg straight
 * from the caller's buffers; what the socket does not take goes to the
 * link's out-queue, copied, or in place with only its header copied
 * until the payload's memory must be let go (fabric_copy_in_place()).
 * Between adapters of this process a packet goes to the peer port's
 * in-memory queue.
 */
#include "link.h"

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
	return n < 0 ? -errno : n;
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

/* Copies the unsent tail (past skip) to the out-queue, with the fault-safe
 * copy: an unreadable payload is not sent (EFAULT) if none of the packet
 * left, else it breaks the link rather than the process. */
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
	return fab_link_send(port, link, hdr, iov, iovcnt, false);
}

bool fabric_send_in_place(struct fab_port *port, struct fab_link *link,
			  const struct fab_hdr *hdr, const struct iovec *iov,
			  int iovcnt)
{
	return fab_link_send(port, link, hdr, iov, iovcnt, true);
}

bool fab_link_send(struct fab_port *port, struct fab_link *link,
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
	if ((size_t)n == total)
		return true;
	if (in_place)
		return link_queue_in_place(link, v, iovcnt + 1, total, n);
	return link_queue(link, v, iovcnt + 1, total, n);
}
