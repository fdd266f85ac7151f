/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the end-to-end verbs programs: failing loudly, the TCP
 * side channel two processes use to swap QP numbers and to agree on when each
 * step happens, bringing QPs up, and polling a CQ without hanging forever.
 *
 * The programs link only libibverbs: they are ordinary RDMA applications and
 * must behave the same on any provider.
 */
#ifndef E2E_COMMON_H
#define E2E_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/* A hang guard, not a performance bound: nothing here should take long. */
#define E2E_WAIT_SECONDS	30

void e2e_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define E2E_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			e2e_fail(__FILE__, __LINE__, __VA_ARGS__);	\
	} while (0)

/* Common command line of the programs. */
struct e2e_args {
	bool server;		/* --server: listens; --client: connects */
	bool single;		/* neither: a single-process test */
	int port;		/* --port: TCP port of the side channel */
	const char *dev;	/* --dev: device name, NULL = first */
	const char *mode;	/* --mode: which scenario */
	int gid_index;		/* --gid-index, default 0 */
	long expect;		/* --expect: a number the mode checks */
};

void e2e_parse_args(int argc, char **argv, struct e2e_args *args);

/* An opened adapter with its PD and port 1 attributes. */
struct e2e_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr port_attr;
	union ibv_gid gid;
	int gid_index;
	bool rxe;	/* Linux soft-RoCE, a native peer of the sim */
};

/*
 * wc_flags a device may set beyond those a test expects. Linux rxe sets
 * IBV_WC_GRH on every receive (a RoCE packet has a network header) and
 * IBV_WC_WITH_IMM on the send completion of a SEND or WRITE with immediate;
 * e2e_open() allows those two on an rxe device. 0 for every other device.
 */
extern unsigned int e2e_wc_extra_flags;

void e2e_open(struct e2e_dev *d, const char *name, int gid_index);
void e2e_close(struct e2e_dev *d);

/* Side channel: a connected TCP socket on 127.0.0.1, or on the server's
 * address in E2E_CHANNEL_ADDR. */
int e2e_channel_open(const struct e2e_args *args);
void e2e_send_all(int sock, const void *buf, size_t len);
/* Returns false on orderly EOF before any byte arrived. */
bool e2e_recv_all(int sock, void *buf, size_t len);
/* Both sides call it with the same tag: a rendezvous point. */
void e2e_sync(int sock, const char *tag);

/* What a peer needs to reach our QPs and memory. */
struct e2e_peer {
	uint32_t rc_qpn;
	uint32_t ud_qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

void e2e_exchange(int sock, const struct e2e_peer *mine,
		  struct e2e_peer *theirs);

/* RC transport knobs: zero means "the default" of e2e_rc_connect. */
struct e2e_rc_opts {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	bool set_rnr_retry;	/* rnr_retry 0 is meaningful */
	bool no_timeout;	/* timeout 0: wait for the ACK/NAK forever */
};

struct ibv_qp *e2e_create_qp(struct e2e_dev *d, enum ibv_qp_type type,
			     struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			     uint32_t depth, uint32_t max_sge);
void e2e_qp_to_init(struct ibv_qp *qp, enum ibv_qp_type type);
void e2e_rc_connect(struct e2e_dev *d, struct ibv_qp *qp, uint32_t my_psn,
		    const struct e2e_peer *peer,
		    const struct e2e_rc_opts *opts);
void e2e_ud_ready(struct ibv_qp *qp, uint32_t my_psn);
struct ibv_ah *e2e_create_ah(struct e2e_dev *d, const uint8_t gid[16]);
void e2e_fill_ah_attr(struct e2e_dev *d, const uint8_t gid[16],
		      struct ibv_ah_attr *ah);

/* Waits (up to E2E_WAIT_SECONDS) for one completion; fails on timeout. */
void e2e_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what);
/* Returns the number of completions found (0 or 1), never waits. */
int e2e_poll_now(struct ibv_cq *cq, struct ibv_wc *wc);

/* Every field of a completion a user relies on. */
struct e2e_wc_expect {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t qp_num;
	unsigned int wc_flags;
	bool check_len;
	uint32_t byte_len;
	uint32_t imm_data;	/* network order, as in struct ibv_wc */
	bool check_src_qp;
	uint32_t src_qp;
};

void e2e_check_wc(const struct ibv_wc *wc, const struct e2e_wc_expect *exp,
		  const char *what);

const char *e2e_errno_name(int err);

/*
 * The process's fd table: returns how many descriptors are open; *rings
 * gets how many of them hold ring memory (the sim's "pvrdma-ring" files),
 * and the first max of those numbers go to ring_fds when it is not NULL.
 */
unsigned int e2e_fd_table(unsigned int *rings, int *ring_fds,
			  unsigned int max);
/* fn for each open descriptor but the walk's own, with what its
 * /proc/self/fd link names. */
void e2e_fd_walk(void (*fn)(int fd, const char *target, void *arg),
		 void *arg);

/* A deterministic byte pattern both processes can compute. */
void e2e_pattern(uint8_t *buf, size_t len, unsigned int seed);
bool e2e_pattern_ok(const uint8_t *buf, size_t len, unsigned int seed);

#endif /* E2E_COMMON_H */
