// SPDX-License-Identifier: BSD-2-Clause
/*
 * CRC-32 of the ICRC (roce_crc32.h): tables eight bytes at a time, and
 * folding with carry-less multiplication where the processor has it, in
 * 256-bit registers where it has AVX2 and VPCLMULQDQ.
 *
 * Folding, in the reflected representation (bit j of a 128-bit block
 * stands for x^(127-j)): a block X of the message followed by D more
 * bits adds X * x^D to the message's polynomial, and X * x^D is congruent
 * modulo the CRC polynomial to a block no wider than X, which can be
 * added to the block D bits on instead. With X = lo * x^64 + hi and a
 * carry-less product of reflected values carrying one extra factor x,
 * that block is clmul(lo, x^(D+63) mod P) ^ clmul(hi, x^(D-1) mod P).
 * Four blocks are folded D = 512 bits on at a time (with VPCLMULQDQ,
 * four registers of two blocks D = 1024 bits on), then onto each other,
 * and the last block left goes through the tables. Every constant is
 * computed at start (fold_constant(), crc_init()).
 *
 * The ICRC check takes a register back over a packet's bytes: under
 * 64 KiB by at most two multiplies, by inverse powers of x in byte
 * tables, with one carry-less multiplication each.
 */
#include "roce_crc32.h"

#define POLY_REFLECTED	0xedb88320u
#define POLY_NORMAL	0x04c11db7u

uint32_t roce_crc32_tab[8][256];
/* x^(8 * 2^k) mod P, reflected: the shift by 2^k zero bytes; and
 * x^(-8 * 2^k), its inverse (x is invertible: P has a constant term). */
static uint32_t zero_pow[64], zero_inv[64];
/* unshift_byte[j][b]: x^(-8 * b * 256^j) mod P, reflected */
static uint32_t unshift_byte[2][256];

/* a * b mod P, both reflected (bit 31 is x^0). */
static uint32_t mul_mod(uint32_t a, uint32_t b)
{
	uint32_t p = 0, bit;

	for (bit = 1u << 31; bit; bit >>= 1) {
		if (a & bit)
			p ^= b;
		b = b & 1 ? (b >> 1) ^ POLY_REFLECTED : b >> 1;
	}
	return p;
}

static uint32_t (*mul)(uint32_t a, uint32_t b) = mul_mod;
/* the fastest way the processor has, and the way taken */
static enum roce_crc32_impl best, impl;

/* crc times the product of pow[k] over the bits k set in n. */
static uint32_t mul_bit_powers(uint32_t crc, uint64_t n, const uint32_t *pow)
{
	int k;

	for (k = 0; n; k++, n >>= 1)
		if (n & 1)
			crc = mul(crc, pow[k]);
	return crc;
}

uint32_t roce_crc32_mul(uint32_t a, uint32_t b)
{
	return mul(a, b);
}

uint32_t roce_crc32_shift(uint32_t crc, uint64_t n)
{
	return mul_bit_powers(crc, n, zero_pow);
}

/* Under 64 KiB (every datagram), two multiplies at most: by the inverse
 * of x^(8 * low byte of n), and of x^(8 * 256 * high byte). */
uint32_t roce_crc32_unshift(uint32_t crc, uint64_t n)
{
	if (n >> 16)
		return mul_bit_powers(crc, n, zero_inv);
	if (n & 0xff)
		crc = mul(crc, unshift_byte[0][n & 0xff]);
	if (n >> 8)
		crc = mul(crc, unshift_byte[1][n >> 8]);
	return crc;
}

uint32_t roce_crc32_update_tables(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	for (; n >= 8; p += 8, n -= 8)
		crc = roce_crc32_update64(crc, roce_crc32_le64(p));
	while (n--)
		crc = (crc >> 8) ^ roce_crc32_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define FOLD_TARGET	__attribute__((target("pclmul,sse2")))
#define WIDE_TARGET	__attribute__((target("avx2,vpclmulqdq,pclmul")))
#define FOLD_MIN	64
#define WIDE_MIN	128

/* x^n mod P as a reflected 64-bit operand (bit 63 is x^0). */
static uint64_t fold_constant(unsigned int n)
{
	uint32_t r = 1;
	uint64_t v = 0;
	int d;

	while (n--)
		r = (r << 1) ^ (r & 0x80000000u ? POLY_NORMAL : 0);
	for (d = 0; d < 32; d++)
		if (r & (1u << d))
			v |= 1ull << (63 - d);
	return v;
}

/* {lo's, hi's} for D = 128, 256, 512 and 1024 bits */
static uint64_t k_fold1[2], k_fold2[2], k_fold4[2], k_fold8[2];

/* mul_mod with one carry-less multiplication: the product's high half
 * is reduced already, its low half L stands for L * x^32, which is L
 * through four zero bytes (one step of four tables, not four of one);
 * the product of reflected operands carries one factor x too many,
 * which the shift by one takes out. */
FOLD_TARGET static uint32_t mul_clmul(uint32_t a, uint32_t b)
{
	uint32_t (*t)[256] = roce_crc32_tab;
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a),
					 _mm_cvtsi32_si128((int)b), 0x00);
	uint64_t v = (uint64_t)_mm_cvtsi128_si64(p) << 1;
	uint32_t r = (uint32_t)v;

	return t[3][r & 0xff] ^ t[2][(r >> 8) & 0xff] ^
	       t[1][(r >> 16) & 0xff] ^ t[0][r >> 24] ^ (uint32_t)(v >> 32);
}

FOLD_TARGET static inline __m128i fold_k(const uint64_t k[2])
{
	return _mm_set_epi64x((long long)k[1], (long long)k[0]);
}

FOLD_TARGET static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

/* The last block x, 16 bytes before p, and the n bytes at p. */
FOLD_TARGET static inline uint32_t fold_end(__m128i x, const uint8_t *p,
					    size_t n)
{
	__m128i k1 = fold_k(k_fold1);
	uint32_t crc;

	for (; n >= 16; p += 16, n -= 16)
		x = fold(x, k1, _mm_loadu_si128((const void *)p));
	/* its two halves, first bytes first, straight from the register */
	crc = roce_crc32_update64(0, (uint64_t)_mm_cvtsi128_si64(x));
	crc = roce_crc32_update64(crc, (uint64_t)_mm_cvtsi128_si64(
						_mm_unpackhi_epi64(x, x)));
	return n ? roce_crc32_update_tables(crc, p, n) : crc;
}

/* The n >= FOLD_MIN bytes at p, with in added to the first 16: the
 * register (it is the first four bytes' complement), or a block before
 * p folded onto them. */
FOLD_TARGET static uint32_t update_fold(__m128i in, const uint8_t *p,
					size_t n)
{
	__m128i k1 = fold_k(k_fold1), k4 = fold_k(k_fold4);
	__m128i x0, x1, x2, x3;

	x0 = _mm_xor_si128(_mm_loadu_si128((const void *)p), in);
	x1 = _mm_loadu_si128((const void *)(p + 16));
	x2 = _mm_loadu_si128((const void *)(p + 32));
	x3 = _mm_loadu_si128((const void *)(p + 48));
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64) {
		x0 = fold(x0, k4, _mm_loadu_si128((const void *)p));
		x1 = fold(x1, k4, _mm_loadu_si128((const void *)(p + 16)));
		x2 = fold(x2, k4, _mm_loadu_si128((const void *)(p + 32)));
		x3 = fold(x3, k4, _mm_loadu_si128((const void *)(p + 48)));
	}
	x0 = fold(x0, k1, x1);
	x0 = fold(x0, k1, x2);
	x0 = fold(x0, k1, x3);
	return fold_end(x0, p, n);
}

/*
 * The same in 256-bit registers, each two blocks side by side (the
 * earlier in the low half), both folded by one VPCLMULQDQ pair. Four
 * registers, 128 bytes, go D = 1024 bits on at a time: the four folds
 * of one step are independent, so the multiplier's latency is hidden.
 */
WIDE_TARGET static inline __m256i wide_k(const uint64_t k[2])
{
	return _mm256_set_epi64x((long long)k[1], (long long)k[0],
				 (long long)k[1], (long long)k[0]);
}

WIDE_TARGET static inline __m256i fold_wide(__m256i y, __m256i k,
					    __m256i next)
{
	return _mm256_xor_si256(
		_mm256_xor_si256(_mm256_clmulepi64_epi128(y, k, 0x00),
				 _mm256_clmulepi64_epi128(y, k, 0x11)),
		next);
}

WIDE_TARGET static uint32_t update_fold_wide(__m128i in, const uint8_t *p,
					     size_t n)
{
	__m256i k2 = wide_k(k_fold2), k8 = wide_k(k_fold8);
	__m256i y0, y1, y2, y3;
	__m128i x;

	y0 = _mm256_xor_si256(_mm256_loadu_si256((const void *)p),
			      _mm256_inserti128_si256(_mm256_setzero_si256(),
						      in, 0));
	y1 = _mm256_loadu_si256((const void *)(p + 32));
	y2 = _mm256_loadu_si256((const void *)(p + 64));
	y3 = _mm256_loadu_si256((const void *)(p + 96));
	p += 128;
	n -= 128;
	for (; n >= 128; p += 128, n -= 128) {
		y0 = fold_wide(y0, k8, _mm256_loadu_si256((const void *)p));
		y1 = fold_wide(y1, k8,
			       _mm256_loadu_si256((const void *)(p + 32)));
		y2 = fold_wide(y2, k8,
			       _mm256_loadu_si256((const void *)(p + 64)));
		y3 = fold_wide(y3, k8,
			       _mm256_loadu_si256((const void *)(p + 96)));
	}
	y0 = fold_wide(y0, k2, y1);
	y0 = fold_wide(y0, k2, y2);
	y0 = fold_wide(y0, k2, y3);
	for (; n >= 32; p += 32, n -= 32)
		y0 = fold_wide(y0, k2, _mm256_loadu_si256((const void *)p));
	x = fold(_mm256_castsi256_si128(y0), fold_k(k_fold1),
		 _mm256_extracti128_si256(y0, 1));
	/* gcc leaves the upper halves dirty here, and the caller's first
	 * SSE instruction would then wait on them (measured: 1 KiB took
	 * three times as long); the block left is in the lower half */
	_mm256_zeroupper();
	return fold_end(x, p, n);
}

static void use(enum roce_crc32_impl want)
{
	impl = want;
	mul = want == ROCE_CRC32_TABLES ? mul_mod : mul_clmul;
}

static void fold_init(void)
{
	k_fold1[0] = fold_constant(128 + 63);
	k_fold1[1] = fold_constant(128 - 1);
	k_fold2[0] = fold_constant(256 + 63);
	k_fold2[1] = fold_constant(256 - 1);
	k_fold4[0] = fold_constant(512 + 63);
	k_fold4[1] = fold_constant(512 - 1);
	k_fold8[0] = fold_constant(1024 + 63);
	k_fold8[1] = fold_constant(1024 - 1);
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2"))
		best = ROCE_CRC32_FOLD128;
	if (best == ROCE_CRC32_FOLD128 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("vpclmulqdq"))
		best = ROCE_CRC32_FOLD256;
	use(best);
}

/* The n >= FOLD_MIN bytes at p, in added to their first 16 bytes. */
FOLD_TARGET static uint32_t update_folding(__m128i in, const uint8_t *p,
					   size_t n)
{
	if (n >= WIDE_MIN && impl == ROCE_CRC32_FOLD256)
		return update_fold_wide(in, p, n);
	return update_fold(in, p, n);
}

/* nw >= 2 words in pairs, the register added to the first: their last
 * block, the others folded onto it. */
FOLD_TARGET static inline __m128i fold_words(uint32_t crc, const uint64_t *w,
					     size_t nw)
{
	__m128i k1 = fold_k(k_fold1), x;
	size_t i;

	x = _mm_xor_si128(_mm_set_epi64x((long long)w[1], (long long)w[0]),
			  _mm_cvtsi32_si128((int)crc));
	for (i = 2; i < nw; i += 2)
		x = fold(x, k1, _mm_set_epi64x((long long)w[i + 1],
					       (long long)w[i]));
	return x;
}

/* Words in pairs, then fewer than FOLD_MIN bytes: a packet's
 * pseudo-header alone, or with the headers after its BTH. Two folds and
 * the reduction beat the tables' six dependent steps. */
FOLD_TARGET static uint32_t update_words_short(uint32_t crc,
					       const uint64_t *w, size_t nw,
					       const uint8_t *p, size_t n)
{
	return fold_end(fold_words(crc, w, nw), p, n);
}

FOLD_TARGET static uint32_t update_words_fold(uint32_t crc, const uint64_t *w,
					      size_t nw, const uint8_t *p,
					      size_t n)
{
	/* the words' last block, folded onto the bytes' first */
	return update_folding(fold(fold_words(crc, w, nw), fold_k(k_fold1),
				   _mm_setzero_si128()),
			      p, n);
}

FOLD_TARGET static uint32_t update_fold_crc(uint32_t crc, const uint8_t *p,
					    size_t n)
{
	return update_folding(_mm_cvtsi32_si128((int)crc), p, n);
}

uint32_t roce_crc32_update(uint32_t crc, const void *buf, size_t n)
{
	if (n >= FOLD_MIN && impl != ROCE_CRC32_TABLES)
		return update_fold_crc(crc, buf, n);
	return roce_crc32_update_tables(crc, buf, n);
}

uint32_t roce_crc32_update_words(uint32_t crc, const uint64_t *w, size_t nw,
				 const void *buf, size_t n)
{
	size_t i;

	if (nw >= 2 && !(nw & 1) && impl != ROCE_CRC32_TABLES)
		return n >= FOLD_MIN ? update_words_fold(crc, w, nw, buf, n) :
				       update_words_short(crc, w, nw, buf, n);
	for (i = 0; i < nw; i++)
		crc = roce_crc32_update64(crc, w[i]);
	return roce_crc32_update(crc, buf, n);
}
#else
static void use(enum roce_crc32_impl want)
{
	impl = want;
}

static void fold_init(void)
{
}

uint32_t roce_crc32_update(uint32_t crc, const void *buf, size_t n)
{
	return roce_crc32_update_tables(crc, buf, n);
}

uint32_t roce_crc32_update_words(uint32_t crc, const uint64_t *w, size_t nw,
				 const void *buf, size_t n)
{
	size_t i;

	for (i = 0; i < nw; i++)
		crc = roce_crc32_update64(crc, w[i]);
	return roce_crc32_update_tables(crc, buf, n);
}
#endif

enum roce_crc32_impl roce_crc32_impl(void)
{
	return impl;
}

bool roce_crc32_select(enum roce_crc32_impl want)
{
	if (want > best)
		return false;
	use(want);
	return true;
}

/* before roce_icrc.c's, which reads the byte table */
__attribute__((constructor(101))) static void crc_init(void)
{
	uint32_t c;
	int i, j, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
		roce_crc32_tab[0][i] = c;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++) {
			c = roce_crc32_tab[k - 1][i];
			roce_crc32_tab[k][i] = (c >> 8) ^
					       roce_crc32_tab[0][c & 0xff];
		}
	/* x^-1 = (P + 1) / x: x^31 and the low terms of P shifted down */
	c = 0;
	for (j = 0; j < 32; j++)
		if ((0x80000000u | (POLY_NORMAL >> 1)) & (1u << j))
			c |= 1u << (31 - j);
	zero_inv[0] = 1u << 31;
	zero_pow[0] = 1u << (31 - 8);
	for (j = 0; j < 8; j++)
		zero_inv[0] = mul_mod(zero_inv[0], c);
	for (k = 1; k < 64; k++) {
		zero_pow[k] = mul_mod(zero_pow[k - 1], zero_pow[k - 1]);
		zero_inv[k] = mul_mod(zero_inv[k - 1], zero_inv[k - 1]);
	}
	for (j = 0; j < 2; j++) {
		unshift_byte[j][0] = 1u << 31;
		for (i = 1; i < 256; i++)
			unshift_byte[j][i] = mul_mod(unshift_byte[j][i - 1],
						     zero_inv[8 * j]);
	}
	fold_init();
}
