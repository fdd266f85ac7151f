// SPDX-License-Identifier: BSD-2-Clause
/*
 * rdma_cm's refusals and failures, as a librdmacm application meets them:
 *
 *   rdmacm_cases --mode MODE --addr SERVER_IPV4 --port P [--server|--client]
 *
 *   no-listener  (pair) a connect to a port nobody listens on is REJECTED
 *                (IB CM reason 8); then the listened port connects
 *   reject       (pair) the server rejects with private data; the client
 *                gets REJECTED (reason 28) with the data intact, the
 *                server got the client's connect data intact
 *   peer-killed  (pair) the server dies (SIGKILL) once established; the
 *                client gets DISCONNECTED and its receive is flushed
 *   unowned      (single) resolving an address no adapter owns is
 *                ADDR_ERROR; the process's own address resolves
 *   unacked      (single) rdma_destroy_id waits until the events reported
 *                for the id are acknowledged; unreported ones are dropped
 *   mcast        (single) a multicast join fails: the device has no
 *                multicast groups
 *
 * Every wait is bounded (E2E_WAIT_SECONDS): a hang is a failure.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include "e2e_common.h"

#define CHECK(cond, ...) E2E_CHECK(cond, __VA_ARGS__)

static struct rdma_event_channel *channel;
static struct sockaddr_in server_addr;
static const char *mode = "";
static bool is_server;

static bool mode_is(const char *m)
{
	return !strcmp(mode, m);
}

/* The next event, whatever it is; fails after the hang guard. */
static struct rdma_cm_event *next_event(void)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	CHECK(poll(&pfd, 1, E2E_WAIT_SECONDS * 1000) == 1,
	      "no rdma_cm event within %d s", E2E_WAIT_SECONDS);
	CHECK(!rdma_get_cm_event(channel, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	return ev;
}

static struct rdma_cm_event *expect_event(enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = next_event();

	CHECK(ev->event == type, "event %s (status %d), want %s",
	      rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return ev;
}

static void pattern(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + 7 * i);
}

static struct rdma_cm_id *resolved_id(uint16_t port)
{
	struct sockaddr_in dst = server_addr;
	struct rdma_cm_id *id;

	dst.sin_port = htons(port);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!rdma_resolve_route(id, 2000), "rdma_resolve_route: %s",
	      strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	return id;
}

static void make_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	CHECK(!rdma_create_qp(id, NULL, &attr), "rdma_create_qp: %s",
	      strerror(errno));
}

static struct rdma_cm_id *listen_on(uint16_t port)
{
	struct sockaddr_in sin = server_addr;
	struct rdma_cm_id *id;

	sin.sin_port = htons(port);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&sin),
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!rdma_listen(id, 4), "rdma_listen: %s", strerror(errno));
	return id;
}

/* ---- pairs ---- */

static void server(uint16_t port)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listener = listen_on(port), *id;
	uint8_t want[56], rej[148];

	ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	if (mode_is("reject")) {
		pattern(want, sizeof(want), 0x31);
		CHECK(ev->param.conn.private_data_len >= sizeof(want),
		      "connect request carries %u bytes of private data",
		      ev->param.conn.private_data_len);
		CHECK(!memcmp(ev->param.conn.private_data, want, sizeof(want)),
		      "the client's private data changed on the way");
		rdma_ack_cm_event(ev);
		pattern(rej, sizeof(rej), 0x52);
		CHECK(!rdma_reject(id, rej, sizeof(rej)), "rdma_reject: %s",
		      strerror(errno));
		printf("rdmacm server: rejected\n");
		rdma_destroy_id(id);
		rdma_destroy_id(listener);
		return;
	}
	rdma_ack_cm_event(ev);
	make_qp(id, IBV_QPT_RC);
	CHECK(!rdma_accept(id, &param), "rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
	if (mode_is("peer-killed")) {
		printf("rdmacm server: dying now\n");
		fflush(stdout);
		raise(SIGKILL);
	}
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	printf("rdmacm server: done\n");
}

static void client(uint16_t port)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint8_t pdata[56], want[148];

	if (mode_is("no-listener")) {
		/* Nobody listens on port + 1: the server's CM rejects. */
		id = resolved_id(port + 1);
		make_qp(id, IBV_QPT_RC);
		CHECK(!rdma_connect(id, &param), "rdma_connect: %s",
		      strerror(errno));
		ev = expect_event(RDMA_CM_EVENT_REJECTED);
		CHECK(ev->status == 8, "rejected with reason %d, want 8",
		      ev->status);
		rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	id = resolved_id(port);
	make_qp(id, IBV_QPT_RC);
	if (mode_is("reject")) {
		pattern(pdata, sizeof(pdata), 0x31);
		param.private_data = pdata;
		param.private_data_len = sizeof(pdata);
	}
	CHECK(!rdma_connect(id, &param), "rdma_connect: %s", strerror(errno));
	if (mode_is("reject")) {
		ev = expect_event(RDMA_CM_EVENT_REJECTED);
		CHECK(ev->status == 28, "rejected with reason %d, want 28",
		      ev->status);
		pattern(want, sizeof(want), 0x52);
		CHECK(ev->param.conn.private_data_len == sizeof(want),
		      "reject carries %u bytes of private data, want %zu",
		      ev->param.conn.private_data_len, sizeof(want));
		CHECK(!memcmp(ev->param.conn.private_data, want, sizeof(want)),
		      "the reject's private data changed on the way");
		rdma_ack_cm_event(ev);
	} else if (mode_is("peer-killed")) {
		struct ibv_recv_wr wr = { .wr_id = 7 }, *bad;
		struct ibv_wc wc;
		int i;

		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
		CHECK(!ibv_post_recv(id->qp, &wr, &bad), "ibv_post_recv");
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
		/* What rping does: the QP goes to the error state. */
		CHECK(!rdma_disconnect(id) || errno == EINVAL,
		      "rdma_disconnect: %s", strerror(errno));
		for (i = 0; i < E2E_WAIT_SECONDS * 1000; i++) {
			if (ibv_poll_cq(id->recv_cq, 1, &wc) == 1)
				break;
			usleep(1000);
		}
		CHECK(i < E2E_WAIT_SECONDS * 1000 && wc.wr_id == 7 &&
		      wc.status == IBV_WC_WR_FLUSH_ERR,
		      "the receive was not flushed");
	} else {
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
		CHECK(!rdma_disconnect(id), "rdma_disconnect: %s",
		      strerror(errno));
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	printf("rdmacm client: passed\n");
}

/* ---- single process ---- */

static void unowned(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(4791) };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	inet_pton(AF_INET, "127.99.0.1", &dst.sin_addr);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_ADDR_ERROR);
	CHECK(ev->status < 0, "ADDR_ERROR with status %d", ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	/* Positive control: the process's own address. */
	rdma_destroy_id(resolved_id(4791));
}

static atomic_bool destroyed;

static void *destroyer(void *id)
{
	rdma_destroy_id(id);
	atomic_store(&destroyed, true);
	return NULL;
}

static void unacked(void)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in dst = server_addr;
	pthread_t t;

	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	/* The event is reported and not acknowledged: destroying the id
	 * must wait for the acknowledgement. */
	CHECK(!pthread_create(&t, NULL, destroyer, id), "pthread_create");
	usleep(200000);
	CHECK(!atomic_load(&destroyed),
	      "rdma_destroy_id returned before its event was acknowledged");
	rdma_ack_cm_event(ev);
	pthread_join(t, NULL);
	CHECK(atomic_load(&destroyed), "rdma_destroy_id did not return");

	/* An event queued but never read is not waited for. */
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	CHECK(!rdma_destroy_id(id), "rdma_destroy_id: %s", strerror(errno));
}

static void mcast(void)
{
	struct sockaddr_in src = server_addr, group = { .sin_family = AF_INET };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	inet_pton(AF_INET, "239.1.2.3", &group.sin_addr);
	src.sin_port = 0;
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_UDP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&src),
	      "rdma_bind_addr: %s", strerror(errno));
	make_qp(id, IBV_QPT_UD);
	if (rdma_join_multicast(id, (struct sockaddr *)&group, NULL)) {
		printf("rdmacm: join refused: %s\n", strerror(errno));
	} else {
		ev = expect_event(RDMA_CM_EVENT_MULTICAST_ERROR);
		rdma_ack_cm_event(ev);
		rdma_leave_multicast(id, (struct sockaddr *)&group);
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	bool pair = false;
	int port = 20000, c;

	server_addr.sin_family = AF_INET;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			is_server = pair = true;
			break;
		case 'c':
			pair = true;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'a':
			CHECK(inet_pton(AF_INET, optarg,
					&server_addr.sin_addr) == 1,
			      "bad address %s", optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	channel = rdma_create_event_channel();
	CHECK(channel, "rdma_create_event_channel: %s", strerror(errno));
	if (pair && is_server)
		server((uint16_t)port);
	else if (pair)
		client((uint16_t)port);
	else if (mode_is("unowned"))
		unowned();
	else if (mode_is("unacked"))
		unacked();
	else if (mode_is("mcast"))
		mcast();
	else
		CHECK(0, "unknown mode '%s'", mode);
	rdma_destroy_event_channel(channel);
	if (!pair)
		printf("rdmacm %s: passed\n", mode);
	return 0;
}
