/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim: what every layer shares (sim/README.md has the layers).
 *
 *   common.h    the configuration of the sim and of each adapter, the
 *               adapters' identity derivation, number tables, the
 *               device's fault-free accesses to application memory
 *   sys.h       the sim's own system calls, straight into the kernel
 *   libc.h      the libc calls the sim makes for itself (the gateway)
 *   fds.h       the sim's own fds, out of the application's way
 *   spawn.h     the sim's own threads, started whole (fork-safe)
 *
 * Nothing here knows a layer: each layer includes this and the header of
 * the layer below it, never one above.
 */
#ifndef PVRDMA_SIM_COMMON_H
#define PVRDMA_SIM_COMMON_H

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

/* Up to ten PVRDMA adapters per VM, as vSphere 7.0.2 and later allow. */
#define SIM_MAX_ADAPTERS	10
#define SIM_GID_TABLE_LEN	6
#define SIM_PAGE_SIZE		4096u

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
	enum ibv_mtu mtu;		/* active MTU of the port (at start
					 * when mtu_follows_iface) */
	bool mtu_follows_iface;		/* no --mtu and a netdev: the active
					 * MTU is what it carries (iface.c) */
	uint8_t mac[6];			/* unique per adapter on a host */
	uint32_t ipv4;			/* network order; 0 = none */
	char netdev[16];		/* the host's interface holding ipv4
					 * (outside 127/8); "" = simulated */
};

/* Global configuration of the sim in this process. */
struct sim_global {
	unsigned int num_adapters;
	struct sim_config adapter[SIM_MAX_ADAPTERS];
	char rundir[256];		/* sockets of the fabric, sysfs tree */
	uint16_t tcp_port;		/* --tcp-port, fabric/tcp.c */
	char sysfs_root[256];		/* the sysfs tree of this process */
	char sysfs_path[32];		/* SYSFS_PATH: /proc/self/fd/<fd> */
	int sysfs_fd;			/* the sim's, on sysfs_root */
	bool stats_at_exit;		/* --stats */
	char stats_file[256];		/* --stats-file, "" = stderr */
	bool single_copy_off;		/* --no-single-copy */
	bool async_mode;		/* --async-mode */
	uint8_t wire;			/* --wire: enum sim_wire */
};

extern struct sim_global sim_global;

/* GID type values: the kernel's sysfs GID types. */
enum {
	SIM_GID_TYPE_ROCE_V1 = 0,	/* "IB/RoCE v1" */
	SIM_GID_TYPE_ROCE_V2 = 1,	/* "RoCE v2" */
};

/* ---- identity.c: an adapter's identity (network order throughout) ---- */
void sim_derive_mac(pid_t pid, unsigned int index, uint8_t mac[6]);
uint64_t sim_node_guid_from_mac(const uint8_t mac[6]);
void sim_gid_from_mac(const uint8_t mac[6], union ibv_gid *gid);
void sim_gid_from_ipv4(uint32_t ipv4, union ibv_gid *gid);
uint32_t sim_ipv4_from_mac(const uint8_t mac[6]);
/* The MAC of a GID that one of the above made; false for any other. */
bool sim_mac_from_gid(const uint8_t gid[16], uint8_t mac[6]);

/* ---- iface.c: the MTU of a host interface a port sends on ---- */
/* What a RoCE packet adds to its payload on the interface, as rxe counts
 * it: an IPv6 header (40), UDP (8), BTH (12), RETH (16) and ICRC (4); the
 * sim's IPv4 packets with any extension header stay within it. */
#define SIM_ROCE_HEADROOM	80
/* The interface's MTU in bytes (SIOCGIFMTU), 0 when it has none. */
int sim_iface_mtu(const char *ifname);
/* The largest IB MTU whose packets fit an interface MTU of iface_mtu:
 * 256 at least, 4096 at most (1500: 1024, 9000: 4096). */
enum ibv_mtu sim_ib_mtu_of_iface(int iface_mtu);

/* ---- self.c: this process ---- */
/* getpid() without a system call; a fork()ed child's own from its first
 * instruction after fork() on (see self.c). */
pid_t sim_self_pid(void);
/* gettid() with one system call per thread (and per fork()ed child). */
pid_t sim_self_tid(void);
/* The kernel's word on thread tid of process pid (/proc/PID/task/TID/stat):
 * UNKNOWN when the file cannot be opened for another reason than its
 * absence (no descriptor left, say), which tells nothing of the thread. */
enum sim_task_run {
	SIM_TASK_GONE, SIM_TASK_UNKNOWN, SIM_TASK_STOPPED, SIM_TASK_ASLEEP,
	SIM_TASK_RUNNING
};
enum sim_task_run sim_task_run(pid_t pid, pid_t tid);

/* ---- table.c: number tables (slot i holds number i, NULL = free) ---- */
struct sim_table {
	void **slot;
	uint32_t size;
};

void *sim_table_get(struct sim_table *t, uint32_t handle);
int sim_table_put(struct sim_table *t, uint32_t idx, void *obj);
int sim_table_alloc(struct sim_table *t, uint32_t first, uint32_t last,
		    uint32_t *next, void *obj, uint32_t *idx);
void sim_table_del(struct sim_table *t, uint32_t handle);

/* ---- dma.c: the device's accesses to application memory (no lock) ---- */
/* Copies that never fault: false when a page is not there or not
 * accessible. len bounds the bytes copied (at most the iovecs' total).
 * Reads are process_vm_readv's, writes guarded copies (fault_guard.h). */
bool sim_app_read(void *dst, const struct iovec *src, int n, size_t len);
bool sim_app_write(const struct iovec *dst, int n, const void *src,
		   size_t len);
/* Copies our src pieces into the application's dst pieces, in order, in
 * one guarded copy (fault_guard.h): the bytes copied, fewer than asked
 * where a page of dst faulted (0 when nothing could be). */
size_t sim_app_scatter(const struct iovec *dst, int ndst,
		       const struct iovec *src, int nsrc);
/* The page(s) of [p, p + len) are present and writable (an atomic's). */
bool sim_app_writable(void *p, size_t len);
/* Faults the pages of [addr, addr + len) in as a pin would, writable or
 * readable: 0, or EFAULT where the pin would fail. */
int sim_app_pin(void *addr, size_t len, bool write);

/* Most pieces the local memory of one WQE maps to: 4 per SGE of the
 * device's limit (SIM_MAX_SGE, device.h checks it). */
#define SIM_MAX_IOV		64

#endif /* PVRDMA_SIM_COMMON_H */
