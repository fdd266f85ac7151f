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

/* The device's own mapping of the pages: each range's pages, from the
 * page its address is in, at off[i] (in address order, see pin.c). */
struct sim_pin {
	uint8_t *base;
	size_t len;
	size_t off[2];
};

/* 0, EFAULT (a page that is not mapped, readable and writable), EINVAL
 * (an empty range) or ENOMEM. */
int sim_pin_rings(struct sim_pin *pin, const struct sim_pin_range *ranges,
		  unsigned int nranges);
void sim_unpin(struct sim_pin *pin);

#endif /* PVRDMA_SIM_PIN_H */
