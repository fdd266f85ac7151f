/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the MMIO write of rdma-core's
 * util/mmio.h that libpvrdma uses. A 32-bit device register takes one
 * single-copy-atomic store of a value already in the device's (little)
 * byte order; ordering against earlier memory writes is the caller's
 * (udma_to_device_barrier()).
 */
#ifndef PVRDMA_COMPAT_UTIL_MMIO_H
#define PVRDMA_COMPAT_UTIL_MMIO_H

#include <endian.h>
#include <stdint.h>
#include <linux/types.h>

#include <util/udma_barrier.h>

static inline void mmio_write32_le(void *addr, __le32 value)
{
	__atomic_store_n((uint32_t *)addr, (uint32_t)value,
			 __ATOMIC_RELAXED);
}

#endif
