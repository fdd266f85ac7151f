// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the connection manager protocol between processes,
 * and the connection state of each id, as ib_cm and rdma_cm keep them.
 *
 * Each process that opens rdma_cm runs one CM agent: a thread and, for
 * every GID of its adapters, a listening Unix SOCK_SEQPACKET socket at an
 * abstract address (cm_addr.c). A connection attempt is one socket
 * between the two agents for the life of the connection; its messages
 * are the IB CM's: REQ, REP, RTU, REJ, DREQ, DREP, and SIDR REQ/REP for
 * UD ids, each a struct cm_msg, with the IB CM's private data sizes
 * (rdma_cm's 36-byte address header comes out of the REQ's 92 and the
 * SIDR REQ's 216 bytes). A peer whose socket closes without a word was
 * killed: its kernel would have rejected an unanswered REQ or REP
 * (REJECTED), disconnected an established connection (DISCONNECTED), so
 * the survivor gets that.
 *
 * A message that waits for an answer (REQ, REP, DREQ) gives up after
 * cm_response_timeout_ns (UNREACHABLE, or DISCONNECTED for a DREQ, with
 * -ETIMEDOUT), and a disconnected connection reports TIMEWAIT_EXIT after
 * ib_cm's time wait; the agent thread keeps these timers. As rdma_cm
 * does, the CM answers a REQ and a REP it hands to the consumer with an
 * MRA (message receipt acknowledgement): the peer then waits the MRA's
 * service timeout (cm_mra_timeout_ns), so a server that accepts late or
 * a client slow to send its RTU still connects.
 *
 * DEVICE_REMOVAL and ADDR_CHANGE have no source here: the kernel raises
 * them when the adapter is unregistered or its netdev's address changes,
 * and a simulated adapter and its addresses live as long as the process.
 *
 * What the QP needs comes from the exchange and INIT_QP_ATTR returns it:
 * the peer's QPN and starting PSN, responder resources and initiator
 * depth (each side's own view), retry and RNR retry counts, the path MTU
 * (the smaller port MTU), and the GIDs for the address vector.
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

#include "cm.h"

enum cm_msg_type {
	CM_MSG_REQ = 1,
	CM_MSG_REP,
	CM_MSG_RTU,
	CM_MSG_REJ,
	CM_MSG_DREQ,
	CM_MSG_DREP,
	CM_MSG_SIDR_REQ,
	CM_MSG_SIDR_REP,
	CM_MSG_MRA,
	CM_MSG_LAST = CM_MSG_MRA	/* msg_valid()'s bound */
};

struct cm_msg {
	uint8_t type;
	uint8_t reason;			/* REJ reason, SIDR REP status */
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint8_t mtu;
	uint8_t service_timeout;	/* MRA: 4.096 us << this */
	uint16_t ps;
	uint32_t qpn;
	uint32_t psn;
	uint32_t qkey;
	uint8_t src_gid[16];
	uint8_t dst_gid[16];
	struct sockaddr_storage src;	/* of the sender of a REQ */
	struct sockaddr_storage dst;
	uint8_t private_data[RDMA_MAX_PRIVATE_DATA];
};

/* Accepted sockets that have not sent their REQ yet. */
struct cm_pending {
	struct cm_pending *next;
	int sock;
};

/* A Unix socket per GID, a TCP socket per adapter (cm_tcp.c). */
#define CM_MAX_LISTEN	(SIM_MAX_ADAPTERS * (SIM_GID_TABLE_LEN + 1))

static struct {
	bool started;
	int wake;			/* eventfd */
	int listen[CM_MAX_LISTEN];
	unsigned int num_listen;
	struct cm_pending *pending;
	pthread_t thread;
	uint64_t rng;
} agent = { .wake = -1 };

/* The sim's own generator: the application's random() stays its own. */
static uint32_t cm_random(void)
{
	if (!agent.rng) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		agent.rng = ((uint64_t)getpid() << 32) ^
			    (uint64_t)ts.tv_nsec ^ 0x9e3779b97f4a7c15ull;
	}
	agent.rng ^= agent.rng << 13;
	agent.rng ^= agent.rng >> 7;
	agent.rng ^= agent.rng << 17;
	return (uint32_t)(agent.rng >> 16);
}

uint32_t cm_random_psn(void)
{
	return cm_random() & 0xffffff;
}

uint16_t cm_random_port(void)
{
	return (uint16_t)(32768 + cm_random() % (60999 - 32768 + 1));
}

uint64_t cm_response_timeout_ns = 16ull * (4096ull << 20);
uint64_t cm_mra_timeout_ns = (4096ull << CM_MRA_SERVICE_TIMEOUT) +
			     (4096ull << CM_IBOE_PACKET_LIFETIME);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The state waits for the peer's answer: the agent ends the wait. */
static void arm_timer(struct cm_id *id)
{
	id->deadline_ns = now_ns() + cm_response_timeout_ns;
}

static void agent_wake(void);

/*
 * A connection that was disconnected waits out its packets' lifetime
 * before the CM reports TIMEWAIT_EXIT (ib_cm's timewait: 4.096 us << 19,
 * the ACK timeout of the connection). Called with the socket closed.
 */
#define CM_TIMEWAIT_NS	(4096ull << 19)

static void enter_timewait(struct cm_id *id)
{
	id->state = CM_TIMEWAIT;
	id->timewait_exit = true;
	id->deadline_ns = now_ns() + CM_TIMEWAIT_NS;
	agent_wake();
}

static void agent_wake(void)
{
	if (agent.wake >= 0)
		eventfd_write(agent.wake, 1);
}

static bool send_msg(int sock, const struct cm_msg *m)
{
	return send(sock, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT) ==
	       (ssize_t)sizeof(*m);
}

static void msg_init(struct cm_msg *m, uint8_t type, const uint8_t *pdata,
		     uint8_t len)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	if (pdata && len) {
		memcpy(m->private_data, pdata, len);
		m->private_data_len = len;
	}
}

static void id_close_sock(struct cm_id *id)
{
	id->deadline_ns = 0;
	if (id->sock >= 0) {
		sim_libc.close(id->sock);
		id->sock = -1;
		agent_wake();
	}
}

/*
 * rdma_cm acknowledges a REQ (passive side) and a REP (active side) with
 * an MRA as soon as it has handed the event to the consumer: a user
 * process may take long to accept or to answer with its RTU, and the MRA
 * tells the peer's CM to wait the service timeout instead of its
 * response timeout.
 */
static void send_mra(const struct cm_id *id)
{
	struct cm_msg m;

	if (id->qp_type == IBV_QPT_UD || id->sock < 0)
		return;
	msg_init(&m, CM_MSG_MRA, NULL, 0);
	m.service_timeout = CM_MRA_SERVICE_TIMEOUT;
	send_msg(id->sock, &m);
}

static bool has_cm(const struct cm_id *id)
{
	return id->state >= CM_REQ_SENT;
}

/* ---- commands (cm_lock held) ---- */

int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct sockaddr_storage sa;
	struct cm_msg m;
	socklen_t len;
	bool ud = id->qp_type == IBV_QPT_UD;
	unsigned int max = ud ? CM_SIDR_REQ_PRIVATE_DATA - CM_RDMA_HDR :
			   CM_REQ_PRIVATE_DATA - CM_RDMA_HDR;
	int sock;

	if (id->state != CM_ROUTE_RESOLVED)
		return -EINVAL;
	if (p->private_data_len > max)
		return -EINVAL;
	id->local_qpn = p->qp_num & 0xffffff;
	id->local_psn = cm_random_psn();
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	id->retry_count = p->retry_count & 7;
	id->rnr_retry_count = p->rnr_retry_count & 7;
	id->flow_control = p->flow_control;
	id->qkey = CM_UDP_QKEY;
	id->state = CM_REQ_SENT;
	arm_timer(id);

	msg_init(&m, ud ? CM_MSG_SIDR_REQ : CM_MSG_REQ, p->private_data,
		 p->private_data_len);
	m.ps = id->ps;
	m.qpn = id->local_qpn;
	m.psn = id->local_psn;
	m.responder_resources = p->responder_resources;
	m.initiator_depth = p->initiator_depth;
	m.flow_control = p->flow_control;
	m.retry_count = id->retry_count;
	m.rnr_retry_count = id->rnr_retry_count;
	m.srq = p->srq;
	m.mtu = (uint8_t)id->mtu;
	memcpy(m.src_gid, id->sgid.raw, 16);
	memcpy(m.dst_gid, id->dgid.raw, 16);
	m.src = id->src;
	m.dst = id->dst;

	sock = sim_libc.socket(AF_UNIX,
			       SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	len = cm_agent_sockaddr(&id->dgid, (struct sockaddr *)&sa);
	if (connect(sock, (struct sockaddr *)&sa, len)) {
		/* No agent of this host answers for it: another host's? */
		sim_libc.close(sock);
		sock = cm_tcp_gid(&id->dgid) ?
		       cm_tcp_connect(&id->dgid, sizeof(m)) : -1;
	}
	if (sock < 0 || !send_msg(sock, &m)) {
		/*
		 * The address is on the fabric but nothing there runs a CM
		 * that knows the service: its CM answers with a reject (a
		 * SIDR REP saying unsupported).
		 */
		if (sock >= 0)
			sim_libc.close(sock);
		id->state = CM_TIMEWAIT;
		id->deadline_ns = 0;
		if (ud)
			return ucma_event_queue(id, RDMA_CM_EVENT_UNREACHABLE,
						CM_SIDR_UNSUPPORTED) ?
			       0 : -ENOMEM;
		return ucma_event_queue(id, RDMA_CM_EVENT_REJECTED,
					CM_REJ_INVALID_SERVICE_ID) ?
		       0 : -ENOMEM;
	}
	id->sock = sock;
	agent_wake();
	return 0;
}

int cm_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct cm_msg m;

	if (!p) {
		/* The active side's answer to CONNECT_RESPONSE: RTU. */
		if (id->state != CM_REP_RCVD)
			return -EINVAL;
		msg_init(&m, CM_MSG_RTU, NULL, 0);
		send_msg(id->sock, &m);
		id->state = CM_ESTABLISHED;
		return 0;
	}
	if (id->state != CM_REQ_RCVD)
		return -EINVAL;
	if (id->qp_type == IBV_QPT_UD) {
		if (p->private_data_len > CM_SIDR_REP_PRIVATE_DATA)
			return -EINVAL;
		msg_init(&m, CM_MSG_SIDR_REP, p->private_data,
			 p->private_data_len);
		m.reason = CM_SIDR_SUCCESS;
		m.qpn = p->qp_num & 0xffffff;
		m.qkey = id->ps == RDMA_PS_IB && p->qkey ? p->qkey :
			 CM_UDP_QKEY;
		id->local_qpn = m.qpn;
		id->qkey = m.qkey;
		send_msg(id->sock, &m);
		id_close_sock(id);
		id->state = CM_UD_DONE;
		return 0;
	}
	if (p->private_data_len > CM_REP_PRIVATE_DATA)
		return -EINVAL;
	id->local_qpn = p->qp_num & 0xffffff;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	msg_init(&m, CM_MSG_REP, p->private_data, p->private_data_len);
	m.qpn = id->local_qpn;
	m.psn = id->local_psn;
	m.responder_resources = p->responder_resources;
	m.initiator_depth = p->initiator_depth;
	m.flow_control = p->flow_control;
	m.rnr_retry_count = p->rnr_retry_count & 7;
	m.srq = p->srq;
	m.mtu = (uint8_t)id->mtu;
	send_msg(id->sock, &m);
	id->state = CM_REP_SENT;
	arm_timer(id);
	agent_wake();
	return 0;
}

int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pdata,
	      uint8_t len)
{
	struct cm_msg m;

	if (id->qp_type == IBV_QPT_UD) {
		if (id->state != CM_REQ_RCVD)
			return -EINVAL;
		if (len > CM_SIDR_REP_PRIVATE_DATA)
			return -EINVAL;
		msg_init(&m, CM_MSG_SIDR_REP, pdata, len);
		m.reason = CM_SIDR_REJECT;
	} else {
		if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD)
			return -EINVAL;
		if (len > CM_REJ_PRIVATE_DATA)
			return -EINVAL;
		msg_init(&m, CM_MSG_REJ, pdata, len);
		m.reason = reason;
	}
	send_msg(id->sock, &m);
	id_close_sock(id);
	id->state = CM_TIMEWAIT;
	return 0;
}

int cm_disconnect(struct cm_id *id)
{
	struct cm_msg m;

	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		msg_init(&m, CM_MSG_DREQ, NULL, 0);
		if (send_msg(id->sock, &m)) {
			id->state = CM_DREQ_SENT;
			arm_timer(id);
			agent_wake();
			return 0;
		}
		/* The peer is gone: nothing will answer. */
		id_close_sock(id);
		enter_timewait(id);
		return ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0) ?
		       0 : -ENOMEM;
	case CM_DREQ_RCVD:
		msg_init(&m, CM_MSG_DREP, NULL, 0);
		send_msg(id->sock, &m);
		id_close_sock(id);
		enter_timewait(id);
		return 0;
	case CM_REQ_SENT:
	case CM_REQ_RCVD:
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
	case CM_UD_DONE:
		return 0;
	default:
		return -EINVAL;
	}
}

void cm_destroy(struct cm_id *id)
{
	struct cm_msg m;

	if (id->sock < 0)
		return;
	memset(&m, 0, sizeof(m));
	switch (id->state) {
	case CM_REQ_SENT:
		if (id->qp_type == IBV_QPT_UD)
			break;
		msg_init(&m, CM_MSG_REJ, NULL, 0);
		m.reason = CM_REJ_TIMEOUT;
		break;
	case CM_REQ_RCVD:
		if (id->qp_type == IBV_QPT_UD) {
			msg_init(&m, CM_MSG_SIDR_REP, NULL, 0);
			m.reason = CM_SIDR_REJECT;
			break;
		}
		/* fallthrough */
	case CM_REP_SENT:
	case CM_REP_RCVD:
		msg_init(&m, CM_MSG_REJ, NULL, 0);
		m.reason = CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_ESTABLISHED:
		msg_init(&m, CM_MSG_DREQ, NULL, 0);
		break;
	case CM_DREQ_RCVD:
		msg_init(&m, CM_MSG_DREP, NULL, 0);
		break;
	default:
		break;
	}
	if (m.type)
		send_msg(id->sock, &m);
	id_close_sock(id);
}

static void fill_av(const struct cm_id *id, struct ib_uverbs_ah_attr *ah)
{
	memcpy(ah->grh.dgid, id->dgid.raw, 16);
	ah->grh.sgid_index = (uint8_t)id->sgid_index;
	ah->grh.hop_limit = CM_HOP_LIMIT;
	ah->grh.traffic_class = id->tos;
	ah->is_global = 1;
	ah->port_num = 1;
}

int cm_init_qp_attr(struct cm_id *id, uint32_t qp_state,
		    struct ib_uverbs_qp_attr *a)
{
	if (!id->dev)
		return -EINVAL;
	a->qp_state = qp_state;
	a->port_num = 1;
	a->pkey_index = 0;
	if (id->qp_type == IBV_QPT_UD || !has_cm(id)) {
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			a->qkey = id->qkey ? id->qkey : CM_UDP_QKEY;
			a->qp_attr_mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = 0;
			a->qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	}
	switch (id->state) {
	case CM_REQ_RCVD:
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_ESTABLISHED:
		break;
	case CM_REQ_SENT:
		if (qp_state == IBV_QPS_INIT)
			break;
		return -EINVAL;
	default:
		return -EINVAL;
	}
	switch (qp_state) {
	case IBV_QPS_INIT:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
				  IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					      IBV_ACCESS_REMOTE_ATOMIC;
		return 0;
	case IBV_QPS_RTR:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER;
		fill_av(id, &a->ah_attr);
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->remote_psn;
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = 0;
		return 0;
	case IBV_QPS_RTS:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		a->sq_psn = id->local_psn;
		a->timeout = id->ack_timeout_set ? id->ack_timeout :
			     CM_IBOE_PACKET_LIFETIME + 1;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry_count;
		a->max_rd_atomic = id->initiator_depth;
		return 0;
	default:
		return -EINVAL;
	}
}

int cm_notify(struct cm_id *id, uint32_t event)
{
	if (!has_cm(id))
		return -EINVAL;
	switch (event) {
	case IBV_EVENT_COMM_EST:
		/* Traffic before the RTU: the connection is up. */
		if (id->state == CM_REP_SENT) {
			id->state = CM_ESTABLISHED;
			return ucma_event_queue(id, RDMA_CM_EVENT_ESTABLISHED,
						0) ? 0 : -ENOMEM;
		}
		return 0;
	case IBV_EVENT_PATH_MIG:
		return 0;
	default:
		return -EINVAL;
	}
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
			msg_init(&r, CM_MSG_SIDR_REP, NULL, 0);
			r.reason = listener ? CM_SIDR_REJECT :
				   CM_SIDR_UNSUPPORTED;
		} else {
			msg_init(&r, CM_MSG_REJ, NULL, 0);
			r.reason = listener ? CM_REJ_CONSUMER_DEFINED :
				   CM_REJ_INVALID_SERVICE_ID;
		}
		send_msg(sock, &r);
		sim_libc.close(sock);
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
	child->mtu = m->mtu && m->mtu < dev->cfg.mtu ? (enum ibv_mtu)m->mtu :
		     dev->cfg.mtu;
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

	id_close_sock(id);
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
	fill_av(id, &e->resp.param.ud.ah_attr);
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
		id->deadline_ns = now_ns() + cm_mra_timeout_ns;
	else
		id->deadline_ns = now_ns() +
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
		id_close_sock(id);
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
			msg_init(&r, CM_MSG_DREP, NULL, 0);
			send_msg(id->sock, &r);
			id_close_sock(id);
			enter_timewait(id);
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
		id_close_sock(id);
		enter_timewait(id);
		ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	default:
		return;
	}
}

/* The peer's socket closed without a word: its process is gone, and its
 * kernel would have said what destroying its id says. */
static void handle_eof(struct cm_id *id)
{
	enum cm_state state = id->state;

	id_close_sock(id);
	switch (state) {
	case CM_REQ_SENT:
		id->state = CM_TIMEWAIT;
		if (id->qp_type == IBV_QPT_UD)
			ucma_event_queue(id, RDMA_CM_EVENT_UNREACHABLE,
					 -ETIMEDOUT);
		else
			ucma_event_queue(id, RDMA_CM_EVENT_REJECTED,
					 CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_REQ_RCVD:
		id->state = CM_TIMEWAIT;
		if (id->qp_type != IBV_QPT_UD)
			ucma_event_queue(id, RDMA_CM_EVENT_REJECTED,
					 CM_REJ_TIMEOUT);
		break;
	case CM_REP_SENT:
	case CM_REP_RCVD:
		id->state = CM_TIMEWAIT;
		ucma_event_queue(id, RDMA_CM_EVENT_REJECTED,
				 CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:
		enter_timewait(id);
		ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case CM_DREQ_RCVD:
		enter_timewait(id);
		break;
	default:
		break;
	}
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
	ssize_t n = recv(sock, m, sizeof(*m), MSG_DONTWAIT | MSG_PEEK);

	*got = false;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n > 0 && n < (ssize_t)sizeof(*m)) {
		struct pollfd p = { .fd = sock, .events = POLLRDHUP };
		int type = 0;
		socklen_t len = sizeof(type);

		/* a short datagram is no agent's; a stream may say more */
		if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) ||
		    type != SOCK_STREAM)
			return false;
		return poll(&p, 1, 0) == 0;
	}
	if (n != (ssize_t)sizeof(*m) ||
	    recv(sock, m, sizeof(*m), MSG_DONTWAIT) != (ssize_t)sizeof(*m) ||
	    !msg_valid(m))
		return false;	/* EOF, or not a CM agent */
	*got = true;
	return true;
}

static void agent_fd_ready(int fd, short revents)
{
	struct cm_pending **p, *pend;
	struct cm_id *id;
	struct cm_msg m;
	unsigned int i;
	bool got;

	for (i = 0; i < agent.num_listen; i++) {
		if (agent.listen[i] != fd)
			continue;
		for (;;) {
			int s = accept4(fd, NULL, NULL,
					SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (s < 0)
				return;
			pend = calloc(1, sizeof(*pend));
			if (!pend) {
				sim_libc.close(s);
				return;
			}
			pend->sock = s;
			pend->next = agent.pending;
			agent.pending = pend;
		}
	}
	for (p = &agent.pending; (pend = *p); p = &pend->next) {
		if (pend->sock != fd)
			continue;
		if (!recv_msg(fd, &m, &got) ||
		    (got && m.type != CM_MSG_REQ &&
		     m.type != CM_MSG_SIDR_REQ)) {
			*p = pend->next;
			sim_libc.close(fd);
			free(pend);
			return;
		}
		if (got) {
			*p = pend->next;
			free(pend);
			handle_req(fd, &m);
		}
		return;
	}
	for (id = cm_ids; id; id = id->next) {
		if (id->sock != fd)
			continue;
		while (id->sock == fd) {
			if (!recv_msg(fd, &m, &got)) {
				handle_eof(id);
				return;
			}
			if (!got) {
				if (revents & (POLLHUP | POLLERR))
					handle_eof(id);
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
	uint64_t now = now_ns(), next = 0;
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
		if (state == CM_TIMEWAIT && id->timewait_exit) {
			id->timewait_exit = false;
			id->deadline_ns = 0;
			ucma_event_queue(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
			continue;
		}
		id_close_sock(id);
		id->state = CM_TIMEWAIT;
		if (state == CM_DREQ_SENT) {
			ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED,
					 -ETIMEDOUT);
			enter_timewait(id);
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
		n = 1 + agent.num_listen;
		for (pend = agent.pending; pend; pend = pend->next)
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
			fds[n++] = (struct pollfd){ agent.wake, POLLIN, 0 };
			for (i = 0; i < agent.num_listen && n < cap; i++)
				fds[n++] = (struct pollfd){ agent.listen[i],
							    POLLIN, 0 };
			for (pend = agent.pending; pend && n < cap;
			     pend = pend->next)
				fds[n++] = (struct pollfd){ pend->sock,
							    POLLIN, 0 };
			for (id = cm_ids; id && n < cap; id = id->next)
				if (id->sock >= 0)
					fds[n++] = (struct pollfd){ id->sock,
								    POLLIN,
								    0 };
		}
		pthread_mutex_unlock(&cm_lock);

		if (poll(fds, n, n ? timeout : 100) < 0)
			continue;

		pthread_mutex_lock(&cm_lock);
		for (i = 1; i < n; i++)
			if (fds[i].revents & ~POLLNVAL)
				agent_fd_ready(fds[i].fd, fds[i].revents);
		pthread_mutex_unlock(&cm_lock);
		if (n && (fds[0].revents & POLLIN))
			eventfd_read(agent.wake, &v);
	}
	return NULL;
}

/*
 * fork(): the agent thread is not in the child, and the child must not
 * take the parent's CM traffic. Its copies of the agent's listening
 * sockets, of the accepted ones and of every id's connection socket are
 * closed (the parent's stay open), so the parent's ids keep working in
 * the parent alone; in the child they are inert copies. The child's
 * first rdma_cm file starts an agent of its own, for the connections it
 * makes (its adapters' GIDs are still answered by the parent's agent
 * while the parent lives). cm_lock is held across the fork, so that the
 * child's copy of the CM state is consistent.
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
	struct cm_pending *pend;
	struct cm_id *id;
	unsigned int i;

	if (agent.started) {
		for (i = 0; i < agent.num_listen; i++)
			close(agent.listen[i]);
		agent.num_listen = 0;
		while ((pend = agent.pending)) {
			agent.pending = pend->next;
			close(pend->sock);
			free(pend);
		}
		close(agent.wake);
		agent.wake = -1;
		for (id = cm_ids; id; id = id->next) {
			if (id->sock >= 0)
				close(id->sock);
			id->sock = -1;
			id->deadline_ns = 0;
		}
		agent.rng = 0;	/* the child's own PSNs and ports */
		agent.started = false;
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

	if (agent.started)
		return 0;
	if (!fork_handlers) {
		ret = pthread_atfork(cm_fork_prepare, cm_fork_parent,
				     cm_fork_child);
		if (ret)
			return -ret;
		fork_handlers = true;
	}
	agent.wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (agent.wake < 0)
		return -errno;
	for (d = 0; d < sim_global.num_adapters; d++) {
		const struct sim_dev *dev = &sim_devs[d];

		for (i = 0; i < dev->gid_count; i++) {
			int s = sim_libc.socket(AF_UNIX, SOCK_SEQPACKET |
						SOCK_NONBLOCK | SOCK_CLOEXEC,
						0);

			if (s < 0)
				continue;
			len = cm_agent_sockaddr(&dev->gid[i],
						(struct sockaddr *)&sa);
			if (bind(s, (struct sockaddr *)&sa, len) ||
			    listen(s, 128)) {
				sim_libc.close(s);
				continue;
			}
			agent.listen[agent.num_listen++] = s;
		}
		i = (unsigned int)cm_tcp_listen(dev, sizeof(struct cm_msg));
		if ((int)i >= 0)
			agent.listen[agent.num_listen++] = (int)i;
	}
	/* The agent runs none of the application's signal handlers. */
	sigfillset(&all);
	sim_libc.pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = sim_libc.pthread_create(&agent.thread, NULL, agent_main, NULL);
	sim_libc.pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		for (i = 0; i < agent.num_listen; i++)
			sim_libc.close(agent.listen[i]);
		agent.num_listen = 0;
		sim_libc.close(agent.wake);
		agent.wake = -1;
		return -ret;
	}
	pthread_detach(agent.thread);
	agent.started = true;
	return 0;
}
