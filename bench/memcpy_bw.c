// SPDX-License-Identifier: BSD-2-Clause
/*
 * memcpy_bw SIZE [TOTAL]: memcpy bandwidth in SIZE-byte blocks, the upper
 * bound of any copy the sim does. Two figures, as one JSON line:
 *   hot    - the same source and destination block every time (what a
 *            perftest buffer that stays in cache costs to copy);
 *   stream - blocks rotating through 64 MiB regions (memory bound).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define REGION	(64u << 20)

/* Keeps the compiler from dropping copies nobody reads. */
static volatile uint8_t sink;

static double copy_rate(uint8_t *dst, const uint8_t *src, size_t size,
			size_t span, uint64_t total)
{
	uint64_t done = 0;
	size_t off = 0;
	double t0, t;

	memcpy(dst, src, size);		/* fault the pages in */
	t0 = now_s();
	while (done < total) {
		memcpy(dst + off, src + off, size);
		done += size;
		off += size;
		if (off + size > span)
			off = 0;
	}
	t = now_s() - t0;
	sink = dst[0];
	return done / t / 1e9;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
	uint64_t total = argc > 2 ? strtoull(argv[2], NULL, 0) : 4ull << 30;
	uint8_t *src, *dst;
	double hot, stream;

	if (size < 1 || size > REGION) {
		fprintf(stderr, "usage: memcpy_bw SIZE [TOTAL_BYTES]\n");
		return 2;
	}
	src = malloc(REGION);
	dst = malloc(REGION);
	if (!src || !dst) {
		perror("malloc");
		return 1;
	}
	memset(src, 0x5a, REGION);
	memset(dst, 0xa5, REGION);
	hot = copy_rate(dst, src, size, size, total);
	stream = copy_rate(dst, src, size, REGION, total);
	printf("{\"size\": %zu, \"hot_GBps\": %.4f, \"stream_GBps\": %.4f}\n",
	       size, hot, stream);
	return 0;
}
