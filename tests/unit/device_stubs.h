/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device and the hypervisor, for unit tests of the kernel model that
 * do not test them: no-op stand-ins, overridden by the real ones when
 * those are linked in (weak). Definitions: include it in one test file of
 * an executable.
 */
#ifndef PVRDMA_TEST_DEVICE_STUBS_H
#define PVRDMA_TEST_DEVICE_STUBS_H

#include <sys/mman.h>

#include "sim.h"

__attribute__((weak)) int engine_qp_create(struct sim_qp *qp)
{
	return 0;
}

__attribute__((weak)) void engine_qp_modified(struct sim_qp *qp,
					      enum ibv_qp_state old)
{
}

__attribute__((weak)) void engine_qp_destroy(struct sim_qp *qp)
{
}

__attribute__((weak)) void engine_cq_destroy(struct sim_cq *cq)
{
}

__attribute__((weak)) void engine_srq_modified(struct sim_srq *srq)
{
}

__attribute__((weak)) void *sim_uar_map(struct sim_ucontext *uctx,
					void *hint)
{
	return mmap(NULL, SIM_PAGE_SIZE, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

__attribute__((weak)) void sim_uar_unmap(struct sim_ucontext *uctx,
					 void *uar)
{
	munmap(uar, SIM_PAGE_SIZE);
}

#endif /* PVRDMA_TEST_DEVICE_STUBS_H */
