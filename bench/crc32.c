// SPDX-License-Identifier: BSD-2-Clause
/*
 * crc32 [SECONDS]: the cost of the RoCE v2 ICRC (sim/fabric/roce_crc32.c,
 * roce_icrc.c) on this processor, from cache, one JSON line:
 *   <way>_<size>_GBps   the CRC-32 of a buffer of 1 KiB or 4 KiB, each
 *                       way the processor has (tables, fold128, fold256);
 *   icrc_<size>_ns      roce_icrc() of an RDMA WRITE middle packet with a
 *                       payload of 1024 or 4096 bytes (the send side), and
 *   icrc_<size>_GBps    its payload bytes per second;
 *   check_<size>_ns     roce_icrc_check() of that packet (the receive
 *                       side: the identification is unknown), and
 *   check_<size>_GBps   its payload bytes per second;
 *   sent_<size>_ns      the ICRC as a batch sent from the application's
 *                       memory computes it for a packet of a run
 *                       (roce_icrc_run_start(), the payload where it
 *                       lies, roce_icrc_end());
 *   placed_<size>_ns    the check of a packet of a run whose payloads
 *                       were read to their place (the payload's register
 *                       from zero, then roce_icrc_run_check());
 * with the fastest way. Each figure is the fastest of 7 timed runs of
 * about SECONDS / 7 (default 0.35 s) each: the runs are short and the
 * code's cost fixed, so the fastest is the one least disturbed by other
 * work on the machine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "roce_crc32.h"
#include "roce_hdr.h"
#include "roce_icrc.h"

#define RUNS	7

enum what { CRC, ICRC, CHECK, SENT, PLACED };

static const char *const way_name[] = {
	[ROCE_CRC32_TABLES] = "tables",
	[ROCE_CRC32_FOLD128] = "fold128",
	[ROCE_CRC32_FOLD256] = "fold256",
};

/* Keeps the compiler from dropping results nobody reads. */
static volatile uint32_t sink;

static struct roce_flow4 flow = {
	.saddr = 0x016433c6u, .daddr = 0x026433c6u,	/* 198.51.100.1, .2 */
	.sport = 0xc123, .dport = ROCE_UDP_PORT, .frag = ROCE_IP_DF,
};

/* Seconds for count rounds of what over the packet or buffer b. */
static double timed(enum what what, uint8_t *b, size_t n, uint64_t count)
{
	struct roce_icrc_check_run run;
	uint32_t acc = 0;
	uint64_t i;
	double t0;

	roce_icrc_run_init_check(&run, &flow, b, n - ROCE_ICRC_LEN);
	t0 = now_s();

	for (i = 0; i < count; i++) {
		struct roce_flow4 f = flow;
		size_t iblen = n - ROCE_ICRC_LEN;
		uint32_t crc;

		switch (what) {
		case CRC:
			acc ^= roce_crc32_update(0xffffffffu, b, n);
			break;
		case ICRC:
			acc ^= roce_icrc(&f, b, iblen);
			break;
		case CHECK:
			acc ^= roce_icrc_check(&f, b, n);
			break;
		case SENT:
			crc = roce_icrc_run_start(&run.run, (uint16_t)i, b);
			crc = roce_crc32_update(crc, b + ROCE_BTH_LEN,
						iblen - ROCE_BTH_LEN);
			acc ^= roce_icrc_end(crc);
			break;
		case PLACED:
			crc = roce_crc32_update(0, b + ROCE_BTH_LEN,
						iblen - ROCE_BTH_LEN);
			acc ^= roce_icrc_run_check(&run, &f, b,
						   roce_icrc_get(b + iblen),
						   crc);
			break;
		}
	}
	sink = acc;
	return now_s() - t0;
}

/* The fastest time of one round, in ns. */
static double ns_per_round(enum what what, uint8_t *b, size_t n,
			   double seconds)
{
	double t[RUNS];
	uint64_t count = 1000;
	int r;

	while (timed(what, b, n, count) < seconds / RUNS / 4)
		count *= 2;
	count *= 4;
	for (r = 0; r < RUNS; r++)
		t[r] = timed(what, b, n, count) / count * 1e9;
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	return t[0];
}

/* An RDMA WRITE middle packet of payload bytes: BTH, payload, ICRC. */
static size_t packet(uint8_t *b, size_t payload)
{
	size_t n = ROCE_BTH_LEN + payload, i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + 7);
	b[0] = 7;				/* RC RDMA_WRITE_MIDDLE */
	b[1] = 0x40;				/* migrated, no pad */
	b[2] = 0xff;				/* default P_Key */
	b[3] = 0xff;
	roce_icrc_put(b + n, roce_icrc(&flow, b, n));
	return n + ROCE_ICRC_LEN;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1024, 4096 };
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.35;
	enum roce_crc32_impl best = roce_crc32_impl(), w;
	uint8_t *b = malloc(8192);
	const char *sep = "{";
	double ns;
	size_t i, n;

	if (!b || seconds <= 0) {
		fprintf(stderr, "usage: crc32 [SECONDS]\n");
		return 2;
	}
	for (i = 0; i < 8192; i++)
		b[i] = (uint8_t)(i * 29 + 3);
	for (w = ROCE_CRC32_TABLES; w <= best; w++) {
		if (!roce_crc32_select(w))
			continue;
		for (i = 0; i < 2; i++) {
			ns = ns_per_round(CRC, b, sizes[i], seconds);
			printf("%s \"%s_%zu_GBps\": %.3f", sep, way_name[w],
			       sizes[i], sizes[i] / ns);
			sep = ",";
		}
	}
	roce_crc32_select(best);
	for (i = 0; i < 2; i++) {
		n = packet(b, sizes[i]);
		if (!roce_icrc_check(&flow, b, n)) {
			fprintf(stderr, "crc32: the packet's ICRC is wrong\n");
			return 1;
		}
		ns = ns_per_round(ICRC, b, n, seconds);
		printf(", \"icrc_%zu_ns\": %.1f, \"icrc_%zu_GBps\": %.3f",
		       sizes[i], ns, sizes[i], sizes[i] / ns);
		ns = ns_per_round(CHECK, b, n, seconds);
		printf(", \"check_%zu_ns\": %.1f, \"check_%zu_GBps\": %.3f",
		       sizes[i], ns, sizes[i], sizes[i] / ns);
		printf(", \"sent_%zu_ns\": %.1f", sizes[i],
		       ns_per_round(SENT, b, n, seconds));
		printf(", \"placed_%zu_ns\": %.1f", sizes[i],
		       ns_per_round(PLACED, b, n, seconds));
	}
	printf(", \"way\": \"%s\"}\n", way_name[best]);
	free(b);
	return 0;
}
