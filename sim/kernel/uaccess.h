/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * copy_from_user / copy_to_user of the kernel model: every byte the model
 * reads from or writes to a pointer the application handed it goes through
 * these, so an unmapped, read-only or kernel address is answered with
 * EFAULT, as the kernel answers it, instead of faulting in the sim (often
 * with the device lock held).
 */
#ifndef PVRDMA_SIM_UACCESS_H
#define PVRDMA_SIM_UACCESS_H

#include <stddef.h>
#include <stdint.h>

/* 0, or -EFAULT when any byte of the user range cannot be read. */
int sim_copy_from_user(void *dst, uint64_t src, size_t len);
/* 0, or -EFAULT when any byte of the user range cannot be written (the
 * bytes before the faulting one may have been written, as in the kernel). */
int sim_copy_to_user(uint64_t dst, const void *src, size_t len);
/* Writes len zero bytes at dst: 0 or -EFAULT. */
int sim_clear_user(uint64_t dst, size_t len);

#endif /* PVRDMA_SIM_UACCESS_H */
