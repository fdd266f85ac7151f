/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Device state adapters on one host share, the way the hypervisor's device
 * serves every VM of its host: each adapter publishes, in a segment (a
 * sealed memory file it keeps open, named by <rundir>/fabric-<pid>-<index>.mem
 * beside its socket: shared.c), what
 * a requester on another adapter needs to execute a one-sided operation
 * against it by itself: its MR table (key, range, access, PD) and its QPs
 * as a responder sees them (QPN, PD, access flags, state); and for a SEND,
 * an RC QP's receive side (where its receive ring, its SRQ's, and its
 * receive CQ's ring are, in memory files the target keeps open), the
 * CQ's arm, overflow and completion channel and the SRQ's limit. One
 * process-shared robust mutex per segment guards the tables: the owner
 * takes it to change an entry, a requester of a SEND to take a receive and
 * write a CQE, and every atomic through the adapter takes it, so each
 * atomic is atomic with respect to every other one; the owner's device
 * takes it around every receive it takes and every CQE it writes to a
 * published CQ, so that it and the requesters use those rings one at a
 * time. The owner's thread may take it again while it holds it. No
 * requester copies data under it (but into an SRQ's receive): copies go
 * through copy slots, which the owner fences (see below).
 *
 * The segment is a sparse memory file: pages are allocated as objects are created
 * in them, not by the device maxima. Owner calls run with the adapter's
 * dev->lock held (lock order: dev->lock, then a segment lock; a segment
 * lock is always taken last).
 */
#ifndef PVRDMA_SIM_SHARED_H
#define PVRDMA_SIM_SHARED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"

struct fab_link;
struct shared_seg;

/* MR keys the segment holds: 1..SHARED_MR_KEYS, the device's key space
 * (SIM_MAX_MR, checked where the device publishes). */
#define SHARED_MR_KEYS	65536u

/* What a requester needs of a target's MR and QP, as the owner publishes
 * them. */
struct shared_mr_view {
	uint64_t addr;		/* in the target process */
	uint64_t iova;
	uint64_t length;
	int access;
	uint32_t pdn;
};

struct shared_qp_view {
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
struct shared_ring_view {
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

/* The receive side of a QP, for a requester that executes a SEND: where it
 * takes a receive (the QP's RQ or its SRQ's ring), the receive CQ, and
 * what the CQE names. */
struct shared_recv_view {
	struct shared_ring_view rq;
	struct shared_ring_view cq;
	uint32_t cqn;
	uint32_t srqn;		/* with srq */
	uint32_t qp_handle;	/* the CQE's qp */
	uint8_t port_num;
	bool srq;
};

/* What the CQE writer must know of a CQ's arm; and the overflow the target
 * already saw (its CQ takes no more CQEs). */
struct shared_cq_view {
	uint8_t armed;		/* SIM_CQ_ARM_* */
	bool overflowed;
	/* Its completion channel, where a requester that takes the arm
	 * raises the event itself (shared_cq_event_raised()): the device
	 * end of the channel's socket pair, fd in the owner (ino names the
	 * socket, id the channel: never reused by the owner process), and
	 * the cq_handle the event carries. */
	bool has_chan;
	int32_t chan_fd;
	uint64_t chan_id;
	uint64_t chan_ino;
	uint64_t cq_handle;
};

/* ---- the owner: publishes its adapter's objects ----
 * The adapter is named by its index (dev->index); the device turns its
 * objects into the views below (device/shared_pub.c), the segment knows
 * nothing else of them. */
/* Creates and maps the adapter's segment (when a device context opens). */
void shared_open(unsigned int adapter);
void shared_mr_publish(unsigned int adapter, uint32_t rkey,
		       const struct shared_mr_view *mr);
/* The MR is gone, or its pages are about to move (pinning): requesters
 * stop reaching it directly before this returns. */
void shared_mr_withdraw(unsigned int adapter, uint32_t rkey);
/* The QP's responder state (created, modified, in error). */
void shared_qp_publish(unsigned int adapter, uint32_t qpn,
		       const struct shared_qp_view *qp);
void shared_qp_withdraw(unsigned int adapter, uint32_t qpn);
/* The QP's receive side (NULL: not reachable; shared_qp_withdraw ends it
 * too). */
void shared_recv_publish(unsigned int adapter, uint32_t qpn,
			 const struct shared_recv_view *recv);
/* A CQ's arm and overflow as requesters see them. A requester that wrote
 * a CQE clears the arm it answers (and wakes the target); the owner raises
 * it under the segment lock before an arm returns to the application. */
void shared_cq_publish(unsigned int adapter, uint32_t cqn,
		       const struct shared_cq_view *cq);
/* The arm of a published CQ as requesters left it; -1: not published. */
int shared_cq_arm_of(unsigned int adapter, uint32_t cqn);
/* The completion events same-host requesters raised on the CQ's channel
 * since the last call (the owner counts them as its own), once those under
 * way are sent (a requester stopped there is waited for 1 s at most). */
uint32_t shared_cq_events_take(unsigned int adapter, uint32_t cqn);
/* An SRQ's limit (0: disarmed). */
void shared_srq_publish(unsigned int adapter, uint32_t srqn, uint32_t limit);
/* The adapter's own segment lock, around what its device does to rings it
 * published and around the atomics its own responder executes, so that
 * each is atomic with respect to same-host requesters' atomics (false: no
 * segment, nothing published). */
bool shared_own_lock(unsigned int adapter);
void shared_own_unlock(unsigned int adapter);
/* Bytes the adapter sent and received in operations that same-host
 * requesters executed against it (no lock needed). */
void shared_counts(unsigned int adapter, uint64_t *tx, uint64_t *rx);

/* ---- a requester: the target's published view ---- */
/* The segment of the adapter at the other end of link, mapped and
 * checked to belong to a live process; NULL when there is none. */
struct shared_seg *shared_peer(struct fab_link *link);
pid_t shared_pid(const struct shared_seg *seg);
/* A frame went on link, a Unix link to an adapter of this host: counted
 * in that adapter's segment, so that its traps know to read the link. */
void shared_frame_sent(struct fab_link *link);
/* The count of frames sent to this adapter's Unix links (false: it has
 * no segment, nothing counts them). */
bool shared_frames_in(unsigned int adapter, uint64_t *count);
/* What the target's adapter sent (tx) and received (rx) in an operation
 * executed against it, for its statistics. */
void shared_count(struct shared_seg *seg, uint64_t tx, uint64_t rx);
/* Takes the target's lock (false: the segment cannot be used). */
bool shared_lock(struct shared_seg *seg);
/* The same, giving up after a short wait (false: busy or unusable): a
 * requester goes to the fabric rather than wait on a holder that may
 * have been stopped with the lock. */
bool shared_trylock(struct shared_seg *seg);
void shared_unlock(struct shared_seg *seg);
/* Lookups, with the target's lock held. */
bool shared_qp_find(struct shared_seg *seg, uint32_t qpn,
		    struct shared_qp_view *out);
bool shared_mr_find(struct shared_seg *seg, uint32_t rkey,
		    struct shared_mr_view *out);
bool shared_recv_find(struct shared_seg *seg, uint32_t qpn,
		      struct shared_recv_view *out);
bool shared_cq_find(struct shared_seg *seg, uint32_t cqn,
		    struct shared_cq_view *out);
void shared_cq_disarm(struct shared_seg *seg, uint32_t cqn);
/* A requester that took the arm of a CQ with a channel raises its event
 * itself: begin with the lock held (the CQ found is the one it names),
 * end once the event is sent (raised) or given up, without the lock. The
 * owner counts the events raised and waits for those under way before
 * the CQ goes (shared_cq_events_take()). */
void shared_cq_raise_begin(struct shared_seg *seg, uint32_t cqn);
void shared_cq_raise_end(struct shared_seg *seg, uint32_t cqn, bool raised);
/* Gives back an arm a requester took but could not notify (takes the
 * lock): the owner's next CQE raises the event. */
void shared_cq_rearm(struct shared_seg *seg, uint32_t cqn, uint8_t armed);
/* The SRQ's limit; 0 when it has none armed. */
uint32_t shared_srq_limit(struct shared_seg *seg, uint32_t srqn);

/* ---- a requester's copy, made without the target's lock ----
 * An RDMA WRITE or READ takes no lock: the requester names the target
 * memory in a copy slot of the target's segment (one per link, claimed
 * once), announces the copy (enter), checks the QP and MRs (the lookups
 * above work without the lock: a torn read is a miss), arms the slot and
 * hands the slot's pieces to the system call, then leaves. An owner that
 * withdraws an MR fences every copy announced or armed: it empties the
 * slot's pieces (a copy that has not started moves nothing, and its WRs
 * take the fabric) and waits only while the requester's thread runs
 * (inside its system call); never for a requester that is stopped or
 * dead. */
#define SHARED_COPY_IOV	64
struct shared_copy;
/* The link's slot (NULL: all are taken; the fabric it is). */
struct shared_copy *shared_copy_claim(struct fab_link *link);
struct iovec *shared_copy_iov(struct shared_copy *c);
void shared_copy_enter(struct shared_copy *c);
/* false: fenced since enter; nothing may be copied. */
bool shared_copy_arm(struct shared_copy *c);
void shared_copy_leave(struct shared_copy *c);
/* The owner, after withdrawing an MR (not under the segment lock). */
void shared_copy_fence(struct shared_seg *seg);
/* The same for the adapter's own segment: a QP that takes no more
 * requests (error, reset) is about to flush its receives. */
void shared_own_fence(unsigned int adapter);
/* Receives and CQEs of operations same-host requesters executed against
 * the target, for its statistics. */
void shared_count_recv(struct shared_seg *seg);
void shared_recv_counts(unsigned int adapter, uint64_t *recv_wqes,
			uint64_t *cqes);

#endif /* PVRDMA_SIM_SHARED_H */
