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
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "cm.h"
#include "cm_gsi_req.h"
#include "device.h"
#include "options.h"

static atomic_uint mads_sent;
/* the attribute of the last MAD sent (written on the GSI thread) */
static atomic_ushort last_attr;

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
	struct cm_mad d;

	(void)index;
	(void)daddr;
	atomic_store(&last_attr, cm_mad_decode(&d, mad, len) ? d.attr_id : 0);
	atomic_fetch_add(&mads_sent, 1);
	return true;
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

/*
 * Whether the GSI thread sees the message in the socket before the kick
 * takes it is a race (the thread wakes on another core): the connect is
 * made CONNECTS times, and one lost wake-up fails it. Each connection
 * then closes, its REQ no longer resent.
 */
#define CONNECTS	16

static void test_kicked_req_is_resent(void **state)
{
	unsigned int k, before;
	struct cm_msg m;
	int fd;

	(void)state;
	/* one adapter at 198.51.100.1; its device is not started (no
	 * adapter while the GSI starts: the fabric is not opened) */
	sim_global.wire = SIM_WIRE_ROCE;
	cm_gsi_resend_ns = 20ull * 1000000ull;
	assert_int_equal(cm_gsi_start(), 0);
	sim_global.num_adapters = 1;
	sim_devs[0].gid_count = 1;
	gsi_mapped_gid(sim_devs[0].gid[0].raw, gsi_test_ip4("198.51.100.1"));

	for (k = 0; k < CONNECTS; k++) {
		fd = cm_gsi_connect();
		assert_true(fd >= 0);
		/* the thread has taken the connection's wake-up and sleeps
		 * on its socket, with no resend due */
		sleep_ms(50);
		gsi_test_req(&m, NULL, 0);
		m.psn = 0x1234 + k;
		before = atomic_load(&mads_sent);
		/* what cm_send_msg() does on the agent's thread */
		assert_int_equal(send(fd, &m, sizeof(m), MSG_DONTWAIT),
				 sizeof(m));
		cm_gsi_kick();
		assert_true(atomic_load(&mads_sent) >= before + 1);
		assert_int_equal(atomic_load(&last_attr), CM_ATTR_REQ);
		/* no answer: the GSI thread sends it again on its timer */
		assert_true(sent_wait(before + 2) >= before + 2);
		assert_int_equal(atomic_load(&last_attr), CM_ATTR_REQ);
		close(fd);
		/* the thread sees the agent's end close: no more resends */
		sleep_ms(10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kicked_req_is_resent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
