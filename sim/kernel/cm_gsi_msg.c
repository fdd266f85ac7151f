// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm over RoCE (cm_gsi.h): the agent's struct cm_msg as
 * the IB CM MAD Linux's ib_cm and rdma_cm would send in its place, and
 * back. The fields a RoCE v2 path over IPv4 has: P_Key 0xffff, no LIDs,
 * the IPv4-mapped GIDs of both ends, hop limit 64, the ACK timeout of
 * rdma_cm's RoCE packet lifetime; both CM response timeouts rdma_cm's
 * (4.096 us << 20) and 15 CM retries.
 */
#include <endian.h>
#include <string.h>
#include <netinet/in.h>

#include "cm_gsi.h"

#define GSI_CM_RESPONSE_TIMEOUT	20
#define GSI_PKEY		0xffff
/* The device's CA ACK delay its REP states (4.096 us << 15). */
#define GSI_TARGET_ACK_DELAY	15

void gsi_mapped_gid(uint8_t gid[16], uint32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

static uint64_t ca_guid(const struct gsi_conn *c)
{
	return be64toh(sim_devs[c->dev].node_guid);
}

static void req_of(struct gsi_conn *c, const struct cm_msg *m,
		   struct cm_mad *d)
{
	const struct sockaddr_in *dst = (const struct sockaddr_in *)&m->dst;

	c->sid = cm_mad_service_id(m->ps, ntohs(dst->sin_port));
	d->service_id = c->sid;
	if (m->type == CM_MSG_SIDR_REQ) {
		d->attr_id = CM_ATTR_SIDR_REQ;
		d->pkey = GSI_PKEY;
	} else {
		d->attr_id = CM_ATTR_REQ;
		d->ca_guid = ca_guid(c);
		d->qpn = m->qpn;
		d->psn = m->psn;
		d->responder_resources = m->responder_resources;
		d->initiator_depth = m->initiator_depth;
		d->remote_cm_timeout = GSI_CM_RESPONSE_TIMEOUT;
		d->local_cm_timeout = GSI_CM_RESPONSE_TIMEOUT;
		d->flow_control = m->flow_control;
		d->retry_count = m->retry_count;
		d->rnr_retry_count = m->rnr_retry_count;
		d->mtu = m->mtu;
		d->max_cm_retries = GSI_MAX_RETRIES;
		d->srq = m->srq;
		d->pkey = GSI_PKEY;
		memcpy(d->local_gid, m->src_gid, 16);
		memcpy(d->remote_gid, m->dst_gid, 16);
		d->hop_limit = CM_HOP_LIMIT;
		d->local_ack_timeout = CM_IBOE_PACKET_LIFETIME + 1;
	}
	cm_mad_put_cma_hdr(d->pdata, (const struct sockaddr *)&m->src,
			   (const struct sockaddr *)&m->dst);
	memcpy(d->pdata + CM_MAD_CMA_HDR_LEN, m->private_data,
	       m->private_data_len);
}

/* The message a REJ of this side rejects, as ib_cm tells it. */
static uint8_t rej_of(const struct gsi_conn *c)
{
	if (!c->active && !c->rep_sent)
		return CM_MSG_OF_REQ;
	if (c->active && c->rep_seen)
		return CM_MSG_OF_REP;
	return CM_MSG_OF_OTHER;
}

bool gsi_msg_to_mad(struct gsi_conn *c, const struct cm_msg *m,
		    struct cm_mad *d)
{
	size_t room;

	memset(d, 0, sizeof(*d));
	d->tid = c->tid;
	d->local_comm_id = c->local_id;
	d->remote_comm_id = c->remote_id;
	switch (m->type) {
	case CM_MSG_REQ:
	case CM_MSG_SIDR_REQ:
		if (m->src.ss_family != AF_INET || m->dst.ss_family != AF_INET)
			return false;
		req_of(c, m, d);
		return true;
	case CM_MSG_REP:
		d->attr_id = CM_ATTR_REP;
		d->qpn = m->qpn;
		d->psn = m->psn;
		d->responder_resources = m->responder_resources;
		d->initiator_depth = m->initiator_depth;
		d->target_ack_delay = GSI_TARGET_ACK_DELAY;
		d->flow_control = m->flow_control;
		d->rnr_retry_count = m->rnr_retry_count;
		d->srq = m->srq;
		d->ca_guid = ca_guid(c);
		c->rep_sent = true;
		break;
	case CM_MSG_RTU:
		d->attr_id = CM_ATTR_RTU;
		break;
	case CM_MSG_MRA:
		d->attr_id = CM_ATTR_MRA;
		d->msg_of = c->active ? CM_MSG_OF_REP : CM_MSG_OF_REQ;
		d->service_timeout = m->service_timeout;
		break;
	case CM_MSG_REJ:
		d->attr_id = CM_ATTR_REJ;
		d->msg_of = rej_of(c);
		d->reason = m->reason;
		/* A timeout's REJ may come before the peer's comm ID did:
		 * ib_cm finds what it ends by the rejecter's CA GUID (its
		 * REQ's) in the ARI and its local comm ID. */
		if (m->reason == CM_REJ_TIMEOUT) {
			memcpy(d->ari, &sim_devs[c->dev].node_guid, 8);
			d->ari_len = 8;
		}
		break;
	case CM_MSG_DREQ:
		d->attr_id = CM_ATTR_DREQ;
		d->qpn = c->remote_qpn;
		break;
	case CM_MSG_DREP:
		d->attr_id = CM_ATTR_DREP;
		break;
	case CM_MSG_SIDR_REP:
		d->attr_id = CM_ATTR_SIDR_REP;
		d->local_comm_id = c->remote_id;	/* the request's ID */
		d->status = m->reason;
		d->qpn = m->qpn;
		d->service_id = c->sid;
		d->qkey = m->qkey;
		break;
	default:
		return false;
	}
	room = cm_mad_pdata_len(d->attr_id);
	memcpy(d->pdata, m->private_data,
	       m->private_data_len < room ? m->private_data_len : room);
	return true;
}

bool gsi_req_to_msg(const struct cm_mad *d, uint32_t peer, uint32_t local,
		    struct cm_msg *m)
{
	bool ud = d->attr_id == CM_ATTR_SIDR_REQ;
	size_t room = cm_mad_pdata_len(d->attr_id) - CM_MAD_CMA_HDR_LEN;
	uint16_t ps, port;

	if (!cm_mad_service_ps(d->service_id, &ps, &port))
		return false;
	/* rdma_cm's port spaces: TCP is RC, UDP is UD (SIDR) */
	if (ud ? ps == RDMA_PS_TCP : (ps == RDMA_PS_UDP || d->transport))
		return false;
	cm_msg_init(m, ud ? CM_MSG_SIDR_REQ : CM_MSG_REQ,
		    d->pdata + CM_MAD_CMA_HDR_LEN, (uint8_t)room);
	if (!cm_mad_get_cma_hdr(d->pdata, port, &m->src, &m->dst))
		return false;
	m->ps = ps;
	gsi_mapped_gid(m->src_gid, peer);
	gsi_mapped_gid(m->dst_gid, local);
	if (ud)
		return true;
	m->qpn = d->qpn;
	m->psn = d->psn;
	m->responder_resources = d->responder_resources;
	m->initiator_depth = d->initiator_depth;
	m->flow_control = d->flow_control;
	m->retry_count = d->retry_count;
	m->rnr_retry_count = d->rnr_retry_count;
	m->srq = d->srq;
	m->mtu = d->mtu >= IBV_MTU_256 && d->mtu <= IBV_MTU_4096 ? d->mtu : 0;
	return true;
}

bool gsi_mad_to_msg(struct gsi_conn *c, const struct cm_mad *d,
		    struct cm_msg *m)
{
	size_t len = cm_mad_pdata_len(d->attr_id);

	cm_msg_init(m, 0, d->pdata, (uint8_t)(len > 224 ? 224 : len));
	switch (d->attr_id) {
	case CM_ATTR_REP:
		m->type = CM_MSG_REP;
		m->qpn = d->qpn;
		m->psn = d->psn;
		m->responder_resources = d->responder_resources;
		m->initiator_depth = d->initiator_depth;
		m->flow_control = d->flow_control;
		m->rnr_retry_count = d->rnr_retry_count;
		m->srq = d->srq;
		c->remote_id = d->local_comm_id;
		c->remote_qpn = d->qpn;
		c->rep_seen = true;
		return true;
	case CM_ATTR_RTU:
		m->type = CM_MSG_RTU;
		return true;
	case CM_ATTR_MRA:
		m->type = CM_MSG_MRA;
		m->service_timeout = d->service_timeout;
		return true;
	case CM_ATTR_REJ:
		m->type = CM_MSG_REJ;
		/* the reasons rdma_cm reports are all below 256 */
		m->reason = d->reason > 255 ? 255 : (uint8_t)d->reason;
		return true;
	case CM_ATTR_DREQ:
		m->type = CM_MSG_DREQ;
		return true;
	case CM_ATTR_DREP:
		m->type = CM_MSG_DREP;
		return true;
	case CM_ATTR_SIDR_REP:
		m->type = CM_MSG_SIDR_REP;
		m->reason = d->status;
		m->qpn = d->qpn;
		m->qkey = d->qkey;
		return true;
	default:
		return false;
	}
}

bool gsi_exit_msg(const struct gsi_conn *c, struct cm_msg *m)
{
	cm_msg_init(m, 0, NULL, 0);
	if (c->finished || c->ud || !c->peer)
		return false;
	if (c->dreq_rcvd) {
		m->type = CM_MSG_DREP;
	} else if (c->established) {
		if (c->dreq_sent)
			return false;
		m->type = CM_MSG_DREQ;
	} else {
		m->type = CM_MSG_REJ;
		m->reason = c->active && !c->rep_seen ? CM_REJ_TIMEOUT :
			    CM_REJ_CONSUMER_DEFINED;
	}
	return true;
}
