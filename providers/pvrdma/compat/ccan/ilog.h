/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the integer logarithms of rdma-core's
 * ccan/ilog.h. ilog32(v) is the number of significant bits of v, so
 * floor(log2(v)) + 1, and 0 for 0; the _nz forms require v != 0.
 */
#ifndef PVRDMA_COMPAT_CCAN_ILOG_H
#define PVRDMA_COMPAT_CCAN_ILOG_H

#include <stdint.h>

static inline int ilog32_nz(uint32_t v)
{
	return 32 - __builtin_clz(v);
}

static inline int ilog32(uint32_t v)
{
	return v ? ilog32_nz(v) : 0;
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
