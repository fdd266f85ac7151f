/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: rdma-core generates this header from
 * the kernel's <rdma/vmw_pvrdma-abi.h> (adding the loose field lists its
 * DECLARE_DRV_CMD uses); libpvrdma names the udata structs only whole, as
 * drv_payload, so the kernel header is all it needs.
 */
#ifndef PVRDMA_COMPAT_KERNEL_ABI_VMW_PVRDMA_ABI_H
#define PVRDMA_COMPAT_KERNEL_ABI_VMW_PVRDMA_ABI_H

#include <rdma/vmw_pvrdma-abi.h>

#endif
