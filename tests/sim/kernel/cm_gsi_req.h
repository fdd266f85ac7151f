/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the CM's GSI tests share: IPv4 addresses as the agent's messages
 * carry them, and the REQ rdma_cm's agent sends from 198.51.100.1 port
 * 40000 to 198.51.100.2 port 7174 (RDMA_PS_TCP, QPN 0x101, path MTU 1024).
 */
#ifndef PVRDMA_TEST_CM_GSI_REQ_H
#define PVRDMA_TEST_CM_GSI_REQ_H

#include <string.h>
#include <arpa/inet.h>

#include "cm_gsi.h"

static inline void gsi_test_addr(struct sockaddr_storage *ss, const char *ip,
				 uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	inet_pton(AF_INET, ip, &a->sin_addr);
}

static inline uint32_t gsi_test_ip4(const char *ip)
{
	uint32_t a;

	inet_pton(AF_INET, ip, &a);
	return a;
}

static inline void gsi_test_req(struct cm_msg *m, const uint8_t *pdata,
				uint8_t len)
{
	cm_msg_init(m, CM_MSG_REQ, pdata, len);
	m->ps = RDMA_PS_TCP;
	m->qpn = 0x101;
	m->retry_count = 7;
	m->rnr_retry_count = 7;
	m->mtu = IBV_MTU_1024;
	gsi_mapped_gid(m->src_gid, gsi_test_ip4("198.51.100.1"));
	gsi_mapped_gid(m->dst_gid, gsi_test_ip4("198.51.100.2"));
	gsi_test_addr(&m->src, "198.51.100.1", 40000);
	gsi_test_addr(&m->dst, "198.51.100.2", 7174);
}

#endif /* PVRDMA_TEST_CM_GSI_REQ_H */
