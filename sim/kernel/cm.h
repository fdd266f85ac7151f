/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim: the RDMA connection manager, as Linux's rdma_ucm + rdma_cm +
 * ib_cm give it to librdmacm. The contract between its parts:
 *
 *   ucma.c      the /dev/infiniband/rdma_cm file: ids by number, event
 *               queues, blocking and non-blocking reads
 *   ucma_cmd.c  the file's command table: each command copied from the
 *               user as rdma_ucm copies it
 *   ucma_addr.c the file's address commands: bind, resolve, query, options
 *   cm.c        the commands of the CM protocol between processes (REQ/REP/RTU, REJ,
 *               DREQ/DREP, SIDR REQ/REP) and each id's connection state
 *   cm_agent.c  the agent thread: what it receives, its timers, fork()
 *   cm_msg.h    the messages and helpers cm.c and cm_agent.c share
 *   cm_addr.c   addresses: which adapter owns an address, who on the
 *               fabric owns a destination, where its CM agent listens
 *   cm_gsi.c    with --wire roce, peers on other hosts: the connection's
 *               socket leads to the GSI thread, which speaks IB CM MADs
 *               on QP 1 for it (cm_gsi.h, cm_gsi_msg.c, cm_mad.c)
 *
 * All CM state of the process is guarded by cm_lock: commands take it,
 * the agent thread (cm.c) takes it to act on what arrived. Events go to
 * the id's file under the lock; a blocking GET_EVENT sleeps on the file's
 * condition variable, and the file's fd (an eventfd) is readable while
 * events wait, so poll/epoll/select work on it as on the kernel's.
 */
#ifndef PVRDMA_SIM_CM_H
#define PVRDMA_SIM_CM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/ib.h>	/* struct sockaddr_ib (AF_IB) */
#include <rdma/rdma_user_cm.h>

#include "kernel.h"
#include "libc.h"
#include "uaccess.h"

#ifndef AF_IB
#define AF_IB 27
#endif

/* The IB CM's private data sizes (IBTA 12.6) and rdma_cm's header in the
 * REQ and SIDR REQ that carries the IP addresses. */
#define CM_REQ_PRIVATE_DATA		92
#define CM_REP_PRIVATE_DATA		196
#define CM_REJ_PRIVATE_DATA		148
#define CM_DREQ_PRIVATE_DATA		220
#define CM_DREP_PRIVATE_DATA		224
#define CM_SIDR_REQ_PRIVATE_DATA	216
#define CM_SIDR_REP_PRIVATE_DATA	136
#define CM_RDMA_HDR			36

/* IB CM reject reasons and SIDR statuses rdma_cm uses. */
#define CM_REJ_TIMEOUT			4
#define CM_REJ_INVALID_SERVICE_ID	8
#define CM_REJ_CONSUMER_DEFINED		28
#define CM_REJ_VENDOR_OPTION		35
#define CM_SIDR_SUCCESS			0
#define CM_SIDR_UNSUPPORTED		1
#define CM_SIDR_REJECT			2

#define CM_UDP_QKEY			0x01234567u
#define CM_HOP_LIMIT			64
/* rdma_cm's packet life time on RoCE; the QP's ACK timeout follows. */
#define CM_IBOE_PACKET_LIFETIME		18
/* The service timeout rdma_cm's MRAs ask for (4.096 us << 24: 69 s). */
#define CM_MRA_SERVICE_TIMEOUT		24

/* The kernel's enum rdma_cm_event_type (librdmacm's rdma_cma.h). */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED,
	RDMA_CM_EVENT_ADDR_ERROR,
	RDMA_CM_EVENT_ROUTE_RESOLVED,
	RDMA_CM_EVENT_ROUTE_ERROR,
	RDMA_CM_EVENT_CONNECT_REQUEST,
	RDMA_CM_EVENT_CONNECT_RESPONSE,
	RDMA_CM_EVENT_CONNECT_ERROR,
	RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED,
	RDMA_CM_EVENT_ESTABLISHED,
	RDMA_CM_EVENT_DISCONNECTED,
	RDMA_CM_EVENT_DEVICE_REMOVAL,
	RDMA_CM_EVENT_MULTICAST_JOIN,
	RDMA_CM_EVENT_MULTICAST_ERROR,
	RDMA_CM_EVENT_ADDR_CHANGE,
	RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

enum cm_state {
	CM_IDLE,		/* created */
	CM_ADDR_BOUND,
	CM_ADDR_RESOLVED,	/* ADDR_RESOLVED queued */
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT,		/* active: REQ or SIDR REQ out */
	CM_REP_RCVD,		/* active: CONNECT_RESPONSE queued */
	CM_REQ_RCVD,		/* passive: CONNECT_REQUEST queued */
	CM_REP_SENT,		/* passive: accepted, waiting for RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,		/* DISCONNECTED queued, DREP owed */
	CM_TIMEWAIT,		/* closed; after a disconnect, TIMEWAIT_EXIT
				 * follows */
	CM_UD_DONE,		/* SIDR exchange over */
};

struct ucma_file;
struct cm_msg;

struct cm_id {
	uint32_t handle;		/* the ucma id */
	uint64_t uid;			/* librdmacm's cookie */
	struct ucma_file *file;
	uint16_t ps;			/* RDMA_PS_* */
	uint8_t qp_type;		/* IBV_QPT_RC or IBV_QPT_UD */
	enum cm_state state;
	bool child;			/* made by a connection request: it
					 * holds no port of its own */
	bool reported;			/* child: CONNECT_REQUEST delivered */
	bool destroyed;
	uint32_t events_reported;

	struct sockaddr_storage src, dst;
	struct sim_dev *dev;		/* bound adapter, NULL for a wildcard */
	unsigned int sgid_index;
	union ibv_gid sgid, dgid;
	bool route_resolved;

	/* SET_OPTION */
	uint8_t tos;
	bool tos_set;
	bool reuseaddr;
	bool afonly;
	uint8_t ack_timeout;
	bool ack_timeout_set;

	/* listener */
	int backlog;			/* CONNECT_REQUESTs it may have queued */

	/* connection */
	int sock;			/* to the peer's CM agent, -1 when none */
	struct cm_msg *connecting;	/* a TCP connect under way: the REQ
					 * to send once it is made */
	struct cm_id *listener;		/* child: its listen id until reported */
	uint32_t local_qpn, remote_qpn;
	uint32_t local_psn, remote_psn;
	uint32_t qkey;
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count, flow_control;
	enum ibv_mtu mtu;
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 = no timer */
	bool timewait_exit;		/* TIMEWAIT_EXIT due at the deadline */

	struct cm_id *next;		/* every id of the process */
};

struct ucma_event {
	struct ucma_event *next;
	struct cm_id *id;		/* the id it is for */
	struct cm_id *child;		/* CONNECT_REQUEST: the new id */
	uint32_t mc_id;			/* multicast events: the join */
	bool mc;
	struct rdma_ucm_event_resp resp;
};

struct ucma_file {
	/* The sim's own dup of the eventfd the process opened, readable
	 * while events wait: it shares that file's O_NONBLOCK, and stays
	 * this file's whatever becomes of the process's numbers. */
	int fd;
	pthread_cond_t cond;
	struct ucma_event *head, *tail;
	bool readable;
	/* Commands running on the file: as in the kernel, a thread blocked
	 * in GET_EVENT keeps the file open after its last fd is closed. */
	unsigned int users;
	bool closed;
};

/*
 * How long a REQ, REP or DREQ waits for its answer before the CM gives up
 * (UNREACHABLE, or DISCONNECTED for a DREQ, with -ETIMEDOUT): rdma_cm's
 * response timeout (4.096 us << 20) times ib_cm's 15 retries and the
 * first try. A variable so that tests can shorten it.
 */
extern uint64_t cm_response_timeout_ns;
/* How long a REQ or REP waits once the peer acknowledged it with an MRA:
 * the MRA's service timeout plus a packet's lifetime. A variable too. */
extern uint64_t cm_mra_timeout_ns;

extern pthread_mutex_t cm_lock;
extern struct cm_id *cm_ids;

/* ---- ucma.c (the file itself: kernel.h) ---- */
/* Queues an event for id (cm_lock held); resp->uid and resp->id are set
 * from the id. Returns the event for the caller to fill in more, or NULL
 * (none queued) for a connection's id the user has not accepted yet. */
struct ucma_event *ucma_event_queue(struct cm_id *id, uint32_t event,
				    int status);
/* A new id for a connection request to listener, counted against its
 * backlog; NULL when the backlog is full. */
struct cm_id *ucma_child_alloc(struct cm_id *listener);
/* Drops id's queued events (cm_lock held). */
void ucma_event_drop_id(struct cm_id *id);
/* The file's id numbered handle, or NULL with *err ENOENT or EINVAL. */
struct cm_id *ucma_id_get(struct ucma_file *file, uint32_t handle, int *err);
struct cm_id *ucma_id_alloc(struct ucma_file *file, uint16_t ps,
			    uint8_t qp_type);
void ucma_id_destroy(struct cm_id *id);
/* The commands whose work is the file's own (cm_lock held); each writes
 * its response at the user address given, 0 or a negative errno. */
int ucma_get_event(struct ucma_file *file, uint64_t response, uint16_t out);
int ucma_join_mcast(struct cm_id *id, uint64_t uid,
		    const struct sockaddr *addr, uint64_t response,
		    uint16_t out);
int ucma_leave_mcast(struct ucma_file *file, uint32_t handle,
		     uint64_t response);
int ucma_migrate_id(struct ucma_file *to,
		    const struct rdma_ucm_migrate_id *c, uint16_t out);

/* ---- ucma_cmd.c: the command table ---- */
/* Reads and checks the header of a write() at user address buf. */
int ucma_cmd_header(uint64_t buf, size_t len, struct rdma_ucm_cmd_hdr *hdr);
/* Runs the command whose structure is at user address in (cm_lock
 * held). */
int ucma_cmd_run(struct ucma_file *file, const struct rdma_ucm_cmd_hdr *hdr,
		 uint64_t in);

/*
 * Commands and responses are at addresses the application gave: a bad one
 * must be EFAULT, as copy_*_user() make it, not a crash of the caller
 * (the kernel model's user copies, uaccess.c).
 */
static inline int copy_to_user(uint64_t ptr, const void *src, size_t len)
{
	return sim_copy_to_user(ptr, src, len);
}

static inline int copy_from_user(void *dst, uint64_t ptr, size_t len)
{
	return sim_copy_from_user(dst, ptr, len);
}

/* ---- ucma_addr.c: the address commands (cm_lock held) ---- */
int ucma_bind_id(struct cm_id *id, const struct sockaddr *sa);
int ucma_resolve_addr(struct cm_id *id, const struct sockaddr *src,
		      const struct sockaddr *dst);
/* Whether another id is bound to sa's address and port. */
bool ucma_port_in_use(const struct cm_id *self, const struct sockaddr *sa);
int ucma_resolve_route(struct cm_id *id);
/* QUERY_ROUTE's response length is checked before its command is read. */
int ucma_query_route(struct cm_id *id, uint64_t response, uint16_t out);
int ucma_query_addr(struct cm_id *id, uint64_t response, uint16_t out);
int ucma_query_gid(struct cm_id *id, uint64_t response, uint16_t out);
int ucma_query_path(struct cm_id *id, uint64_t response, uint16_t out);
/* Reads the option's value from the user (EFAULT), then sets it. */
int ucma_set_option(struct cm_id *id, const struct rdma_ucm_set_option *c);

/* ---- cm.c: the protocol (cm_lock held unless noted) ---- */
/* Starts the agent of this process: listening sockets, thread. */
int cm_agent_start(void);
int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p);
int cm_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p);
int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pdata,
	      uint8_t len);
int cm_disconnect(struct cm_id *id);
/* What destroying the id says to the peer; closes the connection. */
void cm_destroy(struct cm_id *id);
int cm_init_qp_attr(struct cm_id *id, uint32_t qp_state,
		    struct ib_uverbs_qp_attr *attr);
int cm_notify(struct cm_id *id, uint32_t event);
uint32_t cm_random_psn(void);
/* An ephemeral port, as the kernel picks them (32768..60999). */
uint16_t cm_random_port(void);

/* ---- cm_addr.c: addresses ---- */
socklen_t cm_addr_len(const struct sockaddr *sa);
bool cm_addr_any(const struct sockaddr *sa);
/* A multicast group address: 224/4 or ff00::/8. */
bool cm_addr_multicast(const struct sockaddr *sa);
/* An address of the host's loopback interface: 127/8 or ::1. */
bool cm_addr_loopback(const struct sockaddr *sa);
uint16_t cm_addr_port(const struct sockaddr *sa);	/* host order */
void cm_addr_set_port(struct sockaddr *sa, uint16_t port);
/* The GID an IP address maps to on a RoCE port (IPv4-mapped for IPv4,
 * the address itself for IPv6). False for other families. */
bool cm_addr_gid(const struct sockaddr *sa, union ibv_gid *gid);
/* The local adapter owning the address (and the GID index it is), or
 * NULL. */
struct sim_dev *cm_addr_local(const struct sockaddr *sa,
			      unsigned int *gid_index);
/* The adapter a wildcard source uses towards dst. */
struct sim_dev *cm_addr_route(const struct sockaddr *dst,
			      unsigned int *gid_index);
/* Whether some adapter on the fabric (this process or another sharing the
 * run directory) owns gid. */
bool cm_addr_reachable(const union ibv_gid *gid);
/* The abstract socket address of the CM agent answering for gid. */
socklen_t cm_agent_sockaddr(const union ibv_gid *gid, struct sockaddr *sa);
/* cm_tcp.c: agents on other hosts, over TCP. cm_tcp_gid: whether gid is
 * on another host this process can reach; cm_tcp_route: the adapter
 * towards such an address; cm_tcp_listen: the agent's listening socket at
 * dev's address (-1: none); cm_tcp_connect: a socket connecting to the
 * agent answering for gid (poll it for POLLOUT), or -1 with errno.
 * Sockets pass whole messages
 * of msg_size bytes to poll. */
bool cm_tcp_gid(const union ibv_gid *gid);
struct sim_dev *cm_tcp_route(const struct sockaddr *dst,
			     unsigned int *gid_index);
int cm_tcp_listen(const struct sim_dev *dev, size_t msg_size);
int cm_tcp_connect(const union ibv_gid *gid, size_t msg_size);
/* cm_gsi.c: peers over the RoCE v2 wire get IB CM MADs on QP 1.
 * cm_gsi_start: the GSI thread, with --wire roce; cm_gsi_gid: whether gid
 * is such a peer's; cm_gsi_connect: the socket of a new connection to
 * it, on which the first message is the REQ or SIDR REQ, or -1. */
int cm_gsi_start(void);
/* Registers the GSI's fork() handlers and those of the locks inside it,
 * once, before the agent's own (0 or an errno). */
int cm_gsi_fork_handlers(void);
bool cm_gsi_gid(const union ibv_gid *gid);
int cm_gsi_connect(void);
/* Sends as MADs, on the calling thread, what the GSI connections' agent
 * ends hold (cm_lock held). */
void cm_gsi_kick(void);
/* How long such a connect may take before the REQ counts as refused. */
#define CM_TCP_CONNECT_MS	2000
/* Listener lookup: whether a listen id bound to lsa takes a connection to
 * dst (same port, same address or a wildcard of a compatible family). */
bool cm_addr_listen_match(const struct sockaddr *lsa, bool afonly,
			  const struct sockaddr *dst);

#endif /* PVRDMA_SIM_CM_H */
