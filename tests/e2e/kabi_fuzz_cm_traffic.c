// SPDX-License-Identifier: BSD-2-Clause
/*
 * The traffic after kabi_fuzz_cm.c's fuzzing, through librdmacm (whose
 * header and the kernel's rdma_user_cm.h do not go in one file): a
 * listener of this process at the adapter's address, an RC connection to
 * it, and a SEND whose payload must arrive intact.
 */
#include "e2e_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "kabi_fuzz_cm.h"

static const char message[] = "rdma_cm after the fuzzing";

static void *server_main(void *arg)
{
	struct rdma_cm_id *listen_id = arg, *id;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	char buf[64] = { 0 };

	E2E_CHECK(!rdma_get_request(listen_id, &id), "rdma_get_request: %s",
		  strerror(errno));
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	E2E_CHECK(mr, "rdma_reg_msgs");
	E2E_CHECK(!rdma_post_recv(id, NULL, buf, sizeof(buf), mr),
		  "rdma_post_recv");
	E2E_CHECK(!rdma_accept(id, NULL), "rdma_accept: %s", strerror(errno));
	E2E_CHECK(rdma_get_recv_comp(id, &wc) == 1 &&
		  wc.status == IBV_WC_SUCCESS, "receive");
	E2E_CHECK(wc.byte_len == sizeof(message) &&
		  !memcmp(buf, message, sizeof(message)), "payload differs");
	rdma_dereg_mr(mr);
	/* Its destruction sends the DREQ: a disconnect here would wait for
	 * a DREP that the client, joining this thread, cannot send. */
	return id;
}

void kabi_fuzz_cm_traffic(const struct in_addr *adapter_addr,
			  uint16_t adapter_port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_cm_id *listen_id, *id;
	char addr[INET_ADDRSTRLEN], port[8], buf[64];
	struct ibv_wc wc;
	struct ibv_mr *mr;
	pthread_t server;
	void *accepted;

	inet_ntop(AF_INET, adapter_addr, addr, sizeof(addr));
	snprintf(port, sizeof(port), "%u", adapter_port);
	hints.ai_flags = RAI_PASSIVE;
	E2E_CHECK(!rdma_getaddrinfo(addr, port, &hints, &res),
		  "rdma_getaddrinfo (passive)");
	E2E_CHECK(!rdma_create_ep(&listen_id, res, NULL, &attr),
		  "rdma_create_ep (listen): %s", strerror(errno));
	rdma_freeaddrinfo(res);
	E2E_CHECK(!rdma_listen(listen_id, 1), "rdma_listen: %s",
		  strerror(errno));
	pthread_create(&server, NULL, server_main, listen_id);

	hints.ai_flags = 0;
	E2E_CHECK(!rdma_getaddrinfo(addr, port, &hints, &res),
		  "rdma_getaddrinfo");
	E2E_CHECK(!rdma_create_ep(&id, res, NULL, &attr),
		  "rdma_create_ep: %s", strerror(errno));
	rdma_freeaddrinfo(res);
	memcpy(buf, message, sizeof(message));
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	E2E_CHECK(mr, "rdma_reg_msgs");
	E2E_CHECK(!rdma_connect(id, NULL), "rdma_connect: %s",
		  strerror(errno));
	E2E_CHECK(!rdma_post_send(id, NULL, buf, sizeof(message), mr, 0),
		  "rdma_post_send");
	E2E_CHECK(rdma_get_send_comp(id, &wc) == 1 &&
		  wc.status == IBV_WC_SUCCESS, "send completion");
	pthread_join(server, &accepted);
	rdma_destroy_ep(accepted);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
}
