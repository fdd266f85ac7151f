/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC-32 (the Ethernet polynomial 0x04c11db7, reflected), the CRC of the
 * RoCE v2 ICRC, as a register with no pre- or post-complement: callers
 * put those where their format wants them. On x86-64 processors with
 * carry-less multiplication long runs are folded: 128 bytes at a time in
 * 256-bit registers where the processor has AVX2 and VPCLMULQDQ, else 64
 * bytes at a time with PCLMULQDQ; elsewhere, and for short runs, tables
 * eight bytes at a time. All give the same register for every input
 * (tests/sim/fabric).
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
/* The register after nw words of eight bytes (each least significant
 * byte first), then n bytes at buf: roce_crc32_update64() over the words
 * and roce_crc32_update() over the bytes, but where the words come in
 * pairs they are folded, with the bytes where those are long enough to
 * fold, without the tables (a packet's headers built in registers). */
uint32_t roce_crc32_update_words(uint32_t crc, const uint64_t *w, size_t nw,
				 const void *buf, size_t n);
/* The register after n more zero bytes, in O(log n) steps: with the CRC's
 * linearity, crc(A then B) = shift(crc(A), len(B)) ^ crc0(B), where crc0
 * starts from a zero register. */
uint32_t roce_crc32_shift(uint32_t crc, uint64_t n);
/* Its inverse: the register before n zero bytes that leave it at crc. */
uint32_t roce_crc32_unshift(uint32_t crc, uint64_t n);
/* Both are products modulo the polynomial: a * b, each reflected (bit 31
 * is x^0); roce_crc32_unshift(1u << 31, n) is the factor that takes a
 * register back over n bytes. */
uint32_t roce_crc32_mul(uint32_t a, uint32_t b);

/* The ways roce_crc32_update() can go, slowest first. */
enum roce_crc32_impl {
	ROCE_CRC32_TABLES,	/* tables only, multiplies bit by bit too */
	ROCE_CRC32_FOLD128,	/* PCLMULQDQ, four 128-bit lanes */
	ROCE_CRC32_FOLD256,	/* VPCLMULQDQ, four 256-bit lanes */
};

/* The way roce_crc32_update() goes now: the fastest the processor has,
 * unless roce_crc32_select() chose another. */
enum roce_crc32_impl roce_crc32_impl(void);
/* For tests and benchmarks only (not thread-safe against updates in
 * flight): makes roce_crc32_update(), shift and unshift go impl's way,
 * if the processor has it; false, and nothing changed, if not. Runs too
 * short for a fold still go through the tables (or the 128-bit fold,
 * under the 256-bit one's minimum). */
bool roce_crc32_select(enum roce_crc32_impl impl);
/* The byte tables: t[k][b] is the register after byte b then k zero
 * bytes, from zero. */
extern uint32_t roce_crc32_tab[8][256];

/* Bytes p[0..4) and p[0..8), the first least significant (one load
 * where the processor is little-endian). */
static inline uint32_t roce_crc32_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t roce_crc32_le64(const uint8_t *p)
{
	return (uint64_t)roce_crc32_le32(p) |
	       (uint64_t)roce_crc32_le32(p + 4) << 32;
}

/* The register after the eight bytes of w, least significant first: one
 * step of the tables, for bytes a caller has in a register already. */
static inline uint32_t roce_crc32_update64(uint32_t crc, uint64_t w)
{
	uint32_t (*t)[256] = roce_crc32_tab;
	uint32_t lo = crc ^ (uint32_t)w, hi = (uint32_t)(w >> 32);

	return t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
	       t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
	       t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
	       t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
}

#endif /* PVRDMA_SIM_FABRIC_ROCE_CRC32_H */
