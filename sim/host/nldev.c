// SPDX-License-Identifier: BSD-2-Clause
/*
 * RDMA netlink (NETLINK_RDMA, the nldev client) as the kernel's
 * drivers/infiniband/core/nldev.c answers it for a vmw_pvrdma device:
 * devices, ports, the system, chardevs (libibverbs' discovery), resource
 * summaries and tables, and the port's hardware counters. Devices and
 * ports are this process's adapters (each process under the sim has
 * adapters of its own, config.c); resources and counters are those of
 * every process of the rundir on adapter N (nldev_snap.c), so that `rdma`
 * in a process of its own sees the programs beside it.
 *
 * RoCE ports have no LID, SM or subnet prefix, so none is reported, as
 * the kernel leaves them out of a RoCE port. Copy-on-fork is reported
 * off: the sim's pinning keeps the pre-5.13 semantics libibverbs then
 * works with (madvise DONTFORK), as before netlink answered.
 */
#include "preload.h"

#include <rdma/rdma_netlink.h>

#include "netdev.h"
#include "nldev_snap.h"
#include "nl_sock.h"

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
	unsigned int i;
	uint32_t idx;

	*dev = NULL;
	if (!a)
		return 0;
	memcpy(&idx, (const char *)a + NLA_HDRLEN, sizeof(idx));
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (sim_ibdev_index(&sim_devs[i]) == idx) {
			*dev = &sim_devs[i];
			return 1;
		}
	}
	return -ENODEV;
}

/* The index rdma_cm's queries report too (kernel.h). */
static void put_handle(struct nl_out *out, const struct sim_dev *dev)
{
	nl_put_u32(out, RDMA_NLDEV_ATTR_DEV_INDEX, sim_ibdev_index(dev));
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

/* ---- resources and counters: every process's snapshot ---- */

#define MAX_SNAPS	64

struct snap_set {
	struct snap *s[MAX_SNAPS];
	unsigned int n;
};

static void add_peer(const struct snap *s, void *arg)
{
	struct snap_set *set = arg;
	size_t len = sizeof(*s) + s->nobjs * sizeof(s->obj[0]);

	if (set->n < MAX_SNAPS && (set->s[set->n] = malloc(len)))
		memcpy(set->s[set->n++], s, len);
}

/* This process's adapters first, then the others of the rundir. */
static void snaps_load(struct snap_set *set)
{
	set->n = 0;
	if ((set->s[0] = snap_take()))
		set->n = 1;
	snap_for_each_peer(add_peer, set);
}

static void snaps_free(struct snap_set *set)
{
	while (set->n)
		free(set->s[--set->n]);
}

static void fill_obj(struct nl_out *out, const struct snap_obj *o)
{
	switch (o->kind) {
	case SNAP_QP:
		if (o->port)
			nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, o->port);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_LQPN, o->num);
		if (o->type == IBV_QPT_RC && o->state >= IBV_QPS_RTR) {
			nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RQPN, o->rqpn);
			nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RQ_PSN, o->rq_psn);
			nl_put_u8(out, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE,
				  o->path_mig);
		}
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_SQ_PSN, o->sq_psn);
		nl_put_u8(out, RDMA_NLDEV_ATTR_RES_TYPE, o->type);
		nl_put_u8(out, RDMA_NLDEV_ATTR_RES_STATE, o->state);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN, o->pdn);
		break;
	case SNAP_CQ:
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_CQE, o->cqe);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_USECNT, o->usecnt);
		nl_put_u8(out, RDMA_NLDEV_ATTR_RES_POLL_CTX, 0); /* direct */
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_CQN, o->num);
		break;
	case SNAP_MR:
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_RKEY, o->rkey);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_LKEY, o->num);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_MRLEN, o->len);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_MRN, o->num);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN, o->pdn);
		break;
	default:
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_USECNT, o->usecnt);
		nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PDN, o->num);
		break;
	}
}

static const uint16_t res_nest[SNAP_KINDS][2] = {
	[SNAP_PD] = { RDMA_NLDEV_ATTR_RES_PD, RDMA_NLDEV_ATTR_RES_PD_ENTRY },
	[SNAP_CQ] = { RDMA_NLDEV_ATTR_RES_CQ, RDMA_NLDEV_ATTR_RES_CQ_ENTRY },
	[SNAP_QP] = { RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY },
	[SNAP_MR] = { RDMA_NLDEV_ATTR_RES_MR, RDMA_NLDEV_ATTR_RES_MR_ENTRY },
};

/* One message per object, as the kernel's dump fills them. */
static void dump_res(struct nl_out *out, unsigned int op, enum snap_kind k,
		     const struct sim_dev *dev, const struct snap_set *set)
{
	unsigned int i;
	uint32_t n;

	for (i = 0; i < set->n; i++) {
		for (n = 0; n < set->s[i]->nobjs; n++) {
			const struct snap_obj *o = &set->s[i]->obj[n];

			if (o->kind != k || o->dev != dev->index)
				continue;
			nl_begin(out, nldev_type(op), NLM_F_MULTI);
			put_handle(out, dev);
			nl_nest_begin(out, res_nest[k][0]);
			nl_nest_begin(out, res_nest[k][1]);
			fill_obj(out, o);
			nl_put_u32(out, RDMA_NLDEV_ATTR_RES_PID,
				   (uint32_t)set->s[i]->pid);
			nl_nest_end(out);
			nl_nest_end(out);
			nl_end(out);
		}
	}
}

static uint64_t res_count(const struct sim_dev *dev, const struct snap_set *set,
			  enum snap_kind k)
{
	uint64_t c = 0;
	unsigned int i;
	uint32_t n;

	for (i = 0; i < set->n; i++)
		for (n = 0; n < set->s[i]->nobjs; n++)
			c += set->s[i]->obj[n].kind == k &&
			     set->s[i]->obj[n].dev == dev->index;
	return c;
}

static void fill_summary(struct nl_out *out, const struct sim_dev *dev,
			 const struct snap_set *set)
{
	static const struct { const char *name; int kind; } rows[] = {
		{ "pd", SNAP_PD }, { "cq", SNAP_CQ }, { "qp", SNAP_QP },
		{ "cm_id", -1 }, { "mr", SNAP_MR }, { "ctx", -1 },
		{ "srq", SNAP_SRQ },
	};
	unsigned int i;

	put_handle(out, dev);
	nl_nest_begin(out, RDMA_NLDEV_ATTR_RES_SUMMARY);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		nl_nest_begin(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
		nl_put_str(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME,
			   rows[i].name);
		nl_put_u64(out, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR,
			   rows[i].kind < 0 ? 0 :
			   res_count(dev, set, rows[i].kind));
		nl_nest_end(out);
	}
	nl_nest_end(out);
}

static enum snap_kind op_kind(unsigned int op)
{
	return op == RDMA_NLDEV_CMD_RES_QP_GET ? SNAP_QP :
	       op == RDMA_NLDEV_CMD_RES_CQ_GET ? SNAP_CQ :
	       op == RDMA_NLDEV_CMD_RES_MR_GET ? SNAP_MR : SNAP_PD;
}

static int res_get(struct nl_out *out, const struct nlmsghdr *req,
		   unsigned int op)
{
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct snap_set set;
	struct sim_dev *dev;
	unsigned int i;
	int ret = req_dev(req, &dev);

	if (ret < 0)
		return ret;
	/* A single object by its number is not asked of this device. */
	if (!dump && (!dev || op != RDMA_NLDEV_CMD_RES_GET))
		return -EINVAL;
	snaps_load(&set);
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (dev && dev != &sim_devs[i])
			continue;
		if (op == RDMA_NLDEV_CMD_RES_GET) {
			nl_begin(out, nldev_type(op), dump ? NLM_F_MULTI : 0);
			fill_summary(out, &sim_devs[i], &set);
			nl_end(out);
		} else if (op != RDMA_NLDEV_CMD_RES_CM_ID_GET) {
			dump_res(out, op, op_kind(op), &sim_devs[i], &set);
		}
	}
	snaps_free(&set);
	if (dump)
		nl_done(out);
	return 0;
}

/* The port's hardware counters: every process's adapter of this number,
 * summed (nldev_snap.c names them). */
static void fill_counters(struct nl_out *out, const struct sim_dev *dev,
			  const struct snap_set *set)
{
	uint64_t v;
	unsigned int c, i;

	put_handle(out, dev);
	nl_put_u32(out, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nl_nest_begin(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (c = 0; c < SNAP_COUNTERS; c++) {
		for (v = 0, i = 0; i < set->n; i++)
			v += set->s[i]->counters[dev->index][c];
		nl_nest_begin(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		nl_put_str(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
			   snap_counter_names[c]);
		nl_put_u64(out, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v);
		nl_nest_end(out);
	}
	nl_nest_end(out);
}

static int stat_get(struct nl_out *out, const struct nlmsghdr *req)
{
	const struct nlattr *p = nl_attr(req, NLDEV_HDRLEN,
					 RDMA_NLDEV_ATTR_PORT_INDEX);
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	struct snap_set set;
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
	snaps_load(&set);
	for (i = 0; i < sim_global.num_adapters; i++) {
		if (dev && dev != &sim_devs[i])
			continue;
		nl_begin(out, nldev_type(RDMA_NLDEV_CMD_STAT_GET),
			 dump ? NLM_F_MULTI : 0);
		fill_counters(out, &sim_devs[i], &set);
		nl_end(out);
	}
	snaps_free(&set);
	if (dump)
		nl_done(out);
	return 0;
}

static int nldev_answer(struct nl_out *out, const struct nlmsghdr *req)
{
	unsigned int op = RDMA_NL_GET_OP(req->nlmsg_type);

	if (RDMA_NL_GET_CLIENT(req->nlmsg_type) != RDMA_NL_NLDEV)
		return -EINVAL;
	sim_identity_check();	/* a forked child's own adapters */
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
