// SPDX-License-Identifier: BSD-2-Clause
/*
 * RDMA netlink (NETLINK_RDMA, the nldev client) as the kernel's
 * drivers/infiniband/core/nldev.c answers it for a vmw_pvrdma device:
 * devices, ports, the system, chardevs (libibverbs' discovery), resource
 * summaries and tables, and the port's hardware counters. The answers
 * are this process's adapters: each process under the sim has adapters
 * of its own (config.c), as each VM has its own PVRDMA function.
 *
 * RoCE ports have no LID, SM or subnet prefix, so none is reported, as
 * the kernel leaves them out of a RoCE port. Copy-on-fork is reported
 * off: the sim's pinning keeps the pre-5.13 semantics libibverbs then
 * works with (madvise DONTFORK), as before netlink answered.
 */
#include "preload.h"

#include <rdma/rdma_netlink.h>

#include "netdev.h"
#include "nl_sock.h"
#include "shared.h"

#define NLDEV_HDRLEN	0	/* nldev messages carry attributes alone */
#define PVRDMA_PORT_CAPS	0x04010000	/* CM, IP-based GIDs (sysfs.c) */
#define IB_DEVICE_CAPS		0		/* none nldev reports */

static uint16_t nldev_type(unsigned int op)
{
	return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
}

/* The adapter a request names (DEV_INDEX), or all of them (NULL, ok). */
static int req_dev(const struct nlmsghdr *req, struct sim_dev **dev)
{
	const struct nlattr *a = nl_attr(req, NLDEV_HDRLEN,
					 RDMA_NLDEV_ATTR_DEV_INDEX);
	uint32_t idx;

	*dev = NULL;
	if (!a)
		return 0;
	memcpy(&idx, (const char *)a + NLA_HDRLEN, sizeof(idx));
	if (idx < 1 || idx > sim_global.num_adapters)
		return -ENODEV;
	*dev = &sim_devs[idx - 1];
	return 1;
}

/* The kernel numbers devices from 1, as rdma_cm's queries report them
 * (kernel/ucma_addr.c). */
static void put_handle(struct nl_out *out, const struct sim_dev *dev)
{
	nl_put_u32(out, RDMA_NLDEV_ATTR_DEV_INDEX, dev->index + 1);
	nl_put_str(out, RDMA_NLDEV_ATTR_DEV_NAME, dev->cfg.ibdev);
}

static uint64_t guid_host(uint64_t guid_be)
{
	return __builtin_bswap64(guid_be);
}

static void fill_dev(struct nl_out *out, const struct sim_dev *dev)
{
	char fw[32];

	snprintf(fw, sizeof(fw), "%u.%u.%u", (unsigned int)(SIM_FW_VER >> 32),
		 (unsigned int)(SIM_FW_VER >> 16) & 0xffff,
		 (unsigned int)SIM_FW_VER & 0xffff);
	put_handle(out, dev);
	nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, 1);	/* ports it has */
	nl_put_u64(out, RDMA_NLDEV_ATTR_CAP_FLAGS, IB_DEVICE_CAPS);
	nl_put_str(out, RDMA_NLDEV_ATTR_FW_VERSION, fw);
	nl_put_u64(out, RDMA_NLDEV_ATTR_NODE_GUID, guid_host(dev->node_guid));
	nl_put_u64(out, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID,
		   guid_host(dev->node_guid));
	nl_put_u8(out, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);	/* CA */
	nl_put_str(out, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
}

static void fill_port(struct nl_out *out, const struct sim_dev *dev)
{
	char ifname[IFNAMSIZ];
	unsigned int ifindex;

	put_handle(out, dev);
	nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_put_u64(out, RDMA_NLDEV_ATTR_CAP_FLAGS, PVRDMA_PORT_CAPS);
	nl_put_u8(out, RDMA_NLDEV_ATTR_PORT_STATE, IBV_PORT_ACTIVE);
	nl_put_u8(out, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);	/* LinkUp */
	if (sim_netdev_simulated(dev)) {
		sim_netdev_name(dev, ifname);
		ifindex = sim_netdev_ifindex(dev);
	} else {
		snprintf(ifname, sizeof(ifname), "%s", dev->cfg.netdev);
		ifindex = get_if_nametoindex()(ifname);
	}
	nl_put_u32(out, RDMA_NLDEV_ATTR_NDEV_INDEX, ifindex);
	nl_put_str(out, RDMA_NLDEV_ATTR_NDEV_NAME, ifname);
}

/* GET and PORT_GET: one adapter, or a dump of them all. */
static int dev_or_port(struct nl_out *out, const struct nlmsghdr *req,
		       bool port)
{
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	unsigned int op = port ? RDMA_NLDEV_CMD_PORT_GET : RDMA_NLDEV_CMD_GET;
	struct sim_dev *dev;
	unsigned int i;
	int ret = req_dev(req, &dev);

	if (ret < 0)
		return ret;
	if (!dump && !dev)
		return -EINVAL;
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (dev && dev != &sim_devs[i])
			continue;
		nl_begin(out, nldev_type(op), dump ? NLM_F_MULTI : 0);
		if (port)
			fill_port(out, &sim_devs[i]);
		else
			fill_dev(out, &sim_devs[i]);
		nl_end(out);
	}
	if (dump)
		nl_done(out);
	return 0;
}

static int sys_get(struct nl_out *out, const struct nlmsghdr *req)
{
	nl_begin(out, nldev_type(RDMA_NLDEV_CMD_SYS_GET), 0);
	nl_put_u8(out, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);	/* shared */
	nl_put_u8(out, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 0);
	nl_end(out);
	return 0;
}

/* GET_CHARDEV: the uverbs file of an adapter, or rdma_cm's. */
static int get_chardev(struct nl_out *out, const struct nlmsghdr *req)
{
	const struct nlattr *t = nl_attr(req, NLDEV_HDRLEN,
					 RDMA_NLDEV_ATTR_CHARDEV_TYPE);
	const char *type = t ? (const char *)t + NLA_HDRLEN : "";
	struct sim_dev *dev;
	char name[32];
	int ret = req_dev(req, &dev);

	if (ret < 0 || !t || !memchr(type, 0, t->nla_len - NLA_HDRLEN))
		return ret < 0 ? ret : -EINVAL;
	nl_begin(out, nldev_type(RDMA_NLDEV_CMD_GET_CHARDEV), 0);
	if (!strcmp(type, "uverbs") && dev) {
		snprintf(name, sizeof(name), "uverbs%u", dev->index);
		nl_put_u64(out, RDMA_NLDEV_ATTR_CHARDEV,
			   makedev(SIM_UVERBS_MAJOR,
				   SIM_UVERBS_MINOR_BASE + dev->index));
		nl_put_u64(out, RDMA_NLDEV_ATTR_CHARDEV_ABI,
			   PVRDMA_UVERBS_ABI_VERSION);
		nl_put_str(out, RDMA_NLDEV_ATTR_CHARDEV_NAME, name);
	} else if (!strcmp(type, "rdma_cm") && !dev &&
		   sim_global.num_adapters) {
		nl_put_u64(out, RDMA_NLDEV_ATTR_CHARDEV,
			   makedev(RDMA_CM_MAJOR, RDMA_CM_MINOR));
		nl_put_u64(out, RDMA_NLDEV_ATTR_CHARDEV_ABI, 4);
		nl_put_str(out, RDMA_NLDEV_ATTR_CHARDEV_NAME, "rdma_cm");
	} else {
		return -ENOENT;	/* no such client on the device */
	}
	nl_end(out);
	return 0;
}

/* ---- resources ---- */

enum res_kind { RES_PD, RES_CQ, RES_QP, RES_MR, RES_KINDS };

static struct sim_table *res_table(struct sim_dev *dev, enum res_kind k)
{
	switch (k) {
	case RES_PD: return &dev->pds;
	case RES_CQ: return &dev->cqs;
	case RES_QP: return &dev->qps;
	default: return &dev->mrs;
	}
}

static void fill_qp(struct nl_out *out, const struct sim_qp *qp)
{
	const struct sim_qp_attr *a = &qp->attr;

	if (a->port_num)
		nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, a->port_num);
	nl_put_u32(out, RDMA_NLDEV_ATTR_RES_LQPN, qp->qpn);
	if (qp->type == IBV_QPT_RC && a->state >= IBV_QPS_RTR) {
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RQPN, a->dest_qp_num);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RQ_PSN, a->rq_psn);
		nl_put_u8(out, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE,
			  a->path_mig_state);
	}
	nl_put_u32(out, RDMA_NLDEV_ATTR_RES_SQ_PSN, a->sq_psn);
	nl_put_u8(out, RDMA_NLDEV_ATTR_RES_TYPE, qp->type);
	nl_put_u8(out, RDMA_NLDEV_ATTR_RES_STATE, a->state);
	nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN, qp->pd ? qp->pd->pdn : 0);
}

static void fill_res(struct nl_out *out, enum res_kind k, void *obj)
{
	const struct sim_cq *cq = obj;
	const struct sim_mr *mr = obj;
	const struct sim_pd *pd = obj;

	switch (k) {
	case RES_QP:
		fill_qp(out, obj);
		break;
	case RES_CQ:
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_CQE, cq->ring.nelems);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_USECNT, cq->refs);
		nl_put_u8(out, RDMA_NLDEV_ATTR_RES_POLL_CTX, 0); /* direct */
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_CQN, cq->cqn);
		break;
	case RES_MR:
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RKEY, mr->rkey);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_LKEY, mr->lkey);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_MRLEN, mr->length);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_MRN, mr->lkey);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN,
			   mr->pd ? mr->pd->pdn : 0);
		break;
	default:
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_LKEY, 0);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_USECNT, pd->refs);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN, pd->pdn);
		break;
	}
	nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PID, (uint32_t)getpid());
}

static const uint16_t res_nest[RES_KINDS][2] = {
	[RES_PD] = { RDMA_NLDEV_ATTR_RES_PD, RDMA_NLDEV_ATTR_RES_PD_ENTRY },
	[RES_CQ] = { RDMA_NLDEV_ATTR_RES_CQ, RDMA_NLDEV_ATTR_RES_CQ_ENTRY },
	[RES_QP] = { RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY },
	[RES_MR] = { RDMA_NLDEV_ATTR_RES_MR, RDMA_NLDEV_ATTR_RES_MR_ENTRY },
};

/* One message per object, as the kernel's dump fills them. */
static void dump_res(struct nl_out *out, unsigned int op, enum res_kind k,
		     struct sim_dev *dev)
{
	struct sim_table *t = res_table(dev, k);
	uint32_t i;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < t->size; i++) {
		if (!t->slot[i])
			continue;
		nl_begin(out, nldev_type(op), NLM_F_MULTI);
		put_handle(out, dev);
		nl_nest_begin(out, res_nest[k][0]);
		nl_nest_begin(out, res_nest[k][1]);
		fill_res(out, k, t->slot[i]);
		nl_nest_end(out);
		nl_nest_end(out);
		nl_end(out);
	}
	pthread_mutex_unlock(&dev->lock);
}

static unsigned int res_count(struct sim_dev *dev, struct sim_table *t)
{
	unsigned int n = 0;
	uint32_t i;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < t->size; i++)
		n += t->slot[i] != NULL;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

static void fill_summary(struct nl_out *out, struct sim_dev *dev)
{
	static const char *const names[] = { "pd", "cq", "qp", "cm_id", "mr",
					     "ctx", "srq" };
	unsigned int i;
	uint64_t n;

	put_handle(out, dev);
	nl_nest_begin(out, RDMA_NLDEV_ATTR_RES_SUMMARY);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = i < 3 ? res_count(dev, res_table(dev, (enum res_kind)i)) :
		    i == 4 ? res_count(dev, &dev->mrs) :
		    i == 6 ? res_count(dev, &dev->srqs) : 0;
		nl_nest_begin(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
		nl_put_str(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME,
			   names[i]);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, n);
		nl_nest_end(out);
	}
	nl_nest_end(out);
}

static int res_get(struct nl_out *out, const struct nlmsghdr *req,
		   unsigned int op)
{
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct sim_dev *dev;
	unsigned int i;
	int ret = req_dev(req, &dev);

	if (ret < 0)
		return ret;
	/* A single object by its number is not asked of this device. */
	if (!dump && (!dev || op != RDMA_NLDEV_CMD_RES_GET))
		return -EINVAL;
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (dev && dev != &sim_devs[i])
			continue;
		if (op == RDMA_NLDEV_CMD_RES_GET) {
			nl_begin(out, nldev_type(op), dump ? NLM_F_MULTI : 0);
			fill_summary(out, &sim_devs[i]);
			nl_end(out);
		} else if (op != RDMA_NLDEV_CMD_RES_CM_ID_GET) {
			dump_res(out, op,
				 op == RDMA_NLDEV_CMD_RES_QP_GET ? RES_QP :
				 op == RDMA_NLDEV_CMD_RES_CQ_GET ? RES_CQ :
				 op == RDMA_NLDEV_CMD_RES_MR_GET ? RES_MR :
				 RES_PD, &sim_devs[i]);
		}
	}
	if (dump)
		nl_done(out);
	return 0;
}

/* ---- counters ---- */

static uint64_t stat_of(atomic_ulong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* The port's hardware counters: the sim's statistics (stats.c, with what
 * same-host requesters did through the adapter), named as a RoCE
 * adapter's counters are named. */
static void fill_counters(struct nl_out *out, struct sim_dev *dev)
{
	struct sim_stats *s = &dev->stats;
	uint64_t dtx, drx, drecvs, dcqes;
	struct { const char *name; uint64_t v; } c[8];
	unsigned int i;

	shared_counts(dev->index, &dtx, &drx);
	shared_recv_counts(dev->index, &drecvs, &dcqes);
	c[0].name = "rdma_sends", c[0].v = stat_of(&s->send_wqes);
	c[1].name = "rdma_recvs", c[1].v = stat_of(&s->recv_wqes) + drecvs;
	c[2].name = "tx_bytes", c[2].v = stat_of(&s->bytes_tx) + dtx;
	c[3].name = "rx_bytes", c[3].v = stat_of(&s->bytes_rx) + drx;
	c[4].name = "completions", c[4].v = stat_of(&s->cqes) + dcqes;
	c[5].name = "req_cqe_error", c[5].v = stat_of(&s->error_cqes);
	c[6].name = "local_ack_timeout_err", c[6].v = stat_of(&s->retransmits);
	c[7].name = "doorbells", c[7].v = stat_of(&s->db_qp_send) +
					  stat_of(&s->db_qp_recv) +
					  stat_of(&s->db_srq_recv) +
					  stat_of(&s->db_cq_arm) +
					  stat_of(&s->db_cq_arm_sol) +
					  stat_of(&s->db_cq_poll);
	put_handle(out, dev);
	nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_nest_begin(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		nl_nest_begin(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		nl_put_str(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
			   c[i].name);
		nl_put_u64(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
			   c[i].v);
		nl_nest_end(out);
	}
	nl_nest_end(out);
}

static int stat_get(struct nl_out *out, const struct nlmsghdr *req)
{
	const struct nlattr *p = nl_attr(req, NLDEV_HDRLEN,
					 RDMA_NLDEV_ATTR_PORT_INDEX);
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct sim_dev *dev;
	uint32_t port = 1;
	unsigned int i;
	int ret = req_dev(req, &dev);

	if (ret < 0)
		return ret;
	if (p)
		memcpy(&port, (const char *)p + NLA_HDRLEN, sizeof(port));
	if (port != 1 || (!dump && (!dev || !p)))
		return -EINVAL;
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (dev && dev != &sim_devs[i])
			continue;
		nl_begin(out, nldev_type(RDMA_NLDEV_CMD_STAT_GET),
			 dump ? NLM_F_MULTI : 0);
		fill_counters(out, &sim_devs[i]);
		nl_end(out);
	}
	if (dump)
		nl_done(out);
	return 0;
}

static int nldev_answer(struct nl_out *out, const struct nlmsghdr *req)
{
	unsigned int op = RDMA_NL_GET_OP(req->nlmsg_type);

	if (RDMA_NL_GET_CLIENT(req->nlmsg_type) != RDMA_NL_NLDEV)
		return -EINVAL;
	switch (op) {
	case RDMA_NLDEV_CMD_GET:
		return dev_or_port(out, req, false);
	case RDMA_NLDEV_CMD_PORT_GET:
		return dev_or_port(out, req, true);
	case RDMA_NLDEV_CMD_SYS_GET:
		return sys_get(out, req);
	case RDMA_NLDEV_CMD_GET_CHARDEV:
		return get_chardev(out, req);
	case RDMA_NLDEV_CMD_RES_GET:
	case RDMA_NLDEV_CMD_RES_QP_GET:
	case RDMA_NLDEV_CMD_RES_CM_ID_GET:
	case RDMA_NLDEV_CMD_RES_CQ_GET:
	case RDMA_NLDEV_CMD_RES_MR_GET:
	case RDMA_NLDEV_CMD_RES_PD_GET:
		return res_get(out, req, op);
	case RDMA_NLDEV_CMD_STAT_GET:
		return stat_get(out, req);
	default:
		/* SET, NEWLINK, counters' modes...: not for this device. */
		return -EOPNOTSUPP;
	}
}

int nldev_socket(int type)
{
	return nl_sock_open(type, nldev_answer);
}
