/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring pages pinned for the device, as ib_umem_get pins them for
 * vmw_pvrdma: see pin.c.
 */
#ifndef PVRDMA_SIM_PIN_H
#define PVRDMA_SIM_PIN_H

#include <stddef.h>
#include <stdint.h>

/* One user buffer of a ring object (a CQ's or SRQ's buffer, a QP's send
 * or receive buffer). */
struct sim_pin_range {
	uint64_t addr;
	uint64_t len;
};

/* The device's own mapping of the pages: the ranges' pages one after the
 * other, each range starting on a page (the page directory's order). */
struct sim_pin {
	uint8_t *base;
	size_t len;
};

/* 0, EFAULT (a page that is not mapped, readable and writable), EINVAL
 * (an empty range) or ENOMEM. */
int sim_pin_rings(struct sim_pin *pin, const struct sim_pin_range *ranges,
		  unsigned int nranges);
/* Page offset, in the device's mapping, of range i's first page. */
size_t sim_pin_offset(const struct sim_pin_range *ranges, unsigned int i);
void sim_unpin(struct sim_pin *pin);

#endif /* PVRDMA_SIM_PIN_H */
