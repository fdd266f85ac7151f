/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The requester's same-host data path (direct.c): RDMA WRITE, RDMA READ and
 * atomics executed by the requester itself against a target adapter of
 * this host, in one copy, with no thread of the target running, against
 * what the target publishes for it (view.h, publish.h).
 */
#ifndef PVRDMA_SIM_DIRECT_H
#define PVRDMA_SIM_DIRECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "device.h"
#include "wqe.h"

struct eqp;
struct out_wqe;

struct fab_link;
struct iovec;
struct view_cq;
struct view_qp;
struct shared_seg;

/* What the same-host path made of a WQE the requester fetched. */
enum direct_way {
	DIRECT_WIRE,	/* the requester sends it */
	DIRECT_DONE,	/* executed and completed here, *taken WQEs */
	DIRECT_HOLD,	/* stays in the ring: fetch no further now */
	DIRECT_STOP,	/* the QP left RTS (completed in error) */
};

/* direct_path.c: the requester's one entry point (dev->lock held): o was
 * fetched at the ring's position e->req.out_count, o->local_err its
 * decoding's status. */
enum direct_way direct_offer(struct eqp *e, struct out_wqe *o,
			     unsigned int *taken);

/*
 * Executes wr, at the head of the RC qp's send ring, against the target
 * at the other end of link, and for a WRITE the WRITEs right behind it
 * (nothing of the QP in flight on the wire). Returns how many WQEs were
 * done, each of (*done_wrs)[0..n-1] to complete, the last with *status.
 * 0: nothing observable happened at the target (or only what is
 * idempotent) and the WR takes the wire, which gives every error its
 * exact IB semantics; *rnr_ns then, for a SEND that found no receive: how
 * long the target's RNR NAK would have the requester wait.
 */
unsigned int direct_execute(struct sim_qp *qp, struct fab_link *link,
			    const struct sim_send_wr *wr, uint32_t *status,
			    const struct sim_send_wr **done_wrs,
			    uint64_t *rnr_ns);

/* direct_event.c: the CQ's channel as requesters raise its events
 * (into a view to publish); the events they raised counted in the CQ. */
void direct_cq_chan_view(const struct sim_cq *cq, struct view_cq *v);
void direct_cq_events_sync(struct sim_cq *cq);
/* The requester is to take the arm of the target's CQ cqn (the target's
 * lock held): its raise (-1: none free, the arm stays); it raises the
 * event on the target's channel after the lock (direct_event_raise(), v
 * as it found the CQ, which ends the raise; false: it could not, the
 * target's device must, NOTIFY, and the caller ends the raise). */
int direct_event_take(struct shared_seg *seg, uint32_t cqn);
bool direct_event_raise(struct sim_dev *dev, struct shared_seg *seg,
			uint32_t cqn, const struct view_cq *v, int raise);
/* direct_send.c: a SEND, SEND_WITH_IMM or RDMA_WRITE_WITH_IMM executed by
 * the requester, as direct_execute() (which calls it) says. */
unsigned int direct_send_execute(struct sim_qp *qp, struct fab_link *link,
				 const struct sim_send_wr *wr,
				 const struct sim_send_wr **done_wrs,
				 uint64_t *rnr_ns);
/* For it: the path is on (false: turned off or refused, said once), and
 * the path is refused by the system. */
bool direct_enabled(void);
void direct_refuse(const char *why);
/* The QP's peer is an adapter of this host whose segment is mapped: its
 * WQEs may be executed in one copy. */
bool direct_reachable(const struct sim_qp *qp, struct fab_link *link);
/* The checks and the copy both paths share (direct.c): a target QP a
 * responder would take requests on, with the remote access asked for; an
 * MR of the target by rkey (remote) or lkey; and a copy that moved all it
 * was asked to (EPERM turns the path off). */
bool direct_target_qp_ok(const struct view_qp *q, int need);
bool direct_target_mr(struct shared_seg *seg, uint32_t pdn, uint32_t key,
		      bool remote, uint64_t addr, uint64_t len, int need,
		      struct iovec *iov);
bool direct_copied(ssize_t got, uint64_t want);

#endif /* PVRDMA_SIM_DIRECT_H */
