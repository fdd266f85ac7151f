// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 ICRC of sim/fabric/roce_icrc.c against packets built and
 * checksummed by an independent implementation (scapy's RoCE layer), and
 * its check where the IPv4 identification is unknown.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce_crc32.h"
#include "roce_hdr.h"
#include "roce_icrc.h"

struct vector {
	const char *hex;	/* UDP payload, ICRC last */
	uint16_t ip_id;
	uint16_t frag;
};

/* 198.51.100.1:0xc123 -> 198.51.100.2:4791, TTL 64, TOS 0. */
static const struct vector vectors[] = {
	/* RC SEND_ONLY, AckReq, 12 bytes */
	{ "0400ffff000000118012345668656c6c6f20726f63652121b0ecf5b9",
	  0, ROCE_IP_DF },
	/* RC RDMA_WRITE_ONLY, RETH, 5 bytes and 3 of pad */
	{ "0a30ffff00000012000000071122334455667788abcdef0100000005"
	  "6162636465000000a7c42707", 0, ROCE_IP_DF },
	/* UD SEND_ONLY_WITH_IMMEDIATE, SE, DETH; fragmentable, id 0x1234 */
	{ "6580ffff00000013000000011111111100000abcdeadbeef"
	  "313233343536373873b4be2c", 0x1234, 0 },
};

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	unsigned int b;

	while (s[0] && s[1] && sscanf(s, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		s += 2;
	}
	return n;
}

static struct roce_flow4 flow(uint16_t id, uint16_t frag)
{
	struct roce_flow4 f = { .sport = 0xc123, .dport = ROCE_UDP_PORT,
				.ip_id = id, .frag = frag };

	inet_pton(AF_INET, "198.51.100.1", &f.saddr);
	inet_pton(AF_INET, "198.51.100.2", &f.daddr);
	return f;
}

static void test_known_vectors(void **state)
{
	uint8_t b[256];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		struct roce_flow4 f = flow(vectors[i].ip_id, vectors[i].frag);

		n = unhex(vectors[i].hex, b);
		assert_int_equal(roce_icrc(&f, b, n - 4),
				 roce_icrc_get(b + n - 4));
	}
}

/* The check learns the identification and flags the sender used. */
static void test_check_finds_identification(void **state)
{
	uint8_t b[256];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		struct roce_flow4 f = flow(0xffff, 0xffff);

		n = unhex(vectors[i].hex, b);
		assert_true(roce_icrc_check(&f, b, n));
		assert_int_equal(f.ip_id, vectors[i].ip_id);
		assert_int_equal(f.frag, vectors[i].frag);
	}
}

/* Masked fields do not count; everything else does, bit by bit. */
static void test_check_rejects_any_flip(void **state)
{
	uint8_t b[256];
	size_t n, i;
	int bit, bad = 0, passed = 0;

	(void)state;
	n = unhex(vectors[1].hex, b);
	for (i = 0; i < n; i++)
		for (bit = 0; bit < 8; bit++) {
			struct roce_flow4 f = flow(0, 0);

			b[i] ^= (uint8_t)(1 << bit);
			if (roce_icrc_check(&f, b, n))
				passed++;
			else
				bad++;
			b[i] ^= (uint8_t)(1 << bit);
		}
	/* byte 4 of the BTH is resv8a, masked: its 8 flips pass */
	assert_int_equal(passed, 8);
	assert_int_equal(bad, (int)n * 8 - 8);
	/* a wrong address fails too */
	{
		struct roce_flow4 f = flow(0, 0);

		f.saddr ^= htonl(1);
		assert_false(roce_icrc_check(&f, b, n));
		f = flow(0, 0);
		f.sport++;
		assert_false(roce_icrc_check(&f, b, n));
	}
}

/* Random packets and identifications: compute, then find again; with
 * each way of the CRC the processor has (roce_crc32.h), whose ICRC is
 * the tables' too. */
static void test_roundtrip_random(void **state)
{
	uint8_t b[4200];
	unsigned int seed = 1;
	int round;

	(void)state;
	for (round = 0; round < 600; round++) {
		size_t n = 16 + (size_t)(rand_r(&seed) % 4100) / 4 * 4, i;
		struct roce_flow4 f = flow((uint16_t)rand_r(&seed),
					   round & 1 ? ROCE_IP_DF : 0);
		struct roce_flow4 g = flow(0, 0);
		uint32_t icrc;

		for (i = 0; i < n; i++)
			b[i] = (uint8_t)rand_r(&seed);
		assert_true(roce_crc32_select(ROCE_CRC32_TABLES));
		icrc = roce_icrc(&f, b, n - 4);
		if (!roce_crc32_select((enum roce_crc32_impl)(round % 3)))
			continue;
		assert_int_equal(roce_icrc(&f, b, n - 4), icrc);
		roce_icrc_put(b + n - 4, icrc);
		assert_true(roce_icrc_check(&g, b, n));
		assert_int_equal(g.ip_id, f.ip_id);
		assert_int_equal(g.frag, f.frag);
	}
	if (!roce_crc32_select(ROCE_CRC32_FOLD256))
		roce_crc32_select(ROCE_CRC32_FOLD128);
}

/* The piecewise form is the contiguous one. */
static void test_pieces(void **state)
{
	uint8_t b[256];
	struct roce_flow4 f = flow(0, ROCE_IP_DF);
	size_t n = unhex(vectors[1].hex, b);
	uint32_t c = roce_icrc_start(&f, b, n - 4);

	(void)state;
	c = roce_crc32_update(c, b + 12, 16);
	c = roce_crc32_update(c, b + 28, 3);
	c = roce_crc32_update(c, b + 31, n - 4 - 31);
	assert_int_equal(roce_icrc_end(c), roce_icrc_get(b + n - 4));
}

/* A BTH of RDMA WRITE middle packet psn of QP 0x12, AckReq when asked. */
static void write_middle_bth(uint8_t *b, uint32_t psn, bool asked)
{
	static const uint8_t head[8] = { 7, 0x40, 0xff, 0xff, 0, 0, 0, 0x12 };

	memcpy(b, head, sizeof(head));
	b[8] = asked ? 0x80 : 0;
	b[9] = (uint8_t)(psn >> 16);
	b[10] = (uint8_t)(psn >> 8);
	b[11] = (uint8_t)psn;
}

/* The checks of a run (roce_icrc_run_check()) find what the one-pass
 * check finds, across a PSN wrap, AckReq, identifications and either
 * flag; and fail a packet whose payload, PSN or ICRC changed. */
static void test_run_checks(void **state)
{
	enum { PAY = 1024, PACKETS = 40 };
	uint8_t b[ROCE_BTH_LEN + PAY + ROCE_ICRC_LEN], *pay = b + ROCE_BTH_LEN;
	size_t iblen = ROCE_BTH_LEN + PAY;
	struct roce_icrc_check_run run = { .run.iblen = 0 };
	unsigned int seed = 7;
	int i;

	(void)state;
	for (i = 0; i < PACKETS; i++) {
		struct roce_flow4 sent = flow((uint16_t)rand_r(&seed),
					      i % 3 ? ROCE_IP_DF : 0);
		struct roce_flow4 g = flow(0, 0), one = flow(0, 0);
		uint32_t icrc, crc0;
		size_t k;

		write_middle_bth(b, (0xffffec + (uint32_t)i) & 0xffffff,
				 i % 5 == 4);
		for (k = 0; k < PAY; k++)
			pay[k] = (uint8_t)rand_r(&seed);
		icrc = roce_icrc(&sent, b, iblen);
		roce_icrc_put(b + iblen, icrc);
		crc0 = roce_crc32_update(0, pay, PAY);
		if (!i)
			roce_icrc_run_init_check(&run, &g, b, iblen);
		assert_true(roce_icrc_run_fits(&run.run, b, iblen));
		assert_true(roce_icrc_run_check(&run, &g, b, icrc, crc0));
		assert_true(roce_icrc_check(&one, b, iblen + ROCE_ICRC_LEN));
		assert_int_equal(g.ip_id, sent.ip_id);
		assert_int_equal(g.frag, sent.frag);
		assert_int_equal(one.ip_id, g.ip_id);
		/* a payload bit, a PSN bit, the ICRC: the check fails */
		pay[i * 17 % PAY] ^= 0x10;
		assert_false(roce_icrc_run_check(&run, &g, b, icrc,
						 roce_crc32_update(0, pay, PAY)));
		pay[i * 17 % PAY] ^= 0x10;
		b[11] ^= 1;
		assert_false(roce_icrc_run_check(&run, &g, b, icrc, crc0));
		b[11] ^= 1;
		assert_false(roce_icrc_run_check(&run, &g, b, icrc ^ 0x100,
						 crc0));
	}
	/* another length, another opcode: not of the run */
	assert_false(roce_icrc_run_fits(&run.run, b, iblen - 4));
	b[0] = 8;	/* RDMA_WRITE_LAST */
	assert_false(roce_icrc_run_fits(&run.run, b, iblen));
}

/* A batch's packets start from the run's first (roce_icrc_run_start()):
 * as roce_icrc_start() of each, whatever its identification, PSN and
 * AckReq; the ICRC then is the one-pass one. */
static void test_run_starts(void **state)
{
	enum { PAY = 256 };
	uint8_t b[ROCE_BTH_LEN + PAY];
	size_t iblen = sizeof(b);
	struct roce_flow4 f = flow(0, ROCE_IP_DF);
	struct roce_icrc_run run;
	unsigned int seed = 11;
	uint32_t k, crc;
	size_t i;

	(void)state;
	for (i = 0; i < PAY; i++)
		b[ROCE_BTH_LEN + i] = (uint8_t)rand_r(&seed);
	write_middle_bth(b, 0xfffff0, false);
	roce_icrc_run_init(&run, &f, b, iblen);
	for (k = 0; k < 64; k++) {
		write_middle_bth(b, (0xfffff0 + k) & 0xffffff, k % 7 == 6);
		f.ip_id = (uint16_t)(k * 0x0101 + (k > 40 ? 0x8000 : 0));
		assert_true(roce_icrc_run_fits(&run, b, iblen));
		crc = roce_icrc_run_start(&run, f.ip_id, b);
		assert_int_equal(crc, roce_icrc_start(&f, b, iblen));
		crc = roce_crc32_update(crc, b + ROCE_BTH_LEN, PAY);
		assert_int_equal(roce_icrc_end(crc), roce_icrc(&f, b, iblen));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vectors),
		cmocka_unit_test(test_check_finds_identification),
		cmocka_unit_test(test_check_rejects_any_flip),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_run_checks),
		cmocka_unit_test(test_run_starts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
