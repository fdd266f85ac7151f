// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IB CM MAD codec of sim/kernel/cm_mad.c against byte vectors worked
 * out by hand from the message tables of IBA vol. 1 ch. 12.6 (offsets
 * after the 24-byte MAD header, bit fields from the byte's MSB), rdma_cm's
 * service IDs and address header, and what the decoder refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include <rdma/rdma_user_cm.h>

#include "cm_mad.h"

#define H 24	/* the MAD header: data offsets below add it */

static const uint8_t gid_a[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				   198, 51, 100, 1 };
static const uint8_t gid_b[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				   198, 51, 100, 2 };

static void test_header(void **state)
{
	struct cm_mad m = { .attr_id = CM_ATTR_RTU,
			    .tid = 0x0102030405060708ull };
	static const uint8_t want[H] = {
		0x01, 0x07, 0x02, 0x03,	/* base 1, class CM, version 2, Send */
		0x00, 0x00, 0x00, 0x00,	/* status, class specific */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* TID */
		0x00, 0x14, 0x00, 0x00,	/* attribute RTU, reserved */
		0x00, 0x00, 0x00, 0x00,	/* attribute modifier */
	};
	uint8_t b[CM_MAD_LEN];

	(void)state;
	assert_true(cm_mad_encode(&m, b));
	assert_memory_equal(b, want, H);
}

static void test_req_bytes(void **state)
{
	struct cm_mad m = {
		.attr_id = CM_ATTR_REQ, .local_comm_id = 0x11223344,
		.service_id = 0x0000000001064e23ull,
		.ca_guid = 0x0102030405060708ull, .qpn = 0xabcdef,
		.responder_resources = 0x10, .initiator_depth = 0x20,
		.remote_cm_timeout = 20, .flow_control = 1, .psn = 0x123456,
		.local_cm_timeout = 20, .retry_count = 7, .pkey = 0xffff,
		.mtu = 3, .rnr_retry_count = 6, .max_cm_retries = 15,
		.srq = 1, .traffic_class = 0x20, .hop_limit = 64,
		.local_ack_timeout = 19,
	}, d;
	static const uint8_t want[] = {
		0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0,	/* comm ID, reserved */
		0, 0, 0, 0, 0x01, 0x06, 0x4e, 0x23,	/* service ID */
		1, 2, 3, 4, 5, 6, 7, 8,			/* CA GUID */
		0, 0, 0, 0, 0, 0, 0, 0,			/* reserved, Q_Key */
		0xab, 0xcd, 0xef, 0x10,	/* QPN, responder resources */
		0, 0, 0, 0x20,		/* EECN, initiator depth */
		0, 0, 0, 0xa1,		/* timeout 20, RC, flow control */
		0x12, 0x34, 0x56, 0xa7,	/* PSN, timeout 20, retry 7 */
		0xff, 0xff, 0x36, 0xf8,	/* P_Key, MTU 3 + RNR 6, 15 + SRQ */
		0, 0, 0, 0,		/* LIDs */
	};
	uint8_t b[CM_MAD_LEN];

	(void)state;
	memcpy(m.local_gid, gid_b, 16);
	memcpy(m.remote_gid, gid_a, 16);
	m.pdata[0] = 0xaa;
	m.pdata[91] = 0xbb;
	assert_true(cm_mad_encode(&m, b));
	assert_memory_equal(b + H, want, sizeof(want));
	assert_memory_equal(b + H + 56, gid_b, 16);
	assert_memory_equal(b + H + 72, gid_a, 16);
	assert_int_equal(b[H + 92], 0x20);	/* traffic class */
	assert_int_equal(b[H + 93], 64);	/* hop limit */
	assert_int_equal(b[H + 95], 19 << 3);	/* local ACK timeout */
	assert_int_equal(b[H + 140], 0xaa);	/* private data, 92 bytes */
	assert_int_equal(b[H + 231], 0xbb);

	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.local_comm_id, m.local_comm_id);
	assert_true(d.service_id == m.service_id);
	assert_true(d.ca_guid == m.ca_guid);
	assert_int_equal(d.qpn, 0xabcdef);
	assert_int_equal(d.psn, 0x123456);
	assert_int_equal(d.responder_resources, 0x10);
	assert_int_equal(d.initiator_depth, 0x20);
	assert_int_equal(d.remote_cm_timeout, 20);
	assert_int_equal(d.local_cm_timeout, 20);
	assert_int_equal(d.transport, 0);
	assert_int_equal(d.flow_control, 1);
	assert_int_equal(d.retry_count, 7);
	assert_int_equal(d.rnr_retry_count, 6);
	assert_int_equal(d.mtu, 3);
	assert_int_equal(d.max_cm_retries, 15);
	assert_int_equal(d.srq, 1);
	assert_int_equal(d.pkey, 0xffff);
	assert_int_equal(d.hop_limit, 64);
	assert_int_equal(d.local_ack_timeout, 19);
	assert_memory_equal(d.local_gid, gid_b, 16);
	assert_memory_equal(d.remote_gid, gid_a, 16);
	assert_int_equal(d.pdata[91], 0xbb);
	assert_int_equal(cm_mad_pdata_len(CM_ATTR_REQ), 92);
}

static void test_rep_bytes(void **state)
{
	struct cm_mad m = {
		.attr_id = CM_ATTR_REP, .local_comm_id = 0x01020304,
		.remote_comm_id = 0x05060708, .qpn = 0x000101,
		.psn = 0xfedcba, .responder_resources = 4,
		.initiator_depth = 3, .target_ack_delay = 15,
		.flow_control = 1, .rnr_retry_count = 7, .srq = 1,
		.ca_guid = 0x0a0b0c0d0e0f1011ull,
	}, d;
	static const uint8_t want[] = {
		1, 2, 3, 4, 5, 6, 7, 8,		/* comm IDs */
		0, 0, 0, 0,			/* Q_Key */
		0x00, 0x01, 0x01, 0,		/* QPN */
		0, 0, 0, 0,			/* EECN */
		0xfe, 0xdc, 0xba, 0,		/* PSN */
		4, 3, 0x79, 0xf0,	/* res, depth, delay 15 + flow, RNR + SRQ */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
	};
	uint8_t b[CM_MAD_LEN];

	(void)state;
	m.pdata[195] = 0x5a;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H - 8], 0x00);
	assert_int_equal(b[17], 0x13);
	assert_memory_equal(b + H, want, sizeof(want));
	assert_int_equal(b[H + 36 + 195], 0x5a);	/* 196 bytes at 36 */
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.remote_comm_id, 0x05060708);
	assert_int_equal(d.qpn, 0x101);
	assert_int_equal(d.psn, 0xfedcba);
	assert_int_equal(d.target_ack_delay, 15);
	assert_int_equal(d.flow_control, 1);
	assert_int_equal(d.rnr_retry_count, 7);
	assert_int_equal(d.srq, 1);
	assert_int_equal(d.pdata[195], 0x5a);
}

static void test_short_messages(void **state)
{
	struct cm_mad m = { .local_comm_id = 0xa1a2a3a4,
			    .remote_comm_id = 0xb1b2b3b4 }, d;
	uint8_t b[CM_MAD_LEN];

	(void)state;
	/* MRA of a REP, service timeout 24 */
	m.attr_id = CM_ATTR_MRA;
	m.msg_of = CM_MSG_OF_REP;
	m.service_timeout = 24;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H + 4], 0xb1);
	assert_int_equal(b[H + 8], 0x40);
	assert_int_equal(b[H + 9], 24 << 3);
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.msg_of, CM_MSG_OF_REP);
	assert_int_equal(d.service_timeout, 24);

	/* REJ of a REQ, reason 8 (invalid service ID), 148 bytes at 84 */
	memset(&m.pdata, 0, sizeof(m.pdata));
	m.attr_id = CM_ATTR_REJ;
	m.msg_of = CM_MSG_OF_REQ;
	m.reason = 8;
	m.pdata[147] = 0x77;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H + 8], 0x00);
	assert_int_equal(b[H + 10], 0x00);
	assert_int_equal(b[H + 11], 0x08);
	assert_int_equal(b[H + 84 + 147], 0x77);
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.reason, 8);
	assert_int_equal(d.remote_comm_id, 0xb1b2b3b4);

	/* DREQ: the remote QPN in the top 24 bits at 8 */
	memset(&m.pdata, 0, sizeof(m.pdata));
	m.attr_id = CM_ATTR_DREQ;
	m.qpn = 0x123456;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H + 8], 0x12);
	assert_int_equal(b[H + 10], 0x56);
	assert_int_equal(b[H + 11], 0x00);
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.qpn, 0x123456);
	assert_int_equal(cm_mad_pdata_len(CM_ATTR_DREQ), 220);
	assert_int_equal(cm_mad_pdata_len(CM_ATTR_DREP), 224);
	assert_int_equal(cm_mad_pdata_len(CM_ATTR_RTU), 224);
}

static void test_sidr(void **state)
{
	struct cm_mad m = { .attr_id = CM_ATTR_SIDR_REQ,
			    .local_comm_id = 0x0badcafe, .pkey = 0xffff,
			    .service_id = 0x0000000001111f90ull }, d;
	uint8_t b[CM_MAD_LEN];

	(void)state;
	m.pdata[0] = 0x00;
	m.pdata[215] = 0x33;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H + 0], 0x0b);
	assert_int_equal(b[H + 4], 0xff);
	assert_int_equal(b[H + 5], 0xff);
	assert_int_equal(b[H + 12], 0x01);
	assert_int_equal(b[H + 13], 0x11);
	assert_int_equal(b[H + 14], 0x1f);
	assert_int_equal(b[H + 16 + 215], 0x33);	/* 216 bytes at 16 */
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.local_comm_id, 0x0badcafe);
	assert_true(d.service_id == m.service_id);

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_SIDR_REP;
	m.local_comm_id = 0x0badcafe;
	m.status = 2;
	m.qpn = 0x000102;
	m.service_id = 0x0000000001111f90ull;
	m.qkey = 0x01234567;
	m.pdata[135] = 0x44;
	assert_true(cm_mad_encode(&m, b));
	assert_int_equal(b[H + 4], 2);
	assert_int_equal(b[H + 8], 0x00);
	assert_int_equal(b[H + 10], 0x02);
	assert_int_equal(b[H + 19], 0x90);	/* service ID at 12 */
	assert_int_equal(b[H + 20], 0x01);	/* Q_Key at 20 */
	assert_int_equal(b[H + 23], 0x67);
	assert_int_equal(b[H + 96 + 135], 0x44);	/* 136 bytes at 96 */
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_int_equal(d.status, 2);
	assert_int_equal(d.qpn, 0x102);
	assert_int_equal(d.qkey, 0x01234567);
}

static void test_refused(void **state)
{
	struct cm_mad m = { .attr_id = CM_ATTR_DREP }, d;
	uint8_t b[CM_MAD_LEN], c[CM_MAD_LEN];

	(void)state;
	assert_true(cm_mad_encode(&m, b));
	assert_true(cm_mad_decode(&d, b, sizeof(b)));
	assert_false(cm_mad_decode(&d, b, sizeof(b) - 1));	/* short */
	memcpy(c, b, sizeof(b));
	c[0] = 2;						/* base version */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	memcpy(c, b, sizeof(b));
	c[1] = 0x03;						/* SA class */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	memcpy(c, b, sizeof(b));
	c[2] = 1;						/* class version */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	memcpy(c, b, sizeof(b));
	c[3] = 0x01;						/* Get */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	memcpy(c, b, sizeof(b));
	c[17] = 0x19;						/* LAP */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	c[17] = 0x01;						/* ClassPortInfo */
	assert_false(cm_mad_decode(&d, c, sizeof(c)));
	m.attr_id = 0x001a;					/* APR */
	assert_false(cm_mad_encode(&m, b));
	assert_string_equal(cm_mad_attr_name(CM_ATTR_SIDR_REP), "SIDR_REP");
	assert_string_equal(cm_mad_attr_name(0x0019), "?");
}

static void test_service_id(void **state)
{
	uint16_t ps, port;

	(void)state;
	assert_true(cm_mad_service_id(RDMA_PS_TCP, 7174) ==
		    0x0000000001061c06ull);
	assert_true(cm_mad_service_ps(0x0000000001111f90ull, &ps, &port));
	assert_int_equal(ps, RDMA_PS_UDP);
	assert_int_equal(port, 0x1f90);
	assert_true(cm_mad_service_ps(0x00000000013f0001ull, &ps, &port));
	assert_int_equal(ps, RDMA_PS_IB);
	/* not an IP-based service ID of rdma_cm */
	assert_false(cm_mad_service_ps(0x0000000001070001ull, &ps, &port));
	assert_false(cm_mad_service_ps(0x1000000001060001ull, &ps, &port));
}

static void test_cma_hdr(void **state)
{
	struct sockaddr_in src = { .sin_family = AF_INET,
				   .sin_port = htons(0x8a01) };
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(7174) };
	static const uint8_t want[CM_MAD_CMA_HDR_LEN] = {
		0x00, 0x40, 0x8a, 0x01,	/* version 0, IPv4, source port */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 51, 100, 2,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 51, 100, 1,
	};
	struct sockaddr_storage s, d;
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	uint8_t b[CM_MAD_CMA_HDR_LEN];

	(void)state;
	inet_pton(AF_INET, "198.51.100.2", &src.sin_addr);
	inet_pton(AF_INET, "198.51.100.1", &dst.sin_addr);
	assert_true(cm_mad_put_cma_hdr(b, (struct sockaddr *)&src,
				       (struct sockaddr *)&dst));
	assert_memory_equal(b, want, sizeof(want));
	assert_true(cm_mad_get_cma_hdr(b, 7174, &s, &d));
	assert_int_equal(s.ss_family, AF_INET);
	assert_memory_equal(&((struct sockaddr_in *)&s)->sin_addr,
			    &src.sin_addr, 4);
	assert_int_equal(((struct sockaddr_in *)&s)->sin_port, src.sin_port);
	assert_memory_equal(&((struct sockaddr_in *)&d)->sin_addr,
			    &dst.sin_addr, 4);
	assert_int_equal(((struct sockaddr_in *)&d)->sin_port, dst.sin_port);
	/* mixed families, an unknown version or IP version */
	assert_false(cm_mad_put_cma_hdr(b, (struct sockaddr *)&src,
					(struct sockaddr *)&v6));
	b[0] = 1;
	assert_false(cm_mad_get_cma_hdr(b, 1, &s, &d));
	b[0] = 0;
	b[1] = 0x50;
	assert_false(cm_mad_get_cma_hdr(b, 1, &s, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_req_bytes),
		cmocka_unit_test(test_rep_bytes),
		cmocka_unit_test(test_short_messages),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_service_id),
		cmocka_unit_test(test_cma_hdr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
