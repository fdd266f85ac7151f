/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC-32 (the Ethernet polynomial 0x04c11db7, reflected), the CRC of the
 * RoCE v2 ICRC, as a register with no pre- or post-complement: callers
 * put those where their format wants them. On x86-64 processors with
 * carry-less multiplication (PCLMULQDQ) long runs are folded 64 bytes at
 * a time; elsewhere, and for short runs, tables eight bytes at a time.
 * Both give the same register for every input (tests/sim/fabric).
 */
#ifndef PVRDMA_SIM_FABRIC_ROCE_CRC32_H
#define PVRDMA_SIM_FABRIC_ROCE_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The register after n more bytes. */
uint32_t roce_crc32_update(uint32_t crc, const void *buf, size_t n);
/* The same with tables only (the reference of the folding). */
uint32_t roce_crc32_update_tables(uint32_t crc, const void *buf, size_t n);
/* The register after n more zero bytes, in O(log n) steps: with the CRC's
 * linearity, crc(A then B) = shift(crc(A), len(B)) ^ crc0(B), where crc0
 * starts from a zero register. */
uint32_t roce_crc32_shift(uint32_t crc, uint64_t n);
/* Its inverse: the register before n zero bytes that leave it at crc. */
uint32_t roce_crc32_unshift(uint32_t crc, uint64_t n);
/* Whether roce_crc32_update() folds with carry-less multiplication. */
bool roce_crc32_folds(void);
/* The byte table: t[b] is the register after byte b from zero. */
extern uint32_t roce_crc32_tab[8][256];

#endif /* PVRDMA_SIM_FABRIC_ROCE_CRC32_H */
