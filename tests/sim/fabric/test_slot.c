// SPDX-License-Identifier: BSD-2-Clause
/*
 * sim/fabric/slot.c: processes of a host that share an address take a
 * slot each, at its own TCP port, and a QPN names its slot.
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

#include "link.h"

static void mapped(uint8_t gid[16], const char *ipv4)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, ipv4, gid + 12), 1);
}

/* A port of 127.0.0.1 that is free now, and the one 2 above it. */
static uint16_t free_port_pair(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port) < 65000 ? ntohs(sa.sin_port) : 40000;
}

static int port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	return ntohs(sa.sin_port);
}

/* Each listener of an address takes the next free port, 2 apart (the CM
 * agent's is between); with every slot taken, none. */
static void test_listeners_take_slots(void **state)
{
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint16_t port = free_port_pair();
	unsigned int slot = 99;
	int a, b, c;

	a = fab_tcp_listen_slot(lo, port, 2, &slot);
	assert_true(a >= 0);
	assert_int_equal(slot, 0);
	assert_int_equal(port_of(a), port);
	b = fab_tcp_listen_slot(lo, port, 2, &slot);
	assert_true(b >= 0);
	assert_int_equal(slot, 1);
	assert_int_equal(port_of(b), port + 2);
	c = fab_tcp_listen_slot(lo, port, 2, &slot);
	assert_int_equal(c, -1);
	close(a);
	c = fab_tcp_listen_slot(lo, port, 2, &slot);
	assert_true(c >= 0);
	assert_int_equal(slot, 0);
	close(b);
	close(c);
}

/* A QPN names the slot of an address reached over TCP, nothing else. */
static void test_qpn_names_slot(void **state)
{
	uint8_t gid[16];

	mapped(gid, "198.51.100.7");
	assert_int_equal(fab_gid_slot(gid, 0x105), 0);
	assert_int_equal(fab_gid_slot(gid, (3u << FAB_SLOT_SHIFT) | 0x105), 3);
	mapped(gid, "127.1.2.3");
	assert_int_equal(fab_gid_slot(gid, (3u << FAB_SLOT_SHIFT) | 0x105), 0);
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	assert_int_equal(fab_gid_slot(gid, (3u << FAB_SLOT_SHIFT) | 0x105), 0);
}

/* An adapter kept on this host numbers its QPs as before; one at an
 * address for other hosts, in its slot's range (here slot 0: the
 * address is none of this host's, nothing listens). */
static void test_qpn_range(void **state)
{
	uint32_t first = 0x100, last = 0xffffff, a;

	assert_int_equal(inet_pton(AF_INET, "127.0.0.9", &a), 1);
	fabric_qpn_range(0, a, &first, &last);
	assert_int_equal(first, 0x100);
	assert_int_equal(last, 0xffffff);
	assert_int_equal(inet_pton(AF_INET, "198.51.100.7", &a), 1);
	fabric_qpn_range(0, a, &first, &last);
	assert_int_equal(first, 0x100);
	assert_int_equal(last, FAB_SLOT_QPN_MASK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listeners_take_slots),
		cmocka_unit_test(test_qpn_names_slot),
		cmocka_unit_test(test_qpn_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
