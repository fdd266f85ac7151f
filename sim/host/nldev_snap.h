/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What RDMA netlink reports of resources and counters (nldev_snap.c): a
 * snapshot of a process's adapters, taken of this process's or read from
 * another one's publication in the rundir. Only the preload library
 * includes this.
 */
#ifndef PVRDMA_SIM_NLDEV_SNAP_H
#define PVRDMA_SIM_NLDEV_SNAP_H

#include <stdint.h>
#include <sys/types.h>

#include "common.h"

enum snap_kind { SNAP_PD, SNAP_CQ, SNAP_QP, SNAP_MR, SNAP_SRQ, SNAP_KINDS };

/* One object: what `rdma resource` prints of it. */
struct snap_obj {
	uint8_t kind;		/* enum snap_kind */
	uint8_t dev;		/* adapter index */
	uint8_t type, state;	/* QPs: enum ibv_qp_type, ibv_qp_state */
	uint8_t port, path_mig;
	uint16_t pad;
	uint32_t num;		/* QPN, CQN, PDN, MR lkey, SRQN */
	uint32_t pdn, rkey, sq_psn, rq_psn, rqpn, cqe;
	uint32_t pad2;
	uint64_t usecnt, len;
};

/* The port counters, in the order of snap_counter_names. */
#define SNAP_COUNTERS	8
extern const char *const snap_counter_names[SNAP_COUNTERS];

struct snap {
	pid_t pid;
	uint32_t nobjs;
	/* Also in the 8 bytes after obj[nobjs]: a reader that finds the two
	 * different read a snapshot half rewritten. */
	uint64_t seq;
	uint64_t counters[SIM_MAX_ADAPTERS][SNAP_COUNTERS];
	struct snap_obj obj[];
};

#define SNAP_MAX_OBJS	4096

/* After a uverbs command of this process: its objects may have changed
 * (taken again by the next snap_take() or publication, not now). */
void snap_objects_changed(void);
/* This process's adapters now (malloc'd; NULL without memory). */
struct snap *snap_take(void);
/* Calls fn on the snapshot of every other live process of the rundir
 * that publishes one. */
void snap_for_each_peer(void (*fn)(const struct snap *s, void *arg),
			void *arg);
/* Publishes this process's snapshot while it has adapters open: a
 * thread refreshes <rundir>/nldev-<pid>.snap. Once per process. */
void snap_publish_start(void);

#endif /* PVRDMA_SIM_NLDEV_SNAP_H */
