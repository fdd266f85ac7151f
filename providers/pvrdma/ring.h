/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Index arithmetic of the rings shared with the PVRDMA device.
 *
 * A ring of n elements (n a power of two) keeps its producer and consumer
 * indices in [0, 2n): the low bits pick the slot, bit n is a generation
 * bit that flips on every wrap. So the ring is empty when both indices are
 * equal and full when they differ only in the generation bit, and all n
 * slots are usable. Only masks are used: no division on the fast path.
 *
 * The ring-state page starts with two of these (device ABI):
 *   QP send buffer:  tx = SQ, rx = RQ
 *   CQ, SRQ buffer:  rx
 */
#ifndef PVRDMA_RING_H
#define PVRDMA_RING_H

#include <stdbool.h>
#include <stdint.h>

struct pvrdma_ring {
	uint32_t prod_tail;	/* written by the producer only */
	uint32_t cons_head;	/* written by the consumer only */
};

struct pvrdma_ring_state {
	struct pvrdma_ring tx;
	struct pvrdma_ring rx;
};

_Static_assert(sizeof(struct pvrdma_ring_state) == 16, "ring-state ABI");

static inline bool pvrdma_ring_idx_valid(uint32_t idx, uint32_t n)
{
	return (idx & ~((n << 1) - 1)) == 0;
}

static inline uint32_t pvrdma_ring_slot(uint32_t idx, uint32_t n)
{
	return idx & (n - 1);
}

static inline uint32_t pvrdma_ring_next(uint32_t idx, uint32_t n)
{
	return (idx + 1) & ((n << 1) - 1);
}

static inline uint32_t pvrdma_ring_prev(uint32_t idx, uint32_t n)
{
	return (idx - 1) & ((n << 1) - 1);
}

static inline uint32_t pvrdma_ring_add(uint32_t idx, uint32_t k, uint32_t n)
{
	return (idx + k) & ((n << 1) - 1);
}

/* Elements between consumer and producer. */
static inline uint32_t pvrdma_ring_used(uint32_t tail, uint32_t head,
					uint32_t n)
{
	return (tail - head) & ((n << 1) - 1);
}

static inline bool pvrdma_ring_full(uint32_t tail, uint32_t head, uint32_t n)
{
	return tail == (head ^ n);
}

/* The other side's index: read it before touching what it guards. */
static inline uint32_t pvrdma_ring_load_acquire(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

/* Our own index: nobody else writes it. */
static inline uint32_t pvrdma_ring_load_own(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_RELAXED);
}

/* Publish our index after the elements it covers are written/read. */
static inline void pvrdma_ring_store_release(uint32_t *idx, uint32_t val)
{
	__atomic_store_n(idx, val, __ATOMIC_RELEASE);
}

#endif /* PVRDMA_RING_H */
