// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CRC-32 of sim/fabric/roce_crc32.c: each of its ways (tables, the
 * 128-bit and the 256-bit fold, each where the processor has it) against
 * CRC-32 values of an independent implementation (Python's zlib.crc32)
 * at every alignment, and against a bit-at-a-time CRC on random data of
 * every length a packet's fold starts and ends with; and the shift
 * through zero bytes the ICRC check relies on, and its inverse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce_crc32.h"

/* zlib.crc32(bytes((i * 131 + 7) & 0xff for i in range(len))) */
static const struct {
	size_t len;
	uint32_t crc;
} vectors[] = {
	{     0, 0x00000000u },
	{     1, 0x4c667a2eu },
	{     9, 0xc04294c0u },
	{    15, 0xa4762116u },
	{    16, 0xea7e5b68u },
	{    63, 0x337301c0u },
	{    64, 0x38e4dbb5u },
	{    65, 0x6c311b46u },
	{    79, 0x118a99cbu },
	{   127, 0x8276c596u },
	{   128, 0xcc816b20u },
	{   200, 0x2a0c0115u },
	{  1040, 0x518730f6u },
	{  4101, 0x5aa3d902u },
	{ 65536, 0x3a3102b4u },
};

#define BUF_LEN	(65536 + 16)

static const struct {
	enum roce_crc32_impl impl;
	const char *name;
} impls[] = {
	{ ROCE_CRC32_TABLES, "tables" },
	{ ROCE_CRC32_FOLD128, "128-bit fold (PCLMULQDQ)" },
	{ ROCE_CRC32_FOLD256, "256-bit fold (AVX2, VPCLMULQDQ)" },
};

#define N_IMPLS	(sizeof(impls) / sizeof(impls[0]))

/* The register one bit at a time: the definition, nothing precomputed. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return crc;
}

/* Selects impl; false (with a note) where the processor lacks it. */
static bool select_impl(size_t i)
{
	if (roce_crc32_select(impls[i].impl))
		return true;
	print_message("%s: not on this processor, not tested\n",
		      impls[i].name);
	return false;
}

/* Leaves the fastest way selected, as the program started with it. */
static int reset_impl(void **state)
{
	size_t i;

	(void)state;
	for (i = N_IMPLS; i-- > 0;)
		if (roce_crc32_select(impls[i].impl))
			break;
	return 0;
}

static uint32_t crc32_of(uint32_t (*update)(uint32_t, const void *, size_t),
			 const uint8_t *p, size_t n)
{
	return ~update(0xffffffffu, p, n);
}

static void test_check_value(void **state)
{
	(void)state;
	assert_int_equal(crc32_of(roce_crc32_update, (const uint8_t *)
				  "123456789", 9), 0xcbf43926u);
	assert_int_equal(crc32_of(roce_crc32_update_tables, (const uint8_t *)
				  "123456789", 9), 0xcbf43926u);
}

/* Every vector, at each of 16 alignments, each way. */
static void test_vectors(void **state)
{
	uint8_t *b = malloc(BUF_LEN);
	size_t i, k, a, m;

	(void)state;
	assert_non_null(b);
	print_message("default: %s\n", impls[roce_crc32_impl()].name);
	for (m = 0; m < N_IMPLS; m++) {
		if (!select_impl(m))
			continue;
		for (a = 0; a < 16; a++) {
			for (k = 0; k < 65536; k++)
				b[a + k] = (uint8_t)(k * 131 + 7);
			for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]);
			     i++) {
				assert_int_equal(crc32_of(roce_crc32_update,
							  b + a,
							  vectors[i].len),
						 vectors[i].crc);
				assert_int_equal(
					crc32_of(roce_crc32_update_tables,
						 b + a, vectors[i].len),
					vectors[i].crc);
			}
		}
	}
	free(b);
}

/*
 * Each way against the bit-at-a-time CRC, on random data from a random
 * register: every length 0..1100 and 4096..4096+160 (each fold's start,
 * its steps, its tail of 0..127 bytes), at several misalignments.
 */
static void test_every_length_bitwise(void **state)
{
	static const size_t misalign[] = { 0, 1, 3, 7, 8, 15, 31, 63 };
	static const size_t from[] = { 0, 4096 }, to[] = { 1100, 4096 + 160 };
	uint8_t *b = malloc(8192);
	unsigned int seed = 11;
	size_t m, a, r, n, i;

	(void)state;
	assert_non_null(b);
	for (i = 0; i < 8192; i++)
		b[i] = (uint8_t)rand_r(&seed);
	for (a = 0; a < sizeof(misalign) / sizeof(misalign[0]); a++)
		for (r = 0; r < 2; r++) {
			const uint8_t *p = b + misalign[a];
			uint32_t reg = (uint32_t)rand_r(&seed) ^
				       (uint32_t)rand_r(&seed) << 16;
			uint32_t want = crc_bitwise(reg, p, from[r]);

			for (n = from[r]; n <= to[r]; n++) {
				for (m = 0; m < N_IMPLS; m++) {
					if (!roce_crc32_select(impls[m].impl))
						continue;
					if (roce_crc32_update(reg, p, n) != want)
						fail_msg("%s: length %zu at +%zu",
							 impls[m].name, n,
							 misalign[a]);
				}
				want = crc_bitwise(want, p + n, 1);
			}
		}
	free(b);
}

/* Random runs, split anywhere: the register carries across calls. */
static void test_random_splits(void **state)
{
	uint8_t *b = malloc(BUF_LEN);
	unsigned int seed = 7;
	int round;

	(void)state;
	assert_non_null(b);
	for (round = 0; round < 300; round++) {
		size_t n = (size_t)rand_r(&seed) % 9000, cut, i;
		uint32_t whole, parts, seed_reg = (uint32_t)rand_r(&seed);

		for (i = 0; i < n; i++)
			b[i] = (uint8_t)rand_r(&seed);
		cut = n ? (size_t)rand_r(&seed) % n : 0;
		whole = roce_crc32_update_tables(seed_reg, b, n);
		for (i = 0; i < N_IMPLS; i++) {
			if (!roce_crc32_select(impls[i].impl))
				continue;
			parts = roce_crc32_update(seed_reg, b, cut);
			parts = roce_crc32_update(parts, b + cut, n - cut);
			assert_int_equal(parts, whole);
		}
	}
	free(b);
}

/* Words then bytes, each way, as the words' bytes then the bytes one
 * bit at a time: odd and even counts of words, no bytes (a packet's
 * pseudo-header alone), runs short and long. */
static void test_words_then_bytes(void **state)
{
	uint8_t b[8 * 8 + 4200], *p;
	uint64_t w[8];
	unsigned int seed = 5;
	size_t round, nw, n, i, m;

	(void)state;
	for (round = 0; round < 400; round++) {
		uint32_t reg = (uint32_t)rand_r(&seed) ^
			       (uint32_t)rand_r(&seed) << 16, want;

		nw = round % 9;
		n = round & 1 ? (size_t)rand_r(&seed) % 4200 :
		    round % 4 ? (size_t)rand_r(&seed) % 200 : 0;
		for (i = 0; i < nw * 8 + n; i++)
			b[i] = (uint8_t)rand_r(&seed);
		for (i = 0; i < nw; i++)
			w[i] = roce_crc32_le64(b + 8 * i);
		p = b + 8 * nw;
		want = crc_bitwise(reg, b, nw * 8 + n);
		for (m = 0; m < N_IMPLS; m++) {
			if (!roce_crc32_select(impls[m].impl))
				continue;
			if (roce_crc32_update_words(reg, w, nw, p, n) != want)
				fail_msg("%s: %zu words, %zu bytes",
					 impls[m].name, nw, n);
		}
	}
}

/* crc(A then B) = shift(crc(A), len B) ^ crc from zero of B; each way
 * (the tables' multiplies bit by bit, the others' carry-less). */
static void test_shift_is_linear(void **state)
{
	uint8_t b[5000], z[5000];
	unsigned int seed = 3;
	int round;

	(void)state;
	for (round = 0; round < 300; round++) {
		if (!roce_crc32_select(impls[round % N_IMPLS].impl))
			continue;
		size_t na = (size_t)rand_r(&seed) % 100;
		size_t nb = (size_t)rand_r(&seed) % 4900, i;
		uint32_t a;

		for (i = 0; i < na + nb; i++)
			b[i] = (uint8_t)rand_r(&seed);
		a = roce_crc32_update(0xffffffffu, b, na);
		assert_int_equal(roce_crc32_shift(a, nb) ^
				 roce_crc32_update(0, b + na, nb),
				 roce_crc32_update(0xffffffffu, b, na + nb));
		/* the shift is the register through zero bytes */
		memset(z, 0, nb);
		assert_int_equal(roce_crc32_shift(a, nb),
				 roce_crc32_update_tables(a, z, nb));
		assert_int_equal(roce_crc32_unshift(roce_crc32_shift(a, nb),
						    nb), a);
		/* byte tables under 64 KiB, powers of two above */
		nb = (size_t)rand_r(&seed) % (1u << 20);
		assert_int_equal(roce_crc32_shift(roce_crc32_unshift(a, nb),
						  nb), a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test_teardown(test_vectors, reset_impl),
		cmocka_unit_test_teardown(test_every_length_bitwise,
					  reset_impl),
		cmocka_unit_test_teardown(test_random_splits, reset_impl),
		cmocka_unit_test_teardown(test_words_then_bytes, reset_impl),
		cmocka_unit_test_teardown(test_shift_is_linear, reset_impl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
