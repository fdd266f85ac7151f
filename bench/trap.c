// SPDX-License-Identifier: BSD-2-Clause
/*
 * trap COUNT   (run under pvrdma-sim)
 *
 * The cost of one trapped doorbell store: the simulated VM exit every
 * doorbell of a provider pays. Opens the first adapter, maps its UAR page
 * as a provider does (mmap of the device file, offset 0) and stores COUNT
 * CQ POLL doorbells to it. No QP exists, so the device has no work to do
 * for them: what is measured is the trap itself (fault, decode, dispatch,
 * step past the store). One JSON line: ns per store, median of 5 rounds;
 * and typical_ns, the median of stores timed one by one (min(COUNT, 20000)
 * of them), which a preempted round does not inflate: the part the
 * figures of single messages are built from (bench/run's ABI floor).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	volatile uint32_t *db;
	unsigned long count, i;
	double round[5], t, *one;
	unsigned long n_one;
	uint8_t *uar;
	int r;

	count = argc == 2 ? strtoul(argv[1], NULL, 0) : 0;
	if (!count) {
		fprintf(stderr, "usage: trap COUNT (under pvrdma-sim)\n");
		return 2;
	}
	list = ibv_get_device_list(NULL);
	if (!list || !list[0]) {
		fprintf(stderr, "trap: no device (run under pvrdma-sim)\n");
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	if (!ctx) {
		fprintf(stderr, "trap: cannot open %s\n",
			ibv_get_device_name(list[0]));
		return 1;
	}
	uar = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, ctx->cmd_fd, 0);
	if (uar == MAP_FAILED) {
		perror("trap: mmap of the UAR");
		return 1;
	}
	db = (volatile uint32_t *)(uar + PVRDMA_UAR_CQ_OFFSET);
	for (r = 0; r < 5; r++) {
		t = now_s();
		for (i = 0; i < count; i++)
			*db = PVRDMA_UAR_CQ_POLL | 1;
		round[r] = (now_s() - t) / count;
	}
	qsort(round, 5, sizeof(round[0]), cmp_double);
	n_one = count < 20000 ? count : 20000;
	one = calloc(n_one, sizeof(*one));
	if (!one)
		return 1;
	for (i = 0; i < n_one; i++) {
		t = now_s();
		*db = PVRDMA_UAR_CQ_POLL | 1;
		one[i] = now_s() - t;
	}
	qsort(one, n_one, sizeof(one[0]), cmp_double);
	printf("{\"mode\": \"trap\", \"count\": %lu, \"ns_per_store\": %.1f, "
	       "\"min_ns\": %.1f, \"typical_ns\": %.1f}\n", count,
	       round[2] * 1e9, round[0] * 1e9, one[n_one / 2] * 1e9);
	free(one);
	munmap(uar, 4096);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
