/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim: the contract between the parts of the simulated PVRDMA adapter.
 *
 *   interpose.c / sysfs.c / doorbell.c   host side: what libc calls on the
 *                                        uverbs fds become, the sysfs tree,
 *                                        the UAR trap (the "hypervisor")
 *   uverbs*.c / events.c / qp_state.c    the ib_uverbs + vmw_pvrdma kernel
 *                                        driver model (control path)
 *   engine.c / fabric.c                  the device: executes WQEs, writes
 *                                        CQEs, moves data between adapters
 *   mr.c / dma.c                         registered memory: checks, pinning,
 *                                        the device's fault-free copies
 *
 * One process holds one or more adapters (struct sim_dev). All objects of an
 * adapter are guarded by dev->lock: the control path takes it for every
 * command, the engine takes it while it executes a batch of work.
 */
#ifndef PVRDMA_SIM_H
#define PVRDMA_SIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "pin.h"

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

#define SIM_MAX_ADAPTERS	4
#define SIM_GID_TABLE_LEN	6
#define SIM_PAGE_SIZE		4096u

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

/* One simulated adapter's configuration (from the launcher's options). */
struct sim_config {
	char ibdev[64];			/* "vmw_pvrdma0" */
	unsigned int hw_version;	/* 13, 14 or 18 */
	unsigned int roce;		/* 1 or 2: the port's RoCE mode */
	bool namespaces;		/* QP handle differs from QPN */
	unsigned int max_ud_qps;	/* 3 on the real device */
	unsigned int max_qp_wr;		/* 0: derived (options.h) */
	unsigned int max_srq_wr;	/* 0: derived default */
	unsigned int max_cqe;		/* 0: derived default */
	enum ibv_mtu mtu;		/* active MTU of the port */
	uint8_t mac[6];			/* unique per adapter on a host */
	uint32_t ipv4;			/* network order; 0 = none */
};

/* Global configuration of the sim in this process. */
struct sim_global {
	unsigned int num_adapters;
	struct sim_config adapter[SIM_MAX_ADAPTERS];
	char rundir[256];		/* sockets of the fabric, sysfs tree */
	char sysfs_root[256];		/* what SYSFS_PATH points at */
	bool stats_at_exit;		/* --stats */
	char stats_file[256];		/* --stats-file, "" = stderr */
	bool single_copy_off;		/* --no-single-copy */
	bool async_mode;		/* --async-mode */
};

extern struct sim_global sim_global;

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
};

struct sim_dev;
struct sim_ucontext;

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
	void *engine;			/* engine.c's per-QP transport state */
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

/* Number table of one object kind: slot i holds number i, NULL = free. */
struct sim_table {
	void **slot;
	uint32_t size;
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
	struct sim_table pds, mrs, cqs, qps, srqs;	/* by uverbs handle */
	struct sim_table qp_by_qp_handle;		/* by device handle */
	uint32_t next_qpn;		/* namespaces: on-wire numbers */
	uint32_t next_key;
	unsigned int num_ud_qps;

	struct sim_stats stats;
	void *engine;			/* engine.c's device state */
};

extern struct sim_dev sim_devs[SIM_MAX_ADAPTERS];

/* ---- config.c: environment of the launcher -> sim_global, GIDs ---- */
int sim_config_load(void);
void sim_dev_init_identity(struct sim_dev *dev);	/* GIDs, node GUID */
/* dev->lock: an error-checking mutex (see engine_doorbell). */
void sim_dev_lock_init(struct sim_dev *dev);

/* dev->gid_type[] values: the kernel's sysfs GID types. */
enum {
	SIM_GID_TYPE_ROCE_V1 = 0,	/* "IB/RoCE v1" */
	SIM_GID_TYPE_ROCE_V2 = 1,	/* "RoCE v2" */
};

/* Character device of uverbsN: what stat() and sysfs "dev" report. */
#define SIM_UVERBS_MAJOR	231
#define SIM_UVERBS_MINOR_BASE	192

/* Firmware version the device reports: major << 32 | minor << 16 | sub. */
#define SIM_FW_VER		((uint64_t)3 << 32)

/* Identity derivation (network order throughout). */
void sim_derive_mac(pid_t pid, unsigned int index, uint8_t mac[6]);
uint64_t sim_node_guid_from_mac(const uint8_t mac[6]);
void sim_gid_from_mac(const uint8_t mac[6], union ibv_gid *gid);
void sim_gid_from_ipv4(uint32_t ipv4, union ibv_gid *gid);
uint32_t sim_ipv4_from_mac(const uint8_t mac[6]);

/* ---- interpose.c: the real libc entry points, for the sim's own use ---- */
struct sim_libc {
	int (*close)(int fd);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*read)(int fd, void *buf, size_t len);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
};
extern struct sim_libc sim_libc;

/* ---- doorbell.c: the UAR trap and the signals it owns ---- */
int sim_doorbell_trap_install(void);
/* A read-only UAR page whose stores trap into engine_doorbell(uctx, ...). */
void *sim_uar_map(struct sim_ucontext *uctx, void *addr_hint);
/* Unmaps uctx's UAR page at uar; nothing if the page is no longer its
 * UAR (unmapped behind the sim's back and the address given again). */
void sim_uar_unmap(struct sim_ucontext *uctx, void *uar);
/* The context whose UAR page holds addr, or NULL. Async-signal-safe. */
struct sim_ucontext *sim_uar_lookup(const void *addr);
bool sim_doorbell_trap_installed(void);
/* sigaction(SIGSEGV, ...) of the application while the trap owns SIGSEGV:
 * records act as the action to chain to and returns the recorded one. */
int sim_doorbell_app_sigaction(const struct sigaction *act,
			       struct sigaction *old);

/*
 * SIGSEGV and SIGBUS, owned by the trap: never blocked in the kernel, the
 * application's actions and per-thread mask recorded instead. Bits of a
 * view: 1 << i for the i-th owned signal.
 */
#define SIM_OWNED_SIGNALS	2
bool sim_signal_owned(int sig);
/* The same for any owned signal. */
int sim_signal_app_action(int sig, const struct sigaction *act,
			  struct sigaction *old);
unsigned int sim_signal_bits(const sigset_t *set);
void sim_signal_add_bits(sigset_t *set, unsigned int bits);
void sim_signal_strip(sigset_t *set);
/* This thread's view: blocked owned signals; setting it delivers a sent
 * one it held back and now unblocks. */
unsigned int sim_signal_blocked(void);
void sim_signal_set_blocked(unsigned int bits);
unsigned int sim_signal_pending(void);
/* Takes back an owned signal whose action was changed unseen. */
void sim_signal_check(void);
/* SIGBUS at addr: true if it was made a UAR (the access restarts). */
typedef bool (*sim_bus_fixup_fn)(void *addr);
void sim_signal_set_bus_fixup(sim_bus_fixup_fn fn);

/* ---- fds.c: the sim's own fds, out of the application's way ---- */
#define SIM_FD_BITMAP_FDS	(1 << 20)
/* Takes fd (just made by the sim) as the sim's: returns the number to use
 * from now on (moved high, close-on-exec). */
int sim_fd_own(int fd);
/* Closes an fd sim_fd_own() returned. */
int sim_fd_close(int fd);
bool sim_fd_is_own(int fd);
/* The first of the sim's fds in [from, last], or -1. */
int sim_fd_next_own(unsigned int from, unsigned int last);

/* ---- sysfs.c ---- */
int sim_sysfs_write(void);

/* ---- uverbs.c: the kernel driver, called by interpose.c ---- */
struct sim_file;
struct sim_file *uverbs_open(struct sim_dev *dev, int fd);
ssize_t uverbs_write(struct sim_file *f, const void *buf, size_t len);
void *uverbs_mmap(struct sim_file *f, void *addr, size_t len, int prot,
		  int flags, off_t offset);
int uverbs_munmap(struct sim_file *f, void *addr, size_t len);
void uverbs_close(struct sim_file *f);

/* ---- events.c: the device raises events (dev->lock held) ---- */
/* After CQEs were added: fires one completion event if the CQ is armed for
 * them (solicited: a solicited or an error CQE was among them). */
void sim_event_comp(struct sim_cq *cq, bool solicited);
void sim_event_async(struct sim_ucontext *uctx, uint64_t element,
		     enum ibv_event_type type, uint32_t *reported);

/* ---- qp_state.c ---- */
bool sim_qp_transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			  enum ibv_qp_type type, int mask);

/* ---- engine.c: the device (each call with dev->lock held unless noted) -- */
int engine_start(struct sim_dev *dev);
void engine_stop(struct sim_dev *dev);
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
/* REG_MR: pins [addr, addr + len) as ib_umem_get would; 0 or EFAULT. No
 * lock needed. */
int sim_mr_pin_check(uint64_t addr, uint64_t len, int access);
/* A registered MR enters / leaves the pinning registry. */
void sim_mr_pin_track(struct sim_mr *mr);
void sim_mr_pin_release(struct sim_mr *mr);
/* The application is about to give up the pages of [addr, addr + len)
 * (munmap, mmap MAP_FIXED, mremap, madvise): every MR covering some keeps
 * their content. Takes each adapter's lock; call it without any. */
void sim_mr_pin_give_up(const void *addr, size_t len);

/* ---- dma.c: the device's accesses to application memory (no lock) ---- */
/* Copies that never fault: false when a page is not there or not
 * accessible. len bounds the bytes copied (at most the iovecs' total). */
bool sim_app_read(void *dst, const struct iovec *src, int n, size_t len);
bool sim_app_write(const struct iovec *dst, int n, const void *src,
		   size_t len);
/* The page(s) of [p, p + len) are present and writable (an atomic's). */
bool sim_app_writable(void *p, size_t len);
/* Faults the pages of [addr, addr + len) in as a pin would, writable or
 * readable: 0, or EFAULT where the pin would fail. */
int sim_app_pin(void *addr, size_t len, bool write);

/* Most pieces the local memory of one WQE maps to. */
#define SIM_MAX_IOV		(4 * SIM_MAX_SGE)

/* ---- stats.c ---- */
void sim_stats_print(int fd);
/* To --stats-file (appended, %p = pid) or stderr. */
void sim_stats_dump(void);

/* ---- helpers shared by all parts ---- */
void *sim_table_get(struct sim_table *t, uint32_t handle);
int sim_table_put(struct sim_table *t, uint32_t idx, void *obj);
int sim_table_alloc(struct sim_table *t, uint32_t first, uint32_t last,
		    uint32_t *next, void *obj, uint32_t *idx);
void sim_table_del(struct sim_table *t, uint32_t handle);

#endif /* PVRDMA_SIM_H */
