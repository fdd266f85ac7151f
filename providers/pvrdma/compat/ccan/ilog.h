/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the integer logarithms of rdma-core's
 * ccan/ilog.h. ilog32_nz(v) is the number of significant bits of v,
 * so floor(log2(v)) + 1, for v != 0; ilog64 is the same for 64 bits, and
 * 0 for 0.
 */
#ifndef PVRDMA_COMPAT_CCAN_ILOG_H
#define PVRDMA_COMPAT_CCAN_ILOG_H

#include <stdint.h>

static inline int ilog32_nz(uint32_t v)
{
	return 32 - __builtin_clz(v);
}

static inline int ilog64_nz(uint64_t v)
{
	return 64 - __builtin_clzll(v);
}

static inline int ilog64(uint64_t v)
{
	return v ? ilog64_nz(v) : 0;
}

#endif
