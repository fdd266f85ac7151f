/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim kernel layer: the ib_uverbs + vmw_pvrdma driver model and
 * rdma_ucm, as the host layer sees them (sim/kernel/README.md).
 *
 * The host turns the application's libc calls on a device file into the
 * file operations below, as the VFS turns system calls into a driver's.
 * What the kernel needs of the host (the UAR page mapped into the
 * process, the files behind other fds) it reaches only through struct
 * sim_kernel_host, which the host installs with sim_kernel_init().
 */
#ifndef PVRDMA_SIM_KERNEL_H
#define PVRDMA_SIM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "device.h"

/* The port's active MTU as the kernel reports it (query_port, rdma_cm):
 * the device's reading, the host told when the interface's MTU moved
 * (device_attr.c). */
enum ibv_mtu sim_port_mtu(struct sim_dev *dev);

/*
 * The device's index, as rdma_cm's queries and RDMA netlink report it.
 * The kernel never gives a new device an old index, and libibverbs and
 * librdmacm take the same index for the same device: an adapter made
 * anew (a forked child's, config.c) is a new device, so the index
 * follows the adapter's MAC (never 0).
 */
static inline uint32_t sim_ibdev_index(const struct sim_dev *dev)
{
	const uint8_t *m = dev->cfg.mac;
	uint32_t v = (uint32_t)m[2] << 24 | (uint32_t)m[3] << 16 |
		     (uint32_t)m[4] << 8 | m[5];

	return 1 + v % 0x7ffffffeu;
}

/* Character device of uverbsN: what stat() and sysfs "dev" report. */
#define SIM_UVERBS_MAJOR	231
#define SIM_UVERBS_MINOR_BASE	192

struct sim_file;
struct ucma_file;

/* What the kernel model asks of the host. */
struct sim_kernel_host {
	/* A read-only UAR page of uctx whose stores trap into the device's
	 * engine_doorbell(uctx, ...); MAP_FAILED or NULL on failure. */
	void *(*uar_map)(struct sim_ucontext *uctx, void *addr_hint);
	/* Unmaps uctx's UAR page at uar; nothing if the page is no longer
	 * its UAR (unmapped behind the sim's back and the address given
	 * again). */
	void (*uar_unmap)(struct sim_ucontext *uctx, void *uar);
	/* The page at addr is a UAR page (device memory: never pinned). */
	bool (*is_uar)(const void *addr);
	/* The rdma_cm file an fd of the process is open on, or NULL. */
	struct ucma_file *(*ucma_file_of_fd)(int fd);
	/* The MTU of the host interface of dev's port changed to bytes
	 * (optional): what the host shows of the interface follows. */
	void (*iface_mtu_changed)(const struct sim_dev *dev, int bytes);
};

/* Installs the host's services (a copy is kept) and the kernel's upcalls
 * into the device (events). Before it: no UAR can be mapped, no page is a
 * UAR, no fd is an rdma_cm file; the device's events go nowhere. */
void sim_kernel_init(const struct sim_kernel_host *host);
/* The kernel layer's copy (its files only). */
extern struct sim_kernel_host sim_kernel_host;

/* Errors are the kernel's -errno throughout this layer, but for the calls
 * that stand for libc's (open, mmap, munmap): those set errno. */

/* ---- uverbs.c: a /dev/infiniband/uverbsN file ---- */
struct sim_file *uverbs_open(struct sim_dev *dev, int fd);
/* A command written to the file: len or -errno. */
ssize_t uverbs_write(struct sim_file *f, const void *buf, size_t len);
void *uverbs_mmap(struct sim_file *f, void *addr, size_t len, int prot,
		  int flags, off_t offset);
int uverbs_munmap(struct sim_file *f, void *addr, size_t len);
void uverbs_close(struct sim_file *f);

/* ---- ucma.c: the /dev/infiniband/rdma_cm file ---- */
/* The file of the eventfd fd the process opened: NULL with errno set. */
struct ucma_file *ucma_open(int fd);
/* A command written to the file. Returns len or -errno. */
ssize_t ucma_write(struct ucma_file *file, const void *buf, size_t len);
void ucma_close(struct ucma_file *file);

/* ---- pin.c: registered memory as ib_umem_get pins it ---- */
/* REG_MR: pins [addr, addr + len) as ib_umem_get would; 0 or -EFAULT. No
 * lock needed. */
int sim_mr_pin_check(uint64_t addr, uint64_t len, int access);

#endif /* PVRDMA_SIM_KERNEL_H */
