/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The invariant CRC of RoCE v2 over IPv4 (IBA annex A17.3.3): CRC-32 (the
 * Ethernet polynomial, reflected) over a pseudo-header of 8 bytes of 1s
 * (the LRH RoCE has not), the IPv4 header with TOS, TTL and header
 * checksum taken as 1s, the UDP header with the checksum taken as 1s,
 * the BTH with its byte 4 (resv8a: FECN, BECN) taken as 1s, then the rest
 * of the packet up to the ICRC, pad included. The 4 ICRC bytes on the
 * wire are the complemented CRC, least significant byte first.
 *
 * The IPv4 identification is covered too, and a UDP socket never shows
 * the receiver the header it came in: roce_icrc_check() finds the one
 * identification (the CRC is linear in it) that makes the ICRC right,
 * with a don't-fragment flag or without, so a bad packet gets through
 * with odds of 2^-15 rather than 2^-32. The receiver learns the
 * identification that way, which the GRH area of a UD receive shows.
 */
#ifndef PVRDMA_SIM_FABRIC_ROCE_ICRC_H
#define PVRDMA_SIM_FABRIC_ROCE_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_hdr.h"

/* The IPv4 and UDP header fields the ICRC covers. */
struct roce_flow4 {
	uint32_t saddr;		/* network order */
	uint32_t daddr;		/* network order */
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint16_t ip_id;		/* identification */
	uint16_t frag;		/* flags and fragment offset: 0x4000 = DF */
};

#define ROCE_IP_DF	0x4000

/* The ICRC in three steps, for a packet gathered from pieces: start()
 * covers the pseudo-header and the BTH (bth: its 12 bytes); update() the
 * bytes that follow, in order; end() gives the ICRC. iblen is the
 * packet's length from the BTH to the end of the pad. */
uint32_t roce_icrc_start(const struct roce_flow4 *f, const uint8_t *bth,
			 size_t iblen);
static inline uint32_t roce_icrc_end(uint32_t crc)
{
	return ~crc;
}

/* The ICRC of the contiguous packet ib[0..iblen) (BTH to pad). */
uint32_t roce_icrc(const struct roce_flow4 *f, const uint8_t *ib,
		   size_t iblen);

static inline void roce_icrc_put(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

static inline uint32_t roce_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Whether the UDP payload ib[0..len) (ICRC last) carries a right ICRC
 * for some identification and flags of f; if so they are stored in f. */
bool roce_icrc_check(struct roce_flow4 *f, const uint8_t *ib, size_t len);
/*
 * A run of packets of one flow and one length, whose BTHs differ from
 * the first's in their last four bytes only (AckReq, PSN) and whose
 * IPv4 identifications may differ: a batch sent (roce_tx.c), a run read
 * to its place (roce_ahead.c). The CRC is linear: each packet's
 * pseudo-header register is the first's plus what its identification
 * and those four bytes change, from tables, rather than the
 * pseudo-header built and folded again; and a check, whose bytes after
 * the BTH lie elsewhere, takes the first's register and the factor that
 * takes a packet's bytes back from the run, leaving four table look-ups
 * and one multiply for each packet.
 */
struct roce_icrc_run {
	uint8_t bth[ROCE_BTH_LEN];	/* the first packet's */
	size_t iblen;			/* its bytes up to its ICRC */
	uint16_t ip_id;			/* its identification */
	uint32_t start;			/* its roce_icrc_start() */
};
/* A run whose packets are checked: what a sender's needs not. */
struct roce_icrc_check_run {
	struct roce_icrc_run run;
	uint32_t base;			/* the check's part of run.start */
	uint32_t back;			/* the check's factor for the rest */
};

/* r's first packet: f its flow, bth its BTH, iblen as above. */
void roce_icrc_run_init(struct roce_icrc_run *r, const struct roce_flow4 *f,
			const uint8_t *bth, size_t iblen);
void roce_icrc_run_init_check(struct roce_icrc_check_run *c,
			      const struct roce_flow4 *f, const uint8_t *bth,
			      size_t iblen);
/* Whether the packet at bth, iblen bytes before its ICRC, is one of r's. */
static inline bool roce_icrc_run_fits(const struct roce_icrc_run *r,
				      const uint8_t *bth, size_t iblen)
{
	return iblen == r->iblen && !memcmp(bth, r->bth, 8);
}
/* roce_icrc_start() of a packet of r's with identification ip_id. */
uint32_t roce_icrc_run_start(const struct roce_icrc_run *r, uint16_t ip_id,
			     const uint8_t *bth);
/* roce_icrc_check() of a packet of r's, its BTH at bth, its ICRC icrc,
 * and crc0 the register from zero of its bytes after the BTH
 * (roce_crc32_update(0, ...)). */
bool roce_icrc_run_check(const struct roce_icrc_check_run *c,
			 struct roce_flow4 *f, const uint8_t *bth,
			 uint32_t icrc, uint32_t crc0);

#endif /* PVRDMA_SIM_FABRIC_ROCE_ICRC_H */
