// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the CM MAD codec (cm_mad.h). Offsets are those of
 * the message tables of IBA vol. 1 ch. 12.6, counted from the end of the
 * MAD header; a field narrower than its byte sits in its most
 * significant bits first, as the tables number them.
 */
#include <string.h>
#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

#include "cm_mad.h"

/* RDMA_IB_IP_PS_* of Linux's rdma_cm: the port spaces of its service IDs. */
#define SID_PS_MASK	0xffffffffffff0000ull

static void put16(uint8_t *d, unsigned int off, uint16_t v)
{
	d[off] = (uint8_t)(v >> 8);
	d[off + 1] = (uint8_t)v;
}

static void put32(uint8_t *d, unsigned int off, uint32_t v)
{
	put16(d, off, (uint16_t)(v >> 16));
	put16(d, off + 2, (uint16_t)v);
}

static void put64(uint8_t *d, unsigned int off, uint64_t v)
{
	put32(d, off, (uint32_t)(v >> 32));
	put32(d, off + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *d, unsigned int off)
{
	return (uint16_t)(d[off] << 8 | d[off + 1]);
}

static uint32_t get32(const uint8_t *d, unsigned int off)
{
	return (uint32_t)get16(d, off) << 16 | get16(d, off + 2);
}

static uint64_t get64(const uint8_t *d, unsigned int off)
{
	return (uint64_t)get32(d, off) << 32 | get32(d, off + 4);
}

/* A 24-bit field in the top of the 32 bits at off, the byte below it
 * another field's. */
static void put24(uint8_t *d, unsigned int off, uint32_t v)
{
	d[off] = (uint8_t)(v >> 16);
	d[off + 1] = (uint8_t)(v >> 8);
	d[off + 2] = (uint8_t)v;
}

static uint32_t get24(const uint8_t *d, unsigned int off)
{
	return (uint32_t)d[off] << 16 | (uint32_t)d[off + 1] << 8 | d[off + 2];
}

/* Bits [first, first + width) of a byte, first counted from its MSB. */
static uint8_t bits(uint8_t v, unsigned int first, unsigned int width)
{
	return (uint8_t)((v << first) & 0xff) >> (8 - width);
}

static uint8_t bits_at(uint8_t v, unsigned int first, unsigned int width)
{
	return (uint8_t)((v & ((1u << width) - 1)) << (8 - first - width));
}

/* Private data: where it starts in the message, and its length. */
static bool pdata_place(uint16_t attr, unsigned int *off, size_t *len)
{
	static const struct { uint16_t attr; uint8_t off, len; } t[] = {
		{ CM_ATTR_REQ, 140, 92 },	{ CM_ATTR_MRA, 10, 222 },
		{ CM_ATTR_REJ, 84, 148 },	{ CM_ATTR_REP, 36, 196 },
		{ CM_ATTR_RTU, 8, 224 },	{ CM_ATTR_DREQ, 12, 220 },
		{ CM_ATTR_DREP, 8, 224 },	{ CM_ATTR_SIDR_REQ, 16, 216 },
		{ CM_ATTR_SIDR_REP, 96, 136 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].attr == attr) {
			*off = t[i].off;
			*len = t[i].len;
			return true;
		}
	return false;
}

size_t cm_mad_pdata_len(uint16_t attr)
{
	unsigned int off;
	size_t len;

	return pdata_place(attr, &off, &len) ? len : 0;
}

const char *cm_mad_attr_name(uint16_t attr)
{
	static const char *const names[] = { "REQ", "MRA", "REJ", "REP",
		"RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP" };

	if (attr < CM_ATTR_REQ || attr > CM_ATTR_SIDR_REP)
		return "?";
	return names[attr - CM_ATTR_REQ];
}

/* Table 106: REQ (its alternate path left zero: no path migration). */
static void put_req(const struct cm_mad *m, uint8_t *d)
{
	put32(d, 0, m->local_comm_id);
	put64(d, 8, m->service_id);
	put64(d, 16, m->ca_guid);
	put32(d, 28, m->qkey);
	put24(d, 32, m->qpn);
	d[35] = m->responder_resources;
	d[39] = m->initiator_depth;
	d[43] = bits_at(m->remote_cm_timeout, 0, 5) |
		bits_at(m->transport, 5, 2) | bits_at(m->flow_control, 7, 1);
	put24(d, 44, m->psn);
	d[47] = bits_at(m->local_cm_timeout, 0, 5) |
		bits_at(m->retry_count, 5, 3);
	put16(d, 48, m->pkey);
	d[50] = bits_at(m->mtu, 0, 4) | bits_at(m->rnr_retry_count, 5, 3);
	d[51] = bits_at(m->max_cm_retries, 0, 4) | bits_at(m->srq, 4, 1);
	put16(d, 52, m->local_lid);
	put16(d, 54, m->remote_lid);
	memcpy(d + 56, m->local_gid, 16);
	memcpy(d + 72, m->remote_gid, 16);
	put32(d, 88, (m->flow_label & 0xfffff) << 12);
	d[91] |= bits_at(m->packet_rate, 2, 6);
	d[92] = m->traffic_class;
	d[93] = m->hop_limit;
	d[94] = bits_at(m->sl, 0, 4) | bits_at(m->subnet_local, 4, 1);
	d[95] = bits_at(m->local_ack_timeout, 0, 5);
}

static void get_req(struct cm_mad *m, const uint8_t *d)
{
	m->local_comm_id = get32(d, 0);
	m->service_id = get64(d, 8);
	m->ca_guid = get64(d, 16);
	m->qkey = get32(d, 28);
	m->qpn = get24(d, 32);
	m->responder_resources = d[35];
	m->initiator_depth = d[39];
	m->remote_cm_timeout = bits(d[43], 0, 5);
	m->transport = bits(d[43], 5, 2);
	m->flow_control = bits(d[43], 7, 1);
	m->psn = get24(d, 44);
	m->local_cm_timeout = bits(d[47], 0, 5);
	m->retry_count = bits(d[47], 5, 3);
	m->pkey = get16(d, 48);
	m->mtu = bits(d[50], 0, 4);
	m->rnr_retry_count = bits(d[50], 5, 3);
	m->max_cm_retries = bits(d[51], 0, 4);
	m->srq = bits(d[51], 4, 1);
	m->local_lid = get16(d, 52);
	m->remote_lid = get16(d, 54);
	memcpy(m->local_gid, d + 56, 16);
	memcpy(m->remote_gid, d + 72, 16);
	m->flow_label = get32(d, 88) >> 12;
	m->packet_rate = bits(d[91], 2, 6);
	m->traffic_class = d[92];
	m->hop_limit = d[93];
	m->sl = bits(d[94], 0, 4);
	m->subnet_local = bits(d[94], 4, 1);
	m->local_ack_timeout = bits(d[95], 0, 5);
}

/* Table 110: REP. */
static void put_rep(const struct cm_mad *m, uint8_t *d)
{
	put32(d, 0, m->local_comm_id);
	put32(d, 4, m->remote_comm_id);
	put32(d, 8, m->qkey);
	put24(d, 12, m->qpn);
	put24(d, 20, m->psn);
	d[24] = m->responder_resources;
	d[25] = m->initiator_depth;
	d[26] = bits_at(m->target_ack_delay, 0, 5) |
		bits_at(m->failover, 5, 2) | bits_at(m->flow_control, 7, 1);
	d[27] = bits_at(m->rnr_retry_count, 0, 3) | bits_at(m->srq, 3, 1);
	put64(d, 28, m->ca_guid);
}

static void get_rep(struct cm_mad *m, const uint8_t *d)
{
	m->local_comm_id = get32(d, 0);
	m->remote_comm_id = get32(d, 4);
	m->qkey = get32(d, 8);
	m->qpn = get24(d, 12);
	m->psn = get24(d, 20);
	m->responder_resources = d[24];
	m->initiator_depth = d[25];
	m->target_ack_delay = bits(d[26], 0, 5);
	m->failover = bits(d[26], 5, 2);
	m->flow_control = bits(d[26], 7, 1);
	m->rnr_retry_count = bits(d[27], 0, 3);
	m->srq = bits(d[27], 3, 1);
	m->ca_guid = get64(d, 28);
}

/* The fields between the comm IDs (or request ID) and the private data
 * of the other messages: MRA, REJ, DREQ, SIDR REQ and REP. */
static void put_other(const struct cm_mad *m, uint8_t *d)
{
	switch (m->attr_id) {
	case CM_ATTR_MRA:
		d[8] = bits_at(m->msg_of, 0, 2);
		d[9] = bits_at(m->service_timeout, 0, 5);
		break;
	case CM_ATTR_REJ:
		d[8] = bits_at(m->msg_of, 0, 2);
		d[9] = bits_at(m->ari_len > 72 ? 72 : m->ari_len, 0, 7);
		put16(d, 10, m->reason);
		memcpy(d + 12, m->ari, sizeof(m->ari));
		break;
	case CM_ATTR_DREQ:
		put24(d, 8, m->qpn);
		break;
	case CM_ATTR_SIDR_REQ:
		put16(d, 4, m->pkey);
		put64(d, 8, m->service_id);
		return;
	case CM_ATTR_SIDR_REP:
		d[4] = m->status;
		d[5] = m->ari_len > 72 ? 72 : m->ari_len;
		put24(d, 8, m->qpn);
		put64(d, 12, m->service_id);
		put32(d, 20, m->qkey);
		memcpy(d + 24, m->ari, sizeof(m->ari));
		return;
	}
	put32(d, 4, m->remote_comm_id);
}

static void get_other(struct cm_mad *m, const uint8_t *d)
{
	switch (m->attr_id) {
	case CM_ATTR_MRA:
		m->msg_of = bits(d[8], 0, 2);
		m->service_timeout = bits(d[9], 0, 5);
		break;
	case CM_ATTR_REJ:
		m->msg_of = bits(d[8], 0, 2);
		m->ari_len = bits(d[9], 0, 7);
		m->reason = get16(d, 10);
		memcpy(m->ari, d + 12, sizeof(m->ari));
		break;
	case CM_ATTR_DREQ:
		m->qpn = get24(d, 8);
		break;
	case CM_ATTR_SIDR_REQ:
		m->pkey = get16(d, 4);
		m->service_id = get64(d, 8);
		return;
	case CM_ATTR_SIDR_REP:
		m->status = d[4];
		m->ari_len = d[5];
		m->qpn = get24(d, 8);
		m->service_id = get64(d, 12);
		m->qkey = get32(d, 20);
		memcpy(m->ari, d + 24, sizeof(m->ari));
		return;
	}
	m->remote_comm_id = get32(d, 4);
}

bool cm_mad_encode(const struct cm_mad *m, uint8_t out[CM_MAD_LEN])
{
	uint8_t *d = out + CM_MAD_HDR_LEN;
	unsigned int off;
	size_t len;

	if (!pdata_place(m->attr_id, &off, &len))
		return false;
	memset(out, 0, CM_MAD_LEN);
	out[0] = CM_MAD_BASE_VERSION;
	out[1] = CM_MAD_CLASS;
	out[2] = CM_MAD_CLASS_VERSION;
	out[3] = m->method ? m->method : CM_MAD_METHOD_SEND;
	put64(out, 8, m->tid);
	put16(out, 16, m->attr_id);
	if (m->attr_id == CM_ATTR_REQ) {
		put_req(m, d);
	} else if (m->attr_id == CM_ATTR_REP) {
		put_rep(m, d);
	} else {
		put32(d, 0, m->local_comm_id);
		put_other(m, d);
	}
	memcpy(d + off, m->pdata, len);
	return true;
}

bool cm_mad_decode(struct cm_mad *m, const uint8_t *buf, size_t len)
{
	const uint8_t *d = buf + CM_MAD_HDR_LEN;
	unsigned int off;
	size_t plen;

	memset(m, 0, sizeof(*m));
	if (len < CM_MAD_LEN || buf[0] != CM_MAD_BASE_VERSION ||
	    buf[1] != CM_MAD_CLASS || buf[2] != CM_MAD_CLASS_VERSION ||
	    buf[3] != CM_MAD_METHOD_SEND)
		return false;
	m->method = buf[3];
	m->tid = get64(buf, 8);
	m->attr_id = get16(buf, 16);
	if (!pdata_place(m->attr_id, &off, &plen))
		return false;
	if (m->attr_id == CM_ATTR_REQ) {
		get_req(m, d);
	} else if (m->attr_id == CM_ATTR_REP) {
		get_rep(m, d);
	} else {
		m->local_comm_id = get32(d, 0);
		get_other(m, d);
	}
	memcpy(m->pdata, d + off, plen);
	return true;
}

uint64_t cm_mad_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << CM_MAD_SID_PS_SHIFT | port;
}

bool cm_mad_service_ps(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint64_t space = (sid & SID_PS_MASK) >> CM_MAD_SID_PS_SHIFT;

	if (space != RDMA_PS_TCP && space != RDMA_PS_UDP &&
	    space != RDMA_PS_IB)
		return false;
	*ps = (uint16_t)space;
	*port = (uint16_t)sid;
	return true;
}

/* An address as the header's 16 bytes: IPv4 in the last 4. */
static void put_ip(uint8_t *out, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr,
		       4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

bool cm_mad_put_cma_hdr(uint8_t out[CM_MAD_CMA_HDR_LEN],
			const struct sockaddr *src, const struct sockaddr *dst)
{
	uint16_t port;

	if (src->sa_family != dst->sa_family ||
	    (src->sa_family != AF_INET && src->sa_family != AF_INET6))
		return false;
	memset(out, 0, CM_MAD_CMA_HDR_LEN);
	out[0] = CM_MAD_CMA_VERSION;
	out[1] = src->sa_family == AF_INET ? 4 << 4 : 6 << 4;
	port = src->sa_family == AF_INET ?
	       ((const struct sockaddr_in *)src)->sin_port :
	       ((const struct sockaddr_in6 *)src)->sin6_port;
	memcpy(out + 2, &port, 2);	/* network order already */
	put_ip(out + 4, src);
	put_ip(out + 20, dst);
	return true;
}

static void get_ip(struct sockaddr_storage *ss, int family,
		   const uint8_t *in, uint16_t port_be)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = port_be;
		memcpy(&a->sin_addr, in + 12, 4);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = port_be;
		memcpy(&a->sin6_addr, in, 16);
	}
}

bool cm_mad_get_cma_hdr(const uint8_t in[CM_MAD_CMA_HDR_LEN],
			uint16_t dst_port, struct sockaddr_storage *src,
			struct sockaddr_storage *dst)
{
	int family;
	uint16_t port;

	if (in[0] != CM_MAD_CMA_VERSION)
		return false;
	switch (in[1] >> 4) {
	case 4:
		family = AF_INET;
		break;
	case 6:
		family = AF_INET6;
		break;
	default:
		return false;
	}
	memcpy(&port, in + 2, 2);
	get_ip(src, family, in + 4, port);
	get_ip(dst, family, in + 20, htons(dst_port));
	return true;
}
