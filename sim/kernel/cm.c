// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the connection manager protocol between processes,
 * and the connection state of each id, as ib_cm and rdma_cm keep them.
 *
 * The commands are here; the agent and what it receives in cm_agent.c.
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

#include "cm_msg.h"
#include "fds.h"

struct cm_agent cm_agent = { .wake = -1 };

/* The sim's own generator: the application's random() stays its own. */
static uint32_t cm_random(void)
{
	if (!cm_agent.rng) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		cm_agent.rng = ((uint64_t)getpid() << 32) ^
			    (uint64_t)ts.tv_nsec ^ 0x9e3779b97f4a7c15ull;
	}
	cm_agent.rng ^= cm_agent.rng << 13;
	cm_agent.rng ^= cm_agent.rng >> 7;
	cm_agent.rng ^= cm_agent.rng << 17;
	return (uint32_t)(cm_agent.rng >> 16);
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

uint64_t cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The state waits for the peer's answer: the agent ends the wait. */
static void arm_timer(struct cm_id *id)
{
	id->deadline_ns = cm_now_ns() + cm_response_timeout_ns;
}

void cm_agent_wake(void);

/*
 * A connection that was disconnected waits out its packets' lifetime
 * before the CM reports TIMEWAIT_EXIT (ib_cm's timewait: 4.096 us << 19,
 * the ACK timeout of the connection). Called with the socket closed.
 */
#define CM_TIMEWAIT_NS	(4096ull << 19)

void cm_enter_timewait(struct cm_id *id)
{
	id->state = CM_TIMEWAIT;
	id->timewait_exit = true;
	id->deadline_ns = cm_now_ns() + CM_TIMEWAIT_NS;
	cm_agent_wake();
}

void cm_agent_wake(void)
{
	if (cm_agent.wake >= 0)
		eventfd_write(cm_agent.wake, 1);
}

bool cm_send_msg(int sock, const struct cm_msg *m)
{
	bool sent = sim_libc.sendto(sock, m, sizeof(*m),
				    MSG_NOSIGNAL | MSG_DONTWAIT, NULL, 0) ==
		    (ssize_t)sizeof(*m);

	/* a MAD leaves now, not when the GSI thread gets to it: the
	 * process may be about to exit */
	cm_gsi_kick();
	return sent;
}

void cm_msg_init(struct cm_msg *m, uint8_t type, const uint8_t *pdata,
		     uint8_t len)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	if (pdata && len) {
		memcpy(m->private_data, pdata, len);
		m->private_data_len = len;
	}
}

void cm_id_close_sock(struct cm_id *id)
{
	free(id->connecting);
	id->connecting = NULL;
	id->deadline_ns = 0;
	if (id->sock >= 0) {
		sim_fd_close(id->sock);
		id->sock = -1;
		cm_agent_wake();
	}
}

static bool has_cm(const struct cm_id *id)
{
	return id->state >= CM_REQ_SENT;
}

/* ---- commands (cm_lock held) ---- */

static int connect_later(struct cm_id *id, int sock, const struct cm_msg *m);

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

	cm_msg_init(&m, ud ? CM_MSG_SIDR_REQ : CM_MSG_REQ, p->private_data,
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

	sock = sim_fd_own(sim_libc.socket(AF_UNIX, SOCK_SEQPACKET |
					  SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (sock < 0)
		return -errno;
	len = cm_agent_sockaddr(&id->dgid, (struct sockaddr *)&sa);
	if (sim_libc.connect(sock, (struct sockaddr *)&sa, len)) {
		/* No agent of this host answers for it: another host's,
		 * over RoCE as MADs on QP 1 (cm_gsi.c), else over TCP. */
		sim_fd_close(sock);
		if (cm_gsi_gid(&id->dgid)) {
			sock = cm_gsi_connect();
		} else {
			sock = cm_tcp_gid(&id->dgid) ?
			       cm_tcp_connect(&id->dgid, sizeof(m)) : -1;
			if (sock >= 0)
				return connect_later(id, sock, &m);
		}
	}
	if (sock < 0 || !cm_send_msg(sock, &m)) {
		if (sock >= 0)
			sim_fd_close(sock);
		return cm_connect_refused(id) ? 0 : -ENOMEM;
	}
	id->sock = sock;
	cm_agent_wake();
	return 0;
}

bool cm_connect_refused(struct cm_id *id)
{
	/*
	 * The address is on the fabric but nothing there runs a CM that
	 * knows the service: its CM answers with a reject (a SIDR REP
	 * saying unsupported).
	 */
	id->state = CM_TIMEWAIT;
	id->deadline_ns = 0;
	if (id->qp_type == IBV_QPT_UD)
		return ucma_event_queue(id, RDMA_CM_EVENT_UNREACHABLE,
					CM_SIDR_UNSUPPORTED);
	return ucma_event_queue(id, RDMA_CM_EVENT_REJECTED,
				CM_REJ_INVALID_SERVICE_ID);
}

/* A connect to another host's agent under way: the agent sends the REQ
 * when it is made (cm_connect_made), or refuses it at the deadline. */
static int connect_later(struct cm_id *id, int sock, const struct cm_msg *m)
{
	id->connecting = malloc(sizeof(*m));
	if (!id->connecting) {
		sim_fd_close(sock);
		return cm_connect_refused(id) ? 0 : -ENOMEM;
	}
	memcpy(id->connecting, m, sizeof(*m));
	id->sock = sock;
	id->deadline_ns = cm_now_ns() + CM_TCP_CONNECT_MS * 1000000ull;
	cm_agent_wake();
	return 0;
}

void cm_connect_made(struct cm_id *id)
{
	struct pollfd p = { .fd = id->sock, .events = POLLOUT };
	struct cm_msg *m = id->connecting;
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, 0) != 1)
		return;	/* not yet: an earlier socket's readiness */
	id->connecting = NULL;
	if (sim_libc.getsockopt(id->sock, SOL_SOCKET, SO_ERROR, &err, &len) ||
				err ||
	    !cm_send_msg(id->sock, m)) {
		cm_id_close_sock(id);
		cm_connect_refused(id);
	} else {
		arm_timer(id);
	}
	free(m);
}

int cm_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct cm_msg m;

	if (!p) {
		/* The active side's answer to CONNECT_RESPONSE: RTU. */
		if (id->state != CM_REP_RCVD)
			return -EINVAL;
		cm_msg_init(&m, CM_MSG_RTU, NULL, 0);
		cm_send_msg(id->sock, &m);
		id->state = CM_ESTABLISHED;
		return 0;
	}
	if (id->state != CM_REQ_RCVD)
		return -EINVAL;
	if (id->qp_type == IBV_QPT_UD) {
		if (p->private_data_len > CM_SIDR_REP_PRIVATE_DATA)
			return -EINVAL;
		cm_msg_init(&m, CM_MSG_SIDR_REP, p->private_data,
			 p->private_data_len);
		m.reason = CM_SIDR_SUCCESS;
		m.qpn = p->qp_num & 0xffffff;
		m.qkey = id->ps == RDMA_PS_IB && p->qkey ? p->qkey :
			 CM_UDP_QKEY;
		id->local_qpn = m.qpn;
		id->qkey = m.qkey;
		cm_send_msg(id->sock, &m);
		cm_id_close_sock(id);
		id->state = CM_UD_DONE;
		return 0;
	}
	if (p->private_data_len > CM_REP_PRIVATE_DATA)
		return -EINVAL;
	id->local_qpn = p->qp_num & 0xffffff;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	cm_msg_init(&m, CM_MSG_REP, p->private_data, p->private_data_len);
	m.qpn = id->local_qpn;
	m.psn = id->local_psn;
	m.responder_resources = p->responder_resources;
	m.initiator_depth = p->initiator_depth;
	m.flow_control = p->flow_control;
	m.rnr_retry_count = p->rnr_retry_count & 7;
	m.srq = p->srq;
	m.mtu = (uint8_t)id->mtu;
	cm_send_msg(id->sock, &m);
	id->state = CM_REP_SENT;
	arm_timer(id);
	cm_agent_wake();
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
		cm_msg_init(&m, CM_MSG_SIDR_REP, pdata, len);
		m.reason = CM_SIDR_REJECT;
	} else {
		if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD)
			return -EINVAL;
		if (len > CM_REJ_PRIVATE_DATA)
			return -EINVAL;
		cm_msg_init(&m, CM_MSG_REJ, pdata, len);
		m.reason = reason;
	}
	cm_send_msg(id->sock, &m);
	cm_id_close_sock(id);
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
		cm_msg_init(&m, CM_MSG_DREQ, NULL, 0);
		if (cm_send_msg(id->sock, &m)) {
			id->state = CM_DREQ_SENT;
			arm_timer(id);
			cm_agent_wake();
			return 0;
		}
		/* The peer is gone: nothing will answer. */
		cm_id_close_sock(id);
		cm_enter_timewait(id);
		return ucma_event_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0) ?
		       0 : -ENOMEM;
	case CM_DREQ_RCVD:
		cm_msg_init(&m, CM_MSG_DREP, NULL, 0);
		cm_send_msg(id->sock, &m);
		cm_id_close_sock(id);
		cm_enter_timewait(id);
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
		cm_msg_init(&m, CM_MSG_REJ, NULL, 0);
		m.reason = CM_REJ_TIMEOUT;
		break;
	case CM_REQ_RCVD:
		if (id->qp_type == IBV_QPT_UD) {
			cm_msg_init(&m, CM_MSG_SIDR_REP, NULL, 0);
			m.reason = CM_SIDR_REJECT;
			break;
		}
		/* fallthrough */
	case CM_REP_SENT:
	case CM_REP_RCVD:
		cm_msg_init(&m, CM_MSG_REJ, NULL, 0);
		m.reason = CM_REJ_CONSUMER_DEFINED;
		break;
	case CM_ESTABLISHED:
		cm_msg_init(&m, CM_MSG_DREQ, NULL, 0);
		break;
	case CM_DREQ_RCVD:
		cm_msg_init(&m, CM_MSG_DREP, NULL, 0);
		break;
	default:
		break;
	}
	if (m.type)
		cm_send_msg(id->sock, &m);
	cm_id_close_sock(id);
}

void cm_fill_av(const struct cm_id *id, struct ib_uverbs_ah_attr *ah)
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
		cm_fill_av(id, &a->ah_attr);
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		/* The Starting PSN of a REQ or REP is what its sender's
		 * receive queue expects (ib_cm's rq_psn): the peer's send
		 * queue starts there. */
		a->rq_psn = id->local_psn;
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = 0;
		return 0;
	case IBV_QPS_RTS:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		a->sq_psn = id->remote_psn;
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
