// SPDX-License-Identifier: BSD-2-Clause
/* Helpers of the end-to-end verbs programs; see e2e_common.h. */
#include "e2e_common.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void e2e_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	exit(1);
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--server|--client] [--port N] [--dev NAME]\n"
		"       [--mode MODE] [--gid-index N] [--expect N]\n", prog);
	exit(2);
}

void e2e_parse_args(int argc, char **argv, struct e2e_args *args)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "dev", required_argument, NULL, 'd' },
		{ "mode", required_argument, NULL, 'm' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "expect", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	bool role = false;
	int c;

	memset(args, 0, sizeof(*args));
	args->port = 18600;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			args->server = true;
			role = true;
			break;
		case 'c':
			args->server = false;
			role = true;
			break;
		case 'p':
			args->port = atoi(optarg);
			break;
		case 'd':
			args->dev = optarg;
			break;
		case 'm':
			args->mode = optarg;
			break;
		case 'g':
			args->gid_index = atoi(optarg);
			break;
		case 'e':
			args->expect = strtol(optarg, NULL, 0);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	args->single = !role;
	/* Both processes of a pair print into one log: keep lines whole. */
	setvbuf(stdout, NULL, _IOLBF, 0);
}

unsigned int e2e_wc_extra_flags;

void e2e_open(struct e2e_dev *d, const char *name, int gid_index)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	int n, i;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	E2E_CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	E2E_CHECK(n > 0, "no RDMA device found");
	for (i = 0; i < n; i++) {
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			dev = list[i];
			break;
		}
	}
	E2E_CHECK(dev, "device %s not found", name);
	d->ctx = ibv_open_device(dev);
	E2E_CHECK(d->ctx, "ibv_open_device(%s): %s",
		  ibv_get_device_name(dev), strerror(errno));
	d->rxe = !strncmp(ibv_get_device_name(dev), "rxe", 3);
	if (d->rxe)
		e2e_wc_extra_flags = IBV_WC_GRH | IBV_WC_WITH_IMM;
	ibv_free_device_list(list);

	E2E_CHECK(!ibv_query_device(d->ctx, &d->dev_attr),
		  "ibv_query_device failed");
	E2E_CHECK(!ibv_query_port(d->ctx, 1, &d->port_attr),
		  "ibv_query_port failed");
	E2E_CHECK(d->port_attr.state == IBV_PORT_ACTIVE,
		  "port 1 is not active (%d)", d->port_attr.state);
	d->gid_index = gid_index;
	E2E_CHECK(!ibv_query_gid(d->ctx, 1, gid_index, &d->gid),
		  "ibv_query_gid(%d) failed", gid_index);
	d->pd = ibv_alloc_pd(d->ctx);
	E2E_CHECK(d->pd, "ibv_alloc_pd: %s", strerror(errno));
}

void e2e_close(struct e2e_dev *d)
{
	E2E_CHECK(!ibv_dealloc_pd(d->pd), "ibv_dealloc_pd failed");
	E2E_CHECK(!ibv_close_device(d->ctx), "ibv_close_device failed");
}

static bool deadline_passed(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - start->tv_sec > E2E_WAIT_SECONDS;
}

int e2e_channel_open(const struct e2e_args *args)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(args->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	const char *addr = getenv("E2E_CHANNEL_ADDR");
	struct timespec start;
	int one = 1;
	int s, c;

	/* Between hosts (network namespaces), the server's address. */
	if (addr && *addr)
		E2E_CHECK(inet_pton(AF_INET, addr, &sa.sin_addr) == 1,
			  "E2E_CHANNEL_ADDR=%s: not an IPv4 address", addr);
	s = socket(AF_INET, SOCK_STREAM, 0);
	E2E_CHECK(s >= 0, "socket: %s", strerror(errno));
	if (args->server) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		E2E_CHECK(!bind(s, (struct sockaddr *)&sa, sizeof(sa)),
			  "bind port %d: %s", args->port, strerror(errno));
		E2E_CHECK(!listen(s, 1), "listen: %s", strerror(errno));
		c = accept(s, NULL, NULL);
		E2E_CHECK(c >= 0, "accept: %s", strerror(errno));
		close(s);
		s = c;
	} else {
		/* The server may not listen yet: retry for a while. */
		clock_gettime(CLOCK_MONOTONIC, &start);
		while (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
			E2E_CHECK(!deadline_passed(&start),
				  "connect to port %d: %s", args->port,
				  strerror(errno));
			close(s);
			usleep(50000);
			s = socket(AF_INET, SOCK_STREAM, 0);
			E2E_CHECK(s >= 0, "socket: %s", strerror(errno));
		}
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

void e2e_send_all(int sock, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		E2E_CHECK(n > 0, "side channel send: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

bool e2e_recv_all(int sock, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(sock, p + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		E2E_CHECK(n >= 0, "side channel recv: %s", strerror(errno));
		if (n == 0) {
			E2E_CHECK(got == 0, "side channel closed mid-message");
			return false;
		}
		got += n;
	}
	return true;
}

void e2e_sync(int sock, const char *tag)
{
	char mine[16] = { 0 }, theirs[16];

	strncpy(mine, tag, sizeof(mine) - 1);
	e2e_send_all(sock, mine, sizeof(mine));
	E2E_CHECK(e2e_recv_all(sock, theirs, sizeof(theirs)),
		  "peer went away before sync point '%s'", tag);
	E2E_CHECK(!memcmp(mine, theirs, sizeof(mine)),
		  "out of step: at '%s', peer at '%.15s'", tag, theirs);
}

void e2e_exchange(int sock, const struct e2e_peer *mine,
		  struct e2e_peer *theirs)
{
	e2e_send_all(sock, mine, sizeof(*mine));
	E2E_CHECK(e2e_recv_all(sock, theirs, sizeof(*theirs)),
		  "peer went away before sending its QP info");
}

struct ibv_qp *e2e_create_qp(struct e2e_dev *d, enum ibv_qp_type type,
			     struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
			     uint32_t depth, uint32_t max_sge)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.cap = {
			.max_send_wr = depth,
			.max_recv_wr = depth,
			.max_send_sge = max_sge,
			.max_recv_sge = max_sge,
		},
		.qp_type = type,
		.sq_sig_all = 0,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &attr);

	E2E_CHECK(qp, "ibv_create_qp(type %d): %s", type, strerror(errno));
	E2E_CHECK(attr.cap.max_send_wr >= depth &&
		  attr.cap.max_recv_wr >= depth,
		  "QP granted fewer WRs than asked (%u/%u < %u)",
		  attr.cap.max_send_wr, attr.cap.max_recv_wr, depth);
	return qp;
}

void e2e_qp_to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int ret;

	if (type == IBV_QPT_UD) {
		attr.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &attr, mask);
	E2E_CHECK(!ret, "modify QP %u to INIT: %s", qp->qp_num,
		  strerror(ret));
}

void e2e_fill_ah_attr(struct e2e_dev *d, const uint8_t gid[16],
		      struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, gid, 16);
	ah->grh.sgid_index = d->gid_index;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

void e2e_rc_connect(struct e2e_dev *d, struct ibv_qp *qp, uint32_t my_psn,
		    const struct e2e_peer *peer,
		    const struct e2e_rc_opts *opts)
{
	struct ibv_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = d->port_attr.active_mtu;
	attr.dest_qp_num = peer->rc_qpn;
	attr.rq_psn = peer->psn;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = opts && opts->min_rnr_timer ?
			     opts->min_rnr_timer : 12;
	e2e_fill_ah_attr(d, peer->gid, &attr.ah_attr);
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	E2E_CHECK(!ret, "modify RC QP %u to RTR: %s", qp->qp_num,
		  strerror(ret));

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = my_psn;
	attr.timeout = opts && opts->timeout ? opts->timeout : 14;
	if (opts && opts->no_timeout)
		attr.timeout = 0;
	attr.retry_cnt = opts && opts->retry_cnt ? opts->retry_cnt : 7;
	attr.rnr_retry = opts && opts->set_rnr_retry ? opts->rnr_retry : 7;
	attr.max_rd_atomic = 4;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	E2E_CHECK(!ret, "modify RC QP %u to RTS: %s", qp->qp_num,
		  strerror(ret));
}

void e2e_ud_ready(struct ibv_qp *qp, uint32_t my_psn)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	E2E_CHECK(!ret, "modify UD QP %u to RTR: %s", qp->qp_num,
		  strerror(ret));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = my_psn;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	E2E_CHECK(!ret, "modify UD QP %u to RTS: %s", qp->qp_num,
		  strerror(ret));
}

struct ibv_ah *e2e_create_ah(struct e2e_dev *d, const uint8_t gid[16])
{
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;

	e2e_fill_ah_attr(d, gid, &attr);
	ah = ibv_create_ah(d->pd, &attr);
	E2E_CHECK(ah, "ibv_create_ah: %s", strerror(errno));
	return ah;
}

int e2e_poll_now(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n = ibv_poll_cq(cq, 1, wc);

	E2E_CHECK(n >= 0, "ibv_poll_cq returned %d", n);
	return n;
}

void e2e_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	struct timespec start;
	unsigned long spins = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!e2e_poll_now(cq, wc)) {
		if (++spins % 1024)
			continue;
		E2E_CHECK(!deadline_passed(&start),
			  "no completion for %s within %d s", what,
			  E2E_WAIT_SECONDS);
		sched_yield();
	}
}

void e2e_check_wc(const struct ibv_wc *wc, const struct e2e_wc_expect *exp,
		  const char *what)
{
	printf("%s: wr_id 0x%llx status %s opcode %d qp_num %u byte_len %u "
	       "wc_flags 0x%x imm 0x%x src_qp %u\n", what,
	       (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
	       wc->opcode, wc->qp_num, wc->byte_len, wc->wc_flags,
	       ntohl(wc->imm_data), wc->src_qp);
	E2E_CHECK(wc->wr_id == exp->wr_id, "%s: wr_id 0x%llx, want 0x%llx",
		  what, (unsigned long long)wc->wr_id,
		  (unsigned long long)exp->wr_id);
	E2E_CHECK(wc->status == exp->status, "%s: status %s, want %s", what,
		  ibv_wc_status_str(wc->status),
		  ibv_wc_status_str(exp->status));
	E2E_CHECK(wc->qp_num == exp->qp_num, "%s: qp_num %u, want %u", what,
		  wc->qp_num, exp->qp_num);
	/* Only wr_id, status and qp_num are defined on an error. */
	if (exp->status != IBV_WC_SUCCESS)
		return;
	E2E_CHECK(wc->opcode == exp->opcode, "%s: opcode %d, want %d", what,
		  wc->opcode, exp->opcode);
	E2E_CHECK((wc->wc_flags & exp->wc_flags) == exp->wc_flags &&
		  !(wc->wc_flags & ~exp->wc_flags & ~e2e_wc_extra_flags),
		  "%s: wc_flags 0x%x, want 0x%x", what, wc->wc_flags,
		  exp->wc_flags);
	if (exp->check_len)
		E2E_CHECK(wc->byte_len == exp->byte_len,
			  "%s: byte_len %u, want %u", what, wc->byte_len,
			  exp->byte_len);
	if (exp->wc_flags & IBV_WC_WITH_IMM)
		E2E_CHECK(wc->imm_data == exp->imm_data,
			  "%s: imm_data 0x%x, want 0x%x", what,
			  ntohl(wc->imm_data), ntohl(exp->imm_data));
	if (exp->check_src_qp)
		E2E_CHECK(wc->src_qp == exp->src_qp,
			  "%s: src_qp %u, want %u", what, wc->src_qp,
			  exp->src_qp);
}

const char *e2e_errno_name(int err)
{
	switch (err) {
	case 0:		return "0";
	case EINVAL:	return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSYS:	return "ENOSYS";
	case ENOMEM:	return "ENOMEM";
	case ENOSPC:	return "ENOSPC";
	case EBUSY:	return "EBUSY";
	case EAGAIN:	return "EAGAIN";
	case EPERM:	return "EPERM";
	case EACCES:	return "EACCES";
	case EFAULT:	return "EFAULT";
	default:	return strerror(err);
	}
}

void e2e_pattern(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

bool e2e_pattern_ok(const uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 8)))
			return false;
	return true;
}

void e2e_fd_walk(void (*fn)(int fd, const char *target, void *arg),
		 void *arg)
{
	DIR *d = opendir("/proc/self/fd");
	char path[300], target[300];
	struct dirent *de;
	ssize_t len;

	E2E_CHECK(d, "/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		fn(atoi(de->d_name), target, arg);
	}
	closedir(d);
}

struct fd_count {
	unsigned int all, rings, max;
	int *ring_fds;
};

static void fd_count_one(int fd, const char *target, void *arg)
{
	struct fd_count *c = arg;

	c->all++;
	if (!strstr(target, "pvrdma-ring"))
		return;
	if (c->ring_fds && c->rings < c->max)
		c->ring_fds[c->rings] = fd;
	c->rings++;
}

unsigned int e2e_fd_table(unsigned int *rings, int *ring_fds,
			  unsigned int max)
{
	struct fd_count c = { .ring_fds = ring_fds, .max = max };

	e2e_fd_walk(fd_count_one, &c);
	*rings = c.rings;
	return c.all;
}
