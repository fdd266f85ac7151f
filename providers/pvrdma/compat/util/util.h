/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the helpers of rdma-core's
 * util/util.h that libpvrdma uses.
 */
#ifndef PVRDMA_COMPAT_UTIL_UTIL_H
#define PVRDMA_COMPAT_UTIL_UTIL_H

#include <stdint.h>

#include <ccan/ilog.h>

/* val rounded up to a multiple of align, a power of two. */
static inline unsigned long align(unsigned long val, unsigned long align)
{
	return (val + align - 1) & ~(align - 1);
}

/* The smallest power of two >= n, for n >= 1. */
static inline uint64_t roundup_pow_of_two(uint64_t n)
{
	return n == 1 ? 1 : 1ULL << ilog64(n - 1);
}

#endif
