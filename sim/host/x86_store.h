/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder of the x86-64 store instructions a doorbell write compiles to,
 * for the UAR trap: given the bytes at the faulting RIP it tells how long
 * the instruction is, how wide the store is and where the stored value
 * comes from. Pure: no registers, no memory other than the bytes given.
 *
 * Decoded: MOV r/m32, r32 (89 /r), MOV r/m32, imm32 (C7 /0), MOVNTI m32, r32
 * (0F C3 /r), each with an optional REX prefix (REX.W makes them 64-bit
 * stores, REX.R selects r8-r15 as the source), address-size and segment
 * prefixes, any memory form of ModRM (SIB, disp8, disp32, RIP-relative).
 * Refused: register destinations, 8/16-bit stores, LOCK/REP prefixes and
 * every other opcode.
 */
#ifndef PVRDMA_SIM_X86_STORE_H
#define PVRDMA_SIM_X86_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest legal x86 instruction. */
#define X86_MAX_INSN_LEN	15

struct x86_store {
	unsigned int len;	/* bytes of the whole instruction */
	unsigned int width;	/* bytes stored: 4 or 8 */
	bool src_is_imm;
	unsigned int src_reg;	/* 0 = rax .. 15 = r15, if !src_is_imm */
	uint64_t imm;		/* sign-extended to the width, if src_is_imm */
};

/*
 * Decodes the instruction at code[0..avail). Returns 0, -EINVAL for an
 * instruction that is not a decodable store, or -ENODATA when avail ends
 * before the instruction does.
 */
int x86_store_decode(const uint8_t *code, size_t avail, struct x86_store *out);

#endif /* PVRDMA_SIM_X86_STORE_H */
