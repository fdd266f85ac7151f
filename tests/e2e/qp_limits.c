// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the PVRDMA device refuses, in one process. Each refusal must be a NULL
 * object with a meaningful errno, and each mode has a positive control so a
 * device that refuses everything does not pass:
 *
 *   qp-types   RC and UD QPs are created; UC is refused (EINVAL or
 *              EOPNOTSUPP)
 *   xrc        ibv_open_xrcd and an XRC send QP are refused
 *   ud-limit   --expect N: N UD QPs are created, the next one is refused;
 *              after destroying one, one more can be created
 *   srq        --expect 1: device reports SRQs and ibv_create_srq works;
 *              --expect 0: max_srq is 0 and ibv_create_srq is refused
 *   queue-limits  --expect N: the device reports max_qp_wr N; an RC QP of
 *              max_qp_wr send and receive WRs, a CQ of max_cqe entries (the
 *              largest power of two within it: the driver rounds a CQ up
 *              before it checks) and an SRQ of max_srq_wr WRs are created;
 *              one more of each is refused with EINVAL
 *   fd-limit   under RLIMIT_NOFILE 256 (set by the program), 200 RC QPs
 *              with a CQ each: none is refused, the device keeps at most
 *              an eighth of the limit in descriptors, and the program
 *              still opens files up to its limit but that; with them all
 *              open, and again with them closed, one more QP is created
 *
 *   qp_limits --mode M [--expect N] [--dev D]
 */
#include "e2e_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#define MAX_UD_TRY	16

static struct ibv_cq *cq;

static struct ibv_qp *try_create_qp(struct e2e_dev *d, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = type,
	};

	errno = 0;
	return ibv_create_qp(d->pd, &attr);
}

static void expect_refused(void *obj, int err, const char *what,
			   int allowed1, int allowed2)
{
	E2E_CHECK(!obj, "%s was created, but the device must refuse it", what);
	printf("%s refused: errno %s\n", what, e2e_errno_name(err));
	E2E_CHECK(err == allowed1 || err == allowed2,
		  "%s refused with errno %d (%s), want %s or %s", what, err,
		  e2e_errno_name(err), e2e_errno_name(allowed1),
		  e2e_errno_name(allowed2));
}

static void mode_qp_types(struct e2e_dev *d)
{
	struct ibv_qp *rc, *ud, *uc;

	rc = try_create_qp(d, IBV_QPT_RC);
	E2E_CHECK(rc, "RC QP refused: %s", strerror(errno));
	ud = try_create_qp(d, IBV_QPT_UD);
	E2E_CHECK(ud, "UD QP refused: %s", strerror(errno));
	uc = try_create_qp(d, IBV_QPT_UC);
	expect_refused(uc, errno, "UC QP", EINVAL, EOPNOTSUPP);
	/* The refusal left the device usable. */
	E2E_CHECK(!ibv_destroy_qp(rc) && !ibv_destroy_qp(ud),
		  "ibv_destroy_qp failed");
	rc = try_create_qp(d, IBV_QPT_RC);
	E2E_CHECK(rc, "RC QP refused after a UC attempt: %s",
		  strerror(errno));
	E2E_CHECK(!ibv_destroy_qp(rc), "ibv_destroy_qp failed");
}

static void mode_xrc(struct e2e_dev *d)
{
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;

	E2E_CHECK(!(d->dev_attr.device_cap_flags & IBV_DEVICE_XRC),
		  "device claims XRC support");
	errno = 0;
	xrcd = ibv_open_xrcd(d->ctx, &xattr);
	expect_refused(xrcd, errno, "XRC domain", EOPNOTSUPP, ENOSYS);
	qp = try_create_qp(d, IBV_QPT_XRC_SEND);
	expect_refused(qp, errno, "XRC send QP", EINVAL, EOPNOTSUPP);
	qp = try_create_qp(d, IBV_QPT_RC);
	E2E_CHECK(qp, "RC QP refused after XRC attempts: %s",
		  strerror(errno));
	E2E_CHECK(!ibv_destroy_qp(qp), "ibv_destroy_qp failed");
}

static void mode_ud_limit(struct e2e_dev *d, long expect)
{
	struct ibv_qp *qp[MAX_UD_TRY];
	struct ibv_qp *extra;
	long i;

	E2E_CHECK(expect > 0 && expect < MAX_UD_TRY, "bad --expect %ld",
		  expect);
	for (i = 0; i < expect; i++) {
		qp[i] = try_create_qp(d, IBV_QPT_UD);
		E2E_CHECK(qp[i], "UD QP %ld of %ld refused: %s", i + 1,
			  expect, strerror(errno));
	}
	extra = try_create_qp(d, IBV_QPT_UD);
	E2E_CHECK(!extra, "UD QP %ld created, the limit is %ld", expect + 1,
		  expect);
	printf("UD QP %ld refused: errno %s\n", expect + 1,
	       e2e_errno_name(errno));
	E2E_CHECK(errno != 0, "UD QP refused without an errno");
	/* RC QPs do not count against the UD limit. */
	extra = try_create_qp(d, IBV_QPT_RC);
	E2E_CHECK(extra, "RC QP refused at the UD limit: %s",
		  strerror(errno));
	E2E_CHECK(!ibv_destroy_qp(extra), "ibv_destroy_qp failed");
	/* A destroyed UD QP gives its place back. */
	E2E_CHECK(!ibv_destroy_qp(qp[0]), "ibv_destroy_qp failed");
	qp[0] = try_create_qp(d, IBV_QPT_UD);
	E2E_CHECK(qp[0], "UD QP refused after one was destroyed: %s",
		  strerror(errno));
	for (i = 0; i < expect; i++)
		E2E_CHECK(!ibv_destroy_qp(qp[i]), "ibv_destroy_qp failed");
}

static void mode_srq(struct e2e_dev *d, long expect)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq *srq;

	printf("max_srq %d max_srq_wr %d max_srq_sge %d\n",
	       d->dev_attr.max_srq, d->dev_attr.max_srq_wr,
	       d->dev_attr.max_srq_sge);
	errno = 0;
	srq = ibv_create_srq(d->pd, &attr);
	if (expect) {
		E2E_CHECK(d->dev_attr.max_srq > 0 &&
			  d->dev_attr.max_srq_wr > 0,
			  "device reports no SRQ support");
		E2E_CHECK(srq, "ibv_create_srq: %s", strerror(errno));
		E2E_CHECK(!ibv_destroy_srq(srq), "ibv_destroy_srq failed");
		return;
	}
	E2E_CHECK(d->dev_attr.max_srq == 0,
		  "device without SRQs reports max_srq %d",
		  d->dev_attr.max_srq);
	E2E_CHECK(!srq, "SRQ created on a device without SRQs");
	printf("SRQ refused: errno %s\n", e2e_errno_name(errno));
	E2E_CHECK(errno != 0, "SRQ refused without an errno");
}

static unsigned int pow2_floor(unsigned int v)
{
	unsigned int n = 1;

	while (n * 2 <= v)
		n *= 2;
	return n;
}

static struct ibv_qp *try_create_deep_qp(struct e2e_dev *d, uint32_t send,
					 uint32_t recv)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = send,
			.max_recv_wr = recv,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	errno = 0;
	return ibv_create_qp(d->pd, &attr);
}

static void mode_queue_limits(struct e2e_dev *d, long expect)
{
	unsigned int max_wr = (unsigned int)d->dev_attr.max_qp_wr;
	unsigned int max_cqe = (unsigned int)d->dev_attr.max_cqe;
	unsigned int max_srq_wr = (unsigned int)d->dev_attr.max_srq_wr;
	struct ibv_srq_init_attr sa = { .attr = { .max_sge = 1 } };
	struct ibv_cq *big;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	printf("max_qp_wr %u max_cqe %u max_srq_wr %u\n", max_wr, max_cqe,
	       max_srq_wr);
	E2E_CHECK(expect < 0 || max_wr == (unsigned long)expect,
		  "max_qp_wr %u, want %ld", max_wr, expect);

	big = ibv_create_cq(d->ctx, (int)pow2_floor(max_cqe), NULL, NULL, 0);
	E2E_CHECK(big, "CQ of %u entries: %s", pow2_floor(max_cqe),
		  strerror(errno));
	E2E_CHECK(!ibv_destroy_cq(big), "ibv_destroy_cq failed");
	errno = 0;
	big = ibv_create_cq(d->ctx, (int)max_cqe + 1, NULL, NULL, 0);
	expect_refused(big, errno, "CQ of max_cqe + 1 entries", EINVAL, EINVAL);

	qp = try_create_deep_qp(d, max_wr, max_wr);
	E2E_CHECK(qp, "RC QP of %u WRs: %s", max_wr, strerror(errno));
	E2E_CHECK(!ibv_destroy_qp(qp), "ibv_destroy_qp failed");
	qp = try_create_deep_qp(d, max_wr + 1, 1);
	expect_refused(qp, errno, "QP of max_qp_wr + 1 send WRs", EINVAL,
		       EINVAL);
	qp = try_create_deep_qp(d, 1, max_wr + 1);
	expect_refused(qp, errno, "QP of max_qp_wr + 1 receive WRs", EINVAL,
		       EINVAL);

	if (!d->dev_attr.max_srq)
		return;
	sa.attr.max_wr = max_srq_wr;
	errno = 0;
	srq = ibv_create_srq(d->pd, &sa);
	E2E_CHECK(srq, "SRQ of %u WRs: %s", max_srq_wr, strerror(errno));
	E2E_CHECK(!ibv_destroy_srq(srq), "ibv_destroy_srq failed");
	sa.attr.max_wr = max_srq_wr + 1;
	errno = 0;
	srq = ibv_create_srq(d->pd, &sa);
	expect_refused(srq, errno, "SRQ of max_srq_wr + 1 WRs", EINVAL,
		       EINVAL);
}

#define FD_LIMIT	256u
#define FD_LIMIT_QPS	200u

static void lower_fd_limit(void)
{
	struct rlimit rl;

	E2E_CHECK(!getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
	E2E_CHECK(rl.rlim_max >= FD_LIMIT, "hard fd limit below %u", FD_LIMIT);
	rl.rlim_cur = FD_LIMIT;
	E2E_CHECK(!setrlimit(RLIMIT_NOFILE, &rl), "setrlimit: %s",
		  strerror(errno));
}

/* One more RC QP with its own CQ, created and destroyed. */
static void one_more_qp(struct e2e_dev *d, const char *when)
{
	struct ibv_cq *qcq = ibv_create_cq(d->ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp;

	E2E_CHECK(qcq, "ibv_create_cq %s: %s", when, strerror(errno));
	qp = e2e_create_qp(d, IBV_QPT_RC, qcq, qcq, 4, 1);
	E2E_CHECK(qp, "ibv_create_qp %s: %s", when, strerror(errno));
	E2E_CHECK(!ibv_destroy_qp(qp) && !ibv_destroy_cq(qcq),
		  "destroy %s", when);
}

static void count_below_limit(int fd, const char *target, void *arg)
{
	unsigned int *n = arg;

	(void)target;
	*n += (unsigned int)fd < FD_LIMIT;
}

/* Descriptors open below the limit: those take the program's numbers (the
 * sim's own made before the program lowered its limit sit above it). */
static unsigned int fds_below_limit(void)
{
	unsigned int n = 0;

	e2e_fd_walk(count_below_limit, &n);
	return n;
}

static void mode_fd_limit(struct e2e_dev *d)
{
	static struct ibv_qp *qps[FD_LIMIT_QPS];
	static struct ibv_cq *cqs[FD_LIMIT_QPS];
	static int files[FD_LIMIT];
	unsigned int i, opened = 0, rings, rings_before, used, left;
	int fd;

	e2e_fd_table(&rings_before, NULL, 0);	/* main's CQ */
	for (i = 0; i < FD_LIMIT_QPS; i++) {
		cqs[i] = ibv_create_cq(d->ctx, 4, NULL, NULL, 0);
		E2E_CHECK(cqs[i], "CQ %u: ibv_create_cq: %s", i,
			  strerror(errno));
		qps[i] = e2e_create_qp(d, IBV_QPT_RC, cqs[i], cqs[i], 4, 1);
		E2E_CHECK(qps[i], "QP %u: ibv_create_qp: %s", i,
			  strerror(errno));
	}
	e2e_fd_table(&rings, NULL, 0);
	used = fds_below_limit();
	printf("%u RC QPs and CQs: %u descriptors open, %u of ring memory\n",
	       FD_LIMIT_QPS, used, rings);
	E2E_CHECK(rings <= FD_LIMIT / 8, "%u descriptors of ring memory "
		  "under a limit of %u", rings, FD_LIMIT);
	/* Every number the device does not hold is the program's. */
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		files[opened++] = fd;
	E2E_CHECK(errno == EMFILE, "open: %s", strerror(errno));
	E2E_CHECK(opened == FD_LIMIT - used, "%u files opened, %u free",
		  opened, FD_LIMIT - used);
	one_more_qp(d, "with every descriptor taken");
	while (opened)
		close(files[--opened]);
	one_more_qp(d, "after");
	for (i = 0; i < FD_LIMIT_QPS; i++)
		E2E_CHECK(!ibv_destroy_qp(qps[i]) && !ibv_destroy_cq(cqs[i]),
			  "destroy QP %u", i);
	left = e2e_fd_table(&rings, NULL, 0);
	E2E_CHECK(left < used && rings == rings_before,
		  "ring descriptors: %u left, %u before", rings, rings_before);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct e2e_dev d;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(args.single && args.mode, "needs --mode and no role");
	if (!strcmp(args.mode, "fd-limit"))
		lower_fd_limit();
	e2e_open(&d, args.dev, args.gid_index);
	cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	E2E_CHECK(cq, "ibv_create_cq: %s", strerror(errno));

	if (!strcmp(args.mode, "qp-types"))
		mode_qp_types(&d);
	else if (!strcmp(args.mode, "xrc"))
		mode_xrc(&d);
	else if (!strcmp(args.mode, "ud-limit"))
		mode_ud_limit(&d, args.expect);
	else if (!strcmp(args.mode, "srq"))
		mode_srq(&d, args.expect);
	else if (!strcmp(args.mode, "queue-limits"))
		mode_queue_limits(&d, args.expect);
	else if (!strcmp(args.mode, "fd-limit"))
		mode_fd_limit(&d);
	else
		E2E_CHECK(0, "unknown mode %s", args.mode);

	E2E_CHECK(!ibv_destroy_cq(cq), "ibv_destroy_cq failed");
	e2e_close(&d);
	printf("qp_limits %s: passed\n", args.mode);
	return 0;
}
