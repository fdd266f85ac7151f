/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim rdma_cm: IB CM messages as MADs (IBA vol. 1 ch. 12 and 13),
 * as ib_cm sends them on QP1 and rdma_cm fills them: the 24-byte MAD
 * header (base version 1, class CM 0x07, class version 2, method Send),
 * the attribute of each message, its fields at the places the spec's
 * tables give (bit fields counted from the most significant bit of their
 * byte), and rdma_cm's IP addressing: the service ID of a port space and
 * port, and the 36-byte header (struct cma_hdr in Linux) that opens the
 * private data of a REQ and a SIDR REQ. A pure codec: no state, no I/O.
 */
#ifndef PVRDMA_SIM_CM_MAD_H
#define PVRDMA_SIM_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CM_MAD_LEN		256
#define CM_MAD_HDR_LEN		24
#define CM_MAD_DATA_LEN		(CM_MAD_LEN - CM_MAD_HDR_LEN)

#define CM_MAD_BASE_VERSION	1
#define CM_MAD_CLASS		0x07
#define CM_MAD_CLASS_VERSION	2
#define CM_MAD_METHOD_SEND	0x03
/* The Q_Key of every GMP on QP1 (IBA 13.5.1.1 GSI). */
#define CM_MAD_GSI_QKEY		0x80010000u

enum cm_mad_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

/* The message an MRA acknowledges and a REJ rejects. */
enum {
	CM_MSG_OF_REQ = 0,
	CM_MSG_OF_REP = 1,
	CM_MSG_OF_OTHER = 2,
};

/* rdma_cm's IP-based service IDs: RDMA_IB_IP_PS_* in the top 48 bits,
 * the port below. */
#define CM_MAD_SID_PS_SHIFT	16
#define CM_MAD_CMA_HDR_LEN	36
#define CM_MAD_CMA_VERSION	0x00

/* Every field any message has, host order. A message uses those its
 * table lists; the others are 0 on encode and left 0 by decode. */
struct cm_mad {
	uint8_t method;
	uint16_t attr_id;		/* enum cm_mad_attr */
	uint64_t tid;
	uint32_t local_comm_id;		/* SIDR: the request ID */
	uint32_t remote_comm_id;
	uint64_t service_id;
	uint64_t ca_guid;		/* REQ, REP: local CA GUID (as sent) */
	uint32_t qkey;
	uint32_t qpn;			/* 24 bits; DREQ: the remote QPN */
	uint32_t psn;			/* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t remote_cm_timeout;	/* 5 bits each */
	uint8_t local_cm_timeout;
	uint8_t transport;		/* 2 bits: 0 RC, 1 UC */
	uint8_t flow_control;		/* 1 bit */
	uint8_t retry_count;		/* 3 bits */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t mtu;			/* 4 bits: enum ibv_mtu */
	uint8_t max_cm_retries;		/* 4 bits */
	uint8_t srq;			/* 1 bit */
	uint16_t pkey;
	/* REQ's primary path */
	uint16_t local_lid, remote_lid;
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/* 4 bits */
	uint8_t subnet_local;		/* 1 bit */
	uint8_t local_ack_timeout;	/* 5 bits */
	/* REP */
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover;		/* 2 bits */
	/* MRA, REJ */
	uint8_t msg_of;			/* 2 bits: CM_MSG_OF_* */
	uint8_t service_timeout;	/* MRA, 5 bits */
	uint16_t reason;		/* REJ */
	uint8_t ari_len;		/* REJ, 7 bits; SIDR REP 8 bits */
	uint8_t ari[72];
	uint8_t status;			/* SIDR REP */
	uint8_t pdata[224];		/* the message's whole private data */
};

/* The private data bytes of a message with attribute attr (0: none or
 * not a CM message). */
size_t cm_mad_pdata_len(uint16_t attr);
/* Writes m as the CM_MAD_LEN bytes of a MAD; false for an attribute this
 * codec does not know (nothing written). */
bool cm_mad_encode(const struct cm_mad *m, uint8_t out[CM_MAD_LEN]);
/* Decodes a MAD received in len bytes: false when it is short, not a CM
 * MAD of class version 2 (base version, class), not a Send, or of an
 * attribute this codec does not know. */
bool cm_mad_decode(struct cm_mad *m, const uint8_t *buf, size_t len);
/* An attribute's name ("REQ"), for logs and tests; "?" if unknown. */
const char *cm_mad_attr_name(uint16_t attr);

/* rdma_cm's service ID of port space ps (RDMA_PS_*) and port. */
uint64_t cm_mad_service_id(uint16_t ps, uint16_t port);
/* The port space and port of an IP-based service ID; false for a
 * service ID of no IP port space rdma_cm knows. */
bool cm_mad_service_ps(uint64_t sid, uint16_t *ps, uint16_t *port);
/* The 36-byte address header: src (whose port it carries) and dst, both
 * AF_INET or both AF_INET6. False for other families. */
bool cm_mad_put_cma_hdr(uint8_t out[CM_MAD_CMA_HDR_LEN],
			const struct sockaddr *src, const struct sockaddr *dst);
/* Reads it back: src with the header's port, dst with dst_port (the
 * service ID's). False for an unknown version or IP version. */
bool cm_mad_get_cma_hdr(const uint8_t in[CM_MAD_CMA_HDR_LEN],
			uint16_t dst_port, struct sockaddr_storage *src,
			struct sockaddr_storage *dst);

#endif /* PVRDMA_SIM_CM_MAD_H */
