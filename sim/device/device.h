/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim device layer: the PVRDMA device, as the kernel layer sees it
 * (sim/device/README.md).
 *
 * The device's objects (struct sim_dev and the QP, CQ, SRQ, MR, PD and
 * context it executes for) are filled in by the kernel driver model as
 * vmw_pvrdma fills in the device's command structs; struct sim_device_ops
 * is the command channel: the driver creates, modifies and destroys
 * device objects only through it, so the kernel model can be tested on a
 * fake device. The device reaches the kernel (completion and async
 * events) only through struct sim_device_upcalls, which the kernel
 * installs.
 *
 * All objects of an adapter are guarded by dev->lock: the control path
 * takes it for every command, the device takes it while it executes a
 * batch of work.
 */
#ifndef PVRDMA_SIM_DEVICE_H
#define PVRDMA_SIM_DEVICE_H

#include <assert.h>

#include "common.h"

/*
 * The doorbell bits of <rdma/vmw_pvrdma-abi.h> as unsigned values: the
 * header spells bit 31 as (1 << 31), which overflows int (undefined
 * behaviour wherever it is evaluated). The sim uses these.
 */
#define SIM_UAR_QP_SEND		(1u << 30)
#define SIM_UAR_QP_RECV		(1u << 31)
#define SIM_UAR_CQ_ARM_SOL	(1u << 29)
#define SIM_UAR_CQ_ARM		(1u << 30)
#define SIM_UAR_CQ_POLL		(1u << 31)
#define SIM_UAR_SRQ_RECV	(1u << 30)

/* Device limits, as the vmw_pvrdma device reports them; the queue depth
 * limits are configuration (options.h, sim_dev_max_qp_wr() ...). */
#define SIM_MAX_QP		32768u
#define SIM_MAX_SGE		16u
#define SIM_MAX_CQ		4096u
#define SIM_MAX_MR		65536u
#define SIM_MAX_PD		4096u
#define SIM_MAX_SRQ		4096u
#define SIM_MAX_SRQ_SGE		16u
#define SIM_MAX_AH		65536u
#define SIM_MAX_UD_QP_DEFAULT	3u

/* Firmware version the device reports: major << 32 | minor << 16 | sub. */
#define SIM_FW_VER		((uint64_t)3 << 32)

static_assert(SIM_MAX_IOV == 4 * SIM_MAX_SGE, "SIM_MAX_IOV of common.h");

/* Statistics of an adapter; updated with relaxed atomics. */
struct sim_stats {
	atomic_ulong db_qp_send;
	atomic_ulong db_qp_recv;
	atomic_ulong db_srq_recv;
	atomic_ulong db_cq_arm;
	atomic_ulong db_cq_arm_sol;
	atomic_ulong db_cq_poll;
	atomic_ulong db_bad;		/* doorbells naming no object */
	atomic_ulong send_wqes;
	atomic_ulong recv_wqes;
	atomic_ulong cqes;
	atomic_ulong bytes_tx;
	atomic_ulong bytes_rx;
	atomic_ulong error_cqes;
	atomic_ulong retransmits;	/* RC requests sent again (timeouts) */
	atomic_ulong comp_events;
	atomic_ulong async_events;
	atomic_ulong single_copy;	/* WRs executed on a same-host target */
	/* Completion events raised on a same-host target's channel */
	atomic_ulong peer_events;
	atomic_ulong rx_no_qp;		/* packets for no QP: dropped */
	atomic_ulong naks;		/* NAKs the responders sent */
	atomic_ulong rx_stray_reads;	/* READs at an old PSN that no READ
					 * executed covers: dropped */
};

/* One user buffer of a ring object (a CQ's or SRQ's buffer, a QP's send
 * or receive buffer). */
struct sim_pin_range {
	uint64_t addr;
	uint64_t len;
};

/* The device's own mapping of the pages: each range's pages, from the
 * page its address is in, at off[i] (in address order, see pin.c). */
struct sim_pin {
	uint8_t *base;
	size_t len;
	size_t off[2];
	/* The memory file behind base, kept open so that same-host
	 * requesters can map the rings too (publish.c): -1 when the view is
	 * not all of that file's (a shared page aliased) or no fd was left
	 * for it. dev and ino name the file; id, never reused in the
	 * process, names the pin. */
	int fd;
	uint64_t dev;
	uint64_t ino;
	uint64_t id;
	/* The process that pinned: a fork()ed child has none of the
	 * device's mapping (MADV_DONTFORK), and the addresses may hold its
	 * own rings by the time it lets go of its parent's objects. */
	pid_t pid;
};

struct sim_dev;
struct sim_ucontext;
struct eqp;			/* engine.h */

/* A user ring as the device sees it: state page + element array. */
struct sim_ring {
	struct pvrdma_ring *state;	/* prod_tail / cons_head */
	uint8_t *elems;			/* first element */
	uint32_t nelems;		/* power of two */
	uint32_t elem_size;		/* power of two, bytes */
	uint32_t max_sge;		/* WQE rings only */
};

struct sim_pd {
	uint32_t handle;		/* uverbs object handle */
	uint32_t pdn;
	struct sim_ucontext *uctx;
	unsigned int refs;		/* MRs, QPs, SRQs using it */
};

struct sim_mr {
	uint32_t handle;
	struct sim_pd *pd;
	uint64_t addr;			/* process virtual address */
	uint64_t iova;			/* hca_va: what remote peers name */
	uint64_t length;
	uint32_t lkey;
	uint32_t rkey;
	int access;			/* IBV_ACCESS_* */
	struct sim_mr_shadow *shadow;	/* mr.c: pages the app gave up */
	bool pin_lost;			/* mr.c: pages it could not keep */
};

struct sim_comp_channel {
	int fd_user;			/* read end the application owns */
	int fd_dev;			/* write end the device keeps */
	unsigned int refs;		/* CQs bound to it */
	bool user_closed;
	/* For same-host requesters, which raise a CQ's event on fd_dev
	 * themselves: the channel (never reused in the process) and the
	 * inode of fd_dev's pipe. */
	uint64_t id;
	uint64_t dev_ino;
};

struct sim_cq {
	uint32_t handle;
	uint32_t cqn;
	uint64_t user_handle;		/* echoed in comp/async events */
	struct sim_ucontext *uctx;
	struct sim_comp_channel *channel;
	struct sim_ring ring;		/* uses ring.state[1] ("rx") */
	struct sim_pin ring_pin;	/* the device's view of the ring */
	int armed;			/* 0, IBV_... see SIM_CQ_ARM_* */
	uint32_t comp_events_reported;
	uint32_t async_events_reported;
	unsigned int refs;		/* QPs using it */
	bool overflowed;
	bool shared;			/* same-host requesters write */
	uint8_t *cqe_solicited;		/* engine: per slot, solicited/error */
};

enum {
	SIM_CQ_ARM_NONE = 0,
	SIM_CQ_ARM_NEXT = 1,		/* any completion */
	SIM_CQ_ARM_SOLICITED = 2,	/* solicited or error only */
};

struct sim_srq {
	uint32_t handle;
	uint32_t srqn;
	uint64_t user_handle;
	struct sim_pd *pd;
	struct sim_ucontext *uctx;
	struct sim_ring ring;		/* uses ring.state[1] ("rx") */
	struct sim_pin ring_pin;	/* the device's view of the ring */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t limit;			/* srq_limit; 0 = disarmed */
	uint32_t async_events_reported;
	unsigned int refs;		/* QPs using it */
};

/* Everything modify_qp can set, as the device keeps it. */
struct sim_qp_attr {
	enum ibv_qp_state state;
	enum ibv_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	int qp_access_flags;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;		/* IB encoding, 0..31 */
	uint8_t timeout;		/* 4.096us * 2^timeout, 0 = infinite */
	uint8_t retry_cnt;
	uint8_t rnr_retry;		/* 7 = infinite */
	uint8_t en_sqd_async_notify;
	struct ibv_ah_attr ah_attr;	/* RC: the peer */
	struct ibv_ah_attr alt_ah_attr;
	uint16_t alt_pkey_index;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint8_t path_mig_state;
};

/* A responder takes requests in RTR, RTS, SQD and SQE; in any other
 * state they are dropped. */
static inline bool sim_qp_state_takes_requests(enum ibv_qp_state st)
{
	return st == IBV_QPS_RTR || st == IBV_QPS_RTS || st == IBV_QPS_SQD ||
	       st == IBV_QPS_SQE;
}

struct sim_qp {
	uint32_t handle;		/* uverbs object handle */
	uint32_t qpn;			/* on the wire */
	uint32_t qp_handle;		/* device handle: doorbells, CQE.qp */
	uint64_t user_handle;
	enum ibv_qp_type type;
	bool sq_sig_all;
	struct sim_ucontext *uctx;
	struct sim_pd *pd;
	struct sim_cq *send_cq;
	struct sim_cq *recv_cq;
	struct sim_srq *srq;		/* NULL: own receive ring */
	struct ibv_qp_cap cap;		/* as granted */
	struct sim_ring sq;		/* state = &ring_page->tx */
	struct sim_ring rq;		/* state = &ring_page->rx (no SRQ) */
	struct sim_pin ring_pin;	/* the device's view of both rings */
	struct sim_qp_attr attr;
	uint32_t async_events_reported;
	struct eqp *engine;		/* the engine's transport state */
};

/* What the engine needs of a memory check's result. */
enum sim_access_result {
	SIM_ACCESS_OK = 0,
	SIM_ACCESS_BAD_KEY,		/* no such key / wrong PD */
	SIM_ACCESS_BAD_RANGE,		/* outside the MR */
	SIM_ACCESS_DENIED,		/* access flags forbid it */
	SIM_ACCESS_FAULT,		/* the device cannot reach the pages */
};

struct sim_ucontext {
	struct sim_dev *dev;
	void *uar;			/* the UAR page (read-only to the app) */
	int async_fd_user;		/* read end the application owns */
	int async_fd_dev;		/* write end the device keeps */
	int cmd_fd;			/* the open uverbs file */
	bool closing;
};

/* One simulated adapter. */
struct sim_dev {
	unsigned int index;		/* 0.. => uverbsN, vmw_pvrdmaN */
	struct sim_config cfg;
	union ibv_gid gid[SIM_GID_TABLE_LEN];
	uint8_t gid_type[SIM_GID_TABLE_LEN];	/* enum ibv_gid_type_sysfs */
	unsigned int gid_count;
	uint64_t node_guid;		/* network order */

	pthread_mutex_t lock;
	/* By device number: PDN, key, CQN, QPN (on the wire), SRQN. */
	struct sim_table pds, mrs, cqs, qps, srqs;
	struct sim_table qp_by_qp_handle;		/* by device handle */
	uint32_t next_qpn;		/* namespaces: on-wire numbers */
	uint32_t next_key;
	unsigned int num_ud_qps;

	struct sim_stats stats;
	/* The port's active MTU when last asked (sim_dev_port_mtu), for
	 * the paths that must not ask the interface (a UD send). */
	_Atomic int active_mtu;		/* enum ibv_mtu */
	_Atomic int iface_mtu;		/* the interface's, bytes, then */
};

extern struct sim_dev sim_devs[SIM_MAX_ADAPTERS];

/* dev->lock: an error-checking mutex (see engine_doorbell). */
void sim_dev_lock_init(struct sim_dev *dev);
/* The GID table and node GUID of dev->cfg. */
void sim_dev_init_identity(struct sim_dev *dev);
/* A forked child's adapter: the MAC and IPv4 address given, the identity
 * made from them, and none of its parent's device (engine_forget). */
void sim_dev_reidentify(struct sim_dev *dev, const uint8_t mac[6],
			uint32_t ipv4);
/* The port's active MTU: --mtu, or the one its interface carries now
 * (one SIOCGIFMTU; for the slow paths that report it: query_port,
 * rdma_cm); dev->iface_mtu then holds the interface's MTU. */
enum ibv_mtu sim_dev_port_mtu(struct sim_dev *dev);
/* The one last reported (or the configured one), without a system call. */
enum ibv_mtu sim_dev_active_mtu(const struct sim_dev *dev);
/* The largest path MTU whose packets the wire carries from this port:
 * on the RoCE wire, what the interface's MTU leaves after the headers
 * (the datagrams leave with don't-fragment); 4096 on the sim's wire and
 * for a port without an interface. */
enum ibv_mtu sim_dev_wire_mtu(const struct sim_dev *dev);

/* ---- the command channel: what the driver asks of the device ---- */
struct sim_device_ops {
	/* dev->lock held by the caller in each */
	int (*qp_create)(struct sim_qp *qp);
	void (*qp_modified)(struct sim_qp *qp, enum ibv_qp_state old_state);
	void (*qp_destroy)(struct sim_qp *qp);
	void (*cq_destroy)(struct sim_cq *cq);
	void (*srq_modified)(struct sim_srq *srq);
	/* cq->armed was set by a command (optional) */
	void (*cq_armed)(struct sim_cq *cq);
	/* cq->comp_events_reported made whole: events the device raised
	 * other than through the upcall (same-host requesters) are counted
	 * in (optional; before a destroy reports them) */
	void (*cq_events_sync)(struct sim_cq *cq);
};

/* The device the kernel model drives: the engine's (sim_engine_ops)
 * unless a test puts a fake one in. */
extern const struct sim_device_ops *sim_device;
extern const struct sim_device_ops sim_engine_ops;

/* ---- the upcalls: what the device raises to the driver ---- */
struct sim_device_upcalls {
	/* After CQEs were added (dev->lock held): one completion event if
	 * the CQ is armed for them (solicited: a solicited or an error CQE
	 * was among them). */
	void (*comp_event)(struct sim_cq *cq, bool solicited);
	void (*async_event)(struct sim_ucontext *uctx, uint64_t element,
			    enum ibv_event_type type, uint32_t *reported);
};

/* No-ops until the kernel model installs its own. */
extern struct sim_device_upcalls sim_device_upcalls;

/* ---- the engine (each call with dev->lock held unless noted) ---- */
int engine_start(struct sim_dev *dev);
/* Payloads the links still send in place (registered memory) are copied:
 * before the application may have such memory back (dev->lock held). */
void engine_copy_in_place(struct sim_dev *dev);
/* In a fork()ed child: the device its parent started is not its own;
 * its next start opens a port of its own (dev->lock held). */
void engine_forget(struct sim_dev *dev);
/* A trapped doorbell store, run on the trapping thread (a signal
 * handler): takes dev->lock (never held by that thread at a doorbell;
 * an error-checking mutex catches the exception and the doorbell is then
 * queued for the device thread). Executes the doorbell, or for a POLL
 * doorbell a round of device work if the device is idle. */
void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value);
int engine_qp_create(struct sim_qp *qp);
void engine_qp_modified(struct sim_qp *qp, enum ibv_qp_state old_state);
void engine_qp_destroy(struct sim_qp *qp);
void engine_cq_destroy(struct sim_cq *cq);
void engine_srq_modified(struct sim_srq *srq);
void engine_cq_armed(struct sim_cq *cq);

/* One packet arrived at the adapter owner (a struct sim_dev) from the
 * fabric: its receive callback (struct fab_adapter). */
struct fab_link;
struct fab_hdr;
struct fab_rx;
void engine_rx(void *owner, struct fab_link *from, const struct fab_hdr *h,
	       struct fab_rx *rx);

/* ---- mr.c: registered memory (dev->lock held unless noted) ---- */
/* Where the bytes of an access are: up to *iovcnt pieces (the pages an
 * MR kept of memory the application gave up are elsewhere). */
enum sim_access_result sim_mr_map(struct sim_dev *dev, struct sim_pd *pd,
				  uint32_t key, bool remote, uint64_t addr,
				  uint64_t len, int need_access,
				  struct iovec *iov, int *iovcnt);
/* sim_mr_map() of an access that must be one piece (SIM_ACCESS_FAULT if
 * it is not). */
enum sim_access_result sim_mr_check(struct sim_dev *dev, struct sim_pd *pd,
				    uint32_t key, bool remote, uint64_t addr,
				    uint64_t len, int need_access,
				    uint8_t **host_ptr);
/* A registered MR enters / leaves the pinning registry. */
void sim_mr_pin_track(struct sim_mr *mr);
void sim_mr_pin_release(struct sim_mr *mr);
/* The application is about to give up the pages of [addr, addr + len)
 * (munmap, mmap MAP_FIXED, mremap, madvise): every MR covering some keeps
 * their content. Takes each adapter's lock; call it without any. */
void sim_mr_pin_give_up(const void *addr, size_t len);

/* ---- publish.c: what same-host requesters see (dev->lock held) ---- */
/* Maps the adapter's shared segment (a device context opens). */
void sim_dev_shared_open(struct sim_dev *dev);
/* A registered MR becomes reachable / stops being reachable by same-host
 * requesters (before its pages move or it is gone). */
void sim_mr_publish(struct sim_dev *dev, const struct sim_mr *mr);
void sim_mr_withdraw(struct sim_dev *dev, const struct sim_mr *mr);

/* ---- stats.c ---- */
void sim_stats_print(int fd);
/* To --stats-file (appended, %p = pid) or stderr. */
void sim_stats_dump(void);

#endif /* PVRDMA_SIM_DEVICE_H */
