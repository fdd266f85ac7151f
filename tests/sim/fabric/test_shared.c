// SPDX-License-Identifier: BSD-2-Clause
/*
 * The same-host segment's mechanics (sim/fabric/shared.c), with an area
 * of the test's own layout: two adapters of this process, the second the
 * owner, the first mapping its segment through the link between them.
 * (The device's views in that area: tests/sim/device/test_view.c.)
 *
 *   - a peer of another area layout (size or version) is not mapped; one
 *     of the same layout is, and sees what the owner wrote in the area;
 *   - the segment names this process; the owner's lock holds off a peer
 *     that only tries it, and nests;
 *   - shared_own_made() never makes a segment.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fabric.h"
#include "shared.h"
#include "two_adapters.h"

static const struct shared_area layout = { .len = 8192, .version = 3 };

static int setup(void **unused)
{
	two_adapters_open("/tmp/pvrdma-test-shared.XXXXXX");
	return 0;
}

static int teardown(void **unused)
{
	return two_adapters_close();
}

static struct fab_link *link_to_owner(void)
{
	struct fab_link *l = fabric_resolve(port[0], adapter[1].gid[0].raw, 0);

	assert_non_null(l);
	return l;
}

/* The peer's segment within 1024 tries (a miss is tried again every
 * 256), or NULL. */
static struct shared_seg *peer(const struct shared_area *area)
{
	struct shared_seg *seg = NULL;

	for (int i = 0; i < 1024 && !seg; i++)
		seg = shared_peer(link_to_owner(), area);
	return seg;
}


static void test_area(void **unused)
{
	const struct shared_area shorter = { .len = 4096, .version = 3 };
	const struct shared_area newer = { .len = 8192, .version = 4 };
	struct shared_seg *own, *seg;

	assert_null(shared_own_made(1));
	own = shared_own(1, &layout);
	assert_non_null(own);
	assert_ptr_equal(shared_own_made(1), own);
	assert_ptr_equal(shared_own(1, &layout), own);
	assert_null(shared_own_made(0));
	memcpy(shared_area_of(own), "view", 5);

	assert_null(peer(&newer));
	assert_null(peer(&shorter));
	seg = peer(&layout);
	assert_non_null(seg);
	assert_ptr_not_equal(seg, own);		/* a mapping of its own */
	assert_int_equal(shared_pid(seg), getpid());
	assert_string_equal(shared_area_of(seg), "view");

	/* The owner's lock holds a peer off, and nests. */
	assert_true(shared_lock(own));
	assert_false(trylock_elsewhere(seg));
	assert_true(shared_lock(own));
	shared_unlock(own);
	assert_false(trylock_elsewhere(seg));
	shared_unlock(own);
	assert_true(trylock_elsewhere(seg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_area),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
