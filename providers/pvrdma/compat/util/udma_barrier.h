/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the barrier of rdma-core's
 * util/udma_barrier.h that libpvrdma uses.
 *
 * udma_to_device_barrier(): everything written to memory the device reads
 * (WQEs, ring indices) is visible to it before any store that follows,
 * the doorbell among them. x86 does not reorder stores with each other, so
 * there it only keeps the compiler from doing so.
 */
#ifndef PVRDMA_COMPAT_UTIL_UDMA_BARRIER_H
#define PVRDMA_COMPAT_UTIL_UDMA_BARRIER_H

#if defined(__x86_64__) || defined(__i386__)
#define udma_to_device_barrier() __asm__ volatile("" ::: "memory")
#elif defined(__aarch64__)
#define udma_to_device_barrier() __asm__ volatile("dsb st" ::: "memory")
#else
/* no arch-specific fence known here: a full one is always enough */
#define udma_to_device_barrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

#endif
