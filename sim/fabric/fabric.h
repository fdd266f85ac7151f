/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric between simulated adapters: how packets get from one adapter
 * to another.
 *
 * An adapter's port is reached by any of its GIDs. A port in this process
 * gets packets through an in-memory queue; a port in another process on
 * this host through a Unix-domain stream socket, found through the GID
 * registry in sim_global.rundir (<rundir>/gid/<32 hex digits> is a symlink
 * to the listening socket of the adapter that owns the GID); a port on
 * another host through a TCP connection to the address its IPv4-mapped
 * GID carries (tcp.c).
 *
 * Every packet is a struct fab_hdr followed by hdr.len payload bytes. One
 * message is one packet: the stream is reliable and ordered, so the MTU
 * only limits UD messages. Links are used under the lock of their port's
 * adapter only (struct fab_adapter); fabric_wake() is the one call safe from anywhere without
 * it (including a signal handler).
 */
#ifndef PVRDMA_SIM_FABRIC_H
#define PVRDMA_SIM_FABRIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common.h"

#define FAB_MAGIC	0x50565244u	/* "PVRD" */
/* The longest message a REQ or READ_RESP carries: the device's maximum
 * (2^31), which a peer on another host must keep to. */
#define FAB_MAX_MSG_SIZE	(1ull << 31)

enum fab_type {
	FAB_REQ = 1,		/* RC request: SEND, WRITE, READ, ATOMIC */
	FAB_ACK,		/* RC: everything up to psn executed */
	FAB_NAK,		/* RC: request psn refused, opcode = fab_nak */
	FAB_READ_RESP,		/* RC: read data for request psn */
	FAB_ATOMIC_RESP,	/* RC: original value in atomic_a */
	FAB_UD_SEND,		/* UD datagram */
	FAB_HELLO,		/* first on a link: the connecting port's
				 * socket path, so the accepting side sends
				 * back over the same link (fabric only) */
	FAB_NOTIFY,		/* same host: a completion event of QP
				 * dst_qpn's adapter is due, which a
				 * requester's receive there armed
				 * (solicited in flags) */
};

enum fab_nak {
	FAB_NAK_RNR = 1,	/* no receive posted; rkey = its timer */
	FAB_NAK_SEQ,		/* out of sequence; resend from psn */
	FAB_NAK_REM_ACCESS,	/* rkey, bounds or access rights */
	FAB_NAK_INV_REQ,	/* message too long, misaligned atomic... */
	FAB_NAK_REM_OP,		/* responder failed to execute */
};

/* An ACK's opcode. */
enum fab_ack {
	FAB_ACK_DONE = 0,	/* request psn executed */
	FAB_ACK_PARTIAL,	/* part of request psn's payload is in place,
				 * and every request before it executed: the
				 * wire's ACK of a middle packet */
};

#define FAB_F_SOLICITED	0x01
/*
 * On a link of path-MTU packets (RoCE v2) a request or READ response comes
 * a packet at a time: FAB_F_SEG, FAB_F_FIRST/FAB_F_LAST on its first and
 * last, psn its own; a WRITE's address only in its first. FAB_F_MTU of a
 * REQ or READ_RESP carries the QP's path MTU (enum ibv_mtu) to cut to.
 */
/* On such a link a requester sends a message a window at a time: a SEND
 * or WRITE request names its packets to send now in atomic_a (the first)
 * and atomic_b (how many; 0: all), a READ is asked for in parts (its
 * PSN, address and length those of the part). */
#define FAB_F_SEG	0x02
#define FAB_F_FIRST	0x04
#define FAB_F_LAST	0x08
#define FAB_F_MTU_SHIFT	4
#define FAB_F_MTU_MASK	0x70
/* The requester asks for the ACK of what it sent up to this request (the
 * RoCE BTH's AckReq, on its last packet sent now): a responder may hold
 * the ACKs of requests without it until one with it arrives. */
#define FAB_F_ACKREQ	0x80

/* A FAB_UD_SEND from the RoCE wire: read_len holds FAB_UD_IPV4_SEEN, the
 * flags and fragment offset of the IPv4 header it came in (bits 16-30)
 * and its identification (bits 0-15), for the GRH area of its receive. */
#define FAB_UD_IPV4_SEEN	0x80000000u

struct fab_hdr {
	uint32_t magic;
	uint8_t type;		/* enum fab_type */
	uint8_t opcode;		/* REQ/UD: pvrdma_wr_opcode; NAK: fab_nak */
	uint8_t flags;		/* FAB_F_* */
	uint8_t gid_type;	/* of src_gid: enum ibv_gid_type_sysfs */
	uint32_t src_qpn;
	uint32_t dst_qpn;
	uint32_t psn;		/* 24 bits */
	uint32_t imm;		/* network order, as posted; ACK, NAK,
				 * READ_RESP, ATOMIC_RESP: the responder's
				 * MSN (24 bits) */
	uint32_t rkey;		/* REQ: rkey; NAK RNR: timer encoding */
	uint32_t qkey;		/* UD */
	uint32_t len;		/* payload bytes that follow */
	uint32_t read_len;	/* REQ READ: bytes asked for */
	uint64_t remote_addr;
	uint64_t atomic_a;	/* compare or add; ATOMIC_RESP: result */
	uint64_t atomic_b;	/* swap */
	uint8_t src_gid[16];
	uint8_t dst_gid[16];
	uint8_t smac[6];
	uint8_t hop_limit;
	uint8_t tclass;
};

struct fab_port;
struct fab_link;

/* The payload of the packet being delivered. */
struct fab_rx {
	struct fab_port *port;
	struct fab_link *link;	/* NULL: payload is in memory */
	const uint8_t *mem;
	uint64_t left;		/* payload bytes not yet read */
	bool failed;		/* the link broke inside the payload */
	bool fault;		/* the destination could not be written */
	bool lasts;		/* mem stays until the port's rx_end */
};

/* Reads the next bytes of the payload into iov (at most what is left).
 * Returns false if the link broke: the packet is lost; or, with
 * rx->fault, if iov could not be written (registered memory the
 * application took away behind the sim's back): the link is fine, the
 * rest of the payload is dropped, the device fails the operation. */
bool fab_rx_read(struct fab_rx *rx, const struct iovec *iov, int iovcnt);
/* The next len bytes of the payload where they lie, taken as read, for
 * a receiver that copies them later, before its rx_end returns; NULL when
 * the payload does not last that long (rx->lasts) or is shorter. */
const uint8_t *fab_rx_take(struct fab_rx *rx, uint64_t len);

/*
 * One packet arrived at the port (the adapter's lock held): the device's
 * receive path, registered with fabric_open(). Unread payload is
 * discarded after it returns.
 */
typedef void (*fab_rx_fn)(void *owner, struct fab_link *from,
			  const struct fab_hdr *hdr, struct fab_rx *rx);
/* The payloads of the packets rx was called for since the last call go
 * away (the run of datagrams a read took, fabric/roce.c): what was taken
 * of them with fab_rx_take() must be copied now. */
typedef void (*fab_rx_end_fn)(void *owner);

/*
 * Where the packets that QP dqpn expects next go, for a read that puts
 * their payloads there directly (the adapter's lock held): the request
 * packets of a WRITE in progress from PSN psn on, at most max_packets of
 * them. Returns how many payload bytes (0: none are expected; the fabric
 * reads as usual), with where they go in iov (at most *niov pieces, set
 * to how many), the path MTU (each packet's payload but the last) and
 * whether they end the message. Those that arrive as expected go to
 * fab_rx_placed_fn, the others to fab_rx_fn.
 */
typedef uint64_t (*fab_rx_ahead_fn)(void *owner, uint32_t dqpn, uint32_t psn,
				    uint32_t max_packets, struct iovec *iov,
				    int *niov, uint32_t *mtu, bool *ends);
/*
 * The first count packets of those fab_rx_ahead_fn expected, from link
 * from, arrived (the adapter's lock held since): in PSN order from psn
 * on, each the path MTU long but the last, their headers and ICRCs
 * checked, bytes of payload in all in place already. The last ends the
 * message when ends; asked: one of them asked for an ACK. The adapter
 * takes them as it would take each on its own, at once.
 */
typedef void (*fab_rx_placed_fn)(void *owner, struct fab_link *from,
				 uint32_t dqpn, uint32_t psn, uint32_t count,
				 uint64_t bytes, bool ends, bool asked);

/* What the fabric knows of the adapter a port belongs to. */
struct fab_adapter {
	unsigned int index;		/* 0..SIM_MAX_ADAPTERS - 1 */
	const union ibv_gid *gid;	/* its GID table ... */
	const unsigned int *gid_count;	/* ... and how many are in use */
	pthread_mutex_t *lock;		/* the adapter's lock */
	fab_rx_fn rx;			/* called for each packet */
	fab_rx_end_fn rx_end;		/* NULL, or after a run of them */
	fab_rx_ahead_fn ahead;		/* NULL, or where packets go ... */
	fab_rx_placed_fn placed;	/* ... and those that went there */
	void *owner;			/* rx's first argument */
	uint32_t ipv4;			/* network order; outside 127/8:
					 * listens for other hosts (tcp.c) */
	const char *name;		/* "vmw_pvrdma0", for log lines */
};

/* Opens the port of an adapter: wake-up eventfd, and, when sim_global.rundir
 * is set, the listening socket and the GID registry entries. */
struct fab_port *fabric_open(const struct fab_adapter *adapter);
/* Withdraws the registry entries and the socket (at exit). */
void fabric_close(struct fab_port *port);
/* In a fork()ed child, the port its parent opened: closes the child's
 * copies of its descriptors, leaves the parent's socket, registry entries
 * and epoll set alone, and frees nothing (the child's memory is a copy). */
void fabric_forget(struct fab_port *port);

/* The link to the port owning gid and, for a gid of another host's
 * address, the QP qpn (its slot, slot.c), connecting if needed; NULL when
 * no port answers for it. */
struct fab_link *fabric_resolve(struct fab_port *port, const uint8_t gid[16],
				uint32_t qpn);

/* Processes of one host that give their adapters the same address share
 * it, each adapter in a slot of its own (slot.c), its QPNs in the slot's
 * range of FAB_SLOT_QPN_MASK + 1 numbers. */
#define FAB_SLOT_SHIFT		16
#define FAB_SLOT_QPN_MASK	((1u << FAB_SLOT_SHIFT) - 1)
#define FAB_SLOTS		16
/* Narrows [*first, *last], the QPNs the kernel would give adapter `index`
 * at ipv4 (network order), to the adapter's slot when ipv4 is reached over
 * TCP: takes the slot, and its listening socket, if the port has none. */
void fabric_qpn_range(unsigned int index, uint32_t ipv4, uint32_t *first,
		      uint32_t *last);
bool fabric_link_alive(const struct fab_link *link);
/* The link carries messages as packets of the path MTU (FAB_F_SEG): the
 * requester counts one PSN per packet, as the wire does. */
bool fabric_link_segments(const struct fab_link *link);
/* The bytes of packets a requester keeps in flight on such a link: what
 * the receiver's socket can hold while its reader waits for a CPU, sized
 * from this port's own (the peer's is not known); 0 for other links. */
uint32_t fabric_link_window(const struct fab_link *link);
/* The listening socket of the port at the other end of link (names its
 * shared segment, shared.c); NULL or "" when it has none. */
const char *fabric_link_peer_path(const struct fab_link *link);
/* Where shared.c keeps its view of the peer, with the link; NULL for a
 * dead link. */
void **fabric_link_shared_slot(struct fab_link *link);

/* Queues one packet; the payload is gathered from iov. Never blocks.
 * Returns false if the packet is not sent: with errno EFAULT when iov
 * could not be read (nothing was sent, the link is fine), else the link
 * is dead (the packet is lost). */
bool fabric_send(struct fab_port *port, struct fab_link *link,
		 const struct fab_hdr *hdr, const struct iovec *iov,
		 int iovcnt);
/* fabric_send() of a payload that stays in place (registered memory) until
 * the socket takes it: a slow peer costs the link a few bytes a packet.
 * One found unreadable then is dropped if none of it left, else the rest
 * goes as zeros. */
bool fabric_send_in_place(struct fab_port *port, struct fab_link *link,
			  const struct fab_hdr *hdr, const struct iovec *iov,
			  int iovcnt);
/* Copies what the port's links still hold in place: before the device
 * lets the application have such memory back without the packet having
 * left (a request completed by a flush or an error, a QP destroyed,
 * memory deregistered). */
void fabric_copy_in_place(struct fab_port *port);

/*
 * Receiving, with the port's adapter lock held (it makes one thread the
 * reader of the port's sockets), but for fabric_wait() and fabric_wake().
 * fabric_wait: the device thread's sleep, up to timeout_ms (-1: forever),
 * keeping what it saw for fabric_deliver(), which calls the port's rx for
 * each packet. fabric_rx_poll: reads what already arrived on every link.
 * fabric_rx_poll_hinted: the same for a trapped doorbell's inline receive,
 * but the Unix links no frame was counted for (shared_frame_sent()) since
 * a read found them empty are left alone: no system call for an idle
 * link; and the RoCE socket only with roce. fabric_poll: wait and
 * deliver, for callers that own no lock (tools, benchmarks).
 */
int fabric_wait(struct fab_port *port, int timeout_ms);
/* fabric_wait() that ignores the links: only wake-ups, new connections
 * and the timeout (in ns) end it; the links are then read with
 * fabric_rx_poll(). */
int fabric_wait_quiet(struct fab_port *port, uint64_t timeout_ns);
int fabric_deliver(struct fab_port *port);
int fabric_rx_poll(struct fab_port *port);
int fabric_rx_poll_hinted(struct fab_port *port, bool roce);
int fabric_poll(struct fab_port *port, int timeout_ms);

/* The link holds bytes the socket did not take yet: a sender that can
 * wait should, rather than have its payload copied. */
bool fabric_link_busy(const struct fab_link *link);
/* Bytes the link has written to its socket so far: whether a busy link
 * still moves. fabric_link_push() first writes what the socket takes now,
 * for an owner whose thread had no CPU to notice that it could. */
uint64_t fabric_link_tx_bytes(const struct fab_link *link);
uint64_t fabric_link_push(struct fab_link *link);

/* What a port's RoCE v2 wire counted (fabric/roce.c); false when the
 * port speaks none. */
struct fab_wire_counts {
	unsigned long rx_packets;	/* handed to the device */
	unsigned long rx_bad_icrc;	/* dropped */
	unsigned long rx_malformed;	/* dropped: headers, opcode, length */
	unsigned long rx_bad_pkey;	/* dropped: not of the port's
					 * partition */
	unsigned long tx_packets;
	unsigned long rx_placed;	/* of rx_packets: read straight to
					 * their place (roce_ahead.c) */
};
bool fabric_wire_counts(const struct fab_port *port,
			struct fab_wire_counts *c);

/*
 * QP 1 of a port on the RoCE v2 wire (roce_gsi.c): the GMPs of the
 * kernel's CM. The handler gets each 256-byte MAD that came to QP 1 of
 * adapter `index` from the IPv4 address saddr (network order), under the
 * adapter's lock: it must only queue it. fabric_gsi_send() sends one from
 * QP 1 of adapter `index` to QP 1 at daddr, without the adapter's lock;
 * false when the adapter speaks no RoCE or the socket refused it.
 */
typedef void (*fab_gsi_fn)(unsigned int index, uint32_t saddr,
			   const uint8_t *mad, size_t len);
void fabric_gsi_attach(fab_gsi_fn fn);
bool fabric_gsi_send(unsigned int index, uint32_t daddr, const uint8_t *mad,
		     size_t len);
/* Whether adapter `index` of this process has its RoCE v2 wire open. */
bool fabric_gsi_ready(unsigned int index);
/*
 * The GMPs this process owes the wire when it ends (roce_gsi_exit.c): what
 * a kernel's CM sends for the connections of a process that dies, however
 * it dies. fabric_gsi_exit_set() leaves in entry `slot` (below
 * FAB_GSI_EXIT_SLOTS) the MAD to send from QP 1 of adapter `index` to
 * QP 1 at daddr, in place of what the entry held; fabric_gsi_exit_clear()
 * withdraws it. Once the process has ended (killed, crashed, exited or
 * replaced by exec), every MAD set is sent, once. False when it cannot
 * be: the adapter speaks no RoCE, or nothing can outlive the process.
 */
#define FAB_GSI_EXIT_SLOTS	256
bool fabric_gsi_exit_set(unsigned int slot, unsigned int index,
			 uint32_t daddr, const uint8_t *mad, size_t len);
void fabric_gsi_exit_clear(unsigned int slot);
/* Registers the fork() handlers of their lock, once (0 or an errno). It
 * nests inside the locks of the connection manager that sets them, whose
 * handlers must register after these: fork() runs prepare handlers in
 * the reverse order of registration, and takes the locks in that order. */
int fabric_gsi_exit_fork_handlers(void);

/* Sleep protocol of the device thread: announce the intent to sleep, then
 * re-check every other source of work, then fabric_wait(port, timeout) or
 * fabric_sleep_cancel(). Returns false if local packets are already
 * waiting (the sleep is cancelled). */
bool fabric_sleep_prepare(struct fab_port *port);
void fabric_sleep_cancel(struct fab_port *port);
/* Wakes the device thread if it sleeps. Async-signal-safe. */
void fabric_wake(struct fab_port *port);

#endif /* PVRDMA_SIM_FABRIC_H */
