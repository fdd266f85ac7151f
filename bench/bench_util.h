/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the benchmark harnesses of bench/ share: the clock, the order of
 * samples sorted for their quantiles, and an end with its reason. Static
 * functions in a header, so that each harness stays a program of one
 * source file (bench/CMakeLists.txt builds each on its own).
 */
#ifndef PVRDMA_BENCH_UTIL_H
#define PVRDMA_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC, in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* qsort()'s order of doubles, smallest first. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Ends the harness: "PROGRAM: WHAT: the error's text". */
static inline __attribute__((noreturn)) void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(err));
	exit(1);
}

#endif /* PVRDMA_BENCH_UTIL_H */
