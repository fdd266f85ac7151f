// SPDX-License-Identifier: BSD-2-Clause
/*
 * The doorbell trap's store decoder: every accepted form with its length,
 * width and source, and the refusals. Bytes are encoded by hand from the
 * Intel SDM (opcode, ModRM, SIB, displacement, immediate).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "x86_store.h"

#define BYTES(...) ((const uint8_t[]){ __VA_ARGS__ })
#define NBYTES(...) sizeof((const uint8_t[]){ __VA_ARGS__ })

/* Decodes with 15 readable bytes, as the trap does: trailing bytes are
 * padding that must not be counted into the instruction. */
static int decode(const uint8_t *insn, size_t n, struct x86_store *st)
{
	uint8_t buf[X86_MAX_INSN_LEN];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i < n ? insn[i] : 0xcc;	/* int3 */
	return x86_store_decode(buf, sizeof(buf), st);
}

static void expect_reg(const uint8_t *insn, size_t n, unsigned int len,
		       unsigned int width, unsigned int reg)
{
	struct x86_store st;

	assert_int_equal(decode(insn, n, &st), 0);
	assert_int_equal(st.len, len);
	assert_int_equal(st.width, width);
	assert_false(st.src_is_imm);
	assert_int_equal(st.src_reg, reg);
}

static void expect_imm(const uint8_t *insn, size_t n, unsigned int len,
		       unsigned int width, uint64_t imm)
{
	struct x86_store st;

	assert_int_equal(decode(insn, n, &st), 0);
	assert_int_equal(st.len, len);
	assert_int_equal(st.width, width);
	assert_true(st.src_is_imm);
	assert_true(st.imm == imm);
}

#define REG(len, width, reg, ...) \
	expect_reg(BYTES(__VA_ARGS__), NBYTES(__VA_ARGS__), len, width, reg)
#define IMM(len, width, imm, ...) \
	expect_imm(BYTES(__VA_ARGS__), NBYTES(__VA_ARGS__), len, width, imm)

static void test_mov_reg_plain(void **state)
{
	REG(2, 4, 0, 0x89, 0x02);		/* mov %eax,(%rdx) */
	REG(2, 4, 1, 0x89, 0x0a);		/* mov %ecx,(%rdx) */
	REG(2, 4, 7, 0x89, 0x3e);		/* mov %edi,(%rsi) */
}

static void test_mov_reg_rex(void **state)
{
	REG(3, 4, 8, 0x44, 0x89, 0x02);		/* mov %r8d,(%rdx) */
	REG(3, 4, 0, 0x41, 0x89, 0x00);		/* mov %eax,(%r8) */
	REG(4, 4, 15, 0x45, 0x89, 0x3c, 0x24);	/* mov %r15d,(%r12) */
	REG(4, 4, 13, 0x45, 0x89, 0x6d, 0x00);	/* mov %r13d,0(%r13) */
	REG(3, 8, 0, 0x48, 0x89, 0x02);		/* mov %rax,(%rdx) */
	REG(3, 8, 9, 0x4c, 0x89, 0x0a);		/* mov %r9,(%rdx) */
}

static void test_mov_reg_addressing(void **state)
{
	REG(3, 4, 0, 0x89, 0x42, 0x04);		/* disp8 */
	REG(6, 4, 0, 0x89, 0x82, 0x00, 0x10, 0x00, 0x00);	/* disp32 */
	REG(6, 4, 0, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00);	/* RIP+disp32 */
	REG(7, 4, 0, 0x89, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00); /* abs32 */
	REG(4, 4, 0, 0x89, 0x44, 0x8a, 0x08);	/* 8(%rdx,%rcx,4) */
	REG(7, 4, 0, 0x89, 0x84, 0x8a, 0x00, 0x01, 0x00, 0x00); /* SIB+d32 */
	REG(3, 4, 4, 0x89, 0x65, 0x00);		/* mov %esp,0(%rbp) */
}

static void test_prefixes(void **state)
{
	REG(3, 4, 0, 0x67, 0x89, 0x02);		/* mov %eax,(%edx) */
	REG(3, 4, 0, 0x64, 0x89, 0x02);		/* mov %eax,%fs:(%rdx) */
	/* A REX not right before the opcode is ignored (SDM 2.2.1). */
	REG(4, 4, 0, 0x48, 0x67, 0x89, 0x02);
}

static void test_mov_imm(void **state)
{
	IMM(6, 4, 0x12345678, 0xc7, 0x02, 0x78, 0x56, 0x34, 0x12);
	IMM(7, 4, 0xffffffffu, 0xc7, 0x42, 0x04, 0xff, 0xff, 0xff, 0xff);
	IMM(7, 8, UINT64_MAX, 0x48, 0xc7, 0x02, 0xff, 0xff, 0xff, 0xff);
	IMM(8, 8, 0x40000000, 0x49, 0xc7, 0x40, 0x04, 0x00, 0x00, 0x00,
	    0x40);				/* movq $0x40000000,4(%r8) */
	IMM(11, 4, 0x80000001u, 0xc7, 0x84, 0x8a, 0x00, 0x01, 0x00, 0x00,
	    0x01, 0x00, 0x00, 0x80);
}

static void test_movnti(void **state)
{
	REG(3, 4, 0, 0x0f, 0xc3, 0x02);		/* movnti %eax,(%rdx) */
	REG(4, 8, 1, 0x48, 0x0f, 0xc3, 0x0a);	/* movnti %rcx,(%rdx) */
	REG(5, 4, 10, 0x44, 0x0f, 0xc3, 0x52, 0x08); /* %r10d,8(%rdx) */
}

static void expect_refused(const uint8_t *insn, size_t n)
{
	struct x86_store st;

	assert_int_equal(decode(insn, n, &st), -EINVAL);
}

#define REFUSED(...) expect_refused(BYTES(__VA_ARGS__), NBYTES(__VA_ARGS__))

static void test_refusals(void **state)
{
	REFUSED(0x89, 0xc2);			/* register destination */
	REFUSED(0x66, 0x89, 0x02);		/* 16-bit store */
	REFUSED(0x88, 0x02);			/* 8-bit store */
	REFUSED(0xc6, 0x02, 0x12);		/* 8-bit immediate store */
	REFUSED(0xc7, 0xc2, 0, 0, 0, 0);	/* mov $imm,%edx */
	REFUSED(0xc7, 0x4a, 0x04, 0, 0, 0, 0);	/* C7 /1 */
	REFUSED(0xf0, 0x89, 0x02);		/* lock */
	REFUSED(0xf3, 0x89, 0x02);		/* rep */
	REFUSED(0x0f, 0x11, 0x02);		/* movups */
	REFUSED(0x0f, 0xc3, 0xc2);		/* movnti to a register */
	REFUSED(0x8b, 0x02);			/* a load */
	REFUSED(0x87, 0x02);			/* xchg */
	/* Fifteen prefixes and no opcode. */
	REFUSED(0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64,
		0x64, 0x64, 0x64, 0x64, 0x64);
}

static void test_truncated(void **state)
{
	struct x86_store st;

	assert_int_equal(x86_store_decode(BYTES(0x89), 1, &st), -ENODATA);
	assert_int_equal(x86_store_decode(BYTES(0x48), 1, &st), -ENODATA);
	assert_int_equal(x86_store_decode(BYTES(0x0f), 1, &st), -ENODATA);
	assert_int_equal(x86_store_decode(BYTES(0x89, 0x82, 0x00), 3, &st),
			 -ENODATA);
	assert_int_equal(x86_store_decode(BYTES(0xc7, 0x02, 0x78, 0x56), 4,
					  &st), -ENODATA);
	assert_int_equal(x86_store_decode(BYTES(0x89, 0x04), 2, &st),
			 -ENODATA);
	/* Exactly long enough is enough. */
	assert_int_equal(x86_store_decode(BYTES(0x89, 0x42, 0x04), 3, &st),
			 0);
	assert_int_equal(st.len, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mov_reg_plain),
		cmocka_unit_test(test_mov_reg_rex),
		cmocka_unit_test(test_mov_reg_addressing),
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_mov_imm),
		cmocka_unit_test(test_movnti),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
