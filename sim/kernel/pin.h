/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ring pages pinned for the device, as ib_umem_get pins them for
 * vmw_pvrdma: see pin.c.
 */
#ifndef PVRDMA_SIM_PIN_H
#define PVRDMA_SIM_PIN_H

#include "device.h"

/* 0, -EFAULT (a page that is not mapped, readable and writable), -EINVAL
 * (an empty range) or -ENOMEM. */
int sim_pin_rings(struct sim_pin *pin, const struct sim_pin_range *ranges,
		  unsigned int nranges);
void sim_unpin(struct sim_pin *pin);

#endif /* PVRDMA_SIM_PIN_H */
