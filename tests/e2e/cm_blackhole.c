// SPDX-License-Identifier: BSD-2-Clause
/*
 * A connect to a host that does not answer holds up no other connection
 * of the process: two ids on one event channel, the first connecting to
 * DEAD (an address of the network nobody holds), then the second to LIVE
 * (a listener there). The second's answer comes first; the first is then
 * rejected (the CM found no agent there), never left hanging.
 *
 *   cm_blackhole DEAD LIVE PORT
 *
 * Every wait is bounded (E2E_WAIT_SECONDS): a hang is a failure.
 */
#include "e2e_common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *channel;

static struct rdma_cm_event *next_event(void)
{
	struct pollfd p = { .fd = channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	E2E_CHECK(poll(&p, 1, E2E_WAIT_SECONDS * 1000) == 1, "no CM event");
	E2E_CHECK(!rdma_get_cm_event(channel, &ev), "rdma_get_cm_event: %s",
		  strerror(errno));
	return ev;
}

static void expect(struct rdma_cm_id *id, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = next_event();

	E2E_CHECK(ev->id == id && ev->event == type, "got %s, want %s",
		  rdma_event_str(ev->event), rdma_event_str(type));
	rdma_ack_cm_event(ev);
}

static struct rdma_cm_id *routed(const char *addr, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_cm_id *id;

	E2E_CHECK(inet_pton(AF_INET, addr, &sin.sin_addr) == 1, "address");
	E2E_CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
		  "rdma_create_id");
	E2E_CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000),
		  "rdma_resolve_addr %s: %s", addr, strerror(errno));
	expect(id, RDMA_CM_EVENT_ADDR_RESOLVED);
	E2E_CHECK(!rdma_resolve_route(id, 2000), "rdma_resolve_route");
	expect(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	return id;
}

int main(int argc, char **argv)
{
	struct rdma_conn_param param = { .qp_num = 0x100, .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct rdma_cm_id *dead, *live;
	struct rdma_cm_event *ev;
	uint16_t port;

	E2E_CHECK(argc == 4, "usage: cm_blackhole DEAD LIVE PORT");
	port = (uint16_t)atoi(argv[3]);
	channel = rdma_create_event_channel();
	E2E_CHECK(channel, "rdma_create_event_channel");
	dead = routed(argv[1], port);
	live = routed(argv[2], port);
	E2E_CHECK(!rdma_connect(dead, &param), "rdma_connect %s: %s",
		  argv[1], strerror(errno));
	E2E_CHECK(!rdma_connect(live, &param), "rdma_connect %s: %s",
		  argv[2], strerror(errno));
	ev = next_event();
	E2E_CHECK(ev->id == live, "%s answered before %s (%s)", argv[1],
		  argv[2], rdma_event_str(ev->event));
	printf("cm_blackhole: %s answered first: %s\n", argv[2],
	       rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	expect(dead, RDMA_CM_EVENT_REJECTED);
	printf("cm_blackhole: %s rejected after\n", argv[1]);
	rdma_destroy_id(live);
	rdma_destroy_id(dead);
	rdma_destroy_event_channel(channel);
	printf("cm_blackhole: passed\n");
	return 0;
}
