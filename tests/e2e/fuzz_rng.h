/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ABI fuzzers' generator (splitmix64): a fixed seed replays a run
 * command for command. Each program has its own state, seeded from
 * its --seed.
 */
#ifndef PVRDMA_E2E_FUZZ_RNG_H
#define PVRDMA_E2E_FUZZ_RNG_H

#include <stdbool.h>
#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static inline bool chance(unsigned int percent)
{
	return below(100) < percent;
}

#endif /* PVRDMA_E2E_FUZZ_RNG_H */
