/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim rdma_cm over RoCE: the CM's messages as IB CM MADs on QP 1,
 * so that a native RoCE endpoint (Linux's ib_cm and rdma_cm, over rxe or
 * a RoCE NIC) and a simulated adapter connect with each other.
 *
 * The CM of cm.c and cm_agent.c speaks struct cm_msg on one socket per
 * connection; towards a peer reached over the RoCE v2 wire that socket
 * leads to the GSI thread (cm_gsi.c) instead of to another sim's agent.
 * The thread is ib_cm's MAD side of each such connection: it turns each
 * cm_msg into its MAD (cm_gsi_msg.c) with the communication IDs, service
 * ID, TID and addressing header Linux's CM would send, sends it from
 * QP 1 (fabric_gsi_send), resends a message that waits for an answer
 * (REQ, REP, DREQ, SIDR REQ) every cm_gsi_resend_ns up to ib_cm's 15
 * retries, answers a duplicate with what it last sent (or with the
 * MRA it holds: see from_agent), and turns each
 * MAD that arrives (fabric_gsi_attach) into the cm_msg the connection's
 * socket carries to the agent. A REQ or SIDR REQ that arrives opens a
 * connection to the agent that answers for the local GID, as another
 * sim's agent would. MADs that do not decode, or name no connection, are
 * dropped; a DREQ for a connection no longer known gets its DREP, as
 * ib_cm gives it. What ib_cm would send for each connection if the
 * process ended (gsi_exit_msg) is kept up to date with the fabric,
 * which sends it once the process is gone, however it ends (a signal
 * too): a kernel's CM outlives its process, and so must this.
 *
 * Lock order: cm_lock, then gsi's own lock, then the fabric's lock of
 * the exit GMPs (their fork handlers register in the reverse order);
 * the thread takes no other.
 */
#ifndef PVRDMA_SIM_CM_GSI_H
#define PVRDMA_SIM_CM_GSI_H

#include "cm_mad.h"
#include "cm_msg.h"

/* ib_cm's Max CM Retries, and the cap on connections a peer may open. */
#define GSI_MAX_RETRIES		15
#define GSI_MAX_CONNS		256
/* How long a finished connection is kept to answer duplicates. */
#define GSI_LINGER_NS		(10ull * 1000000000ull)

struct gsi_conn {
	struct gsi_conn *next;
	int fd;				/* to the CM agent; -1: it closed */
	unsigned int dev;		/* adapter index */
	uint32_t peer;			/* its IPv4, network order */
	bool active;			/* this side sent the REQ */
	bool ud;			/* SIDR */
	bool rep_seen;			/* active: the REP came */
	bool rep_sent;			/* passive */
	bool established;		/* RTU sent or received */
	bool dreq_sent, dreq_rcvd;
	bool finished;			/* REJ or DREP, either way */
	uint32_t local_id, remote_id;	/* comm IDs; SIDR: the request ID */
	uint64_t sid, tid;
	uint32_t remote_qpn;
	uint8_t last[CM_MAD_LEN];	/* what was sent last */
	bool have_last;
	uint8_t mra[CM_MAD_LEN];	/* the agent's MRA, held back */
	bool mra_held;			/* until a duplicate asks for it or
					 * the consumer answers */
	uint64_t resend_at;		/* 0: nothing waits for an answer */
	unsigned int tries;
	uint64_t forget_at;		/* once the agent's end closed */
	unsigned int exit_slot;		/* what it is owed at the process's
					 * end (fabric_gsi_exit_set) */
};

extern uint64_t cm_gsi_resend_ns;

/* cm_gsi_msg.c: what the agent sent as the MAD for the peer (the
 * connection's IDs updated); false for a message that makes none. */
bool gsi_msg_to_mad(struct gsi_conn *c, const struct cm_msg *m,
		    struct cm_mad *mad);
/* A REQ or SIDR REQ from the peer as the agent's cm_msg; false if it
 * is none rdma_cm would take (service ID, transport, address header). */
bool gsi_req_to_msg(const struct cm_mad *mad, uint32_t peer,
		    uint32_t local, struct cm_msg *m);
/* Any other MAD of the connection as the agent's cm_msg; false for one
 * the agent has no use for. */
bool gsi_mad_to_msg(struct gsi_conn *c, const struct cm_mad *mad,
		    struct cm_msg *m);
/* What ib_cm sends for c when its process exits without destroying
 * its id (the kernel closes the file): the agent's message in *m; false
 * when nothing is owed. */
bool gsi_exit_msg(const struct gsi_conn *c, struct cm_msg *m);
/* The IPv4-mapped GID of addr (network order). */
void gsi_mapped_gid(uint8_t gid[16], uint32_t addr);

#endif /* PVRDMA_SIM_CM_GSI_H */
