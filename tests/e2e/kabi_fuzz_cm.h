/* SPDX-License-Identifier: BSD-2-Clause */
/* kabi_fuzz_cm: the fuzzer (kabi_fuzz_cm.c) and its traffic check
 * (kabi_fuzz_cm_traffic.c). */
#ifndef KABI_FUZZ_CM_H
#define KABI_FUZZ_CM_H

#include <stdint.h>
#include <netinet/in.h>

/* Connects to a listener of this process at addr:port and sends a
 * message through it; fails the program if anything does not work. */
void kabi_fuzz_cm_traffic(const struct in_addr *addr, uint16_t port);

#endif
