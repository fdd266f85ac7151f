// SPDX-License-Identifier: BSD-2-Clause
/*
 * The rdma_cm file of the sim (ucma.c, cm.c, cm_addr.c) driven with raw
 * command buffers laid out as librdmacm lays them out: header checks and
 * errnos, address binding and resolution, the event queue and its
 * readiness, and a whole connection (REQ/REP/RTU, DREQ/DREP, time wait)
 * between two adapters of this process with the QP attributes
 * INIT_QP_ATTR derives; timeouts of unanswered messages, and the MRA
 * that lets a late accept or RTU through.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cm_adapters.h"

#define IP_A	"127.9.0.1"
#define IP_B	"127.9.0.2"

static int setup(void **state)
{
	static const char *const ip[] = { IP_A, IP_B };

	(void)state;
	return cm_adapters_open("/tmp/test_ucma.XXXXXX", ip, 2);
}

static int teardown(void **state)
{
	(void)state;
	return cm_adapters_close();
}

struct file {
	struct ucma_file *f;
	int fd;
};

static struct file open_file(bool nonblock)
{
	struct file file;

	file.fd = eventfd(0, EFD_CLOEXEC | (nonblock ? EFD_NONBLOCK : 0));
	assert_true(file.fd >= 0);
	file.f = ucma_open(file.fd);
	assert_non_null(file.f);
	return file;
}

static void close_file(struct file *file)
{
	ucma_close(file->f);
	close(file->fd);
}

/* One command: header, then the command structure; errno on failure. */
static ssize_t cmd(struct file *file, uint32_t command, const void *in,
		   size_t in_len, size_t out_len)
{
	uint8_t buf[1024];
	struct rdma_ucm_cmd_hdr hdr = { .cmd = command,
					.in = (uint16_t)in_len,
					.out = (uint16_t)out_len };
	ssize_t ret;

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), in, in_len);
	ret = ucma_write(file->f, buf, sizeof(hdr) + in_len);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static uint32_t create_id(struct file *file, uint16_t ps, uint64_t uid)
{
	struct rdma_ucm_create_id_resp resp;
	struct rdma_ucm_create_id c = { .uid = uid, .ps = ps,
					.response = (uintptr_t)&resp };

	assert_true(cmd(file, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			sizeof(resp)) > 0);
	return resp.id;
}

static int destroy_id(struct file *file, uint32_t id, uint32_t *reported)
{
	struct rdma_ucm_destroy_id_resp resp;
	struct rdma_ucm_destroy_id c = { .id = id,
					 .response = (uintptr_t)&resp };

	if (cmd(file, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c),
		sizeof(resp)) < 0)
		return -errno;
	if (reported)
		*reported = resp.events_reported;
	return 0;
}

static struct sockaddr_in sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

static int bind_ip(struct file *file, uint32_t id, const char *ip,
		   uint16_t port)
{
	struct sockaddr_in sin = sin_of(ip, port);
	struct rdma_ucm_bind c = { .id = id, .addr_size = sizeof(sin) };

	memcpy(&c.addr, &sin, sizeof(sin));
	return cmd(file, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0) < 0 ?
	       -errno : 0;
}

static int resolve(struct file *file, uint32_t id, const char *ip,
		   uint16_t port)
{
	struct sockaddr_in sin = sin_of(ip, port);
	struct rdma_ucm_resolve_ip c = { .id = id, .timeout_ms = 2000 };

	memcpy(&c.dst_addr, &sin, sizeof(sin));
	return cmd(file, RDMA_USER_CM_CMD_RESOLVE_IP, &c, sizeof(c), 0) < 0 ?
	       -errno : 0;
}

static int get_event(struct file *file, struct rdma_ucm_event_resp *ev)
{
	struct rdma_ucm_get_event c = { .response = (uintptr_t)ev };

	memset(ev, 0, sizeof(*ev));
	return cmd(file, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c),
		   sizeof(*ev)) < 0 ? -errno : 0;
}

/* The next event, waiting for the agent thread at most 30 s. */
static void wait_event(struct file *file, struct rdma_ucm_event_resp *ev,
		       uint32_t want)
{
	struct pollfd pfd = { .fd = file->fd, .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_int_equal(get_event(file, ev), 0);
	assert_int_equal(ev->event, want);
}

/* The client's id resolved to IP_B:port, routed, and its REQ sent. */
static void connect_to(struct file *cli, uint32_t id, uint16_t port,
		       uint32_t route_timeout_ms)
{
	struct rdma_ucm_resolve_route rr = { .id = id,
					     .timeout_ms = route_timeout_ms };
	struct rdma_ucm_connect con = { .id = id, .conn_param.valid = 1 };
	struct rdma_ucm_event_resp ev;

	assert_int_equal(resolve(cli, id, IP_B, port), 0);
	assert_int_equal(get_event(cli, &ev), 0);
	assert_true(cmd(cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr),
			0) > 0);
	assert_int_equal(get_event(cli, &ev), 0);
	assert_true(cmd(cli, RDMA_USER_CM_CMD_CONNECT, &con, sizeof(con),
			0) > 0);
}

static int init_qp_attr(struct file *file, uint32_t id, uint32_t state,
			struct ib_uverbs_qp_attr *attr)
{
	struct rdma_ucm_init_qp_attr c = { .id = id, .qp_state = state,
					   .response = (uintptr_t)attr };

	memset(attr, 0, sizeof(*attr));
	return cmd(file, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof(c),
		   sizeof(*attr)) < 0 ? -errno : 0;
}

/* ---- the command decoding ---- */

static void test_header_checks(void **state)
{
	struct file f = open_file(true);
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP };
	uint8_t small[4] = { 0 };

	(void)state;
	/* Shorter than a header; unknown command; in beyond the write. */
	assert_int_equal(ucma_write(f.f, small, sizeof(small)), -EINVAL);
	assert_int_equal(cmd(&f, 99, &c, sizeof(c), 4), -1);
	assert_int_equal(errno, EINVAL);
	{
		struct rdma_ucm_cmd_hdr hdr = { .cmd = 0, .in = 200, .out = 4 };

		assert_int_equal(ucma_write(f.f, &hdr, sizeof(hdr)),
				 -EINVAL);
	}
	/* GET_OPTION is not a command of rdma_ucm. */
	assert_int_equal(cmd(&f, RDMA_USER_CM_CMD_GET_OPTION, &c, sizeof(c),
			     0), -1);
	assert_int_equal(errno, ENOSYS);
	/* A response buffer too small; a bad port space; a bad pointer. */
	c.response = (uintptr_t)small;
	assert_int_equal(cmd(&f, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			     2), -1);
	assert_int_equal(errno, ENOSPC);
	c.ps = 0x4242;
	assert_int_equal(cmd(&f, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			     4), -1);
	assert_int_equal(errno, EINVAL);
	c.ps = RDMA_PS_TCP;
	c.response = 8;
	assert_int_equal(cmd(&f, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c),
			     4), -1);
	assert_int_equal(errno, EFAULT);
	close_file(&f);
}

static void test_ids_belong_to_their_file(void **state)
{
	struct file a = open_file(true), b = open_file(true);
	uint32_t id = create_id(&a, RDMA_PS_TCP, 1), reported = 7;

	(void)state;
	assert_int_equal(destroy_id(&b, id, NULL), -EINVAL);
	assert_int_equal(destroy_id(&a, id + 1000, NULL), -ENOENT);
	assert_int_equal(destroy_id(&a, id, &reported), 0);
	assert_int_equal(reported, 0);
	assert_int_equal(destroy_id(&a, id, NULL), -ENOENT);
	close_file(&a);
	close_file(&b);
}

static void test_bind(void **state)
{
	struct file f = open_file(true);
	uint32_t a = create_id(&f, RDMA_PS_TCP, 1);
	uint32_t b = create_id(&f, RDMA_PS_TCP, 2);
	uint32_t u = create_id(&f, RDMA_PS_UDP, 3);
	uint32_t l = create_id(&f, RDMA_PS_TCP, 4);

	(void)state;
	/* Not an address of the host; an address of lo no port has (bound
	 * with no device, as Linux binds it on RoCE); then the adapter's
	 * own. */
	assert_int_equal(bind_ip(&f, a, "10.9.9.9", 5000), -EADDRNOTAVAIL);
	assert_int_equal(bind_ip(&f, l, "127.0.0.1", 5000), 0);
	assert_int_equal(bind_ip(&f, a, IP_A, 5000), 0);
	assert_int_equal(bind_ip(&f, a, IP_A, 5001), -EINVAL);	/* bound */
	/* The port is taken in its port space, not in another. */
	assert_int_equal(bind_ip(&f, b, "0.0.0.0", 5000), -EADDRINUSE);
	assert_int_equal(bind_ip(&f, u, IP_A, 5000), 0);
	close_file(&f);
}

static void test_resolve(void **state)
{
	struct file f = open_file(true);
	uint32_t id = create_id(&f, RDMA_PS_TCP, 0x1234);
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_query_route_resp route;
	struct rdma_ucm_query q = { .id = id, .response = (uintptr_t)&route };
	struct rdma_ucm_resolve_route rr = { .id = id };

	(void)state;
	assert_int_equal(get_event(&f, &ev), -EAGAIN);
	/* Nobody owns 127.9.9.9: ADDR_ERROR, and the id stays bound. */
	assert_int_equal(resolve(&f, id, "127.9.9.9", 7000), 0);
	assert_int_equal(get_event(&f, &ev), 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ADDR_ERROR);
	assert_true((int)ev.status < 0);
	assert_int_equal(ev.uid, 0x1234);
	/* The second adapter's address: from the first, with its GIDs. */
	assert_int_equal(resolve(&f, id, IP_B, 7000), 0);
	assert_int_equal(get_event(&f, &ev), 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(resolve(&f, id, IP_B, 7000), -EINVAL);
	assert_true(cmd(&f, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q),
			sizeof(route)) > 0);
	assert_int_equal(route.num_paths, 0);
	assert_memory_equal(&route.node_guid, &sim_devs[1].node_guid, 8);
	assert_memory_equal(route.ib_route[0].sgid, sim_devs[1].gid[1].raw,
			    16);
	assert_memory_equal(route.ib_route[0].dgid, sim_devs[1].gid[1].raw,
			    16);
	assert_true(cmd(&f, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr),
			0) > 0);
	assert_int_equal(get_event(&f, &ev), 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_true(cmd(&f, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q),
			sizeof(route)) > 0);
	assert_int_equal(route.num_paths, 1);
	assert_int_equal(route.ib_route[0].mtu, IBV_MTU_1024);
	/* A multicast group resolves without a neighbour. */
	id = create_id(&f, RDMA_PS_UDP, 0x99);
	assert_int_equal(resolve(&f, id, "239.1.2.3", 0), 0);
	assert_int_equal(get_event(&f, &ev), 0);
	assert_int_equal(ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	close_file(&f);
}

static void test_event_readiness_and_destroy(void **state)
{
	struct file f = open_file(true);
	uint32_t id = create_id(&f, RDMA_PS_TCP, 1), reported = 9;
	struct rdma_ucm_event_resp ev;
	struct pollfd pfd = { .fd = f.fd, .events = POLLIN };

	(void)state;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(resolve(&f, id, IP_A, 7000), 0);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(get_event(&f, &ev), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* One event reported; a queued, unreported one is dropped. */
	assert_int_equal(destroy_id(&f, id, &reported), 0);
	assert_int_equal(reported, 1);
	id = create_id(&f, RDMA_PS_TCP, 1);
	assert_int_equal(resolve(&f, id, IP_A, 7000), 0);
	assert_int_equal(destroy_id(&f, id, &reported), 0);
	assert_int_equal(reported, 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	close_file(&f);
}

/* ---- the CM exchange between the two adapters ---- */

static void test_connection(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11);
	uint32_t id = create_id(&cli, RDMA_PS_TCP, 0x22), child;
	struct rdma_ucm_listen l = { .id = listener, .backlog = 4 };
	struct rdma_ucm_resolve_route rr = { .id = id };
	struct rdma_ucm_connect con = { .id = id };
	struct rdma_ucm_accept acc = { .uid = 0x33 };
	struct rdma_ucm_disconnect dis;
	struct rdma_ucm_event_resp ev;
	struct ib_uverbs_qp_attr a, p;

	(void)state;
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7100), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	assert_int_equal(resolve(&cli, id, IP_B, 7100), 0);
	assert_int_equal(get_event(&cli, &ev), 0);
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr),
			0) > 0);
	assert_int_equal(get_event(&cli, &ev), 0);

	/* Before a connection: INIT only, no remote access. */
	assert_int_equal(init_qp_attr(&cli, id, IBV_QPS_INIT, &a), 0);
	assert_int_equal(a.qp_access_flags, 0);

	con.conn_param.valid = 1;
	con.conn_param.qp_num = 0x101;
	con.conn_param.responder_resources = 2;
	con.conn_param.initiator_depth = 3;
	con.conn_param.retry_count = 5;
	con.conn_param.rnr_retry_count = 6;
	con.conn_param.private_data_len = 57;	/* 92 - 36 is the most */
	assert_int_equal(cmd(&cli, RDMA_USER_CM_CMD_CONNECT, &con,
			     sizeof(con), 0), -1);
	assert_int_equal(errno, EINVAL);
	con.conn_param.private_data_len = 5;
	memcpy(con.conn_param.private_data, "hello", 5);
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_CONNECT, &con, sizeof(con),
			0) > 0);

	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_int_equal(ev.uid, 0x11);
	child = ev.id;
	assert_int_not_equal(child, listener);
	assert_int_equal(ev.param.conn.private_data_len, 56);
	assert_memory_equal(ev.param.conn.private_data, "hello", 5);
	/* The passive side's view of the resources. */
	assert_int_equal(ev.param.conn.responder_resources, 3);
	assert_int_equal(ev.param.conn.initiator_depth, 2);
	assert_int_equal(ev.param.conn.qp_num, 0x101);

	/* The passive QP's attributes, before it accepts. */
	assert_int_equal(init_qp_attr(&srv, child, IBV_QPS_RTR, &p), 0);
	assert_int_equal(p.dest_qp_num, 0x101);
	assert_int_equal(p.max_dest_rd_atomic, 3);
	assert_int_equal(p.path_mtu, IBV_MTU_1024);
	assert_int_equal(p.ah_attr.is_global, 1);
	assert_memory_equal(p.ah_attr.grh.dgid, sim_devs[1].gid[1].raw, 16);
	assert_int_equal(init_qp_attr(&srv, child, IBV_QPS_INIT, &p), 0);
	assert_int_equal(p.qp_access_flags, IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);

	acc.id = child;
	acc.conn_param.valid = 1;
	acc.conn_param.qp_num = 0x202;
	acc.conn_param.responder_resources = 3;
	acc.conn_param.initiator_depth = 2;
	acc.conn_param.rnr_retry_count = 4;
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);

	wait_event(&cli, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE);
	assert_int_equal(ev.uid, 0x22);
	assert_int_equal(ev.param.conn.qp_num, 0x202);
	assert_int_equal(ev.param.conn.private_data_len, 196);

	/* Each side's QP names the other's QPN and starting PSN. */
	assert_int_equal(init_qp_attr(&cli, id, IBV_QPS_RTR, &a), 0);
	assert_int_equal(a.dest_qp_num, 0x202);
	assert_int_equal(a.max_dest_rd_atomic, 2);
	assert_int_equal(init_qp_attr(&srv, child, IBV_QPS_RTS, &p), 0);
	assert_int_equal(a.rq_psn, p.sq_psn);
	assert_int_equal(p.retry_cnt, 5);
	assert_int_equal(init_qp_attr(&cli, id, IBV_QPS_RTS, &a), 0);
	assert_int_equal(init_qp_attr(&srv, child, IBV_QPS_RTR, &p), 0);
	assert_int_equal(p.rq_psn, a.sq_psn);
	assert_int_equal(a.max_rd_atomic, 3);
	assert_int_equal(a.retry_cnt, 5);
	assert_int_equal(a.rnr_retry, 4);

	/* The active side's answer: RTU; the passive side is ESTABLISHED. */
	memset(&acc, 0, sizeof(acc));
	acc.id = id;
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(ev.uid, 0x33);

	/* DREQ: DISCONNECTED on the other side; its DREP ends ours. */
	dis.id = id;
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_DISCONNECT, &dis, sizeof(dis),
			0) > 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_DISCONNECTED);
	dis.id = child;
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_DISCONNECT, &dis, sizeof(dis),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_DISCONNECTED);
	/* Both connections leave their time wait. */
	wait_event(&cli, &ev, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	assert_int_equal(ev.id, id);
	wait_event(&srv, &ev, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	assert_int_equal(ev.id, child);

	close_file(&cli);
	close_file(&srv);
}

static void test_no_listener_and_reject(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11), id;
	struct rdma_ucm_listen l = { .id = listener };
	struct rdma_ucm_reject rej = { .private_data_len = 149 };
	struct rdma_ucm_event_resp ev;
	uint16_t port;

	(void)state;
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7200), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	for (port = 7201; port >= 7200; port--) {
		id = create_id(&cli, RDMA_PS_TCP, 0x22);
		connect_to(&cli, id, port, 100);
		if (port == 7201) {
			/* Nobody listens there: invalid service id. */
			wait_event(&cli, &ev, RDMA_CM_EVENT_REJECTED);
			assert_int_equal(ev.status, CM_REJ_INVALID_SERVICE_ID);
			assert_int_equal(destroy_id(&cli, id, NULL), 0);
		}
	}
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	rej.id = ev.id;
	assert_int_equal(cmd(&srv, RDMA_USER_CM_CMD_REJECT, &rej, sizeof(rej),
			     0), -1);
	assert_int_equal(errno, EINVAL);	/* 148 bytes at most */
	rej.private_data_len = 148;
	memset(rej.private_data, 0xa5, 148);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_REJECT, &rej, sizeof(rej),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(ev.status, CM_REJ_CONSUMER_DEFINED);
	assert_int_equal(ev.param.conn.private_data_len, 148);
	assert_memory_equal(ev.param.conn.private_data, rej.private_data, 148);
	close_file(&cli);
	close_file(&srv);
}

/* The host's fd table, for MIGRATE_ID: the one file a test names. */
static struct file *fd_file_named;

static struct ucma_file *file_of_fd(int fd)
{
	return fd_file_named && fd_file_named->fd == fd ? fd_file_named->f :
							   NULL;
}

/* A file closed, or a listener migrated away, while a CONNECT_REQUEST
 * waits unread: the new id goes with its event, once. */
static void test_unread_request_goes_once(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	struct file other = open_file(true);
	struct rdma_ucm_migrate_resp mresp;
	struct rdma_ucm_migrate_id mig = { .response = (uintptr_t)&mresp };
	struct rdma_ucm_listen l = { .backlog = 2 };
	struct pollfd pfd = { .events = POLLIN };
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		l.id = create_id(&srv, RDMA_PS_TCP, 0x11);
		assert_int_equal(bind_ip(&srv, l.id, IP_B, 7300 + round), 0);
		assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l),
				0) > 0);
		connect_to(&cli, create_id(&cli, RDMA_PS_TCP, 0x22),
			   7300 + round, 100);
		pfd.fd = srv.fd;
		assert_int_equal(poll(&pfd, 1, 30000), 1);
		if (round) {
			/* The request moves with the listener. */
			struct ucma_file *(*saved)(int) =
				sim_kernel_host.ucma_file_of_fd;

			mig.id = l.id;
			mig.fd = (uint32_t)srv.fd;
			fd_file_named = &srv;
			sim_kernel_host.ucma_file_of_fd = file_of_fd;
			assert_true(cmd(&other, RDMA_USER_CM_CMD_MIGRATE_ID,
					&mig, sizeof(mig), sizeof(mresp)) > 0);
			sim_kernel_host.ucma_file_of_fd = saved;
		}
		close_file(&srv);
		srv = open_file(true);
	}
	close_file(&other);
	close_file(&srv);
	close_file(&cli);
}

static void test_closed_peer_disconnects(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11);
	uint32_t id = create_id(&cli, RDMA_PS_TCP, 0x22);
	struct rdma_ucm_listen l = { .id = listener };
	struct rdma_ucm_accept acc = { .conn_param.valid = 1, .uid = 0x33 };
	struct rdma_ucm_event_resp ev;

	(void)state;
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7300), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	connect_to(&cli, id, 7300, 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	acc.id = ev.id;
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE);
	memset(&acc, 0, sizeof(acc));
	acc.id = id;
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_ESTABLISHED);
	/* The server's file goes (its process died): the client's id is
	 * DISCONNECTED. */
	close_file(&srv);
	wait_event(&cli, &ev, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(ev.uid, 0x22);
	close_file(&cli);
}

/* The client goes before the server accepted: its REJ reaches the new
 * id, but as in rdma_ucm nothing of an id not accepted is reported; the
 * accept fails (the connection moved on) and the id is destroyed. */
static void test_unaccepted_request_is_void(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11);
	uint32_t id = create_id(&cli, RDMA_PS_TCP, 0x22), reported;
	struct rdma_ucm_listen l = { .id = listener };
	struct rdma_ucm_accept acc = { .conn_param.valid = 1, .uid = 0x33 };
	struct pollfd pfd = { .events = POLLIN };
	struct ib_uverbs_qp_attr attr;
	struct rdma_ucm_event_resp ev;
	int i;

	(void)state;
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7600), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	connect_to(&cli, id, 7600, 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	acc.id = ev.id;
	assert_int_equal(init_qp_attr(&srv, acc.id, IBV_QPS_RTR, &attr), 0);
	close_file(&cli);
	/* The REJ has come once the id can no longer be readied. */
	pfd.fd = srv.fd;
	for (i = 0; i < 3000; i++) {
		if (init_qp_attr(&srv, acc.id, IBV_QPS_RTR, &attr))
			break;
		assert_int_equal(poll(&pfd, 1, 10), 0);
	}
	assert_int_equal(init_qp_attr(&srv, acc.id, IBV_QPS_RTR, &attr),
			 -EINVAL);
	assert_int_equal(poll(&pfd, 1, 200), 0);
	assert_int_equal(get_event(&srv, &ev), -EAGAIN);
	assert_int_equal(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			     0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(poll(&pfd, 1, 100), 0);
	assert_int_equal(destroy_id(&srv, acc.id, &reported), 0);
	assert_int_equal(reported, 0);
	assert_int_equal(destroy_id(&srv, listener, &reported), 0);
	assert_int_equal(reported, 1);
	close_file(&srv);
}

/* A REQ nobody answers, a REP without RTU, a DREQ without DREP: the CM
 * gives up after its response timeout (shortened here). */
static void test_timeouts(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11);
	uint32_t id = create_id(&cli, RDMA_PS_TCP, 0x22), child;
	struct rdma_ucm_listen l = { .id = listener };
	struct rdma_ucm_accept acc = { .conn_param.valid = 1, .uid = 0x33 };
	struct rdma_ucm_event_resp ev;
	uint64_t saved = cm_response_timeout_ns, saved_mra = cm_mra_timeout_ns;
	struct ib_uverbs_qp_attr attr;
	int i;

	(void)state;
	cm_response_timeout_ns = 200000000ull;	/* 0.2 s */
	cm_mra_timeout_ns = 300000000ull;	/* the MRA's wait: 0.3 s */
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7400), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	connect_to(&cli, id, 7400, 0);
	/* The server takes the request and never accepts it: the client
	 * gives up, and its REQ is gone for the server, which is not told
	 * (its id is not accepted) but can no longer accept it. */
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev.id;
	wait_event(&cli, &ev, RDMA_CM_EVENT_UNREACHABLE);
	assert_int_equal((int)ev.status, -ETIMEDOUT);
	for (i = 0; i < 300; i++) {
		if (init_qp_attr(&srv, child, IBV_QPS_RTR, &attr))
			break;
		usleep(10000);
	}
	assert_int_equal(get_event(&srv, &ev), -EAGAIN);
	acc.id = child;
	assert_int_equal(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			     0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(destroy_id(&srv, child, NULL), 0);
	assert_int_equal(destroy_id(&cli, id, NULL), 0);

	/* Accepted, but the client never sends its RTU. */
	id = create_id(&cli, RDMA_PS_TCP, 0x22);
	connect_to(&cli, id, 7400, 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	acc.id = ev.id;
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE);
	wait_event(&srv, &ev, RDMA_CM_EVENT_UNREACHABLE);
	assert_int_equal((int)ev.status, -ETIMEDOUT);
	assert_int_equal(destroy_id(&cli, id, NULL), 0);

	/* Established; the server never answers the client's DREQ. */
	id = create_id(&cli, RDMA_PS_TCP, 0x22);
	connect_to(&cli, id, 7400, 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	acc.id = ev.id;
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE);
	{
		struct rdma_ucm_accept rtu = { .id = id };
		struct rdma_ucm_disconnect dis = { .id = id };

		assert_true(cmd(&cli, RDMA_USER_CM_CMD_ACCEPT, &rtu,
				sizeof(rtu), 0) > 0);
		wait_event(&srv, &ev, RDMA_CM_EVENT_ESTABLISHED);
		assert_true(cmd(&cli, RDMA_USER_CM_CMD_DISCONNECT, &dis,
				sizeof(dis), 0) > 0);
	}
	wait_event(&srv, &ev, RDMA_CM_EVENT_DISCONNECTED);
	wait_event(&cli, &ev, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal((int)ev.status, -ETIMEDOUT);
	cm_response_timeout_ns = saved;
	cm_mra_timeout_ns = saved_mra;
	close_file(&cli);
	close_file(&srv);
}

/*
 * A server that accepts after the response timeout, and a client that
 * sends its RTU after it, still connect: each CM acknowledged what it
 * received with an MRA, and the peer waits the MRA's service timeout.
 */
static void test_late_answers_after_mra(void **state)
{
	struct file srv = open_file(true), cli = open_file(true);
	uint32_t listener = create_id(&srv, RDMA_PS_TCP, 0x11);
	uint32_t id = create_id(&cli, RDMA_PS_TCP, 0x22);
	struct rdma_ucm_listen l = { .id = listener };
	struct rdma_ucm_accept acc = { .conn_param.valid = 1, .uid = 0x33 };
	struct rdma_ucm_accept rtu = { .id = id };
	struct rdma_ucm_event_resp ev;
	uint64_t saved = cm_response_timeout_ns;
	struct pollfd pfd = { .fd = cli.fd, .events = POLLIN };

	(void)state;
	cm_response_timeout_ns = 1000000000ull;	/* 1 s; the MRA's: 69 s */
	assert_int_equal(bind_ip(&srv, listener, IP_B, 7500), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0) > 0);
	connect_to(&cli, id, 7500, 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	acc.id = ev.id;
	/* Twice the response timeout: the client must still be waiting. */
	usleep(2000000);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_true(cmd(&srv, RDMA_USER_CM_CMD_ACCEPT, &acc, sizeof(acc),
			0) > 0);
	wait_event(&cli, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE);
	/* The RTU as late: the server waits for it too. */
	usleep(2000000);
	pfd.fd = srv.fd;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_true(cmd(&cli, RDMA_USER_CM_CMD_ACCEPT, &rtu, sizeof(rtu),
			0) > 0);
	wait_event(&srv, &ev, RDMA_CM_EVENT_ESTABLISHED);
	cm_response_timeout_ns = saved;
	close_file(&cli);
	close_file(&srv);
}

struct reader {
	struct file *file;
	struct rdma_ucm_event_resp ev;
	int ret;
};

static void *blocked_reader(void *arg)
{
	struct reader *r = arg;

	r->ret = get_event(r->file, &r->ev);
	return NULL;
}

/* A thread waiting in GET_EVENT keeps its file when another thread closes
 * the fd, and goes on waiting even if the fd's number now names a
 * non-blocking file; woken for nothing, it waits again. */
static void test_get_event_keeps_its_file(void **state)
{
	struct file f = open_file(false);
	struct reader r = { .file = &f };
	struct cm_id *id;
	pthread_t t;
	int other;

	(void)state;
	create_id(&f, RDMA_PS_TCP, 0x77);
	assert_int_equal(pthread_create(&t, NULL, blocked_reader, &r), 0);
	usleep(100000);
	ucma_close(f.f);
	close(f.fd);
	other = eventfd(0, EFD_NONBLOCK);	/* likely the same number */
	assert_true(other >= 0);
	pthread_mutex_lock(&cm_lock);
	for (id = cm_ids; id && id->file != f.f; id = id->next)
		;
	assert_non_null(id);
	/* A wake-up with nothing left to read, then an event. */
	ucma_event_queue(id, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
	ucma_event_drop_id(id);
	pthread_mutex_unlock(&cm_lock);
	usleep(100000);
	pthread_mutex_lock(&cm_lock);
	ucma_event_queue(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	pthread_mutex_unlock(&cm_lock);
	pthread_join(t, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(r.ev.uid, 0x77);
	close(other);
}

/* A thread whose GET_EVENT found the file, then waited for cm_lock while
 * another thread closed the fd and the number came to name a
 * non-blocking file, still waits on its own file (no EAGAIN), whose
 * readiness goes to its own eventfd, never to the number's new file. */
static void test_get_event_reads_its_own_file(void **state)
{
	struct file f = open_file(false);
	struct reader r = { .file = &f, .ret = 1 };
	struct cm_id *id;
	pthread_t t;
	eventfd_t v;
	int other;

	(void)state;
	create_id(&f, RDMA_PS_TCP, 0x78);
	pthread_mutex_lock(&cm_lock);
	assert_int_equal(pthread_create(&t, NULL, blocked_reader, &r), 0);
	usleep(100000);		/* its write() waits for cm_lock */
	close(f.fd);
	other = eventfd(0, EFD_NONBLOCK);	/* likely the same number */
	assert_true(other >= 0);
	pthread_mutex_unlock(&cm_lock);
	usleep(100000);
	assert_int_equal(__atomic_load_n(&r.ret, __ATOMIC_SEQ_CST), 1);
	pthread_mutex_lock(&cm_lock);
	for (id = cm_ids; id && id->file != f.f; id = id->next)
		;
	assert_non_null(id);
	ucma_event_queue(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	assert_int_equal(eventfd_read(other, &v), -1);
	pthread_mutex_unlock(&cm_lock);
	pthread_join(t, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	ucma_close(f.f);
	close(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_ids_belong_to_their_file),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_event_readiness_and_destroy),
		cmocka_unit_test(test_connection),
		cmocka_unit_test(test_no_listener_and_reject),
		cmocka_unit_test(test_unread_request_goes_once),
		cmocka_unit_test(test_closed_peer_disconnects),
		cmocka_unit_test(test_unaccepted_request_is_void),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_late_answers_after_mra),
		cmocka_unit_test(test_get_event_keeps_its_file),
		cmocka_unit_test(test_get_event_reads_its_own_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
