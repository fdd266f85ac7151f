/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Device state adapters on one host share, the way the hypervisor's device
 * serves every VM of its host: each adapter publishes, in a segment of the
 * run directory (<rundir>/fabric-<pid>-<index>.mem, beside its socket), what
 * a requester on another adapter needs to execute a one-sided operation
 * against it by itself: its MR table (key, range, access, PD) and its QPs
 * as a responder sees them (QPN, PD, access flags, state). One
 * process-shared robust mutex per segment guards the tables and the target's
 * memory behind them: the owner takes it to change an entry, a requester to
 * check and copy, and every atomic through the adapter takes it, so each
 * atomic is atomic with respect to every other one.
 *
 * The segment is a sparse file: pages are allocated as objects are created
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
/* Bytes the adapter sent and received in operations that same-host
 * requesters executed against it (no lock needed). */
void shared_counts(unsigned int adapter, uint64_t *tx, uint64_t *rx);
/* Around an atomic the adapter's own responder executes. */
void shared_atomic_lock(unsigned int adapter);
void shared_atomic_unlock(unsigned int adapter);

/* ---- a requester: the target's published view ---- */
/* The segment of the adapter at the other end of link, mapped and
 * checked to belong to a live process; NULL when there is none. */
struct shared_seg *shared_peer(struct fab_link *link);
pid_t shared_pid(const struct shared_seg *seg);
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

#endif /* PVRDMA_SIM_SHARED_H */
