// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the CM agent of a process (see cm.c for the
 * protocol): its thread, its listening sockets, the messages it receives
 * and what each does to an id, its timers (response timeouts, time wait),
 * and how it survives fork().
 *
 * Every descriptor of the CM (the agent's eventfd and listening sockets,
 * the accepted ones, each id's connection socket) is one of the sim's own
 * (common/fds.c): a kernel's CM holds none in the process's fd table, so
 * the application's close_range(), closefrom(), close() or dup2() must
 * not reach them. They are made with sim_fd_own() and closed with
 * sim_fd_close() only.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "cm_msg.h"
#include "fds.h"
#include "spawn.h"


/*
 * rdma_cm acknowledges a REQ (passive side) and a REP (active side) with
 * an MRA once it has handed the event to the consumer: a user process
 * may take long to accept or to answer with its RTU, and the MRA tells
 * the peer's CM to wait the service timeout instead of its response
 * timeout.
 *
 * Linux asks ib_cm to delay that MRA: it goes out only when the peer,
 * not answered in time, resends its REQ or REP. Over MADs the GSI
 * thread does the same (cm_gsi.c holds it). The sim's own wire is a
 * stream that loses nothing, so nothing is ever resent: a held MRA
 * would never go, and the peer's agent would give up after its response
 * timeout on a consumer that is only slow. There the MRA goes at once.
 */
static void send_mra(const struct cm_id *id)
{
	struct cm_msg m;

	if (id->qp_type == IBV_QPT_UD || id->sock < 0)
		return;
	cm_msg_init(&m, CM_MSG_MRA, NULL, 0);
	m.service_timeout = CM_MRA_SERVICE_TIMEOUT;
	cm_send_msg(id->sock, &m);
}

/* ---- what the agent receives (cm_lock held) ---- */

static void copy_conn_param(struct rdma_ucm_conn_param *c,
			    const struct cm_msg *m, unsigned int pdata_size)
{
	memcpy(c->private_data, m->private_data, m->private_data_len);
	c->private_data_len = (uint8_t)pdata_size;
	c->responder_resources = m->responder_resources;
	c->initiator_depth = m->initiator_depth;
	c->flow_control = m->flow_control;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->srq = m->srq;
	c->qp_num = m->qpn;
}

static struct cm_id *find_listener(const struct cm_msg *m)
{
	struct cm_id *id, *wild = NULL;

	for (id = cm_ids; id; id = id->next) {
		if (id->state != CM_LISTEN || id->destroyed || id->ps != m->ps)
			continue;
		if (!cm_addr_listen_match((struct sockaddr *)&id->src,
					  id->afonly,
					  (const struct sockaddr *)&m->dst))
			continue;
		/* A listener on the address itself wins over a wildcard. */
		if (!cm_addr_any((struct sockaddr *)&id->src))
			return id;
		wild = wild ? wild : id;
	}
	return wild;
}

static void handle_req(int sock, const struct cm_msg *m)
{
	bool ud = m->type == CM_MSG_SIDR_REQ;
	struct cm_id *listener = find_listener(m), *child;
	struct sim_dev *dev;
	unsigned int d, i, gid_index = 0;
	struct ucma_event *e;
	struct cm_msg r;

	dev = NULL;
	for (d = 0; d < sim_global.num_adapters && !dev; d++)
		for (i = 0; i < sim_devs[d].gid_count; i++)
			if (!memcmp(sim_devs[d].gid[i].raw, m->dst_gid, 16)) {
				dev = &sim_devs[d];
				gid_index = i;
				break;
			}
	child = listener && dev ? ucma_child_alloc(listener) : NULL;
	if (!child) {
		/* No one listens (or the backlog is full): the CM rejects. */
		if (ud) {
			cm_msg_init(&r, CM_MSG_SIDR_REP, NULL, 0);
			r.reason = listener ? CM_SIDR_REJECT :
				   CM_SIDR_UNSUPPORTED;
		} else {
			cm_msg_init(&r, CM_MSG_REJ, NULL, 0);
			r.reason = listener ? CM_REJ_CONSUMER_DEFINED :
				   CM_REJ_INVALID_SERVICE_ID;
		}
		cm_send_msg(sock, &r);
		sim_fd_close(sock);
		return;
	}
	child->sock = sock;
	child->src = m->dst;
	child->dst = m->src;
	child->dev = dev;
	child->sgid_index = gid_index;
	child->sgid = dev->gid[gid_index];
	memcpy(child->dgid.raw, m->src_gid, 16);
	child->route_resolved = true;
	child->mtu = sim_port_mtu(dev);
	if (m->mtu && m->mtu < child->mtu)
		child->mtu = (enum ibv_mtu)m->mtu;
	child->remote_qpn = m->qpn;
	child->remote_psn = m->psn;
	child->local_psn = cm_random_psn();
	/* Each side's view: what the peer asks to initiate is what this
	 * side must be able to respond to. */
	child->responder_resources = m->initiator_depth;
	child->initiator_depth = m->responder_resources;
	child->retry_count = m->retry_count;
	child->rnr_retry_count = m->rnr_retry_count;
	child->flow_control = m->flow_control;
	child->qkey = CM_UDP_QKEY;
	child->state = CM_REQ_RCVD;

	e = ucma_event_queue(listener, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (!e)
		return;
	e->child = child;
	e->resp.id = child->handle;
	if (ud) {
		memcpy(e->resp.param.ud.private_data, m->private_data,
		       m->private_data_len);
		e->resp.param.ud.private_data_len =
			CM_SIDR_REQ_PRIVATE_DATA - CM_RDMA_HDR;
	} else {
		copy_conn_param(&e->resp.param.conn, m,
				CM_REQ_PRIVATE_DATA - CM_RDMA_HDR);
		/* Seen from the passive side. */
		e->resp.param.conn.responder_resources = m->initiator_depth;
		e->resp.param.conn.initiator_depth = m->responder_resources;
		send_mra(child);
	}
}

static void handle_sidr_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct ucma_event *e;

	cm_id_close_sock(id);
	id->state = CM_UD_DONE;
	if (m->reason != CM_SIDR_SUCCESS) {
		e = ucma_event_queue(id, RDMA_CM_EVENT_UNREACHABLE, m->reason);
		if (e) {
			memcpy(e->resp.param.ud.private_data, m->private_data,
			       m->private_data_len);
			e->resp.param.ud.private_data_len =
				CM_SIDR_REP_PRIVATE_DATA;
		}
		return;
	}
	id->remote_qpn = m->qpn;
	e = ucma_event_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (!e)
		return;
	e->resp.param.ud.qp_num = m->qpn;
	e->resp.param.ud.qkey = m->qkey;
	cm_fill_av(id, &e->resp.param.ud.ah_attr);
	memcpy(e->resp.param.ud.private_data, m->private_data,
	       m->private_data_len);
	e->resp.param.ud.private_data_len = CM_SIDR_REP_PRIVATE_DATA;
}

/* An answer the id's timer waited for ends the wait (REP, RTU, REJ,
 * SIDR REP, DREP; a DREQ answers nothing, an MRA puts the wait off). */
static void answer_received(struct cm_id *id, const struct cm_msg *m)
{
	if (m->type != CM_MSG_DREQ && m->type != CM_MSG_MRA)
		id->deadline_ns = 0;
}

/* The peer's CM has the REQ or REP and its consumer will answer later:
 * wait its service timeout (and a packet's lifetime) from now. */
static void handle_mra(struct cm_id *id, const struct cm_msg *m)
{
	if (id->qp_type == IBV_QPT_UD || !id->deadline_ns ||
	    (id->state != CM_REQ_SENT && id->state != CM_REP_SENT))
		return;
	if (m->service_timeout == CM_MRA_SERVICE_TIMEOUT)
		id->deadline_ns = cm_now_ns() + cm_mra_timeout_ns;
	else
		id->deadline_ns = cm_now_ns() +
			(4096ull << (m->service_timeout & 31)) +
			(4096ull << CM_IBOE_PACKET_LIFETIME);
}

static void handle_msg(struct cm_id *id, const struct cm_msg *m)
{
	struct ucma_event *e;
	struct cm_msg r;

	answer_received(id, m);
	switch (m->type) {
	case CM_MSG_REP:
		if (id->state != CM_REQ_SENT || id->qp_type == IBV_QPT_UD)
			return;
		id->remote_qpn = m->qpn;
		id->remote_psn = m->psn;
		id->responder_resources = m->initiator_depth;
		id->initiator_depth = m->responder_resources;
		id->rnr_retry_count = m->rnr_retry_count;
		if (m->mtu && m->mtu < id->mtu)
			id->mtu = (enum ibv_mtu)m->mtu;
		id->state = CM_REP_RCVD;
		e = ucma_event_queue(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
		if (e)
			copy_conn_param(&e->resp.param.conn, m,
					CM_REP_PRIVATE_DATA);
		send_mra(id);
		return;
	case CM_MSG_MRA:
		handle_mra(id, m);
		return;
	case CM_MSG_SIDR_REP:
		if (id->state == CM_REQ_SENT && id->qp_type == IBV_QPT_UD)
			handle_sidr_rep(id, m);
		return;
	case CM_MSG_RTU:
		if (id->state != CM_REP_SENT)
			return;
		id->state = CM_ESTABLISHED;
		ucma_event_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		return;
	case CM_MSG_REJ:
		if (id->state != CM_REQ_SENT && id->state != CM_REP_RCVD &&
		    id->state != CM_REQ_RCVD && id->state != CM_REP_SENT)
			return;
		cm_id_close_sock(id);
		id->state = CM_TIMEWAIT;
		e = ucma_event_queue(id, RDMA_CM_EVENT_REJECTED, m->reason);
		if (e) {
			memcpy(e->resp.param.conn.private_data,
			       m->private_data, m->private_data_len);
			e->resp.param.conn.private_data_len =
				CM_REJ_PRIVATE_DATA;
		}
		return;
	case CM_MSG_DREQ:
		if (id->state == CM_DREQ_SENT) {
			/* Both sides disconnected at once. */
			cm_msg_init(&r, CM_MSG_DREP, NULL, 0);
			cm_send_msg(id->sock, &r);
			cm_id_close_sock(id);
			cm_enter_timewait(id);
			ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
			return;
		}
		if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
		    id->state != CM_REP_RCVD)
			return;
		id->state = CM_DREQ_RCVD;
		ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	case CM_MSG_DREP:
		if (id->state != CM_DREQ_SENT)
			return;
		cm_id_close_sock(id);
		cm_enter_timewait(id);
		ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	default:
		return;
	}
}

/*
 * The peer's process is gone: its kernel would have destroyed its ids,
 * each sending what cm_destroy() sends in the state the peer is in, as
 * seen from ours. That message is taken as received, through the CM's
 * own path; a state whose peer sends nothing on destroy just ends.
 */
void cm_peer_gone(struct cm_id *id)
{
	bool ud = id->qp_type == IBV_QPT_UD;
	struct cm_msg m;

	cm_msg_init(&m, 0, NULL, 0);
	switch (id->state) {
	case CM_REQ_SENT:	/* the peer had the REQ: its reject */
		m.type = ud ? CM_MSG_SIDR_REP : CM_MSG_REJ;
		m.reason = ud ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_REQ_RCVD:	/* the peer waited for our REP */
		m.type = ud ? 0 : CM_MSG_REJ;
		m.reason = CM_REJ_TIMEOUT;
		break;
	case CM_REP_SENT:
	case CM_REP_RCVD:
		m.type = CM_MSG_REJ;
		m.reason = CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_ESTABLISHED:
		m.type = CM_MSG_DREQ;
		break;
	case CM_DREQ_SENT:	/* the peer had our DREQ */
		m.type = CM_MSG_DREP;
		break;
	default:
		break;
	}
	if (m.type)
		handle_msg(id, &m);
	cm_id_close_sock(id);
	if (m.type)
		return;
	if (id->state == CM_REQ_RCVD)
		id->state = CM_TIMEWAIT;	/* UD: no REP will come */
	else if (id->state == CM_DREQ_RCVD)
		cm_enter_timewait(id);		/* our DREP is owed to no one */
}

/* What a CM agent may send; anything else ends the connection (an agent
 * of another host is as trusted as the network between). */
static bool msg_valid(const struct cm_msg *m)
{
	static const int families[] = { AF_INET, AF_INET6, AF_IB };
	bool src = false, dst = false;
	unsigned int i;

	if (m->type < CM_MSG_REQ || m->type > CM_MSG_LAST ||
	    m->private_data_len > CM_DREP_PRIVATE_DATA)
		return false;
	if (m->type != CM_MSG_REQ && m->type != CM_MSG_SIDR_REQ)
		return true;	/* only a REQ's addresses are used */
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		src |= m->src.ss_family == families[i];
		dst |= m->dst.ss_family == families[i];
	}
	return src && dst;
}

/* Reads one message; false when the socket is finished. A TCP socket
 * (another host's agent) is a stream: a message is read once all of it is
 * there, which its low-water mark makes poll wait for. */
static bool recv_msg(int sock, struct cm_msg *m, bool *got)
{
	ssize_t n = sim_libc.recvfrom(sock, m, sizeof(*m),
				      MSG_DONTWAIT | MSG_PEEK, NULL, NULL);

	*got = false;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n > 0 && n < (ssize_t)sizeof(*m)) {
		struct pollfd p = { .fd = sock, .events = POLLRDHUP };
		int type = 0;
		socklen_t len = sizeof(type);

		/* a short datagram is no agent's; a stream may say more */
		if (sim_libc.getsockopt(sock, SOL_SOCKET, SO_TYPE, &type,
					&len) ||
		    type != SOCK_STREAM)
			return false;
		return poll(&p, 1, 0) == 0;
	}
	if (n != (ssize_t)sizeof(*m) ||
	    sim_libc.recvfrom(sock, m, sizeof(*m), MSG_DONTWAIT, NULL,
			      NULL) != (ssize_t)sizeof(*m) ||
	    !msg_valid(m))
		return false;	/* EOF, or not a CM agent */
	*got = true;
	return true;
}

/*
 * Whether sock has hung up (or failed) with nothing left to read. Asked
 * now: what the agent's poll() said came before cm_lock was taken, and
 * may be of an earlier socket of the same number, closed meanwhile (an id
 * destroyed) and the number given to the next connect's.
 */
static bool sock_hung_up(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* fd was readable, or hung up, when the agent polled (cm_lock held). */
static void agent_fd_ready(int fd)
{
	struct cm_pending **p, *pend;
	struct cm_id *id;
	struct cm_msg m;
	unsigned int i;
	bool got;

	for (i = 0; i < cm_agent.num_listen; i++) {
		if (cm_agent.listen[i] == fd) {
			cm_pending_accept(fd);
			return;
		}
	}
	for (p = &cm_agent.pending; (pend = *p); p = &pend->next) {
		if (pend->sock != fd)
			continue;
		if (!recv_msg(fd, &m, &got) ||
		    (got && m.type != CM_MSG_REQ &&
		     m.type != CM_MSG_SIDR_REQ)) {
			cm_pending_drop(p, true);
			return;
		}
		if (got) {
			cm_pending_drop(p, false);
			handle_req(fd, &m);
		}
		return;
	}
	for (id = cm_ids; id; id = id->next) {
		if (id->sock != fd)
			continue;
		if (id->connecting) {
			cm_connect_made(id);
			return;
		}
		while (id->sock == fd) {
			if (!recv_msg(fd, &m, &got)) {
				cm_peer_gone(id);
				return;
			}
			if (!got) {
				if (sock_hung_up(fd))
					cm_peer_gone(id);
				return;
			}
			handle_msg(id, &m);
		}
		return;
	}
}

/* The ids whose answer did not come in time (cm_lock held); returns the
 * poll timeout in ms until the next deadline, -1 for none. */
static int expire_timers(void)
{
	uint64_t now = cm_now_ns(), next = cm_pending_expire(now);
	struct cm_id *id;

	for (id = cm_ids; id; id = id->next) {
		enum cm_state state = id->state;

		if (!id->deadline_ns)
			continue;
		if (id->deadline_ns > now) {
			if (!next || id->deadline_ns < next)
				next = id->deadline_ns;
			continue;
		}
		if (id->connecting) {
			cm_id_close_sock(id);
			cm_connect_refused(id);
			continue;
		}
		if (state == CM_TIMEWAIT && id->timewait_exit) {
			id->timewait_exit = false;
			id->deadline_ns = 0;
			ucma_event_queue(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
			continue;
		}
		cm_id_close_sock(id);
		id->state = CM_TIMEWAIT;
		if (state == CM_DREQ_SENT) {
			ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED,
					 -ETIMEDOUT);
			cm_enter_timewait(id);
		}
		else if (state == CM_REQ_SENT || state == CM_REP_SENT)
			ucma_event_queue(id, RDMA_CM_EVENT_UNREACHABLE,
					 -ETIMEDOUT);
	}
	if (!next)
		return -1;
	return (int)((next - now) / 1000000u) + 1;
}

static void *agent_main(void *arg)
{
	struct pollfd *fds = NULL;
	size_t cap = 0, n, i;

	(void)arg;
	for (;;) {
		struct cm_pending *pend;
		struct cm_id *id;
		eventfd_t v;
		int timeout;

		pthread_mutex_lock(&cm_lock);
		timeout = expire_timers();
		n = 1 + cm_agent.num_listen;
		for (pend = cm_agent.pending; pend; pend = pend->next)
			n++;
		for (id = cm_ids; id; id = id->next)
			n += id->sock >= 0;
		if (n > cap) {
			struct pollfd *nf = realloc(fds, n * sizeof(*fds));

			if (nf) {
				fds = nf;
				cap = n;
			}
		}
		n = 0;
		if (cap) {
			fds[n++] = (struct pollfd){ cm_agent.wake, POLLIN, 0 };
			for (i = 0; i < cm_agent.num_listen && n < cap; i++)
				fds[n++] = (struct pollfd){ cm_agent.listen[i],
							    POLLIN, 0 };
			for (pend = cm_agent.pending; pend && n < cap;
			     pend = pend->next)
				fds[n++] = (struct pollfd){ pend->sock,
							    POLLIN, 0 };
			for (id = cm_ids; id && n < cap; id = id->next)
				if (id->sock >= 0)
					fds[n++] = (struct pollfd){
						id->sock,
						id->connecting ? POLLOUT :
								 POLLIN, 0 };
		}
		pthread_mutex_unlock(&cm_lock);

		if (poll(fds, n, n ? timeout : 100) < 0)
			continue;

		pthread_mutex_lock(&cm_lock);
		for (i = 1; i < n; i++)
			if (fds[i].revents & ~POLLNVAL)
				agent_fd_ready(fds[i].fd);
		pthread_mutex_unlock(&cm_lock);
		if (n && (fds[0].revents & POLLIN))
			eventfd_read(cm_agent.wake, &v);
	}
	return NULL;
}

/*
 * fork(): the agent thread is not in the child, and the child must not
 * take the parent's CM traffic. Its copies of the agent's listening
 * sockets, of the accepted ones and of every id's connection socket are
 * closed (the parent's stay open), so the parent's ids keep working in
 * the parent alone; in the child they are inert copies. The child's
 * first rdma_cm file starts an agent of its own, for the adapters it has
 * by then (identities of its own, made at its first use of the device:
 * host/config.c). cm_lock is held across the fork, so that the
 * child's copy of the CM state is consistent, and the agent allocates only
 * under it. Its thread was started whole before the open that started it
 * returned (sim_thread_create): a fork() right after leaves the child no
 * lock of the thread runtime held, which would hang the child's agent.
 */
static void cm_fork_prepare(void)
{
	pthread_mutex_lock(&cm_lock);
}

static void cm_fork_parent(void)
{
	pthread_mutex_unlock(&cm_lock);
}

static void cm_fork_child(void)
{
	struct cm_id *id;
	unsigned int i;

	if (cm_agent.started) {
		for (i = 0; i < cm_agent.num_listen; i++)
			sim_fd_close(cm_agent.listen[i]);
		cm_agent.num_listen = 0;
		while (cm_agent.pending)
			cm_pending_drop(&cm_agent.pending, true);
		sim_fd_close(cm_agent.wake);
		cm_agent.wake = -1;
		for (id = cm_ids; id; id = id->next) {
			if (id->sock >= 0)
				sim_fd_close(id->sock);
			id->sock = -1;
			id->deadline_ns = 0;
			free(id->connecting);
			id->connecting = NULL;
		}
		cm_agent.rng = 0;	/* the child's own PSNs and ports */
		cm_agent.started = false;
	}
	pthread_mutex_unlock(&cm_lock);
}

int cm_agent_start(void)
{
	static bool fork_handlers;
	struct sockaddr_storage sa;
	sigset_t all, old;
	unsigned int d, i;
	socklen_t len;
	int ret;

	if (cm_agent.started)
		return 0;
	if (!fork_handlers) {
		/* fork() takes the locks of its prepare handlers in the
		 * reverse order of their registration: those that nest
		 * inside cm_lock (cm_gsi.h) register first. */
		ret = cm_gsi_fork_handlers();
		if (!ret)
			ret = pthread_atfork(cm_fork_prepare, cm_fork_parent,
					     cm_fork_child);
		if (ret)
			return -ret;
		fork_handlers = true;
	}
	cm_agent.wake = sim_fd_own(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
	if (cm_agent.wake < 0)
		return -errno;
	for (d = 0; d < sim_global.num_adapters; d++) {
		const struct sim_dev *dev = &sim_devs[d];

		for (i = 0; i < dev->gid_count; i++) {
			int s = sim_fd_own(sim_libc.socket(AF_UNIX,
						SOCK_SEQPACKET | SOCK_NONBLOCK |
						SOCK_CLOEXEC, 0));

			if (s < 0)
				continue;
			len = cm_agent_sockaddr(&dev->gid[i],
						(struct sockaddr *)&sa);
			if (sim_libc.bind(s, (struct sockaddr *)&sa, len) ||
			    listen(s, 128)) {
				sim_fd_close(s);
				continue;
			}
			cm_agent.listen[cm_agent.num_listen++] = s;
		}
		i = (unsigned int)cm_tcp_listen(dev, sizeof(struct cm_msg));
		if ((int)i >= 0)
			cm_agent.listen[cm_agent.num_listen++] = (int)i;
	}
	/* The agent runs none of the application's signal handlers. */
	sigfillset(&all);
	sim_libc.pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = sim_thread_create(&cm_agent.thread, NULL, agent_main, NULL);
	sim_libc.pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		for (i = 0; i < cm_agent.num_listen; i++)
			sim_fd_close(cm_agent.listen[i]);
		cm_agent.num_listen = 0;
		sim_fd_close(cm_agent.wake);
		cm_agent.wake = -1;
		return -ret;
	}
	pthread_detach(cm_agent.thread);
	cm_agent.started = true;
	return cm_gsi_start();
}
