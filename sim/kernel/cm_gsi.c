// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm over RoCE: the GSI thread (cm_gsi.h). Its state is
 * its own: gsi.lock guards it against the commands that hand it a new
 * connection (cm_gsi_connect, cm_lock held); MADs come from the device's
 * receive path through a small queue of their own (rxq), which only
 * copies under the adapter's lock.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "cm_gsi.h"
#include "fabric.h"
#include "fds.h"
#include "options.h"
#include "spawn.h"

/* ib_cm's response timeout for rdma_cm's CM (4.096 us << 20), a
 * variable so that tests can shorten it. */
uint64_t cm_gsi_resend_ns = 4096ull << 20;

#define RXQ_LEN	64

struct gsi_rx {
	unsigned int dev;
	uint32_t saddr;
	uint8_t mad[CM_MAD_LEN];
};

static struct {
	pthread_mutex_t lock;
	bool started;
	int wake;			/* eventfd */
	struct gsi_conn *conns;
	unsigned int nconns;
	uint64_t rng;
	bool exit_slot_used[GSI_MAX_CONNS];
	pthread_mutex_t rxq_lock;
	struct gsi_rx rxq[RXQ_LEN];
	unsigned int rxq_head, rxq_count;
} gsi = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = -1,
	  .rxq_lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t gsi_random(void)
{
	if (!gsi.rng)
		gsi.rng = cm_now_ns() ^ ((uint64_t)getpid() << 40) ^
			  0x2545f4914f6cdd1dull;
	gsi.rng ^= gsi.rng << 13;
	gsi.rng ^= gsi.rng >> 7;
	gsi.rng ^= gsi.rng << 17;
	return (uint32_t)(gsi.rng >> 16);
}

/* The device's receive path (adapter lock held): queue and wake. */
static void gsi_rx_handler(unsigned int dev, uint32_t saddr,
			   const uint8_t *mad, size_t len)
{
	struct gsi_rx *r;

	if (len != CM_MAD_LEN)
		return;
	pthread_mutex_lock(&gsi.rxq_lock);
	if (gsi.rxq_count < RXQ_LEN) {
		r = &gsi.rxq[(gsi.rxq_head + gsi.rxq_count++) % RXQ_LEN];
		r->dev = dev;
		r->saddr = saddr;
		memcpy(r->mad, mad, CM_MAD_LEN);
	}
	pthread_mutex_unlock(&gsi.rxq_lock);
	if (gsi.wake >= 0)
		eventfd_write(gsi.wake, 1);
}

static bool rxq_pop(struct gsi_rx *out)
{
	bool got = false;

	pthread_mutex_lock(&gsi.rxq_lock);
	if (gsi.rxq_count) {
		*out = gsi.rxq[gsi.rxq_head];
		gsi.rxq_head = (gsi.rxq_head + 1) % RXQ_LEN;
		gsi.rxq_count--;
		got = true;
	}
	pthread_mutex_unlock(&gsi.rxq_lock);
	return got;
}

_Static_assert(GSI_MAX_CONNS <= FAB_GSI_EXIT_SLOTS,
	       "an exit GMP for every connection");

/* ---- connections (gsi.lock held) ---- */

/* A new transaction's ID: random above, the connection's below. */
static uint64_t new_tid(const struct gsi_conn *c)
{
	return (uint64_t)gsi_random() << 32 | c->local_id;
}

static struct gsi_conn *conn_new(int fd)
{
	struct gsi_conn *c;
	unsigned int slot = 0;

	if (gsi.nconns >= GSI_MAX_CONNS)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	while (gsi.exit_slot_used[slot])	/* one is free: nconns */
		slot++;
	gsi.exit_slot_used[slot] = true;
	c->exit_slot = slot;
	c->fd = fd;
	do
		c->local_id = gsi_random();
	while (!c->local_id);
	c->next = gsi.conns;
	gsi.conns = c;
	gsi.nconns++;
	return c;
}

static void conn_close_fd(struct gsi_conn *c)
{
	if (c->fd >= 0)
		sim_fd_close(c->fd);
	c->fd = -1;
	c->resend_at = 0;
	c->mra_held = false;
	c->forget_at = cm_now_ns() + GSI_LINGER_NS;
	fabric_gsi_exit_clear(c->exit_slot);
}

static void conn_free(struct gsi_conn *c)
{
	fabric_gsi_exit_clear(c->exit_slot);
	gsi.exit_slot_used[c->exit_slot] = false;
	gsi.nconns--;
	free(c);
}

/*
 * What ib_cm would send for c if the process ended now, its id not
 * destroyed (gsi_exit_msg), left with the fabric to send once the
 * process is gone. The agent's end closed, nothing is owed: the agent
 * said what destroying the id says.
 */
static void conn_owe(struct gsi_conn *c)
{
	struct gsi_conn t = *c;	/* gsi_msg_to_mad() moves c on */
	uint8_t b[CM_MAD_LEN];
	struct cm_msg m;
	struct cm_mad d;

	if (c->fd >= 0 && gsi_exit_msg(c, &m)) {
		if (m.type == CM_MSG_DREQ)
			t.tid = new_tid(c);
		if (gsi_msg_to_mad(&t, &m, &d) && cm_mad_encode(&d, b) &&
		    fabric_gsi_exit_set(c->exit_slot, c->dev, c->peer, b,
					CM_MAD_LEN))
			return;
	}
	fabric_gsi_exit_clear(c->exit_slot);
}

static void send_last(struct gsi_conn *c)
{
	if (c->have_last)
		fabric_gsi_send(c->dev, c->peer, c->last, CM_MAD_LEN);
}

static void send_mad(struct gsi_conn *c, const struct cm_mad *d,
		     bool waits)
{
	if (!cm_mad_encode(d, c->last))
		return;
	c->have_last = true;
	send_last(c);
	c->tries = 0;
	c->resend_at = waits ? cm_now_ns() + cm_gsi_resend_ns : 0;
}

/* The adapter whose GID gid is, or -1. */
static int dev_of_gid(const uint8_t gid[16])
{
	unsigned int d, i;

	for (d = 0; d < sim_global.num_adapters; d++)
		for (i = 0; i < sim_devs[d].gid_count; i++)
			if (!memcmp(sim_devs[d].gid[i].raw, gid, 16))
				return (int)d;
	return -1;
}

/* The first message of a connection this side opens: REQ or SIDR REQ. */
static bool conn_open(struct gsi_conn *c, const struct cm_msg *m)
{
	int dev = dev_of_gid(m->src_gid);

	/* rdma_cm's address header on the wire: IPv4 here */
	if (dev < 0 || !fabric_gsi_ready((unsigned int)dev) ||
	    memcmp(m->dst_gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) ||
	    m->src.ss_family != AF_INET || m->dst.ss_family != AF_INET)
		return false;
	c->dev = (unsigned int)dev;
	memcpy(&c->peer, m->dst_gid + 12, 4);
	c->active = true;
	c->ud = m->type == CM_MSG_SIDR_REQ;
	c->tid = new_tid(c);
	return true;
}

static void note_sent(struct gsi_conn *c, uint8_t type)
{
	if (type == CM_MSG_RTU)
		c->established = true;
	else if (type == CM_MSG_DREQ)
		c->dreq_sent = true;
	else if (type == CM_MSG_REJ || type == CM_MSG_DREP)
		c->finished = true;
}

/*
 * The agent's MRA (after a REQ or REP it handed its consumer) is held,
 * as rdma_cm asks ib_cm with its delay flag: ib_cm records it and sends
 * it only when the peer, not answered yet, sends its REQ or REP again.
 * A connection answered in time puts no MRA on the wire.
 */
static void hold_mra(struct gsi_conn *c, const struct cm_msg *m)
{
	struct cm_mad d;

	if (gsi_msg_to_mad(c, m, &d) && cm_mad_encode(&d, c->mra))
		c->mra_held = true;
}

/* A duplicate REQ or REP: the held MRA while the consumer has not
 * answered, else what was sent last. */
static void answer_duplicate(struct gsi_conn *c)
{
	if (c->mra_held)
		fabric_gsi_send(c->dev, c->peer, c->mra, CM_MAD_LEN);
	else
		send_last(c);
}

/* A message from the agent on c's socket. */
static void from_agent(struct gsi_conn *c, const struct cm_msg *m)
{
	struct cm_mad d;
	bool first = !c->have_last && !c->rep_seen && !c->peer;

	if (m->type == CM_MSG_MRA) {
		hold_mra(c, m);
		return;
	}
	c->mra_held = false;	/* the consumer answered */

	if (first) {
		if ((m->type != CM_MSG_REQ && m->type != CM_MSG_SIDR_REQ) ||
		    !conn_open(c, m)) {
			conn_close_fd(c);	/* the agent sees a refusal */
			return;
		}
	}
	if (m->type == CM_MSG_DREQ)	/* a new transaction */
		c->tid = new_tid(c);
	if (!gsi_msg_to_mad(c, m, &d))
		return;
	note_sent(c, m->type);
	send_mad(c, &d, m->type == CM_MSG_REQ || m->type == CM_MSG_SIDR_REQ ||
			m->type == CM_MSG_REP || m->type == CM_MSG_DREQ);
	conn_owe(c);
}

/* The agent's end of c is readable: messages, or its close. */
static void agent_ready(struct gsi_conn *c)
{
	struct cm_msg m;
	ssize_t n;

	while (c->fd >= 0) {
		n = sim_libc.recvfrom(c->fd, &m, sizeof(m), MSG_DONTWAIT,
				      NULL, NULL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != (ssize_t)sizeof(m)) {
			conn_close_fd(c);
			return;
		}
		from_agent(c, &m);
	}
}

static void to_agent(struct gsi_conn *c, const struct cm_msg *m)
{
	if (c->fd >= 0 &&
	    sim_libc.sendto(c->fd, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT,
			    NULL, 0) != (ssize_t)sizeof(*m))
		conn_close_fd(c);
}

/* ---- MADs from the wire (gsi.lock held) ---- */

static struct gsi_conn *find_local(uint32_t peer, uint32_t local_id)
{
	struct gsi_conn *c;

	for (c = gsi.conns; c; c = c->next)
		if (c->peer == peer && c->local_id == local_id)
			return c;
	return NULL;
}

static struct gsi_conn *find_remote(uint32_t peer, uint32_t remote_id,
				    bool ud)
{
	struct gsi_conn *c;

	for (c = gsi.conns; c; c = c->next)
		if (!c->active && c->peer == peer && c->remote_id == remote_id &&
		    c->ud == ud)
			return c;
	return NULL;
}

/* A new REQ or SIDR REQ: a connection to the local agent. */
static void req_received(const struct gsi_rx *r, const struct cm_mad *d)
{
	struct sockaddr_storage sa;
	union ibv_gid gid;
	struct cm_msg m;
	struct gsi_conn *c;
	socklen_t len;
	uint32_t local = sim_devs[r->dev].cfg.ipv4;
	bool ud = d->attr_id == CM_ATTR_SIDR_REQ;
	int fd;

	c = find_remote(r->saddr, d->local_comm_id, ud);
	if (c) {
		answer_duplicate(c);
		return;
	}
	if (!gsi_req_to_msg(d, r->saddr, local, &m))
		return;
	fd = sim_fd_own(sim_libc.socket(AF_UNIX, SOCK_SEQPACKET |
					SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return;
	memcpy(gid.raw, m.dst_gid, sizeof(gid.raw));	/* aligned */
	len = cm_agent_sockaddr(&gid, (struct sockaddr *)&sa);
	c = conn_new(fd);
	if (!c || sim_libc.connect(fd, (struct sockaddr *)&sa, len)) {
		if (c)
			conn_close_fd(c);
		else
			sim_fd_close(fd);
		return;
	}
	c->dev = r->dev;
	c->peer = r->saddr;
	c->ud = ud;
	c->remote_id = d->local_comm_id;
	c->remote_qpn = d->qpn;
	c->sid = d->service_id;
	c->tid = d->tid;
	to_agent(c, &m);
	conn_owe(c);
}

/* A DREQ of no connection this side keeps: ib_cm answers its DREP. */
static void drep_unknown(const struct gsi_rx *r, const struct cm_mad *d)
{
	struct cm_mad a = { .attr_id = CM_ATTR_DREP, .tid = d->tid,
			    .local_comm_id = d->remote_comm_id,
			    .remote_comm_id = d->local_comm_id };
	uint8_t b[CM_MAD_LEN];

	if (cm_mad_encode(&a, b))
		fabric_gsi_send(r->dev, r->saddr, b, CM_MAD_LEN);
}

static void mad_received(const struct gsi_rx *r)
{
	struct gsi_conn *c;
	struct cm_mad d;
	struct cm_msg m;

	if (!cm_mad_decode(&d, r->mad, CM_MAD_LEN))
		return;
	if (d.attr_id == CM_ATTR_REQ || d.attr_id == CM_ATTR_SIDR_REQ) {
		req_received(r, &d);
		return;
	}
	c = find_local(r->saddr, d.attr_id == CM_ATTR_SIDR_REP ?
				 d.local_comm_id : d.remote_comm_id);
	if (!c && d.attr_id == CM_ATTR_REJ && d.reason == CM_REJ_TIMEOUT)
		/* the REQ's sender gave up before it had our ID */
		c = find_remote(r->saddr, d.local_comm_id, false);
	if (!c || c->ud != (d.attr_id == CM_ATTR_SIDR_REP) ||
	    (c->remote_id && d.attr_id != CM_ATTR_SIDR_REP &&
	     d.attr_id != CM_ATTR_REJ && c->remote_id != d.local_comm_id)) {
		if (d.attr_id == CM_ATTR_DREQ)
			drep_unknown(r, &d);
		return;
	}
	if (c->fd < 0) {
		/* finished here: what the peer missed, again */
		if (d.attr_id == CM_ATTR_DREQ)
			drep_unknown(r, &d);
		return;
	}
	if (d.attr_id == CM_ATTR_REP && c->rep_seen) {
		answer_duplicate(c);	/* our RTU went missing, or the
					 * consumer is slow */
		return;
	}
	if (!gsi_mad_to_msg(c, &d, &m))
		return;
	if (d.attr_id == CM_ATTR_RTU)
		c->established = true;
	else if (d.attr_id == CM_ATTR_DREQ)
		c->dreq_rcvd = true;
	else if (d.attr_id == CM_ATTR_REJ || d.attr_id == CM_ATTR_DREP)
		c->finished = true;
	/* an answer, or an MRA: no more resending (the agent's timer
	 * waits for what the MRA asks) */
	if (d.attr_id != CM_ATTR_DREQ)
		c->resend_at = 0;
	to_agent(c, &m);
	conn_owe(c);
}

/* ---- the thread ---- */

/* Resends what waits, forgets what lingered; the poll timeout in ms. */
static int gsi_timers(void)
{
	struct gsi_conn **p = &gsi.conns, *c;
	uint64_t now = cm_now_ns(), next = 0;

	while ((c = *p)) {
		if (c->fd < 0 && c->forget_at <= now) {
			*p = c->next;
			conn_free(c);
			continue;
		}
		if (c->resend_at && c->resend_at <= now) {
			if (++c->tries > GSI_MAX_RETRIES) {
				c->resend_at = 0;	/* the agent times out */
			} else {
				send_last(c);
				c->resend_at = now + cm_gsi_resend_ns;
			}
		}
		if (c->resend_at && (!next || c->resend_at < next))
			next = c->resend_at;
		if (c->fd < 0 && (!next || c->forget_at < next))
			next = c->forget_at;
		p = &c->next;
	}
	return next ? (int)((next - now) / 1000000u) + 1 : -1;
}

static void *gsi_main(void *arg)
{
	struct pollfd *fds = NULL;
	size_t cap = 0, n, i;
	struct gsi_rx r;

	(void)arg;
	for (;;) {
		struct gsi_conn *c;
		eventfd_t v;
		int timeout;

		pthread_mutex_lock(&gsi.lock);
		timeout = gsi_timers();
		if (gsi.nconns + 1 > cap) {
			struct pollfd *nf = realloc(fds, (gsi.nconns + 1) *
							 sizeof(*fds));
			if (nf) {
				fds = nf;
				cap = gsi.nconns + 1;
			}
		}
		n = 0;
		if (cap)
			fds[n++] = (struct pollfd){ gsi.wake, POLLIN, 0 };
		for (c = gsi.conns; c && n < cap; c = c->next)
			if (c->fd >= 0)
				fds[n++] = (struct pollfd){ c->fd, POLLIN, 0 };
		pthread_mutex_unlock(&gsi.lock);

		if (poll(fds, n, n ? timeout : 100) < 0)
			continue;
		if (n && (fds[0].revents & POLLIN))
			eventfd_read(gsi.wake, &v);
		pthread_mutex_lock(&gsi.lock);
		for (i = 1; i < n; i++) {
			if (!(fds[i].revents & ~POLLNVAL))
				continue;
			for (c = gsi.conns; c; c = c->next)
				if (c->fd == fds[i].fd)
					agent_ready(c);
		}
		while (rxq_pop(&r))
			mad_received(&r);
		pthread_mutex_unlock(&gsi.lock);
	}
	return NULL;
}

void cm_gsi_kick(void)
{
	struct pollfd p = { .events = POLLIN };
	struct gsi_conn *c;
	bool sent = false;

	if (!gsi.started)
		return;
	pthread_mutex_lock(&gsi.lock);
	for (c = gsi.conns; c; c = c->next) {
		p.fd = c->fd;
		if (c->fd >= 0 && poll(&p, 1, 0) == 1) {
			agent_ready(c);
			sent = true;
		}
	}
	pthread_mutex_unlock(&gsi.lock);
	/* The thread sleeps with the timeout of before, on sockets this
	 * emptied: what was sent here waits for its answer on a timer it
	 * has not seen. */
	if (sent)
		eventfd_write(gsi.wake, 1);
}

bool cm_gsi_gid(const union ibv_gid *gid)
{
	unsigned int d;

	if (sim_global.wire != SIM_WIRE_ROCE || !cm_tcp_gid(gid))
		return false;
	/* An adapter whose address another process of this host owns
	 * speaks no RoCE: its CM takes the simulation's protocol too. */
	for (d = 0; d < sim_global.num_adapters; d++)
		if (fabric_gsi_ready(d))
			return true;
	return false;
}

int cm_gsi_connect(void)
{
	struct gsi_conn *c;
	int sv[2];

	/* socketpair is none of the names the preload library answers */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv))
		return -1;
	sv[0] = sim_fd_own(sv[0]);
	sv[1] = sim_fd_own(sv[1]);
	pthread_mutex_lock(&gsi.lock);
	c = gsi.started ? conn_new(sv[1]) : NULL;
	pthread_mutex_unlock(&gsi.lock);
	if (!c) {
		sim_fd_close(sv[0]);
		sim_fd_close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	eventfd_write(gsi.wake, 1);
	return sv[0];
}

/*
 * fork(): the thread is not in the child; its connections are the
 * parent's. The child closes its copies and starts afresh at its first
 * rdma_cm file, as the agent does.
 */
static void gsi_fork_prepare(void)
{
	pthread_mutex_lock(&gsi.lock);
}

static void gsi_fork_parent(void)
{
	pthread_mutex_unlock(&gsi.lock);
}

static void gsi_fork_child(void)
{
	struct gsi_conn *c, *n;

	if (gsi.started) {
		for (c = gsi.conns; c; c = n) {
			n = c->next;
			if (c->fd >= 0)
				sim_fd_close(c->fd);
			free(c);
		}
		gsi.conns = NULL;
		gsi.nconns = 0;
		memset(gsi.exit_slot_used, 0, sizeof(gsi.exit_slot_used));
		sim_fd_close(gsi.wake);
		gsi.wake = -1;
		gsi.rng = 0;
		gsi.rxq_count = 0;
		gsi.started = false;
	}
	pthread_mutex_unlock(&gsi.lock);
}

/* Opens QP 1 of every adapter on the RoCE wire: its device starts, as a
 * kernel's MAD layer creates QP 1 when the device registers. */
static void gsi_open_ports(void)
{
	unsigned int d;

	for (d = 0; d < sim_global.num_adapters; d++) {
		struct sim_dev *dev = &sim_devs[d];

		pthread_mutex_lock(&dev->lock);
		engine_start(dev);
		pthread_mutex_unlock(&dev->lock);
	}
}

int cm_gsi_fork_handlers(void)
{
	static bool registered;
	int ret;

	if (registered)
		return 0;
	/* the fabric's exit GMPs' lock nests inside gsi.lock */
	ret = fabric_gsi_exit_fork_handlers();
	if (!ret)
		ret = pthread_atfork(gsi_fork_prepare, gsi_fork_parent,
				     gsi_fork_child);
	registered = !ret;
	return ret;
}

int cm_gsi_start(void)
{
	pthread_t thread;
	sigset_t all, old;
	int ret;

	if (sim_global.wire != SIM_WIRE_ROCE || gsi.started)
		return 0;
	gsi.wake = sim_fd_own(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
	if (gsi.wake < 0)
		return -errno;
	fabric_gsi_attach(gsi_rx_handler);
	sigfillset(&all);
	sim_libc.pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = sim_thread_create(&thread, NULL, gsi_main, NULL);
	sim_libc.pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		fabric_gsi_attach(NULL);
		sim_fd_close(gsi.wake);
		gsi.wake = -1;
		return -ret;
	}
	pthread_detach(thread);
	gsi.started = true;
	gsi_open_ports();
	return 0;
}
