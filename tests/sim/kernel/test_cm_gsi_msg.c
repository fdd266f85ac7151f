// SPDX-License-Identifier: BSD-2-Clause
/*
 * sim/kernel/cm_gsi_msg.c: the CM agent's messages as the IB CM MADs
 * Linux's ib_cm and rdma_cm send, and back: a REQ's service ID, address
 * header and path, the IDs each answer carries, the REQs rdma_cm would
 * refuse, and what a process's exit owes each connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "cm_gsi_req.h"

static void test_req_out(void **state)
{
	struct gsi_conn c = { .local_id = 0x1234, .tid = 0x99 };
	struct cm_msg m;
	struct cm_mad d;
	static const uint8_t pdata[] = { 'h', 'i' };

	(void)state;
	gsi_test_req(&m, pdata, sizeof(pdata));
	m.psn = 0xabcdef;
	m.responder_resources = 2;
	m.initiator_depth = 3;
	m.rnr_retry_count = 6;
	assert_true(gsi_msg_to_mad(&c, &m, &d));
	assert_int_equal(d.attr_id, CM_ATTR_REQ);
	assert_int_equal(d.local_comm_id, 0x1234);
	assert_true(d.tid == 0x99);
	assert_true(d.service_id == 0x0000000001061c06ull);
	assert_true(c.sid == d.service_id);
	assert_int_equal(d.qpn, 0x101);
	assert_int_equal(d.psn, 0xabcdef);
	assert_int_equal(d.transport, 0);
	assert_int_equal(d.pkey, 0xffff);
	assert_int_equal(d.mtu, IBV_MTU_1024);
	assert_int_equal(d.hop_limit, 64);
	assert_int_equal(d.max_cm_retries, 15);
	assert_memory_equal(d.local_gid, m.src_gid, 16);
	assert_memory_equal(d.remote_gid, m.dst_gid, 16);
	/* rdma_cm's header, then the application's bytes */
	assert_int_equal(d.pdata[1], 0x40);
	assert_int_equal(d.pdata[2], 40000 >> 8);
	assert_int_equal(d.pdata[19], 1);
	assert_int_equal(d.pdata[35], 2);
	assert_memory_equal(d.pdata + 36, pdata, sizeof(pdata));
}

static void test_req_in(void **state)
{
	struct gsi_conn c = { .local_id = 0x1234 };
	struct cm_msg out, in;
	struct cm_mad d;

	(void)state;
	cm_msg_init(&out, CM_MSG_REQ, NULL, 0);
	out.ps = RDMA_PS_TCP;
	out.qpn = 0x11;
	out.psn = 0x222222;
	out.initiator_depth = 4;
	out.mtu = IBV_MTU_1024;
	gsi_test_addr(&out.src, "198.51.100.2", 50000);
	gsi_test_addr(&out.dst, "198.51.100.1", 18515);
	gsi_mapped_gid(out.dst_gid, gsi_test_ip4("198.51.100.1"));
	assert_true(gsi_msg_to_mad(&c, &out, &d));

	assert_true(gsi_req_to_msg(&d, gsi_test_ip4("198.51.100.2"),
				   gsi_test_ip4("198.51.100.1"), &in));
	assert_int_equal(in.type, CM_MSG_REQ);
	assert_int_equal(in.ps, RDMA_PS_TCP);
	assert_int_equal(in.qpn, 0x11);
	assert_int_equal(in.psn, 0x222222);
	assert_int_equal(in.initiator_depth, 4);
	assert_int_equal(in.mtu, IBV_MTU_1024);
	assert_int_equal(in.private_data_len, 56);
	assert_int_equal(((struct sockaddr_in *)&in.dst)->sin_port,
			 htons(18515));
	assert_int_equal(((struct sockaddr_in *)&in.src)->sin_port,
			 htons(50000));
	assert_int_equal(in.src_gid[15], 2);
	assert_int_equal(in.dst_gid[15], 1);

	/* what rdma_cm refuses: UD's port space in a REQ, UC, a service ID
	 * of no IP port space, an address header of another version */
	d.service_id = cm_mad_service_id(RDMA_PS_UDP, 18515);
	assert_false(gsi_req_to_msg(&d, 1, 2, &in));
	d.service_id = cm_mad_service_id(RDMA_PS_TCP, 18515);
	d.transport = 1;
	assert_false(gsi_req_to_msg(&d, 1, 2, &in));
	d.transport = 0;
	d.service_id = 0x1234;
	assert_false(gsi_req_to_msg(&d, 1, 2, &in));
	d.service_id = cm_mad_service_id(RDMA_PS_TCP, 18515);
	d.pdata[0] = 1;
	assert_false(gsi_req_to_msg(&d, 1, 2, &in));
	d.pdata[0] = 0;
	assert_true(gsi_req_to_msg(&d, 1, 2, &in));
	/* and a SIDR REQ of the TCP port space */
	d.attr_id = CM_ATTR_SIDR_REQ;
	assert_false(gsi_req_to_msg(&d, 1, 2, &in));
}

static void test_answers(void **state)
{
	struct gsi_conn c = { .local_id = 0xaaaa, .remote_id = 0xbbbb,
			      .remote_qpn = 0x77, .active = true };
	struct cm_mad d, r;
	struct cm_msg m;

	(void)state;
	/* REP in: the peer's IDs and QPN are kept */
	memset(&r, 0, sizeof(r));
	r.attr_id = CM_ATTR_REP;
	r.local_comm_id = 0xcccc;
	r.remote_comm_id = 0xaaaa;
	r.qpn = 0x55;
	r.psn = 0x123;
	assert_true(gsi_mad_to_msg(&c, &r, &m));
	assert_int_equal(m.type, CM_MSG_REP);
	assert_int_equal(m.qpn, 0x55);
	assert_int_equal(m.psn, 0x123);
	assert_int_equal(c.remote_id, 0xcccc);
	assert_int_equal(c.remote_qpn, 0x55);
	assert_true(c.rep_seen);

	/* the active side's REJ after a REP rejects the REP */
	cm_msg_init(&m, CM_MSG_REJ, NULL, 0);
	m.reason = 28;
	assert_true(gsi_msg_to_mad(&c, &m, &d));
	assert_int_equal(d.msg_of, CM_MSG_OF_REP);
	assert_int_equal(d.reason, 28);
	assert_int_equal(d.remote_comm_id, 0xcccc);

	/* DREQ names the peer's QP */
	cm_msg_init(&m, CM_MSG_DREQ, NULL, 0);
	assert_true(gsi_msg_to_mad(&c, &m, &d));
	assert_int_equal(d.attr_id, CM_ATTR_DREQ);
	assert_int_equal(d.qpn, 0x55);

	/* a REJ in: its reason is the event's status */
	memset(&r, 0, sizeof(r));
	r.attr_id = CM_ATTR_REJ;
	r.reason = 8;
	assert_true(gsi_mad_to_msg(&c, &r, &m));
	assert_int_equal(m.type, CM_MSG_REJ);
	assert_int_equal(m.reason, 8);

	/* the passive SIDR REP answers with the request's ID */
	c = (struct gsi_conn){ .local_id = 1, .remote_id = 0xfeed,
			       .sid = 0x0000000001111f90ull, .ud = true };
	cm_msg_init(&m, CM_MSG_SIDR_REP, NULL, 0);
	m.qpn = 0x102;
	m.qkey = 0x01234567;
	assert_true(gsi_msg_to_mad(&c, &m, &d));
	assert_int_equal(d.local_comm_id, 0xfeed);
	assert_true(d.service_id == c.sid);
	assert_int_equal(d.qkey, 0x01234567);
	/* LAP and unknown attributes make no message for the agent */
	r.attr_id = 0x0019;
	assert_false(gsi_mad_to_msg(&c, &r, &m));
}

static void test_exit(void **state)
{
	struct gsi_conn c = { .peer = 1, .active = true };
	struct cm_msg m;

	(void)state;
	assert_true(gsi_exit_msg(&c, &m));	/* REQ out, no answer */
	assert_int_equal(m.type, CM_MSG_REJ);
	assert_int_equal(m.reason, CM_REJ_TIMEOUT);
	c.rep_seen = true;
	assert_true(gsi_exit_msg(&c, &m));
	assert_int_equal(m.reason, CM_REJ_CONSUMER_DEFINED);
	c.established = true;
	assert_true(gsi_exit_msg(&c, &m));
	assert_int_equal(m.type, CM_MSG_DREQ);
	c.dreq_sent = true;
	assert_false(gsi_exit_msg(&c, &m));
	c.dreq_rcvd = true;
	assert_true(gsi_exit_msg(&c, &m));
	assert_int_equal(m.type, CM_MSG_DREP);
	c.finished = true;
	assert_false(gsi_exit_msg(&c, &m));
	c = (struct gsi_conn){ .peer = 1, .ud = true };
	assert_false(gsi_exit_msg(&c, &m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_out),
		cmocka_unit_test(test_req_in),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
