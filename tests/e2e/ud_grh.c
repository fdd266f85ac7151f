// SPDX-License-Identifier: BSD-2-Clause
/*
 * The 40-byte GRH area in front of a UD receive, decoded field by field.
 * Programs read it: UCX's ud_verbs, for one, takes the destination address
 * from it and drops a datagram whose address is not one of its port's GIDs.
 * So it must hold what RoCE hardware (and rxe) put there:
 *
 *   ipv4   RoCE v2 over IPv4 (an IPv4-mapped GID): bytes 0-19 zero, then
 *          the IPv4 header: version 4 / IHL 5, TOS = traffic class, total
 *          length of the IP datagram (IPv4 + UDP + BTH + DETH [+ ImmDt] +
 *          payload + pad + ICRC), don't fragment, TTL = hop limit, protocol UDP, a
 *          valid header checksum, the sender's and our IPv4 addresses
 *   ipv6   RoCE v2 over IPv6: the IPv6 header: version 6, traffic class,
 *          payload length (UDP + BTH + DETH [+ ImmDt] + payload + pad +
 *          ICRC),
 *          next header UDP, hop limit, source and destination GIDs
 *   rocev1 RoCE v1: the IB GRH: version 6, traffic class, payload length
 *          (BTH + DETH [+ ImmDt] + payload + pad + ICRC), next header
 *          0x1b,
 *          hop limit, source and destination GIDs
 *
 * The completion's sl carries the packet's RoCE type, as the ConnectX
 * adapters under vSphere report it and UCX's ud_verbs reads it: 0xa for
 * RoCE v2 over IPv4, 0x9 over IPv6, 0 for RoCE v1 (Linux rxe, which a
 * simulated adapter meets as a native endpoint, leaves it 0).
 *
 *   ud_grh --server|--client --port P --gid-index N --mode ipv4|ipv6|rocev1
 *
 * The client sends two datagrams (a plain send of 100 bytes, a send with
 * immediate of 7) with traffic class 0x48 and hop limit 61; the server checks
 * both GRHs and the payloads. UD_GRH_TTL in the server's environment is the
 * IPv4 TTL to expect instead of the hop limit: a Linux RoCE stack (rxe)
 * sending over IPv4 puts its route's TTL there, not the address handle's.
 */
#include "e2e_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRH_LEN		40
#define SLOT		512
#define TCLASS		0x48
#define HOP_LIMIT	61
#define UDP_LEN		8
#define BTH_LEN		12
#define DETH_LEN	8
#define IMMDT_LEN	4
#define ICRC_LEN	4
#define POISON		0xa5

static const struct {
	uint32_t len;
	bool imm;
	unsigned int seed;
} sends[] = {
	{ 100, false, 11 },
	{ 7, true, 12 },
};
#define NUM_SENDS	(sizeof(sends) / sizeof(sends[0]))

static unsigned int be16_at(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static void check_ipv4(const uint8_t *grh, const struct e2e_peer *peer,
		       const uint8_t *my_gid, uint32_t ib_len,
		       const char *what)
{
	const char *ttl_env = getenv("UD_GRH_TTL");
	unsigned int want_ttl = ttl_env ? (unsigned int)atoi(ttl_env) :
				HOP_LIMIT;
	const uint8_t *ip = grh + 20;
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i++)
		E2E_CHECK(grh[i] == 0, "%s: GRH byte %d is %#x, not 0", what,
			  i, grh[i]);
	E2E_CHECK(ip[0] == 0x45, "%s: version/IHL %#x, want 0x45", what,
		  ip[0]);
	E2E_CHECK(ip[1] == TCLASS, "%s: TOS %#x, want %#x", what, ip[1],
		  TCLASS);
	E2E_CHECK(be16_at(ip + 2) == 20 + UDP_LEN + ib_len,
		  "%s: total length %u, want %u", what, be16_at(ip + 2),
		  20 + UDP_LEN + ib_len);
	E2E_CHECK((be16_at(ip + 6) & 0xbfff) == 0,
		  "%s: flags/fragment offset %#x: a fragment", what,
		  be16_at(ip + 6));
	E2E_CHECK(ip[8] == want_ttl, "%s: TTL %u, want %u", what, ip[8],
		  want_ttl);
	E2E_CHECK(ip[9] == 17, "%s: protocol %u, want 17 (UDP)", what,
		  ip[9]);
	for (i = 0; i < 20; i += 2)
		sum += be16_at(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	E2E_CHECK(sum == 0xffff, "%s: bad IPv4 header checksum %#x", what,
		  be16_at(ip + 10));
	E2E_CHECK(!memcmp(ip + 12, peer->gid + 12, 4),
		  "%s: source address is not the sender's", what);
	E2E_CHECK(!memcmp(ip + 16, my_gid + 12, 4),
		  "%s: destination address is not ours", what);
}

static void check_ipv6(const uint8_t *grh, const struct e2e_peer *peer,
		       const uint8_t *my_gid, uint32_t paylen,
		       uint8_t next_hdr, const char *what)
{
	unsigned int tclass = (grh[0] & 0xf) << 4 | grh[1] >> 4;

	E2E_CHECK(grh[0] >> 4 == 6, "%s: IP version %u, want 6", what,
		  grh[0] >> 4);
	E2E_CHECK(tclass == TCLASS, "%s: traffic class %#x, want %#x", what,
		  tclass, TCLASS);
	E2E_CHECK(be16_at(grh + 4) == paylen, "%s: payload length %u, want %u",
		  what, be16_at(grh + 4), paylen);
	E2E_CHECK(grh[6] == next_hdr, "%s: next header %#x, want %#x", what,
		  grh[6], next_hdr);
	E2E_CHECK(grh[7] == HOP_LIMIT, "%s: hop limit %u, want %u", what,
		  grh[7], HOP_LIMIT);
	E2E_CHECK(!memcmp(grh + 8, peer->gid, 16),
		  "%s: source GID is not the sender's", what);
	E2E_CHECK(!memcmp(grh + 24, my_gid, 16),
		  "%s: destination GID is not ours", what);
}

int main(int argc, char **argv)
{
	struct e2e_peer me = { 0 }, peer;
	struct ibv_cq *cq;
	struct e2e_args args;
	struct e2e_dev d;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	unsigned int i, want_sl;
	int sock;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single && args.mode, "needs a role and --mode");
	E2E_CHECK(!strcmp(args.mode, "ipv4") || !strcmp(args.mode, "ipv6") ||
		  !strcmp(args.mode, "rocev1"), "unknown mode %s", args.mode);
	want_sl = !strcmp(args.mode, "ipv4") ? 0xa :
		  !strcmp(args.mode, "ipv6") ? 0x9 : 0;
	e2e_open(&d, args.dev, args.gid_index);
	cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
	E2E_CHECK(cq, "ibv_create_cq: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&buf, 4096, SLOT * NUM_SENDS),
		  "out of memory");
	memset(buf, POISON, SLOT * NUM_SENDS);
	mr = ibv_reg_mr(d.pd, buf, SLOT * NUM_SENDS, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	qp = e2e_create_qp(&d, IBV_QPT_UD, cq, cq, 8, 1);
	e2e_qp_to_init(qp, IBV_QPT_UD);
	e2e_ud_ready(qp, 0);
	me.ud_qpn = qp->qp_num;
	memcpy(me.gid, d.gid.raw, 16);

	if (args.server) {
		for (i = 0; i < NUM_SENDS; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf + i * SLOT,
				.length = SLOT, .lkey = mr->lkey,
			};
			struct ibv_recv_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1,
			}, *bad;

			E2E_CHECK(!ibv_post_recv(qp, &wr, &bad),
				  "ibv_post_recv failed");
		}
	}
	sock = e2e_channel_open(&args);
	e2e_exchange(sock, &me, &peer);

	if (args.server) {
		for (i = 0; i < NUM_SENDS; i++) {
			const uint8_t *grh = buf + i * SLOT;
			/* the payload is padded to 4 bytes on the wire */
			uint32_t ib_len = BTH_LEN + DETH_LEN +
					  ((sends[i].len + 3) & ~3u) +
					  ICRC_LEN +
					  (sends[i].imm ? IMMDT_LEN : 0);
			struct ibv_wc wc;
			char what[32];

			snprintf(what, sizeof(what), "datagram %u", i);
			e2e_poll_one(cq, &wc, what);
			E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
				  wc.wr_id == i, "%s: status %d wr_id %llu",
				  what, wc.status,
				  (unsigned long long)wc.wr_id);
			E2E_CHECK(wc.wc_flags & IBV_WC_GRH, "%s: no GRH flag",
				  what);
			E2E_CHECK(wc.byte_len == GRH_LEN + sends[i].len,
				  "%s: byte_len %u", what, wc.byte_len);
			/* rxe leaves sl 0: the RoCE type in sl is what
			 * ConnectX reports, not a rule of the verbs. */
			E2E_CHECK(wc.sl == want_sl || d.rxe,
				  "%s: sl %#x, want %#x", what, wc.sl,
				  want_sl);
			E2E_CHECK(e2e_pattern_ok(grh + GRH_LEN, sends[i].len,
						 sends[i].seed),
				  "%s: payload differs", what);
			if (!strcmp(args.mode, "ipv4"))
				check_ipv4(grh, &peer, me.gid, ib_len, what);
			else if (!strcmp(args.mode, "ipv6"))
				check_ipv6(grh, &peer, me.gid,
					   UDP_LEN + ib_len, 17, what);
			else
				check_ipv6(grh, &peer, me.gid, ib_len, 0x1b,
					   what);
			printf("%s: GRH as %s hardware writes it\n", what,
			       args.mode);
		}
		e2e_sync(sock, "done");
		printf("ud_grh server: passed\n");
	} else {
		struct ibv_ah_attr aa;
		struct ibv_ah *ah;

		e2e_fill_ah_attr(&d, peer.gid, &aa);
		aa.grh.traffic_class = TCLASS;
		aa.grh.hop_limit = HOP_LIMIT;
		ah = ibv_create_ah(d.pd, &aa);
		E2E_CHECK(ah, "ibv_create_ah: %s", strerror(errno));
		for (i = 0; i < NUM_SENDS; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf + i * SLOT,
				.length = sends[i].len, .lkey = mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1,
				.opcode = sends[i].imm ? IBV_WR_SEND_WITH_IMM :
							 IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(0x1234),
			}, *bad;
			struct ibv_wc wc;

			e2e_pattern(buf + i * SLOT, sends[i].len,
				    sends[i].seed);
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = peer.ud_qpn;
			wr.wr.ud.remote_qkey = 0x11111111;
			E2E_CHECK(!ibv_post_send(qp, &wr, &bad),
				  "ibv_post_send failed");
			e2e_poll_one(cq, &wc, "send");
			E2E_CHECK(wc.status == IBV_WC_SUCCESS,
				  "send status %d", wc.status);
		}
		e2e_sync(sock, "done");
		E2E_CHECK(!ibv_destroy_ah(ah), "ibv_destroy_ah failed");
		printf("ud_grh client: passed\n");
	}
	E2E_CHECK(!ibv_destroy_qp(qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(cq), "ibv_destroy_cq failed");
	free(buf);
	e2e_close(&d);
	return 0;
}
