// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 ICRC over IPv4, and its check when the IPv4 identification
 * is unknown. See roce_icrc.h.
 */
#include "roce_crc32.h"
#include "roce_hdr.h"
#include "roce_icrc.h"

/* The pseudo-header: LRH 8, IPv4 20, UDP 8, then the BTH's 12. */
#define PH_LEN		48
#define PH_ID		12	/* where the identification is */
/* its bytes after the identification */
#define PH_TAIL		(PH_LEN - PH_ID - 2)

#define crc_tab		roce_crc32_tab
/* crc_rev[crc_tab[0][i] >> 24] = i: the top byte names the index. */
static uint8_t crc_rev[256];
/* What a clear don't-fragment flag changes in the register of
 * roce_icrc_check(), taken back to where the identification ends: the
 * flag's bit alone from a zero register, through one byte less. */
static uint32_t no_df_crc;
/* run_id[j][b]: what byte b as the j-th of the identification adds to
 * the register after the pseudo-header, from zero; run_tail[j][b]: what
 * b as the j-th of its last four (the BTH's last four) adds, taken back
 * over PH_TAIL bytes (the BTH's own are crc_tab[3 - j][b]). */
static uint32_t run_id[2][256], run_tail[4][256];

__attribute__((constructor(102))) static void icrc_init(void)
{
	int i, j;

	for (i = 0; i < 256; i++)
		crc_rev[crc_tab[0][i] >> 24] = (uint8_t)i;
	no_df_crc = roce_crc32_unshift(crc_tab[0][ROCE_IP_DF >> 8], 1);
	for (i = 0; i < 256; i++) {
		run_id[0][i] = roce_crc32_shift(crc_tab[0][i], PH_TAIL + 1);
		run_id[1][i] = roce_crc32_shift(crc_tab[0][i], PH_TAIL);
		for (j = 0; j < 4; j++)
			run_tail[j][i] = roce_crc32_unshift(crc_tab[3 - j][i],
							    PH_TAIL);
	}
}

/* A field sent most significant byte first, at byte at of a word. */
static uint64_t be16_at(uint16_t v, int at)
{
	return (uint64_t)(uint16_t)(v >> 8 | v << 8) << (8 * at);
}

/*
 * The pseudo-header, six words of eight bytes built in registers: none
 * is stored byte by byte and read back wider, which would wait on the
 * stores.
 */
static void pseudo_header(uint64_t w[PH_LEN / 8], const struct roce_flow4 *f,
			  const uint8_t *bth, size_t iblen)
{
	const uint8_t *sa = (const uint8_t *)&f->saddr;
	const uint8_t *da = (const uint8_t *)&f->daddr;
	uint16_t udp_len = (uint16_t)(8 + iblen + ROCE_ICRC_LEN);
	uint16_t ip_len = (uint16_t)(20 + udp_len);

	/* the LRH RoCE has not, as 1s */
	w[0] = ~0ull;
	/* IPv4, 5 words; TOS as 1s; total length, identification, flags */
	w[1] = 0xff45 | be16_at(ip_len, 2) | be16_at(f->ip_id, 4) |
	       be16_at(f->frag, 6);
	/* TTL and header checksum as 1s, UDP; the source address */
	w[2] = 0xffff11ff | (uint64_t)roce_crc32_le32(sa) << 32;
	/* the destination address, the ports */
	w[3] = roce_crc32_le32(da) | be16_at(f->sport, 4) |
	       be16_at(f->dport, 6);
	/* the UDP length, its checksum as 1s; the BTH's first word */
	w[4] = be16_at(udp_len, 0) | 0xffff0000 |
	       (uint64_t)roce_crc32_le32(bth) << 32;
	/* the rest of the BTH, resv8a as 1s */
	w[5] = roce_crc32_le64(bth + 4) | 0xff;
}

uint32_t roce_icrc_start(const struct roce_flow4 *f, const uint8_t *bth,
			 size_t iblen)
{
	uint64_t w[PH_LEN / 8];

	pseudo_header(w, f, bth, iblen);
	return roce_crc32_update_words(0xffffffffu, w, PH_LEN / 8, NULL, 0);
}

/* The register after the pseudo-header and the packet after the BTH,
 * the header folded with the payload where it is long enough. */
static uint32_t icrc_reg(const struct roce_flow4 *f, const uint8_t *ib,
			 size_t iblen)
{
	uint64_t w[PH_LEN / 8];

	pseudo_header(w, f, ib, iblen);
	return roce_crc32_update_words(0xffffffffu, w, PH_LEN / 8,
				       ib + ROCE_BTH_LEN,
				       iblen - ROCE_BTH_LEN);
}

uint32_t roce_icrc(const struct roce_flow4 *f, const uint8_t *ib,
		   size_t iblen)
{
	return roce_icrc_end(icrc_reg(f, ib, iblen));
}

/*
 * The two bytes that take the register from zero to after, if any: each
 * step's table index shows in the top byte it leaves, so both indexes
 * are known from after, and the 16 bits of the middle register that
 * both steps fix must agree.
 */
static bool crc_solve2(uint32_t after, uint16_t *val)
{
	uint8_t i2 = crc_rev[after >> 24];
	uint32_t mid_hi = (after ^ crc_tab[0][i2]) << 8;
	uint8_t i1 = crc_rev[mid_hi >> 24];
	uint32_t mid = crc_tab[0][i1];

	if ((mid ^ mid_hi) & 0xffffff00u)
		return false;
	*val = (uint16_t)(i1 << 8 | (i2 ^ (mid & 0xff)));
	return true;
}

/* The identification whose two bytes' register, from zero, is crc, with
 * the don't-fragment flag f has, or without it. */
static bool solve_id(struct roce_flow4 *f, uint32_t crc)
{
	uint16_t id;

	if (crc_solve2(crc, &id)) {
		f->ip_id = id;
		return true;
	}
	f->frag = 0;
	if (crc_solve2(crc ^ no_df_crc, &id)) {
		f->ip_id = id;
		return true;
	}
	return false;
}

/*
 * reg is the register after the pseudo-header and the packet after the
 * BTH, as sent with identification 0 and don't-fragment: the CRC is
 * linear, so it differs from the one the ICRC shows by the
 * identification's bytes alone (and the flag's bit, if the sender left
 * it clear), from a zero register, carried through the bytes after
 * them. Taken back over those bytes, the difference is the register of
 * the two bytes of the identification, which crc_solve2() reads them
 * from.
 */
static bool check_reg(struct roce_flow4 *f, size_t iblen, uint32_t reg,
		      uint32_t icrc)
{
	/* the bytes after the identification: the pseudo-header's, the
	 * BTH's included, and the rest up to the ICRC */
	return solve_id(f, roce_crc32_unshift(reg ^ ~icrc, PH_TAIL +
					      (iblen - ROCE_BTH_LEN)));
}

/* One pass over the packet. */
bool roce_icrc_check(struct roce_flow4 *f, const uint8_t *ib, size_t len)
{
	size_t iblen;

	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	iblen = len - ROCE_ICRC_LEN;
	f->ip_id = 0;
	f->frag = ROCE_IP_DF;
	return check_reg(f, iblen, icrc_reg(f, ib, iblen),
			 roce_icrc_get(ib + iblen));
}

void roce_icrc_run_init(struct roce_icrc_run *r, const struct roce_flow4 *f,
			const uint8_t *bth, size_t iblen)
{
	memcpy(r->bth, bth, ROCE_BTH_LEN);
	r->iblen = iblen;
	r->ip_id = f->ip_id;
	r->start = roce_icrc_start(f, bth, iblen);
}

void roce_icrc_run_init_check(struct roce_icrc_check_run *c,
			      const struct roce_flow4 *f, const uint8_t *bth,
			      size_t iblen)
{
	struct roce_flow4 g = *f;

	roce_icrc_run_init(&c->run, f, bth, iblen);
	/* as sent with identification 0 and don't-fragment */
	g.ip_id = 0;
	g.frag = ROCE_IP_DF;
	c->base = roce_crc32_unshift(f->ip_id || f->frag != ROCE_IP_DF ?
				     roce_icrc_start(&g, bth, iblen) :
				     c->run.start, PH_TAIL);
	c->back = roce_crc32_unshift(1u << 31,
				     PH_TAIL + (iblen - ROCE_BTH_LEN));
}

uint32_t roce_icrc_run_start(const struct roce_icrc_run *r, uint16_t ip_id,
			     const uint8_t *bth)
{
	uint16_t d = ip_id ^ r->ip_id;
	uint32_t crc = r->start ^ run_id[0][d >> 8] ^ run_id[1][d & 0xff];
	int j;

	for (j = 0; j < 4; j++)
		crc ^= crc_tab[3 - j][bth[8 + j] ^ r->bth[8 + j]];
	return crc;
}

/*
 * check_reg() of the register one pass would end with, taken apart: the
 * pseudo-header's register carried through the packet's bytes is the
 * first packet's (base, taken back already) plus what the bytes its BTH
 * differs in add (run_tail), and its bytes' own, crc0 and the ICRC, are
 * taken back by back.
 */
bool roce_icrc_run_check(const struct roce_icrc_check_run *c,
			 struct roce_flow4 *f, const uint8_t *bth,
			 uint32_t icrc, uint32_t crc0)
{
	uint32_t crc = c->base ^ roce_crc32_mul(crc0 ^ ~icrc, c->back);
	int j;

	for (j = 0; j < 4; j++)
		crc ^= run_tail[j][bth[8 + j] ^ c->run.bth[8 + j]];
	f->ip_id = 0;
	f->frag = ROCE_IP_DF;
	return solve_id(f, crc);
}
