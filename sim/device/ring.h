/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring index rules of the PVRDMA device.
 *
 * A ring has N elements (N a power of two) and two indices in a state page
 * shared with the driver: prod_tail (written by the producer) and cons_head
 * (written by the consumer). Indices run over 0..2N-1: the bit above the
 * slot bits is a generation bit, so that a full ring (tail == head ^ N) is
 * told apart from an empty one (tail == head). An index with any bit above
 * 2N-1 set is invalid: the device refuses to use the ring.
 *
 * The state page is ordinary user memory, written concurrently by the other
 * side, so every access to an index is a single atomic 32-bit load or store;
 * the acquire/release pairs order the indices against the elements.
 */
#ifndef PVRDMA_SIM_RING_H
#define PVRDMA_SIM_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

/* The layout both the driver and the device agree on (one per ring). */
struct pvrdma_ring {
	uint32_t prod_tail;
	uint32_t cons_head;
};

/* QP ring-state page: send ring first, receive ring second. CQ and SRQ
 * rings use the second one ("rx") of their page. */
struct pvrdma_ring_state {
	struct pvrdma_ring tx;
	struct pvrdma_ring rx;
};

enum sim_ring_status {
	SIM_RING_INVALID = -1,	/* an index is out of range */
	SIM_RING_NONE = 0,	/* empty (consumer) or full (producer) */
	SIM_RING_READY = 1,
};

static inline bool sim_ring_idx_valid(uint32_t idx, uint32_t nelems)
{
	return (idx & ~(2 * nelems - 1)) == 0;
}

static inline uint32_t sim_ring_idx_next(uint32_t idx, uint32_t nelems)
{
	return (idx + 1) & (2 * nelems - 1);
}

static inline uint32_t sim_ring_slot(uint32_t idx, uint32_t nelems)
{
	return idx & (nelems - 1);
}

/* Elements between head and tail; both indices must be valid. */
static inline uint32_t sim_ring_used(uint32_t tail, uint32_t head,
				     uint32_t nelems)
{
	return (tail - head) & (2 * nelems - 1);
}

static inline bool sim_ring_is_empty(uint32_t tail, uint32_t head)
{
	return tail == head;
}

static inline bool sim_ring_is_full(uint32_t tail, uint32_t head,
				    uint32_t nelems)
{
	return tail == (head ^ nelems);
}

static inline uint32_t sim_ring_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sim_ring_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *sim_ring_elem(const struct sim_ring *r, uint32_t idx)
{
	return r->elems + (size_t)sim_ring_slot(idx, r->nelems) * r->elem_size;
}

/* Consumer side: the element skip places past cons_head, if published. A
 * device that keeps the WQEs it fetched looks past them, leaving
 * cons_head, so the producer cannot reuse their slots. Read the element
 * only after SIM_RING_READY (acquire on prod_tail). */
static inline enum sim_ring_status sim_ring_peek_at(const struct sim_ring *r,
						    uint32_t skip, void **elem)
{
	uint32_t tail = sim_ring_load(&r->state->prod_tail);
	uint32_t head = __atomic_load_n(&r->state->cons_head,
					__ATOMIC_RELAXED);

	if (!sim_ring_idx_valid(tail, r->nelems) ||
	    !sim_ring_idx_valid(head, r->nelems))
		return SIM_RING_INVALID;
	if (sim_ring_used(tail, head, r->nelems) <= skip)
		return SIM_RING_NONE;
	*elem = sim_ring_elem(r, head + skip);
	return SIM_RING_READY;
}

/* The element at cons_head itself. */
static inline enum sim_ring_status sim_ring_peek(const struct sim_ring *r,
						 void **elem)
{
	return sim_ring_peek_at(r, 0, elem);
}

/* Elements the producer has published and the consumer not yet taken;
 * -1 if an index is invalid. */
static inline int64_t sim_ring_count(const struct sim_ring *r)
{
	uint32_t tail = sim_ring_load(&r->state->prod_tail);
	uint32_t head = sim_ring_load(&r->state->cons_head);

	if (!sim_ring_idx_valid(tail, r->nelems) ||
	    !sim_ring_idx_valid(head, r->nelems))
		return -1;
	return sim_ring_used(tail, head, r->nelems);
}

/* Consumer side: the element at cons_head is done with (release). */
static inline void sim_ring_consume(struct sim_ring *r)
{
	uint32_t head = __atomic_load_n(&r->state->cons_head,
					__ATOMIC_RELAXED);

	sim_ring_store(&r->state->cons_head,
		       sim_ring_idx_next(head, r->nelems));
}

/*
 * Producer side (the device writing CQEs): the free element at prod_tail,
 * if the consumer left room. Fill it completely, then sim_ring_produce().
 */
static inline enum sim_ring_status sim_ring_reserve(const struct sim_ring *r,
						    void **elem)
{
	uint32_t tail = __atomic_load_n(&r->state->prod_tail,
					__ATOMIC_RELAXED);
	uint32_t head = sim_ring_load(&r->state->cons_head);

	if (!sim_ring_idx_valid(tail, r->nelems) ||
	    !sim_ring_idx_valid(head, r->nelems))
		return SIM_RING_INVALID;
	if (sim_ring_is_full(tail, head, r->nelems))
		return SIM_RING_NONE;
	*elem = sim_ring_elem(r, tail);
	return SIM_RING_READY;
}

/* Producer side: publish the reserved element (release). */
static inline void sim_ring_produce(struct sim_ring *r)
{
	uint32_t tail = __atomic_load_n(&r->state->prod_tail,
					__ATOMIC_RELAXED);

	sim_ring_store(&r->state->prod_tail,
		       sim_ring_idx_next(tail, r->nelems));
}

#endif /* PVRDMA_SIM_RING_H */
