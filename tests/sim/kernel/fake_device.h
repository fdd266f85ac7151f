/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fake device and host for unit tests of the kernel model that do not
 * test them: a device that accepts every command and does nothing, and a
 * host whose UAR pages are plain read-only pages. fake_device_install()
 * puts both in (sim_device, sim_kernel_init()); include this in one test
 * file of an executable.
 */
#ifndef PVRDMA_TEST_FAKE_DEVICE_H
#define PVRDMA_TEST_FAKE_DEVICE_H

#include <sys/mman.h>

#include "kernel.h"

static int fake_qp_create(struct sim_qp *qp)
{
	return 0;
}

static void fake_qp_modified(struct sim_qp *qp, enum ibv_qp_state old)
{
}

static void fake_qp_destroy(struct sim_qp *qp)
{
}

static void fake_cq_destroy(struct sim_cq *cq)
{
}

static void fake_srq_modified(struct sim_srq *srq)
{
}

static const struct sim_device_ops fake_device = {
	.qp_create = fake_qp_create,
	.qp_modified = fake_qp_modified,
	.qp_destroy = fake_qp_destroy,
	.cq_destroy = fake_cq_destroy,
	.srq_modified = fake_srq_modified,
};

static void *fake_uar_map(struct sim_ucontext *uctx, void *hint)
{
	return mmap(NULL, SIM_PAGE_SIZE, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void fake_uar_unmap(struct sim_ucontext *uctx, void *uar)
{
	munmap(uar, SIM_PAGE_SIZE);
}

static bool fake_is_uar(const void *addr)
{
	return false;
}

static struct ucma_file *fake_ucma_file_of_fd(int fd)
{
	return NULL;
}

static inline void fake_device_install(void)
{
	sim_device = &fake_device;
	sim_kernel_init(&(struct sim_kernel_host){
		.uar_map = fake_uar_map, .uar_unmap = fake_uar_unmap,
		.is_uar = fake_is_uar,
		.ucma_file_of_fd = fake_ucma_file_of_fd });
}

#endif /* PVRDMA_TEST_FAKE_DEVICE_H */
