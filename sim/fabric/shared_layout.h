/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The layout of a same-host segment (private to shared.c and
 * shared_copy.c; shared.h is the model). Processes of one host map it at
 * once: every field is plain data, the version names the layout (the
 * area's own version the layout of the layer above). The copy slots are
 * the copiers': each names the owner's memory of a copy made without the
 * lock (shared_copy.c). The area is at SHARED_AREA_OFF (shared.h).
 */
#ifndef PVRDMA_SIM_SHARED_LAYOUT_H
#define PVRDMA_SIM_SHARED_LAYOUT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common.h"
#include "shared.h"

#define SHM_MAGIC	0x4d485350u	/* "PSHM" */
#define SHM_VERSION	8u
/* Copiers (a process's adapter, per owner) at one time. */
#define SHM_COPY_SLOTS	256u
/* A peer that had no segment is looked for again after this many
 * tries (the peer makes it at its first use). */
#define SHM_RETRY_EVERY	256u

/* Where a copy slot is (enum shared_copy_state in shared_copy.c). */
struct shared_copy {
	_Atomic int32_t pid;		/* the requester's; 0: free */
	_Atomic int32_t tid;		/* its thread in the copy */
	_Atomic uint32_t state;
	uint32_t pad;
	/* The target memory, as the system call reads it: emptied by a
	 * fence, from the last piece to the first. */
	struct iovec iov[SHARED_COPY_IOV];
};

struct shared_seg {
	_Atomic uint32_t magic;		/* set last: the header is whole */
	uint32_t version;
	int32_t pid;
	uint32_t pad;
	uint64_t start_time;		/* of pid: a reused pid is not it */
	uint64_t area_len;
	uint32_t area_version;
	uint32_t pad2;
	/* Frames same-host senders wrote to this adapter's Unix links:
	 * a trap reads those links only when it moved (fabric_rx.c). */
	_Atomic uint64_t frames_in;
	pthread_mutex_t lock;
	uint8_t align[64];
	struct shared_copy copy[SHM_COPY_SLOTS];
};


/* The slot a requester of this process copies through on a link. */
struct peer_seg {
	struct shared_seg *seg;
	unsigned int misses;
	struct shared_copy *copy;
	pid_t copy_pid;			/* the process that claimed it */
};

#endif /* PVRDMA_SIM_SHARED_LAYOUT_H */
