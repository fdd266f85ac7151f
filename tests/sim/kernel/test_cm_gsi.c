// SPDX-License-Identifier: BSD-2-Clause
/*
 * sim/kernel/cm_gsi.c's thread: a REQ the agent's thread sent itself
 * (cm_gsi_kick(), as cm_send_msg() sends a MAD at once) is sent again on
 * the GSI thread's timer when no answer comes, although that thread was
 * asleep with no timer at all, on the connection's socket the kick then
 * emptied. Left unwoken, the thread slept on: one REQ on the wire, lost
 * if the peer was not listening yet, and the connect hung.
 *
 * QP 1 is the fabric's (--wire roce, a real interface's address): here
 * its two calls are wrapped (-Wl,--wrap) to count the MADs sent.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "cm.h"
#include "cm_gsi.h"
#include "device.h"
#include "options.h"

static atomic_uint mads_sent;
static uint16_t last_attr;

bool __wrap_fabric_gsi_ready(unsigned int index);
bool __wrap_fabric_gsi_send(unsigned int index, uint32_t daddr,
			    const uint8_t *mad, size_t len);

bool __wrap_fabric_gsi_ready(unsigned int index)
{
	return index == 0;
}

bool __wrap_fabric_gsi_send(unsigned int index, uint32_t daddr,
			    const uint8_t *mad, size_t len)
{
	(void)index;
	(void)daddr;
	if (len == CM_MAD_LEN)
		last_attr = (uint16_t)(mad[16] << 8 | mad[17]);
	atomic_fetch_add(&mads_sent, 1);
	return true;
}

static uint32_t ip4(const char *ip)
{
	uint32_t a;

	inet_pton(AF_INET, ip, &a);
	return a;
}

static void addr(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	inet_pton(AF_INET, ip, &a->sin_addr);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The MADs sent once at least want have been, or after 2 s. */
static unsigned int sent_wait(unsigned int want)
{
	int i;

	for (i = 0; i < 200 && atomic_load(&mads_sent) < want; i++)
		sleep_ms(10);
	return atomic_load(&mads_sent);
}

static void test_kicked_req_is_resent(void **state)
{
	struct cm_msg m;
	int fd;

	(void)state;
	/* one adapter at 198.51.100.1; its device is not started (no
	 * adapter while the GSI starts: the fabric is not opened) */
	sim_global.wire = SIM_WIRE_ROCE;
	cm_gsi_resend_ns = 100ull * 1000000ull;
	assert_int_equal(cm_gsi_start(), 0);
	sim_global.num_adapters = 1;
	sim_devs[0].gid_count = 1;
	gsi_mapped_gid(sim_devs[0].gid[0].raw, ip4("198.51.100.1"));

	fd = cm_gsi_connect();
	assert_true(fd >= 0);
	/* the thread has taken the connection's wake-up and sleeps on its
	 * socket, with nothing to resend: no timeout */
	sleep_ms(200);

	cm_msg_init(&m, CM_MSG_REQ, NULL, 0);
	m.ps = RDMA_PS_TCP;
	m.qpn = 0x101;
	m.psn = 0x1234;
	m.retry_count = 7;
	m.rnr_retry_count = 7;
	m.mtu = IBV_MTU_1024;
	gsi_mapped_gid(m.src_gid, ip4("198.51.100.1"));
	gsi_mapped_gid(m.dst_gid, ip4("198.51.100.2"));
	addr(&m.src, "198.51.100.1", 40000);
	addr(&m.dst, "198.51.100.2", 7174);
	/* what cm_send_msg() does on the agent's thread */
	assert_int_equal(send(fd, &m, sizeof(m), MSG_DONTWAIT), sizeof(m));
	cm_gsi_kick();
	assert_int_equal(atomic_load(&mads_sent), 1);
	assert_int_equal(last_attr, CM_ATTR_REQ);

	/* no answer: the GSI thread sends it again on its timer */
	assert_true(sent_wait(3) >= 3);
	assert_int_equal(last_attr, CM_ATTR_REQ);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kicked_req_is_resent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
