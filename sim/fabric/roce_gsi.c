// SPDX-License-Identifier: BSD-2-Clause
/*
 * QP1 on the RoCE v2 wire (fabric.h, "GSI"): the general service
 * interface through which the kernel's CM speaks to any RoCE peer. A GMP
 * is a UD SEND_ONLY to destination QP 1 with the GSI Q_Key 0x80010000,
 * from source QP 1, with the default P_Key, one 256-byte MAD as payload.
 *
 * What arrives for QP 1 never reaches the device: roce.c hands every
 * checked datagram whose BTH names QP 1 to roce_gsi_rx(), which passes a
 * well-formed GMP to the handler the kernel attached and drops (and
 * counts) anything else. The handler runs under the adapter's lock, so it
 * must only queue. Sending needs no adapter lock: a GMP is built on the
 * caller's stack and leaves by a socket of its own, at the source port
 * rxe would give QP 1, so it never races the device's sending.
 */
#include <netinet/in.h>
#include <netinet/ip.h>

#include "link.h"
#include "roce_icrc.h"

#define GSI_QPN		1u
#define GSI_QKEY	0x80010000u
#define GSI_MAD_LEN	256u
#define UD_SEND_ONLY	(ROCE_UD | ROCE_SEND_ONLY)

static pthread_mutex_t gsi_lock = PTHREAD_MUTEX_INITIALIZER;
static fab_gsi_fn gsi_handler;
static struct {
	int fd;
	pid_t owner;		/* a fork()ed child makes its own */
	uint16_t sport;
	uint32_t psn;
} gsi_tx[SIM_MAX_ADAPTERS];

void fabric_gsi_attach(fab_gsi_fn fn)
{
	pthread_mutex_lock(&gsi_lock);
	gsi_handler = fn;
	pthread_mutex_unlock(&gsi_lock);
}

bool roce_gsi_rx(struct fab_port *port, uint32_t saddr,
		 const struct roce_pkt *p)
{
	fab_gsi_fn fn;

	if (p->dqpn != GSI_QPN)
		return false;
	pthread_mutex_lock(&gsi_lock);
	fn = gsi_handler;
	pthread_mutex_unlock(&gsi_lock);
	/* A GMP is one UD packet of one MAD to the GSI Q_Key; the P_Key's
	 * membership bit aside, the default partition. */
	if (p->opcode != UD_SEND_ONLY || p->deth.qkey != GSI_QKEY ||
	    (p->pkey & 0x7fff) != 0x7fff || p->paylen < GSI_MAD_LEN) {
		port->roce_counts.rx_malformed++;
		return true;
	}
	port->roce_counts.rx_packets++;
	if (fn)
		fn(port->adapter.index, saddr, p->payload, GSI_MAD_LEN);
	return true;
}

/* rxe's source port of a QP's packets, QP 1's here (roce.c's qp_sport). */
static uint16_t gsi_sport(void)
{
	return (uint16_t)(0xc000 + ((GSI_QPN * 0x61c88647u) >> 18));
}

/* The adapter's sending socket at its address, at QP 1's port if it is
 * free, else at any (gsi_lock held). */
static int gsi_socket(unsigned int index, uint32_t saddr, uint16_t *sport)
{
	int fd;

	if (gsi_tx[index].owner == getpid()) {
		*sport = gsi_tx[index].sport;
		return gsi_tx[index].fd;
	}
	if (gsi_tx[index].owner)
		sim_fd_close(gsi_tx[index].fd);	/* the parent's, copied */
	gsi_tx[index].owner = 0;
	fd = roce_sport_socket(saddr, gsi_sport(), &gsi_tx[index].sport);
	if (fd < 0)
		return -1;
	gsi_tx[index].fd = fd;
	gsi_tx[index].owner = getpid();
	*sport = gsi_tx[index].sport;
	return fd;
}

size_t roce_gsi_datagram(uint32_t saddr, uint16_t sport, uint32_t daddr,
			 uint32_t psn, const uint8_t *mad,
			 uint8_t b[ROCE_GSI_DATAGRAM_LEN])
{
	struct roce_pkt p = { .opcode = UD_SEND_ONLY, .pkey = 0xffff,
			      .dqpn = GSI_QPN, .psn = psn & 0xffffff,
			      .deth = { .qkey = GSI_QKEY, .sqp = GSI_QPN } };
	struct roce_flow4 f = { .saddr = saddr, .daddr = daddr,
				.sport = sport, .dport = ROCE_UDP_PORT,
				.frag = ROCE_IP_DF };
	size_t n = roce_encode(&p, b);

	memcpy(b + n, mad, GSI_MAD_LEN);
	n += GSI_MAD_LEN;
	roce_icrc_put(b + n, roce_icrc(&f, b, n));
	return n + ROCE_ICRC_LEN;
}

bool fabric_gsi_send(unsigned int index, uint32_t daddr, const uint8_t *mad,
		     size_t len)
{
	struct fab_port *port = index < SIM_MAX_ADAPTERS ?
				fab_local_port(index) : NULL;
	uint8_t b[ROCE_GSI_DATAGRAM_LEN];
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(ROCE_UDP_PORT),
				  .sin_addr.s_addr = daddr };
	uint16_t sport;
	uint32_t psn;
	size_t n;
	ssize_t r;
	int fd;

	if (!port || port->roce_fd < 0 || len != GSI_MAD_LEN)
		return false;
	pthread_mutex_lock(&gsi_lock);
	fd = gsi_socket(index, port->adapter.ipv4, &sport);
	psn = gsi_tx[index].psn++;
	pthread_mutex_unlock(&gsi_lock);
	if (fd < 0)
		return false;
	n = roce_gsi_datagram(port->adapter.ipv4, sport, daddr, psn, mad, b);
	do {
		r = sim_libc.sendto(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL,
				    (struct sockaddr *)&to, sizeof(to));
	} while (r < 0 && errno == EINTR);
	return r == (ssize_t)n;
}

bool fabric_gsi_ready(unsigned int index)
{
	struct fab_port *port = index < SIM_MAX_ADAPTERS ?
				fab_local_port(index) : NULL;

	return port && port->roce_fd >= 0;
}
