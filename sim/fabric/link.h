/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric's ports and links, shared by fabric.c (ports, links,
 * resolving), registry.c (the GID registry), fabric_tx.c (sending) and
 * fabric_rx.c (receiving and waiting).
 * Private to the fabric layer: fabric.h is its interface.
 */
#ifndef PVRDMA_SIM_FABRIC_LINK_H
#define PVRDMA_SIM_FABRIC_LINK_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "fds.h"
#include "libc.h"
#include "options.h"
#include "sys.h"
#include "roce.h"
#include "tcp.h"

/* A payload stalled this long inside a packet means the peer is gone. */
#define FAB_STALL_MS		5000
/* Packets taken from one socket per poll round, for fairness. */
#define FAB_BURST		64
#define FAB_SOCK_BUF		(4 << 20)
/* A TCP frame up to this long is delivered only once all of it arrived
 * (tcp.c): a network that stalls inside it never stalls the adapter. */
#define FAB_TCP_WHOLE		(1u << 20)
/* Accepted TCP connections that have not said HELLO yet, per port and
 * per peer address: more are closed at once (a flood must not take the
 * sim's descriptors, nor one peer's flood every place); each has
 * FAB_TCP_HELLO_MS to say it (tcp.c). */
#define FAB_TCP_UNVERIFIED	64
#define FAB_TCP_UNVERIFIED_PEER	8
#define FAB_TCP_HELLO_MS	5000
/* Links a peer address connected and said HELLO on, per port: one per
 * port that sends requests here, and reconnections while an old one
 * lingers; beyond, the oldest are closed (tcp.c). */
#define FAB_TCP_LINKS_PER_PEER	8
/* Readiness events taken per wait. */
#define FAB_EVENTS		32
/* Pieces of one packet: header, payload pieces, read-ahead. */
#define FAB_MAX_IOV		((int)SIM_MAX_IOV + 2)

enum fab_link_kind { LINK_LOCAL, LINK_SOCK, LINK_ROCE };

/* What the socket did not take yet: a copy of the bytes in data[], or
 * (niov > 0) the packet's header in data[] and its payload where iov[]
 * says, in memory that stays valid until it is sent or copied
 * (fabric_send_in_place, fabric_copy_in_place). */
struct fab_out {
	struct fab_out *next;
	size_t len, off;
	int niov;
	struct iovec *iov;
	uint8_t data[];
};

struct fab_link {
	enum fab_link_kind kind;
	struct fab_port *port;		/* LOCAL: target; SOCK: owner */
	int fd;
	bool dead;
	bool want_out;			/* EPOLLOUT armed */
	bool tcp;			/* to another host (tcp.c) */
	bool outgoing;			/* we connected it */
	bool verified;			/* frames may reach the adapter: we
					 * connected, or the peer's HELLO
					 * named the address it came from */
	bool exposed;			/* the adapter may hold a pointer */
	uint32_t lowat;			/* SO_RCVLOWAT raised for a frame */
	uint32_t peer_ipv4;		/* TCP, accepted: where it came from */
	uint64_t hello_by_ns;		/* ... and when its HELLO is due */
	uint64_t rx_known;		/* TCP: bytes the socket holds at
					 * least (FIONREAD less what was read
					 * since): frames within need no ask */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct fab_out *out_head, *out_tail;
	uint64_t tx_bytes;		/* written to the socket, ever */
	struct fab_link *next;		/* port's list */

	/* The next packet's header, read ahead with the end of a payload
	 * (one readv per packet instead of two) or arrived in part. */
	struct fab_hdr ahead;
	size_t ahead_len;

	void *shared;			/* shared.c: the peer's segment */
	uint32_t roce_addr;		/* LINK_ROCE: the peer's IPv4 */
};

struct fab_pkt {
	struct fab_pkt *next;
	struct fab_link *from;
	struct fab_hdr hdr;
	uint8_t data[];
};

struct fab_port {
	struct fab_adapter adapter;
	int epfd;
	int evfd;
	int listen_fd;
	int tcp_fd;			/* listening at ipv4:tcp_port */
	unsigned int tcp_slot;		/* of its address (slot.c) */
	int roce_fd;			/* UDP at ipv4:4791 (roce.c) */
	struct {			/* UDP at ipv4:port, to send from */
		uint16_t port;
		int fd;
	} roce_sport[ROCE_SPORTS];
	struct fab_link *roce_links;	/* LINK_ROCE, by peer address */
	unsigned int roce_nlinks;
	uint8_t *roce_buf;		/* datagrams received (ROCE_RX_LEN),
					 * then those being sent */
	struct roce_ahead *roce_ahead;	/* reads to their place (roce_ahead.c),
					 * made on first use */
	bool roce_write_open;		/* the last packet read was a WRITE's
					 * first or middle: more may follow */
	struct iovec *roce_tx_iov;	/* ROCE_TX_IOV pieces of a batch */
	bool roce_no_gso;		/* the kernel has no UDP_SEGMENT */
	uint32_t roce_window;		/* bytes a requester keeps in
					 * flight (fabric_link_window()) */
	struct fab_wire_counts roce_counts;
	unsigned int tcp_unverified;	/* accepted links before HELLO */
	unsigned long tcp_refused;	/* links refused for that, ever */
	char tcp_name[FAB_TCP_NAME_MAX];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pid_t owner;			/* the process that made sock_path */
	atomic_int sleeping;
	/* fabric_rx_poll_hinted(): the frames counted for the Unix links
	 * when last read, and whether that read found none. */
	uint64_t frames_seen;
	bool unix_idle;
	struct fab_link self;		/* how others in this process reach us */
	struct fab_link *links;		/* socket links */

	pthread_mutex_t inq_lock;
	struct fab_pkt *inq_head, *inq_tail;
	atomic_bool inq_nonempty;

	/* What the last fabric_wait() saw, for fabric_deliver(). */
	struct epoll_event ev[FAB_EVENTS];
	int nev;
};

/* The sim interposes libc in the application; the device talks to the
 * kernel directly so that none of its calls is ever taken for the app's.
 * Its fds are its own (fds.c): out of the application's way. */
static inline int fab_sys_close(int fd)
{
	return sim_fd_close(fd);
}

static inline ssize_t fab_sys_read(int fd, void *buf, size_t len)
{
	ssize_t ret = sim_sys(SYS_read, fd, buf, len);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static inline ssize_t fab_sys_write(int fd, const void *buf, size_t len)
{
	ssize_t ret = sim_sys(SYS_write, fd, buf, len);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/*
 * Whether the link's requests wait unread: on a TCP link a peer connected
 * (its requests in, our responses out) while our responses do not fit the
 * socket, so a peer that stops reading costs one response beyond the
 * socket buffers, not one per request. A Unix link is never held.
 */
static inline bool fab_link_held(const struct fab_link *link)
{
	return link->tcp && !link->outgoing && link->out_head;
}

/* Whether port takes one more TCP link before HELLO, from where fd
 * comes from (*ipv4): the silent ones past their time go first. */
bool fab_tcp_admit(struct fab_port *port, int fd, uint32_t *ipv4);
/* When the HELLO of a link accepted now is due. */
uint64_t fab_tcp_hello_due(void);
/* link said its HELLO: the oldest links from its address beyond
 * FAB_TCP_LINKS_PER_PEER go. */
void fab_tcp_hello_taken(struct fab_link *link);
/* Kills the accepted TCP links whose HELLO is overdue. */
void fab_tcp_expire_hello(struct fab_port *port);

/* A socket link of port on fd, to the port named path. */
struct fab_link *fab_link_new(struct fab_port *port, int fd,
				  const char *path, bool tcp);
/* Marks the link dead: its fd closed, its out-queue dropped (the link
 * itself goes when the port prunes its links). */
void fab_link_kill(struct fab_link *link);
/* Sends what the out-queue holds, as far as the socket takes it. */
void fab_link_flush(struct fab_link *link);
/* fabric_tx.c: sends a packet on link (in_place: its payload stays in
 * the caller's memory while queued). */
bool fab_link_send(struct fab_port *port, struct fab_link *link,
		   const struct fab_hdr *hdr, const struct iovec *iov,
		   int iovcnt, bool in_place);

/* The GID registry of the run directory (registry.c). */
bool fab_gid_is_zero(const uint8_t gid[16]);
/* gid/<hex>, or gid/<hex>.<slot> for a slot of a shared address. */
void fab_registry_path(char *buf, size_t len, const uint8_t gid[16],
		       unsigned int slot);
/* The slot under which the port files gid. */
unsigned int fab_port_gid_slot(const struct fab_port *port,
			       const uint8_t gid[16]);
/* Each GID of the port published, taken over from a dead process;
 * withdrawn. */
void fab_registry_publish(struct fab_port *port);
void fab_registry_withdraw(struct fab_port *port);
/* The socket and segment files, and registry entries, of processes that
 * are gone. */
void fab_prune_dead_files(void);

/* Address slots (slot.c): processes of a host sharing an address. */
uint16_t fab_tcp_port(void);
/* The TCP port of a slot's adapters. */
uint16_t fab_slot_port(unsigned int slot);
/* The slot of the adapter a peer reaches by gid and qpn: 0 unless gid
 * carries an address reached over TCP. */
unsigned int fab_gid_slot(const uint8_t gid[16], uint32_t qpn);
/* The listening socket of adapter `index` at ipv4, reserved for it by
 * fabric_qpn_range(), else the first slot's; its slot in *slot. -1 if
 * none. */
int fab_slot_take(unsigned int index, uint32_t ipv4, unsigned int *slot);
/* The port this process opened for adapter `index`, or NULL. */
struct fab_port *fab_local_port(unsigned int index);

#endif
