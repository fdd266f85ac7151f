// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 ICRC over IPv4, and its check when the IPv4 identification
 * is unknown. See roce_icrc.h.
 */
#include <string.h>

#include "roce_crc32.h"
#include "roce_hdr.h"
#include "roce_icrc.h"

/* The pseudo-header: LRH 8, IPv4 20, UDP 8, then the BTH's 12. */
#define PH_LEN		48
#define PH_ID		12	/* where the identification is */

#define crc_tab		roce_crc32_tab
/* crc_rev[crc_tab[0][i] >> 24] = i: the top byte names the index. */
static uint8_t crc_rev[256];

__attribute__((constructor(102))) static void crc_rev_table(void)
{
	int i;

	for (i = 0; i < 256; i++)
		crc_rev[crc_tab[0][i] >> 24] = (uint8_t)i;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
}

static void pseudo_header(uint8_t ph[PH_LEN], const struct roce_flow4 *f,
			  const uint8_t *bth, size_t iblen)
{
	uint16_t udp_len = (uint16_t)(8 + iblen + ROCE_ICRC_LEN);

	memset(ph, 0xff, 8);
	ph[8] = 0x45;			/* IPv4, 5 words */
	ph[9] = 0xff;			/* TOS */
	put16(ph + 10, (uint16_t)(20 + udp_len));
	put16(ph + 12, f->ip_id);
	put16(ph + 14, f->frag);
	ph[16] = 0xff;			/* TTL */
	ph[17] = 17;			/* UDP */
	ph[18] = ph[19] = 0xff;		/* header checksum */
	memcpy(ph + 20, &f->saddr, 4);
	memcpy(ph + 24, &f->daddr, 4);
	put16(ph + 28, f->sport);
	put16(ph + 30, f->dport);
	put16(ph + 32, udp_len);
	ph[34] = ph[35] = 0xff;		/* UDP checksum */
	memcpy(ph + 36, bth, ROCE_BTH_LEN);
	ph[36 + 4] = 0xff;		/* BTH resv8a */
}

uint32_t roce_icrc_start(const struct roce_flow4 *f, const uint8_t *bth,
			 size_t iblen)
{
	uint8_t ph[PH_LEN];

	pseudo_header(ph, f, bth, iblen);
	return roce_crc32_update(0xffffffffu, ph, PH_LEN);
}

uint32_t roce_icrc(const struct roce_flow4 *f, const uint8_t *ib,
		   size_t iblen)
{
	uint32_t crc = roce_icrc_start(f, ib, iblen);

	crc = roce_crc32_update(crc, ib + ROCE_BTH_LEN, iblen - ROCE_BTH_LEN);
	return roce_icrc_end(crc);
}

/*
 * The two bytes that take the register from before to after, if any:
 * each step's table index shows in the top byte it leaves, so both
 * indexes are known from after, and the 16 bits of the middle register
 * that both steps fix must agree.
 */
static bool crc_solve2(uint32_t before, uint32_t after, uint16_t *val)
{
	uint8_t i2 = crc_rev[after >> 24];
	uint32_t mid_hi = (after ^ crc_tab[0][i2]) << 8;
	uint8_t i1 = crc_rev[mid_hi >> 24];
	uint32_t mid = (before >> 8) ^ crc_tab[0][i1];

	if ((mid ^ mid_hi) & 0xffffff00u)
		return false;
	*val = (uint16_t)((i1 ^ (before & 0xff)) << 8 | (i2 ^ (mid & 0xff)));
	return true;
}

/* With the register crc0 the packet's bytes after the BTH leave from a
 * zero register (one pass over them for any flags and identification),
 * whether some identification makes the ICRC right with f's flags. */
static bool check_frag(struct roce_flow4 *f, const uint8_t *ib,
		       size_t iblen, uint32_t icrc, uint32_t crc0)
{
	uint8_t ph[PH_LEN];
	uint32_t before, rest, after;
	size_t tail = PH_LEN - PH_ID - 2 + (iblen - ROCE_BTH_LEN);
	uint16_t id;

	f->ip_id = 0;
	pseudo_header(ph, f, ib, iblen);
	before = roce_crc32_update(0xffffffffu, ph, PH_ID);
	/* the CRC is linear: the bytes after the identification, from a
	 * zero register, and that register shifted through them */
	rest = roce_crc32_update(0, ph + PH_ID + 2, PH_LEN - PH_ID - 2);
	rest = roce_crc32_shift(rest, iblen - ROCE_BTH_LEN) ^ crc0;
	after = roce_crc32_unshift(~icrc ^ rest, tail);
	if (!crc_solve2(before, after, &id))
		return false;
	f->ip_id = id;
	return true;
}

bool roce_icrc_check_crc0(struct roce_flow4 *f, const uint8_t *bth,
			  size_t iblen, uint32_t icrc, uint32_t crc0)
{
	if (iblen < ROCE_BTH_LEN)
		return false;
	f->frag = ROCE_IP_DF;
	if (check_frag(f, bth, iblen, icrc, crc0))
		return true;
	f->frag = 0;
	return check_frag(f, bth, iblen, icrc, crc0);
}

bool roce_icrc_check(struct roce_flow4 *f, const uint8_t *ib, size_t len)
{
	size_t iblen;

	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	iblen = len - ROCE_ICRC_LEN;
	return roce_icrc_check_crc0(f, ib, iblen, roce_icrc_get(ib + iblen),
				    roce_crc32_update(0, ib + ROCE_BTH_LEN,
						      iblen - ROCE_BTH_LEN));
}
