// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CRC-32 of sim/fabric/roce_crc32.c: both its forms (tables, and
 * folding with carry-less multiplication where the processor has it)
 * against CRC-32 values of an independent implementation (Python's
 * zlib.crc32), at every alignment, and the shift through zero bytes the
 * ICRC check relies on, and its inverse.
 */
#include <setjmp.h>
#include <stdarg.h>
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

/* Every vector, at each of 16 alignments, with both forms. */
static void test_vectors(void **state)
{
	uint8_t *b = malloc(BUF_LEN);
	size_t i, k, a;

	(void)state;
	assert_non_null(b);
	print_message("folding with PCLMULQDQ: %s\n",
		      roce_crc32_folds() ? "yes" : "no (tables only)");
	for (a = 0; a < 16; a++) {
		for (k = 0; k < 65536; k++)
			b[a + k] = (uint8_t)(k * 131 + 7);
		for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
			assert_int_equal(crc32_of(roce_crc32_update, b + a,
						  vectors[i].len),
					 vectors[i].crc);
			assert_int_equal(crc32_of(roce_crc32_update_tables,
						  b + a, vectors[i].len),
					 vectors[i].crc);
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
		parts = roce_crc32_update(seed_reg, b, cut);
		parts = roce_crc32_update(parts, b + cut, n - cut);
		assert_int_equal(parts, whole);
	}
	free(b);
}

/* crc(A then B) = shift(crc(A), len B) ^ crc from zero of B. */
static void test_shift_is_linear(void **state)
{
	uint8_t b[5000], z[5000];
	unsigned int seed = 3;
	int round;

	(void)state;
	for (round = 0; round < 100; round++) {
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
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_random_splits),
		cmocka_unit_test(test_shift_is_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
