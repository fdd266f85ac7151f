// SPDX-License-Identifier: BSD-2-Clause
/* x86-64 store decoder for the UAR trap; see x86_store.h. */
#include <errno.h>

#include "x86_store.h"

#define REX_W	0x8
#define REX_R	0x4

/* Bytes of ModRM + SIB + displacement for a memory operand; -1 if not. */
static int modrm_operand_len(const uint8_t *p, size_t avail)
{
	unsigned int mod, rm, len = 1;

	if (avail < 1)
		return -ENODATA;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return -EINVAL;		/* register destination: no fault */
	if (rm == 4) {			/* SIB follows */
		if (avail < 2)
			return -ENODATA;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;	/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		len += 4;		/* RIP-relative disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return (int)len;
}

static int is_ignored_prefix(uint8_t b)
{
	switch (b) {
	case 0x67:			/* address size: same operand layout */
	case 0x26: case 0x2e: case 0x36: case 0x3e:	/* segments */
	case 0x64: case 0x65:
		return 1;
	}
	return 0;
}

int x86_store_decode(const uint8_t *code, size_t avail, struct x86_store *out)
{
	unsigned int pos = 0, rex = 0, opcode_len;
	const uint8_t *op;
	int mlen;

	if (avail > X86_MAX_INSN_LEN)
		avail = X86_MAX_INSN_LEN;
	for (;;) {
		if (pos >= avail)
			return avail == X86_MAX_INSN_LEN ? -EINVAL : -ENODATA;
		if (is_ignored_prefix(code[pos])) {
			rex = 0;	/* a REX not right before the opcode */
			pos++;
			continue;
		}
		if ((code[pos] & 0xf0) == 0x40) {
			rex = code[pos++];
			continue;
		}
		break;
	}
	/* 0x66 (16-bit), 0xf0 (lock), 0xf2/0xf3 end up here as "opcodes". */
	op = code + pos;
	if (op[0] == 0x89 || op[0] == 0xc7) {
		opcode_len = 1;
	} else if (op[0] == 0x0f) {
		if (pos + 1 >= avail)
			return -ENODATA;
		if (op[1] != 0xc3)
			return -EINVAL;
		opcode_len = 2;
	} else {
		return -EINVAL;
	}

	mlen = modrm_operand_len(op + opcode_len, avail - pos - opcode_len);
	if (mlen < 0)
		return mlen;
	out->width = rex & REX_W ? 8 : 4;
	if (op[0] == 0xc7) {
		const uint8_t *imm = op + opcode_len + mlen;
		uint32_t v;

		if (((op[1] >> 3) & 7) != 0)
			return -EINVAL;	/* C7 /0 only */
		if (pos + opcode_len + mlen + 4 > avail)
			return -ENODATA;
		v = (uint32_t)imm[0] | (uint32_t)imm[1] << 8 |
		    (uint32_t)imm[2] << 16 | (uint32_t)imm[3] << 24;
		out->src_is_imm = true;
		out->src_reg = 0;
		out->imm = (uint64_t)(int64_t)(int32_t)v;
		if (out->width == 4)
			out->imm &= 0xffffffffu;
		out->len = pos + opcode_len + mlen + 4;
	} else {
		if (pos + opcode_len + mlen > avail)
			return -ENODATA;
		out->src_is_imm = false;
		out->src_reg = ((op[opcode_len] >> 3) & 7) |
			       (rex & REX_R ? 8 : 0);
		out->imm = 0;
		out->len = pos + opcode_len + mlen;
	}
	return 0;
}
