// SPDX-License-Identifier: BSD-2-Clause
/*
 * rdma_cm when the client's process ends at some point of its connection
 * without a word to its CM: the server is told what Linux's CM tells it,
 * since the client's kernel destroys the process's ids as its rdma_cm file
 * closes.
 *
 *   cm_peer_death --server|--client --addr IPV4 --port P --stage STAGE
 *                 --death DEATH --sync FILE [--after SECONDS]
 *
 * STAGE, where the client ends, and what the server gets:
 *   req          its REQ was received, the server has not accepted: the
 *                CM's REJ (reason 4, timeout) moves the new id's
 *                connection on, but rdma_ucm reports nothing for an id
 *                the user has not accepted: the channel stays quiet, the
 *                id can no longer be readied (INIT_QP_ATTR for RTR is
 *                EINVAL, how the server learns the REJ came), and
 *                rdma_accept is EINVAL
 *   rep          the server accepted, the client has its REP (no QP, so
 *                librdmacm hands it CONNECT_RESPONSE) and sends no RTU:
 *                REJECTED, reason 28 (consumer defined)
 *   established  connected: DISCONNECTED, and the server's posted
 *                receive is flushed once it disconnects too
 * DEATH, how it ends: kill (SIGKILL), exit (exit(0) with its ids still
 * there), crash (SIGSEGV), fork (SIGKILL, while a child it forked lives
 * on past the server's wait: the child holds nothing of its parent's
 * connection, so the parent's end is told at once).
 * FILE: the server creates it once it has the CONNECT_REQUEST (stage
 * req: the client waits for it before it dies). --after: the client
 * waits SECONDS instead, for a server on another host (with no file
 * shared).
 *
 * Every wait is bounded (E2E_WAIT_SECONDS): a server left waiting fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include "e2e_common.h"

#define CHECK(cond, ...) E2E_CHECK(cond, __VA_ARGS__)

static struct rdma_event_channel *channel;
static struct sockaddr_in addr = { .sin_family = AF_INET };
static const char *stage = "established", *death = "kill", *sync_file;
static int after_seconds = -1;

static bool stage_is(const char *s)
{
	return !strcmp(stage, s);
}

static struct rdma_cm_event *expect_event(enum rdma_cm_event_type type)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	CHECK(poll(&pfd, 1, E2E_WAIT_SECONDS * 1000) == 1,
	      "no rdma_cm event within %d s (want %s)", E2E_WAIT_SECONDS,
	      rdma_event_str(type));
	CHECK(!rdma_get_cm_event(channel, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	CHECK(ev->event == type, "event %s (status %d), want %s",
	      rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return ev;
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	CHECK(!rdma_create_qp(id, NULL, &attr), "rdma_create_qp: %s",
	      strerror(errno));
}

/* The channel stays unreadable for ms milliseconds. (Not read: an
 * event for an id without a user context, librdmacm drops and then
 * blocks for the next.) */
static void expect_quiet(int ms)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };

	CHECK(poll(&pfd, 1, ms) == 0,
	      "an event for a connection not accepted");
}

/* Stage req: the REJ ends the connection, and the user hears of it only
 * by the accept's failure. */
static void server_sees_void_req(struct rdma_cm_id *id)
{
	struct ibv_qp_attr attr;
	int mask, i;

	for (i = 0; i < E2E_WAIT_SECONDS * 20; i++) {
		attr.qp_state = IBV_QPS_RTR;
		if (rdma_init_qp_attr(id, &attr, &mask))
			break;
		expect_quiet(50);
	}
	CHECK(i < E2E_WAIT_SECONDS * 20 && errno == EINVAL,
	      "the REJ never came within %d s (%s)", E2E_WAIT_SECONDS,
	      strerror(errno));
	expect_quiet(500);
	CHECK(rdma_accept(id, NULL) && errno == EINVAL,
	      "rdma_accept after the client went: %s", strerror(errno));
	expect_quiet(200);
	printf("cm_peer_death server: no event, the REQ is void\n");
}

/* The server's view of the client's end, for the stage. */
static void server_sees_death(struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev;
	struct ibv_recv_wr wr = { .wr_id = 7 }, *bad;
	struct ibv_wc wc;
	int reason = 28, i;

	if (stage_is("req")) {
		server_sees_void_req(id);
		return;
	}
	if (!stage_is("established")) {
		ev = expect_event(RDMA_CM_EVENT_REJECTED);
		CHECK(ev->id == id, "REJECTED for another id");
		CHECK(ev->status == reason, "rejected with reason %d, want %d",
		      ev->status, reason);
		rdma_ack_cm_event(ev);
		printf("cm_peer_death server: REJECTED, reason 28\n");
		return;
	}
	CHECK(!ibv_post_recv(id->qp, &wr, &bad), "ibv_post_recv");
	ev = expect_event(RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev->id == id, "DISCONNECTED for another id");
	rdma_ack_cm_event(ev);
	printf("cm_peer_death server: DISCONNECTED\n");
	/* As rping does: its own disconnect moves the QP to error. */
	CHECK(!rdma_disconnect(id) || errno == EINVAL, "rdma_disconnect: %s",
	      strerror(errno));
	for (i = 0; i < E2E_WAIT_SECONDS * 1000; i++) {
		if (ibv_poll_cq(id->recv_cq, 1, &wc) == 1)
			break;
		usleep(1000);
	}
	CHECK(i < E2E_WAIT_SECONDS * 1000 && wc.wr_id == 7 &&
	      wc.status == IBV_WC_WR_FLUSH_ERR, "the receive was not flushed");
}

static void server(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct rdma_cm_id *listener, *id;
	struct rdma_cm_event *ev;
	int fd;

	CHECK(!rdma_create_id(channel, &listener, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(listener, (struct sockaddr *)&addr),
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!rdma_listen(listener, 4), "rdma_listen: %s", strerror(errno));
	printf("cm_peer_death server: listening\n");
	fflush(stdout);
	ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	rdma_ack_cm_event(ev);
	make_qp(id);
	if (!stage_is("req")) {
		CHECK(!rdma_accept(id, &param), "rdma_accept: %s",
		      strerror(errno));
		if (stage_is("established"))
			rdma_ack_cm_event(
				expect_event(RDMA_CM_EVENT_ESTABLISHED));
	}
	fd = open(sync_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "%s: %s", sync_file, strerror(errno));
	close(fd);
	server_sees_death(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	printf("cm_peer_death server: passed\n");
}

static void die(void)
{
	printf("cm_peer_death client: %s at %s\n", death, stage);
	fflush(stdout);
	if (!strcmp(death, "exit"))
		exit(0);
	if (!strcmp(death, "fork") && fork() == 0) {
		int i;

		/* past the server's wait, or until the test is over (the
		 * sync file goes with its run directory) */
		for (i = 0; i < E2E_WAIT_SECONDS + 10; i++) {
			if (access(sync_file, F_OK))
				break;
			sleep(1);
		}
		_exit(0);
	}
	if (!strcmp(death, "crash")) {
		volatile uintptr_t unmapped = 8;

		*(volatile int *)unmapped = 1;
	}
	raise(SIGKILL);
	abort();
}

static void client(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct rdma_cm_id *id;
	int i;

	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!rdma_resolve_route(id, 2000), "rdma_resolve_route: %s",
	      strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (stage_is("rep"))
		param.qp_num = 0x123;	/* no QP: CONNECT_RESPONSE is ours */
	else
		make_qp(id);
	CHECK(!rdma_connect(id, &param), "rdma_connect: %s", strerror(errno));
	if (stage_is("rep"))
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_CONNECT_RESPONSE));
	else if (stage_is("established"))
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
	/* Until the server has what it needs to see the end. */
	if (after_seconds >= 0) {
		sleep((unsigned int)after_seconds);
		die();
	}
	for (i = 0; access(sync_file, F_OK); i++) {
		CHECK(i < E2E_WAIT_SECONDS * 100, "the server never got the REQ");
		usleep(10000);
	}
	die();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "stage", required_argument, NULL, 't' },
		{ "death", required_argument, NULL, 'd' },
		{ "sync", required_argument, NULL, 'f' },
		{ "after", required_argument, NULL, 'w' },
		{ 0 }
	};
	int is_server = -1, o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': is_server = 1; break;
		case 'c': is_server = 0; break;
		case 'a':
			CHECK(inet_pton(AF_INET, optarg, &addr.sin_addr) == 1,
			      "bad address %s", optarg);
			break;
		case 'p': addr.sin_port = htons((uint16_t)atoi(optarg)); break;
		case 't': stage = optarg; break;
		case 'd': death = optarg; break;
		case 'f': sync_file = optarg; break;
		case 'w': after_seconds = atoi(optarg); break;
		default: return 2;
		}
	}
	CHECK(is_server >= 0 && addr.sin_port &&
	      (sync_file || (!is_server && after_seconds >= 0)),
	      "usage: --server|--client --addr A --port P --sync FILE");
	CHECK(stage_is("req") || stage_is("rep") || stage_is("established"),
	      "unknown stage %s", stage);
	channel = rdma_create_event_channel();
	CHECK(channel, "rdma_create_event_channel: %s", strerror(errno));
	if (is_server)
		server();
	else
		client();
	rdma_destroy_event_channel(channel);
	return 0;
}
