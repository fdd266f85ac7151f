/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the device publishes for the adapters of its host, the way the
 * hypervisor's device serves every VM of its host (view.c lays it out in
 * the area of the adapter's same-host segment, sim/fabric/shared.h): what
 * a requester on another adapter needs to execute a one-sided operation
 * against it by itself: its MR table (key, range, access, PD) and its QPs
 * as a responder sees them (QPN, PD, access flags, state); and for a
 * SEND, an RC QP's receive side (where its receive ring, its SRQ's, and
 * its receive CQ's ring are, in memory files the target keeps open), the
 * CQ's arm, overflow and completion channel and the SRQ's limit.
 *
 * The segment's lock guards the tables: the owner takes it to change an
 * entry, a requester of a SEND to take a receive and write a CQE, and
 * every atomic through the adapter takes it, so each atomic is atomic with
 * respect to every other one; the owner's device takes it around every
 * receive it takes and every CQE it writes to a published CQ
 * (publish.c), so that it and the requesters use those rings one at a
 * time. No requester copies data under it (but into an SRQ's receive):
 * copies go through the segment's copy slots, which the owner fences.
 * Owner calls run with dev->lock held (the segment lock after it).
 */
#ifndef PVRDMA_SIM_VIEW_H
#define PVRDMA_SIM_VIEW_H

#include <stdbool.h>
#include <stdint.h>

struct fab_link;
struct shared_seg;

/* MR keys the views hold: 1..VIEW_MR_KEYS, the device's key space
 * (SIM_MAX_MR, checked where the device publishes). */
#define VIEW_MR_KEYS	65536u

struct view_mr {
	uint64_t addr;		/* in the target process */
	uint64_t iova;
	uint64_t length;
	int access;
	uint32_t pdn;
};

struct view_qp {
	uint32_t pdn;
	int access;		/* qp_access_flags */
	uint8_t state;		/* enum ibv_qp_state */
	uint8_t type;		/* enum ibv_qp_type */
	uint8_t min_rnr_timer;	/* what its RNR NAKs tell (IB encoding) */
};

/* A ring of the target as a requester maps it: the target keeps the ring's
 * memory file open as fd (ino names the file, id the ring: never reused
 * by the owner process); the state page and the elements are at their
 * offsets in the file's first map_len bytes. */
struct view_ring {
	uint64_t id;
	uint64_t ino;
	uint64_t map_len;
	uint64_t state_off;	/* struct pvrdma_ring */
	uint64_t elems_off;
	int32_t fd;
	uint32_t nelems;
	uint32_t elem_size;
	uint32_t max_sge;
};

/* Where a SEND takes a receive (the QP's RQ or its SRQ's ring), the
 * receive CQ, and what the CQE names. */
struct view_recv {
	struct view_ring rq;
	struct view_ring cq;
	uint32_t cqn;
	uint32_t srqn;		/* with srq */
	uint32_t qp_handle;	/* the CQE's qp */
	uint8_t port_num;
	bool srq;
};

/* A CQ's arm (SIM_CQ_ARM_*), the overflow the target already saw, and its
 * completion channel, where a requester that takes the arm raises the
 * event itself: the device end of the channel's socket pair, fd in the
 * owner (ino names the socket, id the channel), and the event's
 * cq_handle. */
struct view_cq {
	uint8_t armed;
	bool overflowed;
	bool has_chan;
	int32_t chan_fd;
	uint64_t chan_id;
	uint64_t chan_ino;
	uint64_t cq_handle;
};

/* ---- the owner, by adapter index ---- */
/* The adapter's segment, made at its first use. */
struct shared_seg *view_own(unsigned int adapter);
void view_mr_publish(unsigned int adapter, uint32_t rkey,
		     const struct view_mr *mr);
/* Requesters stop reaching the MR directly before this returns. */
void view_mr_withdraw(unsigned int adapter, uint32_t rkey);
void view_qp_publish(unsigned int adapter, uint32_t qpn,
		     const struct view_qp *qp);
void view_qp_withdraw(unsigned int adapter, uint32_t qpn);
/* NULL: not reachable (view_qp_withdraw ends it too). */
void view_recv_publish(unsigned int adapter, uint32_t qpn,
		       const struct view_recv *recv);
/* A requester that wrote a CQE clears the arm it answers (and wakes the
 * target); the owner raises it under the lock before an arm returns. */
void view_cq_publish(unsigned int adapter, uint32_t cqn,
		     const struct view_cq *cq);
/* -1: not published. */
int view_cq_arm_of(unsigned int adapter, uint32_t cqn);
/* The completion events requesters raised on the CQ's channel since the
 * last call, once those under way are sent (one stopped there is waited
 * for 1 s at most, one killed there until its process is gone). */
uint32_t view_cq_events_take(unsigned int adapter, uint32_t cqn);
/* Some requester is between an arm it took and its event (no lock). */
bool view_raises_held(unsigned int adapter);
/* Frees the raises of requesters whose process is gone; puts the CQs
 * whose arm they had taken in cqns (at most max), whose events are the
 * owner's to raise now. */
unsigned int view_raises_reap(unsigned int adapter, uint32_t *cqns,
			      unsigned int max);
/* 0: disarmed. */
void view_srq_publish(unsigned int adapter, uint32_t srqn, uint32_t limit);
/* The segment's lock (false: no segment). */
bool view_own_lock(unsigned int adapter);
void view_own_unlock(unsigned int adapter);
/* A QP that takes no more requests is about to flush its receives. */
void view_own_fence(unsigned int adapter);
/* What same-host requesters moved through the adapter (no lock). */
void view_counts(unsigned int adapter, uint64_t *tx, uint64_t *rx);
void view_recv_counts(unsigned int adapter, uint64_t *recv_wqes,
		      uint64_t *cqes);

/* ---- a requester: the target's views ---- */
/* The segment of the adapter at the other end of link; NULL: none. */
struct shared_seg *view_peer(struct fab_link *link);
void view_count(struct shared_seg *seg, uint64_t tx, uint64_t rx);
void view_count_recv(struct shared_seg *seg);
/* Lookups; the QP, MR and receive side also without the lock (a torn
 * read is a miss). */
bool view_qp_find(struct shared_seg *seg, uint32_t qpn,
		  struct view_qp *out);
bool view_mr_find(struct shared_seg *seg, uint32_t rkey,
		  struct view_mr *out);
bool view_recv_find(struct shared_seg *seg, uint32_t qpn,
		    struct view_recv *out);
bool view_cq_find(struct shared_seg *seg, uint32_t cqn,
		  struct view_cq *out);
void view_cq_disarm(struct shared_seg *seg, uint32_t cqn);
/* A requester that takes the arm of a CQ raises its event, or has the
 * target raise it: begin under the lock, before the arm is taken (-1:
 * too many under way, the arm is not to be taken), sending right before
 * the event goes on the channel, end once it went or was given up. The
 * owner raises the event of a requester whose process ends in between. */
int view_cq_raise_begin(struct shared_seg *seg, uint32_t cqn);
void view_cq_raise_sending(struct shared_seg *seg, int raise);
void view_cq_raise_end(struct shared_seg *seg, uint32_t cqn, int raise,
		       bool raised);
/* Gives back an arm it could not notify (takes the lock). */
void view_cq_rearm(struct shared_seg *seg, uint32_t cqn, uint8_t armed);
/* 0: none armed. */
uint32_t view_srq_limit(struct shared_seg *seg, uint32_t srqn);

#endif /* PVRDMA_SIM_VIEW_H */
