/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim rdma_cm: what cm.c (the commands) and cm_agent.c (the agent
 * thread and what it receives) share: the CM messages on the wire between
 * agents, the agent's state, and the helpers both sides send with.
 * Everything here is used with cm_lock held unless noted.
 */
#ifndef PVRDMA_SIM_CM_MSG_H
#define PVRDMA_SIM_CM_MSG_H

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

/* Accepted sockets that have not sent their REQ yet (cm_pending.c). */
struct cm_pending {
	struct cm_pending *next;
	int sock;
	uint32_t ipv4;			/* the peer's, 0 for this host's */
	uint64_t deadline_ns;		/* closed then if still silent */
};

#define CM_PENDING_MS			5000
#define CM_TCP_PENDING_MAX		64
#define CM_TCP_PENDING_PER_PEER		8

/* Accepts what listen_fd has, within the limits. */
void cm_pending_accept(int listen_fd);
/* Unlinks *p and frees it, closing its socket or not. */
void cm_pending_drop(struct cm_pending **p, bool close_sock);
/* Closes the silent ones past their deadline; the next deadline, or 0. */
uint64_t cm_pending_expire(uint64_t now);

/* A Unix socket per GID, a TCP socket per adapter (cm_tcp.c). */
#define CM_MAX_LISTEN	(SIM_MAX_ADAPTERS * (SIM_GID_TABLE_LEN + 1))

struct cm_agent {
	bool started;
	int wake;			/* eventfd */
	int listen[CM_MAX_LISTEN];
	unsigned int num_listen;
	struct cm_pending *pending;
	pthread_t thread;
	uint64_t rng;
};

extern struct cm_agent cm_agent;

/* CLOCK_MONOTONIC in ns. */
uint64_t cm_now_ns(void);
/* Disconnected: TIMEWAIT_EXIT after ib_cm's time wait (socket closed). */
void cm_enter_timewait(struct cm_id *id);
/* Makes the agent thread look at its timers and sockets again. */
void cm_agent_wake(void);
/* One whole message, or false (the peer is gone or not reading). */
bool cm_send_msg(int sock, const struct cm_msg *m);
void cm_msg_init(struct cm_msg *m, uint8_t type, const uint8_t *pdata,
		 uint8_t len);
/* Ends the id's connection socket and any wait on it. */
void cm_id_close_sock(struct cm_id *id);
/* The peer's process is gone (its connection socket closed without a
 * word): what its kernel would have sent as it destroyed its ids, taken
 * as received (cm_agent.c). */
void cm_peer_gone(struct cm_id *id);
/* A connect that did not reach an agent: REJECTED, or UNREACHABLE for
 * SIDR; false when the event could not be queued. */
bool cm_connect_refused(struct cm_id *id);
/* The agent saw id's TCP connect finish (or fail): sends the REQ. */
void cm_connect_made(struct cm_id *id);
/* The address vector of the id's path, for INIT_QP_ATTR and SIDR. */
void cm_fill_av(const struct cm_id *id, struct ib_uverbs_ah_attr *ah);

#endif
