// SPDX-License-Identifier: BSD-2-Clause
/*
 * The rdma_cm file (ucma_cmd.c) with addresses the process cannot read or
 * write, as rdma_ucm answers them: a write() whose header or command is
 * unmapped, a command that runs into an unmapped page, responses at
 * unmapped or read-only addresses (CREATE_ID, QUERY_ROUTE, INIT_QP_ATTR,
 * GET_EVENT), an option value nobody can read, all EFAULT and none a
 * signal; a failed response leaves nothing behind (no id, the event still
 * queued), and the kernel's order of ENOSPC before EFAULT holds.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cm_adapters.h"

#define IP_A	"127.9.1.1"
#define PAGE	4096u

/* A read-write page, then a PROT_NONE one; and a read-only page. */
static uint8_t *rw_page, *ro_page;
static struct ucma_file *file;
static int file_fd;

static int setup(void **state)
{
	static const char *const ip[] = { IP_A };
	uint8_t *m;

	(void)state;
	if (cm_adapters_open("/tmp/test_ucma_uaccess.XXXXXX", ip, 1))
		return -1;
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + PAGE, PAGE, PROT_NONE) ||
	    mprotect(m + 2 * PAGE, PAGE, PROT_READ))
		return -1;
	rw_page = m;
	ro_page = m + 2 * PAGE;
	file_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	file = ucma_open(file_fd);
	return file ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ucma_close(file);
	close(file_fd);
	munmap(rw_page, 3 * PAGE);
	return cm_adapters_close();
}

/* The address of the PROT_NONE page, and of one never mapped. */
#define NONE_ADDR	((uint64_t)(uintptr_t)(rw_page + PAGE))
#define UNMAPPED_ADDR	0x1000ull

/* A command laid out so that its last `tail` bytes fall off the end of
 * the read-write page; the header and the rest are readable. */
static ssize_t cmd_at_edge(uint32_t command, const void *in, size_t in_len,
			   size_t out_len, size_t tail)
{
	struct rdma_ucm_cmd_hdr hdr = { .cmd = command,
					.in = (uint16_t)in_len,
					.out = (uint16_t)out_len };
	uint8_t *p = rw_page + PAGE - (sizeof(hdr) + in_len - tail);

	memcpy(p, &hdr, sizeof(hdr));
	memcpy(p + sizeof(hdr), in, in_len - tail);
	return ucma_write(file, p, sizeof(hdr) + in_len);
}

static ssize_t cmd(uint32_t command, const void *in, size_t in_len,
		   size_t out_len)
{
	return cmd_at_edge(command, in, in_len, out_len, 0);
}

static uint32_t create_id(void)
{
	struct rdma_ucm_create_id_resp resp;
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_UDP,
					.response = (uintptr_t)&resp };

	assert_true(cmd(RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			sizeof(resp)) > 0);
	return resp.id;
}

static void destroy_id(uint32_t id)
{
	struct rdma_ucm_destroy_id_resp resp;
	struct rdma_ucm_destroy_id c = { .id = id,
					 .response = (uintptr_t)&resp };

	assert_true(cmd(RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c),
			sizeof(resp)) > 0);
}

static void test_unreadable_write(void **state)
{
	struct rdma_ucm_destroy_id c = { .id = 0 };

	(void)state;
	/* The header itself. */
	assert_int_equal(ucma_write(file,
				    (void *)(uintptr_t)UNMAPPED_ADDR, 64),
			 -EFAULT);
	assert_int_equal(ucma_write(file,
				    (void *)(uintptr_t)NONE_ADDR, 64),
			 -EFAULT);
	assert_int_equal(ucma_write(file,
				    (void *)(uintptr_t)0xffff888000000000ull,
				    64), -EFAULT);
	/* The header readable, the command's last byte not. */
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_DESTROY_ID, &c,
				     sizeof(c), 8, 1), -EFAULT);
	/* The kernel reads the whole structure whatever hdr.in says. */
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_DESTROY_ID, &c,
				     sizeof(c), 8, sizeof(c)), -EFAULT);
	/* ENOSPC is checked before the command is read. */
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_DESTROY_ID, &c,
				     sizeof(c), 2, 1), -ENOSPC);
}

static void test_grown_commands(void **state)
{
	struct rdma_ucm_connect c = { .conn_param.valid = 1 };
	size_t part = offsetof(struct rdma_ucm_connect, reserved) +
		      sizeof(c.reserved);

	(void)state;
	c.id = 0xfffff0;	/* nobody's: ENOENT once the command is read */
	/* hdr.in up to .reserved is enough; the ECE after it is not read. */
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_CONNECT, &c, part, 0,
				     0), -ENOENT);
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_CONNECT, &c, part, 0,
				     1), -EFAULT);
	assert_int_equal(cmd_at_edge(RDMA_USER_CM_CMD_CONNECT, &c, part - 1,
				     0, 0), -EINVAL);
}

static unsigned int count_ids(void)
{
	const struct cm_id *id;
	unsigned int n = 0;

	pthread_mutex_lock(&cm_lock);
	for (id = cm_ids; id; id = id->next)
		n++;
	pthread_mutex_unlock(&cm_lock);
	return n;
}

/* An RC id resolved to the adapter's own address, its event read. */
static uint32_t resolved_id(void)
{
	struct rdma_ucm_create_id_resp cresp;
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP,
					.response = (uintptr_t)&cresp };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_ucm_resolve_ip r = { .timeout_ms = 2000 };
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_get_event g = { .response = (uintptr_t)&ev };

	assert_true(cmd(RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			sizeof(cresp)) > 0);
	inet_pton(AF_INET, IP_A, &sin.sin_addr);
	r.id = cresp.id;
	memcpy(&r.dst_addr, &sin, sizeof(sin));
	assert_true(cmd(RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), 0) > 0);
	assert_true(cmd(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			sizeof(ev)) > 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	return cresp.id;
}

static void test_bad_responses(void **state)
{
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_UDP };
	struct rdma_ucm_query q = { .option = RDMA_USER_CM_QUERY_ADDR };
	struct rdma_ucm_init_qp_attr a = { .qp_state = IBV_QPS_INIT };
	struct ib_uverbs_qp_attr attr;
	uint64_t bad[] = { UNMAPPED_ADDR, NONE_ADDR,
			   (uint64_t)(uintptr_t)ro_page };
	unsigned int i, ids = count_ids();
	uint32_t id;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.response = bad[i];
		assert_int_equal(cmd(RDMA_USER_CM_CMD_CREATE_ID, &c,
				     sizeof(c), 4), -EFAULT);
	}
	/* The ids whose number could not be told were destroyed. */
	assert_int_equal(count_ids(), ids);
	id = resolved_id();
	q.id = a.id = id;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q.response = a.response = bad[i];
		assert_int_equal(cmd(RDMA_USER_CM_CMD_QUERY, &q, sizeof(q),
				     sizeof(struct rdma_ucm_query_addr_resp)),
				 -EFAULT);
		assert_int_equal(cmd(RDMA_USER_CM_CMD_QUERY_ROUTE, &q,
				     sizeof(q),
				     sizeof(struct rdma_ucm_query_route_resp)),
				 -EFAULT);
		assert_int_equal(cmd(RDMA_USER_CM_CMD_INIT_QP_ATTR, &a,
				     sizeof(a), sizeof(attr)), -EFAULT);
	}
	/* The same commands with a good response work. */
	a.response = (uintptr_t)&attr;
	assert_true(cmd(RDMA_USER_CM_CMD_INIT_QP_ATTR, &a, sizeof(a),
			sizeof(attr)) > 0);
	assert_int_equal(attr.qp_state, IBV_QPS_INIT);
	destroy_id(id);
}

static void test_event_stays_queued(void **state)
{
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_get_event g = { .response = UNMAPPED_ADDR };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_ucm_resolve_ip r = { .timeout_ms = 2000 };
	uint32_t id = create_id();

	(void)state;
	inet_pton(AF_INET, IP_A, &sin.sin_addr);
	r.id = id;
	memcpy(&r.dst_addr, &sin, sizeof(sin));
	assert_true(cmd(RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), 0) > 0);
	/* ADDR_RESOLVED is queued; a response nobody can write keeps it. */
	assert_int_equal(cmd(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			     sizeof(ev)), -EFAULT);
	g.response = (uintptr_t)ro_page;
	assert_int_equal(cmd(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			     sizeof(ev)), -EFAULT);
	g.response = (uintptr_t)&ev;
	assert_true(cmd(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			sizeof(ev)) > 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(ev.id, id);
	assert_int_equal(cmd(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			     sizeof(ev)), -EAGAIN);
	destroy_id(id);
}

static void test_option_values(void **state)
{
	struct rdma_ucm_set_option o = { .level = RDMA_OPTION_ID,
					 .optname = RDMA_OPTION_ID_TOS,
					 .optlen = 1 };
	uint8_t tos = 32;
	uint32_t id = create_id();

	(void)state;
	o.id = id;
	o.optval = UNMAPPED_ADDR;
	assert_int_equal(cmd(RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0),
			 -EFAULT);
	/* The value is read before the level and the name are looked at. */
	o.level = RDMA_OPTION_IB;
	o.optname = RDMA_OPTION_IB_PATH;
	o.optlen = sizeof(struct ib_path_rec_data);
	o.optval = NONE_ADDR;
	assert_int_equal(cmd(RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0),
			 -EFAULT);
	o.level = 99;
	assert_int_equal(cmd(RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0),
			 -EFAULT);
	/* A value longer than the kernel allocates: EINVAL. */
	o.optlen = 64u << 20;
	assert_int_equal(cmd(RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0),
			 -EINVAL);
	/* A readable one is taken. */
	o.level = RDMA_OPTION_ID;
	o.optname = RDMA_OPTION_ID_TOS;
	o.optlen = 1;
	o.optval = (uintptr_t)&tos;
	assert_true(cmd(RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0) > 0);
	destroy_id(id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unreadable_write),
		cmocka_unit_test(test_grown_commands),
		cmocka_unit_test(test_bad_responses),
		cmocka_unit_test(test_event_stays_queued),
		cmocka_unit_test(test_option_values),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
