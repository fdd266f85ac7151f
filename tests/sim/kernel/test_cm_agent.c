// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CM agent's thread and fork() (cm_agent.c): opening rdma_cm starts
 * the agent, and by the time the open returns the thread runtime is done
 * setting the agent's thread up, so a fork() right after it leaves the
 * child none of the runtime's locks held (the child's own agent would
 * hang on one, and its rdma_cm events never come). The runtime is
 * tests/sim/common/slow_thread_start.h's, slow and holding a lock
 * meanwhile, as a sanitizer's allocator does.
 *
 * What the agent's poll() said of a connection socket is not taken for
 * what a later socket of the same number says: a connection that hung up
 * while the agent waited for cm_lock, closed and its number reused by the
 * next connect meanwhile, does not end the new connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cm_adapters.h"
#include "cm_msg.h"
#include "../common/slow_thread_start.h"

static int setup(void **state)
{
	static const char *const ip[] = { "127.9.1.1" };

	(void)state;
	return cm_adapters_open("/tmp/test_cm_agent.XXXXXX", ip, 1);
}

static int teardown(void **state)
{
	(void)state;
	return cm_adapters_close();
}

static void test_agent_started_before_open_returns(void **state)
{
	struct ucma_file *f;
	int fd = eventfd(0, EFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	sim_libc.pthread_create = slow_pthread_create;
	f = ucma_open(fd);		/* the process's first: the agent */
	sim_libc.pthread_create = pthread_create;
	assert_non_null(f);
	/* A program forking right after rdma_create_event_channel(). */
	assert_true(fork_sees_runtime_free());
	ucma_close(f);
	close(fd);
}

static ssize_t command(struct ucma_file *f, uint32_t cmd,
		       const void *in, size_t in_len, size_t out_len)
{
	uint8_t buf[256];
	struct rdma_ucm_cmd_hdr hdr = { .cmd = cmd, .in = (uint16_t)in_len,
					.out = (uint16_t)out_len };

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), in, in_len);
	return ucma_write(f, buf, sizeof(hdr) + in_len);
}

static struct cm_id *new_id(struct ucma_file *f, int fd)
{
	struct rdma_ucm_create_id_resp resp;
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP,
					.response = (uintptr_t)&resp };
	struct cm_id *id;

	assert_true(command(f, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			    sizeof(resp)) > 0);
	for (id = cm_ids; id && id->handle != resp.id; id = id->next)
		;
	assert_non_null(id);
	return id;
}

/* Long enough for the agent thread to get where the test waits for it;
 * shorter only makes the test miss the case, never fail. */
static void let_agent_run(void)
{
	struct timespec t = { 0, 100000000L };

	while (nanosleep(&t, &t))
		;
}

/* An id in REQ_SENT on sock, as cm_connect leaves it (cm_lock held). */
static void req_sent_on(struct cm_id *id, int sock)
{
	id->sock = sock;
	id->state = CM_REQ_SENT;
	cm_agent_wake();
}

static void test_stale_hangup_of_a_reused_fd(void **state)
{
	int fd = eventfd(0, EFD_CLOEXEC), old[2], now[2];
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_get_event g = { .response = (uintptr_t)&ev };
	struct pollfd pfd = { .events = POLLIN };
	struct cm_id *a, *b;
	struct ucma_file *f;
	struct cm_msg m;

	(void)state;
	f = ucma_open(fd);
	assert_non_null(f);
	a = new_id(f, fd);
	b = new_id(f, fd);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
				    SOCK_CLOEXEC, 0, old), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
				    SOCK_CLOEXEC, 0, now), 0);
	pthread_mutex_lock(&cm_lock);
	req_sent_on(a, old[0]);
	pthread_mutex_unlock(&cm_lock);
	let_agent_run();		/* the agent polls a's socket */

	pthread_mutex_lock(&cm_lock);
	close(old[1]);			/* a's peer hangs up ... */
	let_agent_run();		/* ... the agent wakes, waits for us */
	/* a is destroyed, b connects and gets a's socket number. */
	close(a->sock);
	a->sock = -1;
	a->state = CM_TIMEWAIT;
	assert_int_equal(dup3(now[0], old[0], O_CLOEXEC), old[0]);
	close(now[0]);
	req_sent_on(b, old[0]);
	pthread_mutex_unlock(&cm_lock);
	let_agent_run();

	/* b's peer rejects: that is what b hears, nothing before it (a
	 * b taken for hung up has its socket closed, and this send fails). */
	cm_msg_init(&m, CM_MSG_REJ, NULL, 0);
	m.reason = CM_REJ_VENDOR_OPTION;
	cm_send_msg(now[1], &m);
	pfd.fd = fd;
	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_true(command(f, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g),
			    sizeof(ev)) > 0);
	assert_int_equal(ev.id, b->handle);
	assert_int_equal(ev.event, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(ev.status, CM_REJ_VENDOR_OPTION);
	close(now[1]);
	ucma_close(f);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_started_before_open_returns),
		cmocka_unit_test(test_stale_hangup_of_a_reused_fd),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
