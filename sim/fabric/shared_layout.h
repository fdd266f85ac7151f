/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The layout of a same-host segment (private to shared.c and
 * shared_copy.c; shared.h is the model). Processes of one host map it at
 * once: every field is plain data, the version names the layout.
 *
 * The MR and QP entries are written by their owner under the segment lock
 * and each carries a sequence count (odd while it changes), so that a
 * requester may read one without the lock and tell a torn read. The copy
 * slots are the requesters': each names the target memory of a copy a
 * requester makes without the lock (shared_copy.c).
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
#define SHM_MR_SLOTS	SHARED_MR_KEYS
#define SHM_QP_SLOTS	65536u
#define SHM_CQ_SLOTS	65536u
#define SHM_SRQ_SLOTS	65536u
/* Requesters (a process's adapter, per target) copying at one time. */
#define SHM_COPY_SLOTS	256u
/* A requester that found no segment for a peer tries again after this
 * many operations (the peer creates it with its first object). */
#define SHM_RETRY_EVERY	256u

struct shm_mr {
	uint32_t key;		/* 0: free */
	uint32_t pdn;
	int32_t access;
	_Atomic uint32_t seq;	/* odd while the owner changes it */
	uint64_t iova;
	uint64_t addr;
	uint64_t length;
};

struct shm_qp {
	uint32_t qpn;
	uint32_t pdn;
	int32_t access;
	uint8_t state;
	uint8_t type;
	uint8_t valid;
	uint8_t recv_valid;	/* recv holds the receive side */
	uint8_t min_rnr_timer;
	_Atomic uint32_t seq;	/* odd while the owner changes it */
	struct shared_recv_view recv;
};

struct shm_cq {
	uint32_t cqn;
	uint8_t valid;
	uint8_t armed;
	uint8_t overflowed;
	uint8_t has_chan;
	int32_t chan_fd;
	/* Completion events requesters raised and the owner has not yet
	 * counted; requesters between the arm they took and its event. */
	_Atomic uint32_t peer_events;
	_Atomic uint32_t raising;
	uint64_t chan_id;
	uint64_t chan_ino;
	uint64_t cq_handle;
};

struct shm_srq {
	uint32_t srqn;
	uint32_t limit;
	uint32_t valid;
};

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
	/* Bytes this adapter sent (READ data) and received (WRITE data) in
	 * operations same-host requesters executed against it: its
	 * statistics count them as if they had crossed its link. */
	_Atomic uint64_t direct_tx;
	_Atomic uint64_t direct_rx;
	/* Receives it took and CQEs it wrote for them (SENDs). */
	_Atomic uint64_t direct_recv_wqes;
	_Atomic uint64_t direct_cqes;
	/* Frames same-host senders wrote to this adapter's Unix links:
	 * a trap reads those links only when it moved (fabric_rx.c). */
	_Atomic uint64_t frames_in;
	pthread_mutex_t lock;
	uint8_t align[64];
	struct shared_copy copy[SHM_COPY_SLOTS];
	struct shm_qp qp[SHM_QP_SLOTS];
	struct shm_mr mr[SHM_MR_SLOTS];
	struct shm_cq cq[SHM_CQ_SLOTS];
	struct shm_srq srq[SHM_SRQ_SLOTS];
};

/* The slot a requester of this process copies through on a link. */
struct peer_seg {
	struct shared_seg *seg;
	unsigned int misses;
	struct shared_copy *copy;
	pid_t copy_pid;			/* the process that claimed it */
};

/* The kernel's word on a process or one of its threads. */
enum task_run { TASK_GONE, TASK_STOPPED, TASK_ASLEEP, TASK_RUNNING };
enum task_run shared_task_run(pid_t pid, pid_t tid);

#endif /* PVRDMA_SIM_SHARED_LAYOUT_H */
