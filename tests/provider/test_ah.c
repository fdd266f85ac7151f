// SPDX-License-Identifier: BSD-2-Clause
/* Address handles: GID classification, MAC from GID, the address vector. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "pvrdma.h"

static union ibv_gid gid_of(const uint8_t raw[16])
{
	union ibv_gid g;

	memcpy(g.raw, raw, 16);
	return g;
}

/* fe80::0250:56ff:fe12:3456 <- MAC 00:50:56:12:34:56 */
static const uint8_t ll_raw[16] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0,
	0x02, 0x50, 0x56, 0xff, 0xfe, 0x12, 0x34, 0x56,
};

static void test_mac_from_link_local(void **state)
{
	union ibv_gid g = gid_of(ll_raw);
	uint8_t mac[6];

	assert_true(pvrdma_gid_is_link_local(&g));
	assert_int_equal(pvrdma_mac_from_gid(&g, mac), 0);
	assert_memory_equal(mac, "\x00\x50\x56\x12\x34\x56", 6);

	/* locally administered MAC: the bit flips the other way */
	g.raw[8] = 0x00;
	assert_int_equal(pvrdma_mac_from_gid(&g, mac), 0);
	assert_int_equal(mac[0], 0x02);
}

static void test_mac_refused_without_eui64(void **state)
{
	union ibv_gid g = gid_of(ll_raw);
	uint8_t mac[6];

	g.raw[11] = 0x12;	/* random interface id, no ff:fe */
	assert_int_equal(pvrdma_mac_from_gid(&g, mac), EINVAL);

	g = gid_of(ll_raw);
	g.raw[0] = 0x20;	/* global unicast */
	assert_false(pvrdma_gid_is_link_local(&g));
	assert_int_equal(pvrdma_mac_from_gid(&g, mac), EINVAL);
}

static void test_v4mapped_and_multicast(void **state)
{
	static const uint8_t v4[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2
	};
	static const uint8_t mc[16] = { 0xff, 0x02, [15] = 1 };
	union ibv_gid g = gid_of(v4);

	assert_true(pvrdma_gid_is_v4mapped(&g));
	assert_false(pvrdma_gid_is_link_local(&g));
	assert_false(pvrdma_gid_is_multicast(&g));
	g.raw[10] = 0;
	assert_false(pvrdma_gid_is_v4mapped(&g));
	g = gid_of(ll_raw);
	assert_false(pvrdma_gid_is_v4mapped(&g));
	g = gid_of(mc);
	assert_true(pvrdma_gid_is_multicast(&g));
}

static void test_av_fields(void **state)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1, .src_path_bits = 3, .sl = 5,
		.grh = { .sgid_index = 2, .hop_limit = 64,
			 .traffic_class = 0xab, .flow_label = 0x12345 },
	};
	struct pvrdma_av av;

	memcpy(attr.grh.dgid.raw, ll_raw, 16);
	memset(&av, 0xee, sizeof(av));
	pvrdma_av_init(&av, 0x17, &attr);
	assert_int_equal(av.port_pd, 0x01000017);
	assert_int_equal(av.src_path_bits, 0x83);
	assert_int_equal(av.gid_index, 2);
	assert_int_equal(av.hop_limit, 64);
	assert_int_equal(av.sl_tclass_flowlabel, (0xabu << 20) | 0x12345);
	assert_int_equal(av.stat_rate, 0);
	assert_memory_equal(av.dgid, ll_raw, 16);
	assert_memory_equal(av.reserved, "\0\0\0\0\0\0", 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_from_link_local),
		cmocka_unit_test(test_mac_refused_without_eui64),
		cmocka_unit_test(test_v4mapped_and_multicast),
		cmocka_unit_test(test_av_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
