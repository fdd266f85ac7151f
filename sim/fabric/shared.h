/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A segment each adapter keeps for the other adapters of its host: a
 * sealed memory file its owner keeps open, named by
 * <rundir>/fabric-<pid>-<index>.mem beside its socket (shared.c), which
 * processes of the host map at once. The fabric owns its mechanics only:
 * the header that names the owner, one process-shared robust mutex (the
 * owner's thread may take it again while it holds it), the copy slots
 * through which others copy to and from the owner's memory without that
 * lock, and an area the layer above lays out (struct shared_area), which
 * the fabric maps and never reads.
 *
 * The file is sparse: pages are allocated as the area is written. Owner
 * calls run with the adapter's lock held (lock order: the adapter's lock,
 * then a segment lock; a segment lock is always taken last).
 */
#ifndef PVRDMA_SIM_SHARED_H
#define PVRDMA_SIM_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"

struct fab_link;
struct shared_seg;

/* The area of the layer above: its size and the version of its layout
 * (a peer of another layout is not mapped). */
struct shared_area {
	size_t len;
	uint32_t version;
};

/* ---- the owner ---- */
/* The adapter's own segment, made at its first use (NULL: none, the run
 * directory cannot hold it). */
struct shared_seg *shared_own(unsigned int adapter,
			      const struct shared_area *area);
/* The same if this process made it already, else NULL (never makes it). */
struct shared_seg *shared_own_made(unsigned int adapter);

/* ---- the others: the segment of the adapter at the other end of link,
 * mapped once per link and checked to belong to a live process, with an
 * area of the layout asked for (NULL: any); NULL when there is none
 * (tried again now and then). */
struct shared_seg *shared_peer(struct fab_link *link,
			       const struct shared_area *area);
pid_t shared_pid(const struct shared_seg *seg);
/* The area of the layer above in seg: at a fixed offset past the header
 * and the copy slots (the file is sparse). */
#define SHARED_AREA_OFF	(512u << 10)
static inline void *shared_area_of(struct shared_seg *seg)
{
	return (uint8_t *)seg + SHARED_AREA_OFF;
}
/* Takes the segment's lock (false: the segment cannot be used). */
bool shared_lock(struct shared_seg *seg);
/* The same, giving up after a short wait (false: busy or unusable): a
 * caller that must not wait on a holder that may have been stopped with
 * the lock. */
bool shared_trylock(struct shared_seg *seg);
void shared_unlock(struct shared_seg *seg);

/* ---- a copy into or out of the owner's memory, made without the lock ----
 * The copier names the memory in its slot (one per link), enters, checks
 * without the lock, arms the slot for the system call, and leaves. An
 * owner that takes memory away fences announced and armed copies: it
 * empties the pieces and waits only while the copier's thread runs, never
 * for one stopped or dead. */
#define SHARED_COPY_IOV	64
struct shared_copy;
/* The link's slot (NULL: all are taken; the fabric it is). */
struct shared_copy *shared_copy_claim(struct fab_link *link);
struct iovec *shared_copy_iov(struct shared_copy *c);
void shared_copy_enter(struct shared_copy *c);
/* false: fenced since enter; nothing may be copied. */
bool shared_copy_arm(struct shared_copy *c);
void shared_copy_leave(struct shared_copy *c);
/* The owner, once memory that copies may reach is no longer theirs (not
 * under the segment lock). */
void shared_copy_fence(struct shared_seg *seg);

#endif /* PVRDMA_SIM_SHARED_H */
