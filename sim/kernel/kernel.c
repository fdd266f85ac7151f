// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel layer's ties to the layers around it: the host's services it
 * keeps (struct sim_kernel_host) and the upcalls it installs in the device
 * (its events). Until sim_kernel_init() the host's services answer as a
 * process with no UAR and no rdma_cm file would.
 */
#include <sys/mman.h>

#include "kernel.h"
#include "uverbs_internal.h"

static void *no_uar_map(struct sim_ucontext *uctx, void *addr_hint)
{
	return MAP_FAILED;
}

static void no_uar_unmap(struct sim_ucontext *uctx, void *uar)
{
}

static bool no_uar(const void *addr)
{
	return false;
}

static struct ucma_file *no_ucma_file(int fd)
{
	return NULL;
}

struct sim_kernel_host sim_kernel_host = {
	.uar_map = no_uar_map,
	.uar_unmap = no_uar_unmap,
	.is_uar = no_uar,
	.ucma_file_of_fd = no_ucma_file,
};

void sim_kernel_init(const struct sim_kernel_host *host)
{
	sim_kernel_host = *host;
	sim_device_upcalls.comp_event = sim_event_comp;
	sim_device_upcalls.async_event = sim_event_async;
}
