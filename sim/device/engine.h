/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device engine's own state, shared by its files (nothing outside
 * sim/device/ includes this). The engine is split as rxe splits its device:
 *
 *   dev_lock.c  dev->lock: made, taken around fork(), released
 *   dispatch.c  doorbells: run on the application thread that trapped
 *               them, as a hypervisor handles an MMIO exit on the vCPU
 *               that took it (a CQ arm is in force when the store
 *               retires; QP/SRQ doorbells are queued and run by the lock
 *               holder, so a sender never waits for a busy device); an
 *               application polling an empty CQ runs a round of device
 *               work itself; every other doorbell a thread runs also
 *               reads what waits on the fabric (rx_inline())
 *   req.c       the requester: reads SQ WQEs from the user ring, checks
 *               local memory, sends requests over the fabric, keeps them
 *               until the responder acknowledges
 *   comp.c      the completer: ACKs, NAKs and read/atomic responses; RNR
 *               and sequence retries
 *   resp.c      the responder: checks remote keys and access, moves data
 *               into place, consumes receive WQEs, acknowledges
 *   recv.c      packets from the fabric to their QP; UD receive and the
 *               GRH a UD receive buffer starts with
 *   cqe.c       CQEs written into the user CQ ring, then events; the
 *               error state and its flush
 *   timers.c    ACK and RNR timers, kicks of the control path
 *   thread.c    the device thread, one per adapter: receives when no
 *               application polls, EPOLLOUT of full links, timers, kicks
 *   control.c   what the control path (the kernel model) asks of the
 *               device: struct sim_device_ops
 *   async.c     --async-mode: the device thread polls an active adapter
 *   direct_path.c  the requester's one entry point to the same-host
 *               path: one copy, wait, or the wire (direct_offer())
 *   direct.c    same-host one-sided operations in one copy (direct.h),
 *   direct_send.c  same-host SENDs: a receive of the target taken,
 *               its CQE written, by the requester
 *   direct_event.c  and its completion event raised on the target's
 *               channel, by the requester
 *   view.c      the views of QPs, CQs, SRQs and MRs the adapter
 *               publishes for same-host requesters (view.h), and
 *   publish.c   what of its objects goes into them (publish.h)
 *   packets.c   messages as packets of the path MTU, for a link that
 *               carries them so (RoCE v2): PSNs per packet, a message
 *               placed packet by packet, or a WRITE's run read to its
 *               place taken at once
 *   place.c     the WRITE packets of one run of datagrams placed with
 *               one copy, before anything shows or acknowledges them
 *
 * Everything except the doorbell queue runs with dev->lock held, so the
 * control path (uverbs) sees objects either before or after a unit of work.
 */
#ifndef PVRDMA_SIM_ENGINE_H
#define PVRDMA_SIM_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "device.h"
#include "fabric.h"
#include "libc.h"
#include "ring.h"
#include "wqe.h"

#define DBQ_SIZE	4096u	/* power of two */

/*
 * Vyukov's bounded MPMC queue, used with one consumer. Each slot carries a
 * sequence number stored relative to its index, so that all-zero memory is
 * an initialised empty queue: no set-up before the first trap.
 */
struct db_slot {
	atomic_ulong seq_rel;
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
};

struct db_queue {
	atomic_ulong tail;		/* producers */
	unsigned long head;		/* the device thread */
	struct db_slot slot[DBQ_SIZE];
};

struct out_wqe {
	struct sim_send_wr wr;
	uint32_t psn;
	uint32_t last_psn;		/* of its last packet (packets.c) */
	uint32_t pkts_sent;		/* packets sent (packets.c window) */
	uint8_t local_err;		/* status to complete with, 0 = none */
};

/* The engine's lists of QPs. Membership is the link's pprev and nothing
 * else: no flag can disagree with the list, an unlink is O(1), and linking
 * a QP already on its list is a no-op (a QP once linked to itself made
 * the ACK flush spin with dev->lock held). */
struct qlink {
	struct qlink *next;
	struct qlink **pprev;		/* NULL: on no list */
};

struct qlist {
	struct qlink *first;
};

#define eqp_of(l, member) \
	((struct eqp *)((uint8_t *)(l) - offsetof(struct eqp, member)))

static inline bool qlink_linked(const struct qlink *l)
{
	return l->pprev != NULL;
}

static inline void qlist_push(struct qlist *h, struct qlink *l)
{
	if (qlink_linked(l))
		return;
	l->next = h->first;
	if (l->next)
		l->next->pprev = &l->next;
	h->first = l;
	l->pprev = &h->first;
}

static inline void qlink_del(struct qlink *l)
{
	if (!qlink_linked(l))
		return;
	*l->pprev = l->next;
	if (l->next)
		l->next->pprev = l->pprev;
	l->next = NULL;
	l->pprev = NULL;
}

static inline struct qlink *qlist_pop(struct qlist *h)
{
	struct qlink *l = h->first;

	if (l)
		qlink_del(l);
	return l;
}

/* Moves every member of from to an empty to (to must stay in place while
 * it holds them: its members point at it). */
static inline void qlist_take(struct qlist *to, struct qlist *from)
{
	to->first = from->first;
	from->first = NULL;
	if (to->first)
		to->first->pprev = &to->first;
}

/* The responder keeps the result of as many atomics as a requester may
 * have outstanding (max_qp_rd_atom, 16): a resent atomic finds its
 * result and executes once. */
#define ATOMIC_RESULTS	16u

struct atomic_result {
	bool valid;
	uint32_t psn;
	uint64_t orig;
};

/*
 * The READs a responder executed last: a resend of one, or of its rest
 * from a later PSN, is answered again (IBA 9.7.5.1.1); a READ at an
 * earlier PSN that none covers was never sent by the requester (a stray
 * or forged packet) and is dropped, as rxe drops one it keeps no
 * resource for: it must not fail the QP through an access check. As
 * many as a requester may have in flight (max_qp_rd_atom).
 */
#define READ_RECORDS	16u

struct read_record {
	bool valid;
	uint32_t psn, span;	/* its PSNs: psn .. psn + span - 1 */
	uint32_t rkey;
	uint64_t va, len;
};

/* The requester's part of a QP (req.c, comp.c, packets.c). */
struct eqp_req {
	struct out_wqe *out;
	uint32_t out_cap, out_head, out_count, out_sent;
	uint32_t next_psn;
	uint64_t deadline;		/* ns; 0 = no timer */
	uint64_t deadline_tx;		/* the link's tx_bytes when armed */
	uint64_t rnr_until;
	uint8_t retries_left;
	uint8_t rnr_left;
	struct fab_link *link;		/* RC: the peer */
	uint8_t ud_gid[16];		/* UD: last destination resolved */
	uint32_t ud_qpn;		/* ... and its QPN (its slot) */
	struct fab_link *ud_link;
	uint32_t rd_inflight;		/* READs, atomics unanswered */
	uint32_t rresp_next;		/* packets.c: READ response PSN due */
	uint32_t win_base;		/* the oldest packet not acknowledged */
	uint64_t unasked;		/* bytes sent since an ACK was asked
					 * for (FAB_F_ACKREQ) */
	bool ask_owed;			/* and a WQE among them completes with
					 * a CQE, or they are sent again */
};

/* The responder's part (resp.c, packets.c). */
struct eqp_resp {
	uint32_t epsn;
	/* Request messages executed (24 bits), the MSN its ACKs and
	 * responses carry (AETH), as IBA 9.7.5.1.2 counts them. */
	uint32_t msn;
	bool nak_sent;
	struct fab_link *ack_link;
	uint32_t ack_psn;
	uint64_t ack_bytes;		/* covered by the queued ACK */
	bool ack_asked;			/* a request it covers asked for it
					 * (FAB_F_ACKREQ): sent when the round
					 * ends; else held for more */
	/* The results of the last atomics executed, for their resends. */
	struct atomic_result atomics[ATOMIC_RESULTS];
	uint32_t atomic_next;
	struct read_record reads[READ_RECORDS];
	uint32_t read_next;
	/* packets.c: the SEND or WRITE arriving in packets (seg_op its
	 * opcode) */
	bool seg_busy;
	uint8_t seg_op;
	struct sim_recv_wr seg_rwr;
	uint64_t seg_off;
	uint64_t seg_va;
	uint32_t seg_rkey;
	uint64_t seg_total;
};

/* The same-host direct path's part (req.c, direct*.c). */
struct eqp_direct {
	/* A stream's way back to one copy: attempts in a row that took
	 * the fabric, WQEs put on the fabric since the last (saturating). */
	uint8_t misses;
	uint8_t fabric_run;
	/* When a SEND at the head of the ring first found no receive (ns;
	 * 0: it did not); the next try is due at req.rnr_until. */
	uint64_t rnr_since;
};

struct eqp {
	struct sim_qp *qp;
	struct engine *eng;
	struct qlink all;		/* eng->all */
	struct qlink kick;		/* eng->kicks: control path kicked */
	struct qlink ack;		/* eng->acks: an ACK is queued */
	struct qlink wait;		/* eng->waiters: waits for its link */
	bool need_resolve;
	struct eqp_req req;
	struct eqp_resp resp;
	struct eqp_direct direct;
};

/*
 * place.c: the packets of RDMA WRITEs that came in one run of datagrams
 * (fab_rx_take()), placed with one copy. An entry keeps what failing
 * its packet needs: what the responder's ACK and MSN were before it.
 */
#define PLACE_MAX_ENTRIES	128u
#define PLACE_MAX_PIECES	256u

struct place_entry {
	struct eqp *e;
	struct fab_link *from;
	const uint8_t *src;		/* the payload, in the run's buffer */
	uint32_t len;
	uint32_t psn;
	uint32_t src_qpn;
	uint32_t msn;			/* the responder's, before it */
	uint32_t ack_psn;		/* the ACK queued before it, if */
	bool ack_queued;
	bool dead;			/* an earlier one of its QP failed */
	struct fab_link *ack_link;
	uint64_t ack_bytes;
	uint16_t piece, npieces;	/* its range of place_batch.piece */
};

struct place_batch {
	unsigned int n, npieces;
	bool flushing;
	struct place_entry ent[PLACE_MAX_ENTRIES];
	struct iovec piece[PLACE_MAX_PIECES];
	/* the copy's arrays: not on a stack, which may be a small signal
	 * stack of the application (a trapped doorbell receives) */
	struct iovec local[PLACE_MAX_ENTRIES];
	struct iovec remote[PLACE_MAX_PIECES];
};

struct engine {
	struct sim_dev *dev;
	struct db_queue dbq;
	struct fab_port *port;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_bool kick_pending;
	_Atomic uint64_t last_poll_ns;	/* the last POLL doorbell */
	/* When the last same-host batch that moved BULK_BYTES or more
	 * ended (ns; 0: the last one moved less). A send doorbell soon
	 * after it goes to the device thread (dispatch.c). */
	_Atomic uint64_t bulk_ns;
	atomic_bool bulk_linger;	/* the device thread waits for one */
	atomic_uint handed;		/* doorbells handed since the last drain */
	atomic_bool dev_set;		/* dev is known (before the start) */
	struct qlist all;
	struct qlist kicks;
	struct qlist acks;
	struct qlist waiters;		/* QPs waiting for a full link */
	uint64_t next_deadline;
	/* timers.c: when raises held in the adapter's view are looked at
	 * (0: none seen held) */
	uint64_t raise_check_at;
	uint64_t sleep_until;		/* when the device thread's coming
					 * sleep ends; 0 while it works */
	uint64_t now;
	/* async.c: with --async-mode the thread polls until async_until,
	 * that long after the counters (async_seen) last moved */
	unsigned long async_seen;
	uint64_t async_until;
	/* publish.c: the adapter's segment lock, taken once however deeply
	 * pub_lock() nests (dev->lock held) */
	unsigned int own_depth;
	bool own_locked;
	struct place_batch place;
};

/* thread.c: the device of each adapter, by dev->index. */
extern struct engine dev_engines[SIM_MAX_ADAPTERS];

#define PSN_MASK	0xffffffu

/* pvrdma_av.port_pd: the PD number in bits 0-23, the port above. */
#define PVRDMA_AV_PDN_MASK	0xffffffu

/* dev->gid_type holds libibverbs' sysfs GID types: 0 = IB/RoCE v1,
 * 1 = RoCE v2 (enum ibv_gid_type_sysfs, private to libibverbs). */
#define GID_TYPE_ROCE_V2	1

/* An application that rang a POLL doorbell this recently is polling: the
 * trapping thread does the receive work, the device thread stays off the
 * sockets (a wake-up per packet would take a CPU from a poller). */
#define POLLING_NS	30000ull
/* A queued ACK goes out once it covers this many bytes (resp.c). */
#define ACK_COALESCE_MAX	(1ull << 20)
/* A requester asks for an ACK at least every so many bytes (req.c). */
#define ACK_ASK_BYTES		(ACK_COALESCE_MAX / 2)

/* A same-host batch this large costs its copy far more than the trap that
 * started it: the doorbells of such a stream (the next one comes within
 * BULK_GAP_NS) are handed to the device thread, which copies while the
 * application posts (dispatch.c). */
#define BULK_BYTES	(32u << 10)
#define BULK_GAP_NS	5000ull
#define BULK_HANDED	8u
#define BULK_LINGER_NS	20000ull

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline struct engine *engine_of(struct sim_dev *dev)
{
	return dev->index < SIM_MAX_ADAPTERS ? &dev_engines[dev->index] : NULL;
}

/* The QP's WRs sent but not acknowledged may have their tails on the
 * link in place (fabric_send_in_place): before they complete without
 * that ACK (a flush, an error) or the QP goes, and the application may
 * reuse their memory, the link copies what it still holds. */
static inline void in_place_settle(struct eqp *e)
{
	if (e->req.out_sent)
		fabric_copy_in_place(e->eng->port);
}

static inline void stat_add(atomic_ulong *c, unsigned long v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* a precedes b in 24-bit PSN space */
static inline bool psn_before(uint32_t a, uint32_t b)
{
	return ((a - b) << 8) & 0x80000000u;
}

/* Where the device reads or writes an SGE list or a remote range: one
 * piece per SGE, more where an MR kept pages the application gave up. */
struct local_iov {
	struct iovec iov[SIM_MAX_IOV];
	int n;
};

enum recv_take { RECV_NONE, RECV_OK, RECV_BAD };

/* ---- dispatch.c: doorbells, their queue, rounds of device work ---- */
bool dev_dbq_empty(struct db_queue *q);
/* Runs the doorbells queued while dev->lock was held (held). */
int dev_dbq_drain(struct engine *eng);
int engine_round(struct engine *eng, bool inline_rx);

/* ---- dev_lock.c: dev->lock ---- */
/* Releases it; a doorbell a trap queued meanwhile is run first. */
void dev_unlock(struct engine *eng, struct sim_dev *dev);

/* ---- cqe.c: completions and the error state ---- */
uint8_t dev_network_type(struct sim_dev *dev, uint8_t gid_type,
		     const uint8_t gid[16]);
uint8_t dev_roce_packet_type(uint8_t network_type);
void dev_cqe_write(struct sim_qp *qp, struct sim_cq *cq,
	       const struct pvrdma_cqe *src, bool solicited);
void dev_cqe_init(struct pvrdma_cqe *c, struct sim_qp *qp, uint64_t wr_id,
	      uint32_t opcode, uint32_t status);
void dev_complete_send(struct eqp *e, const struct sim_send_wr *wr,
		   uint32_t status);
void dev_complete_recv_error(struct eqp *e, uint64_t wr_id,
			 uint32_t status);
struct out_wqe *dev_out_at(struct eqp *e, uint32_t i);
void dev_out_pop(struct eqp *e);
void dev_out_unsend(struct eqp *e);
void dev_qp_flush(struct eqp *e);
void dev_qp_to_error(struct eqp *e);
void dev_qp_fatal(struct eqp *e);

/* ---- timers.c: ACK and RNR timers, control path kicks ---- */
/* IB min_rnr_timer encoding -> microseconds. */
extern const uint32_t dev_rnr_timer_us[32];
uint64_t dev_ack_timeout_ns(const struct sim_qp *qp);
void dev_arm_timer(struct eqp *e, uint64_t when);
void dev_restart_ack_timer(struct eqp *e);
void dev_arm_rnr_timer(struct eqp *e, uint64_t when);
void dev_run_timers(struct engine *eng);
void dev_run_raise_checks(struct engine *eng);
void dev_kick(struct eqp *e);
int dev_run_kicks(struct engine *eng);

/* ---- req.c: the requester ---- */
int dev_run_waiters(struct engine *eng);
uint32_t dev_map_sges(struct sim_qp *qp, const struct pvrdma_sge *sge,
		  uint32_t num_sge, int need, struct local_iov *li);
void dev_hdr_init(struct fab_hdr *h, struct sim_qp *qp, uint8_t type,
	      uint8_t gid_index);
void dev_complete_local_error(struct eqp *e);
void dev_sq_progress(struct eqp *e);

/* ---- comp.c: the completer (the requester's answers) ---- */
void dev_requester_fail(struct eqp *e, uint32_t status);
void dev_requester_rx(struct eqp *e, const struct fab_hdr *h,
		  struct fab_rx *rx);

/* ---- resp.c: the responder and the receive queues ---- */
void dev_acks_flush(struct engine *eng);
void dev_srq_limit_check(struct sim_srq *srq);
enum recv_take dev_recv_peek(struct sim_qp *qp, struct sim_recv_wr *rwr);
void dev_recv_consume(struct sim_qp *qp);
/* The CQE of a successful receive of the message h, for the QP of
 * qp_handle (the same-host requester writes it too, direct_send.c). */
void dev_recv_cqe_fill(struct pvrdma_cqe *c, uint32_t qp_handle,
		   uint8_t port_num, uint64_t wr_id, const struct fab_hdr *h,
		   uint32_t opcode, uint32_t byte_len, uint32_t wc_flags);
void dev_recv_complete(struct sim_qp *qp, const struct sim_recv_wr *rwr,
		   const struct fab_hdr *h, uint32_t opcode,
		   uint32_t byte_len, uint32_t wc_flags);
void dev_responder_rx(struct eqp *e, struct fab_link *from,
		  const struct fab_hdr *h, struct fab_rx *rx);

/* resp.c, for packets.c: a queued ACK, a NAK, a failure NAKed */
void dev_resp_ack_queue(struct eqp *e, struct fab_link *to, uint32_t psn,
		    uint64_t len, bool asked);
void dev_resp_nak(struct eqp *e, struct fab_link *to, uint8_t code,
	      uint32_t psn, uint32_t dst_qpn);
void dev_resp_fail(struct eqp *e, struct fab_link *from,
	       const struct fab_hdr *h, uint8_t code);

/* ---- packets.c: messages as packets of the path MTU ---- */
uint8_t pkt_mtu_flags(const struct sim_qp *qp);
/* PSNs the WQE takes on the QP's link: 1, or its packets. */
uint32_t pkt_span(const struct eqp *e, const struct sim_send_wr *wr);
/* PSNs the READ request h takes: its response's packets. */
uint32_t pkt_read_span(const struct eqp *e, const struct fab_link *from,
		       const struct fab_hdr *h);
bool pkt_psn_in(const struct out_wqe *o, uint32_t psn);
const struct fab_hdr *pkt_rc_source(const struct eqp *e,
				    const struct fab_link *from,
				    const struct fab_hdr *h,
				    struct fab_hdr *copy);
void pkt_request(struct eqp *e, struct fab_link *from,
		 const struct fab_hdr *h, struct fab_rx *rx);
void pkt_read_response(struct eqp *e, const struct fab_hdr *h,
		       struct fab_rx *rx);
/* The packets of o the window lets go now, set in h (rc_transmit's
 * header of o); false when it lets none. *whole: o is then sent. */
bool pkt_window(struct eqp *e, struct out_wqe *o, struct fab_hdr *h,
		bool *whole);
/* Everything in flight is sent again, from psn where it falls in the
 * oldest request (what came before it arrived). */
void pkt_rewind(struct eqp *e, uint32_t psn);
/* Packets before psn are acknowledged: the window moves. */
void pkt_acked(struct eqp *e, uint32_t psn);
/* A requester asks for an ACK at least every so many bytes (req.c). */
uint64_t pkt_ask_every(const struct eqp *e);

/* The payload bytes of the WRITE packets e expects from psn on, at most
 * max_packets, and where they go (fab_rx_ahead_fn); 0 when e expects
 * no such packets. */
uint64_t pkt_write_ahead(struct eqp *e, uint32_t psn, uint32_t max_packets,
			 struct iovec *iov, int *niov, uint32_t *mtu,
			 bool *ends);
/* Packets of that WRITE that arrived where pkt_write_ahead() said they
 * go (fab_rx_placed_fn): taken as each would be, at once. */
void pkt_write_placed(struct eqp *e, struct fab_link *from, uint32_t psn,
		      uint32_t count, uint64_t bytes, bool ends, bool asked);

/* ---- place.c: WRITE packets of a run placed with one copy ---- */
/* Takes the payload of WRITE packet h (its place: ri) for the run's
 * copy: 1; 0 when it cannot be (the caller copies it now, after those
 * taken); -1 when the copy of those taken, made first, failed an
 * earlier packet of the QP (h is then dropped: the QP is in error). */
int dev_place_defer(struct eqp *e, struct fab_link *from,
		    const struct fab_hdr *h, struct fab_rx *rx,
		    const struct local_iov *ri);
/* Makes the copies taken; fails, as a copy that faults fails it, the
 * packet of each QP whose copy faulted, and drops its QP's later ones. */
void dev_place_flush(struct engine *eng);
/* dev_place_flush(); false if that failed e (it is now in error). */
bool dev_place_settle(struct eqp *e);
/* The packet h may join the run's copy: the engine copies before any
 * other. */
bool dev_place_joins(const struct fab_hdr *h);
/* fab_rx_end_fn: the run's buffer goes away. */
void engine_rx_end(void *owner);
/* fab_rx_ahead_fn (recv.c). */
uint64_t engine_rx_ahead(void *owner, uint32_t dqpn, uint32_t psn,
			 uint32_t max_packets, struct iovec *iov, int *niov,
			 uint32_t *mtu, bool *ends);
/* fab_rx_placed_fn (recv.c). */
void engine_rx_placed(void *owner, struct fab_link *from, uint32_t dqpn,
		      uint32_t psn, uint32_t count, uint64_t bytes, bool ends,
		      bool asked);

/* ---- async.c: --async-mode ---- */
/* One polling round of the device thread while the adapter is active;
 * false: not in async mode, or idle long enough to sleep. */
bool dev_async_poll(struct engine *eng);

#endif /* PVRDMA_SIM_ENGINE_H */
