// SPDX-License-Identifier: BSD-2-Clause
/*
 * The checks of sim/fabric/tcp.c that stand between the network and an
 * adapter: which GIDs are reached over TCP, the frame header check, and
 * the HELLO name an accepted connection must give.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "tcp.h"

static void mapped(uint8_t gid[16], const char *ipv4)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, ipv4, gid + 12), 1);
}

static void test_gids_over_tcp(void **state)
{
	uint8_t gid[16];
	uint32_t a = 0;

	mapped(gid, "198.51.100.7");
	assert_true(fab_tcp_gid_addr(gid, &a));
	assert_int_equal(ntohl(a), 0xc6336407);
	/* loopback, "this network", multicast: never another host */
	mapped(gid, "127.1.2.3");
	assert_false(fab_tcp_gid_addr(gid, &a));
	mapped(gid, "0.1.2.3");
	assert_false(fab_tcp_gid_addr(gid, &a));
	mapped(gid, "224.0.0.1");
	assert_false(fab_tcp_gid_addr(gid, &a));
	/* a link-local GID says nothing of where its adapter is */
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[15] = 1;
	assert_false(fab_tcp_gid_addr(gid, &a));
}

static struct fab_hdr good(uint8_t type)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = type };

	h.src_qpn = 0x100;
	h.dst_qpn = 0x101;
	h.psn = 0xfffffe;
	return h;
}

static void test_header_check(void **state)
{
	struct fab_hdr h;

	h = good(FAB_REQ);
	h.len = 4096;
	h.read_len = 1u << 31;
	assert_null(fab_hdr_check(&h));
	h = good(FAB_ACK);
	assert_null(fab_hdr_check(&h));
	h.opcode = FAB_ACK_PARTIAL;
	assert_null(fab_hdr_check(&h));
	h.opcode = FAB_ACK_PARTIAL + 1;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_NAK);
	h.opcode = FAB_NAK_SEQ;
	assert_null(fab_hdr_check(&h));
	h = good(FAB_UD_SEND);
	h.len = 4096;
	h.dst_qpn = 0xffffffff;		/* the engine takes 24 bits */
	assert_null(fab_hdr_check(&h));
	h = good(FAB_HELLO);
	h.opcode = FAB_VERSION;
	h.len = 22;
	assert_null(fab_hdr_check(&h));

	h = good(FAB_REQ);
	h.magic ^= 1;
	assert_non_null(fab_hdr_check(&h));
	h = good(0);
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_NOTIFY + 1);
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_NOTIFY);
	assert_null(fab_hdr_check(&h));
	assert_null(fab_hdr_check_link(&h, false));
	/* same host only: from another host it could raise any CQ's event */
	assert_non_null(fab_hdr_check_link(&h, true));
	h.len = 1;			/* a NOTIFY has no payload */
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_REQ);
	h.len = (1u << 31) + 1;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_REQ);
	h.read_len = 0xffffffff;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_REQ);
	h.src_qpn = 0x1000000;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_READ_RESP);
	h.psn = 0x1000000;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_ACK);
	h.len = 1;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_NAK);
	h.opcode = 0;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_UD_SEND);
	h.len = 4097;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_HELLO);
	h.opcode = FAB_VERSION + 1;
	h.len = 22;
	assert_non_null(fab_hdr_check(&h));
	h = good(FAB_HELLO);
	h.opcode = FAB_VERSION;
	h.len = 200;
	assert_non_null(fab_hdr_check(&h));
}

/* A connection from 127.0.0.1 may name only 127.0.0.1, with a port. */
static void test_hello_names_its_address(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int l, c, a;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	a = accept(l, NULL, NULL);
	assert_true(a >= 0);

	assert_true(fab_tcp_hello_matches(a, "tcp:127.0.0.1:4791"));
	assert_false(fab_tcp_hello_matches(a, "tcp:127.0.0.2:4791"));
	assert_false(fab_tcp_hello_matches(a, "tcp:127.0.0.1:"));
	assert_false(fab_tcp_hello_matches(a, "tcp:127.0.0.1:47x1"));
	assert_false(fab_tcp_hello_matches(a, "tcp:127.0.0.1:479100"));
	assert_false(fab_tcp_hello_matches(a, "/tmp/fabric-1-0.sock"));
	close(a);
	close(c);
	close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gids_over_tcp),
		cmocka_unit_test(test_header_check),
		cmocka_unit_test(test_hello_names_its_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
