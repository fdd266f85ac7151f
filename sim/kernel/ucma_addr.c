// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the address commands of the rdma_cm file (ucma.c
 * decodes them): BIND_IP/BIND, RESOLVE_IP/RESOLVE_ADDR, RESOLVE_ROUTE,
 * QUERY_ROUTE and QUERY (ADDR, PATH, GID), SET_OPTION. Addresses are
 * found with cm_addr.c; answers and errnos are rdma_ucm's (see ucma.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

/* ---- address binding (rdma_bind_addr) ---- */

bool ucma_port_in_use(const struct cm_id *self, const struct sockaddr *sa)
{
	const struct cm_id *id;
	uint16_t port = cm_addr_port(sa);

	for (id = cm_ids; id; id = id->next) {
		const struct sockaddr *o = (const struct sockaddr *)&id->src;

		if (id == self || id->destroyed || id->state == CM_IDLE ||
		    id->ps != self->ps || !o->sa_family || id->child)
			continue;
		if (id->state != CM_LISTEN && self->state != CM_LISTEN &&
		    id->reuseaddr && self->reuseaddr)
			continue;
		if (cm_addr_port(o) != port)
			continue;
		if (cm_addr_any(o) || cm_addr_any(sa) ||
		    cm_addr_listen_match(o, false, sa))
			return true;
	}
	return false;
}

int ucma_bind_id(struct cm_id *id, const struct sockaddr *sa)
{
	struct sockaddr_storage ss;
	struct sim_dev *dev = NULL;
	unsigned int gid_index = 0;
	socklen_t len = cm_addr_len(sa);
	uint16_t port;
	int tries;

	if (id->state != CM_IDLE)
		return -EINVAL;
	if (!len)
		return -EAFNOSUPPORT;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, len);
	if (!cm_addr_any(sa)) {
		if (sa->sa_family == AF_IB)
			return -EINVAL;
		dev = cm_addr_local(sa, &gid_index);
		/* An address of lo (127/8, ::1) that no port has in its GID
		 * table binds no device, as Linux binds it on RoCE: a listen
		 * then waits on every port for connections to that address.
		 * Any other: not an address of the host. */
		if (!dev && !cm_addr_loopback(sa))
			return -EADDRNOTAVAIL;
	}
	port = cm_addr_port(sa);
	if (sa->sa_family == AF_IB) {
		/* A service id, not a port: nothing to allocate. */
	} else if (port) {
		if (port < 1024 && geteuid() != 0)
			return -EACCES;
		if (ucma_port_in_use(id, (struct sockaddr *)&ss))
			return -EADDRINUSE;
	} else {
		for (tries = 0; tries < 1000; tries++) {
			port = cm_random_port();
			cm_addr_set_port((struct sockaddr *)&ss, port);
			if (!ucma_port_in_use(id, (struct sockaddr *)&ss))
				break;
		}
		if (tries == 1000)
			return -EADDRNOTAVAIL;
	}
	id->src = ss;
	id->dev = dev;
	if (dev) {
		id->sgid_index = gid_index;
		id->sgid = dev->gid[gid_index];
		id->mtu = sim_port_mtu(dev);
	}
	id->state = CM_ADDR_BOUND;
	return 0;
}

/* ---- address and route resolution ---- */

int ucma_resolve_addr(struct cm_id *id, const struct sockaddr *src,
			const struct sockaddr *dst)
{
	socklen_t dlen = cm_addr_len(dst);
	unsigned int gid_index;
	struct sim_dev *dev;
	int ret, status = 0;

	if (!dlen)
		return -EINVAL;
	if (id->state == CM_IDLE) {
		struct sockaddr_storage any;

		if (!src || !src->sa_family) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (struct sockaddr *)&any;
		}
		ret = ucma_bind_id(id, src);
		if (ret)
			return ret;
	}
	if (id->state != CM_ADDR_BOUND)
		return -EINVAL;
	if (dst->sa_family == AF_IB)
		return -EINVAL;	/* IB addressing needs an IB port */
	memset(&id->dst, 0, sizeof(id->dst));
	memcpy(&id->dst, dst, dlen);

	if (!cm_addr_gid(dst, &id->dgid) || cm_addr_any(dst))
		status = -EHOSTUNREACH;
	else if (!cm_addr_multicast(dst) && !cm_addr_reachable(&id->dgid))
		status = -EHOSTUNREACH;	/* a group needs no neighbour */
	if (!status && !id->dev) {
		dev = cm_addr_route(dst, &gid_index);
		if (!dev) {
			status = -ENODEV;
		} else {
			uint16_t port = cm_addr_port((struct sockaddr *)&id->src);

			/* The wildcard source becomes the port's address. */
			id->dev = dev;
			id->sgid_index = gid_index;
			id->sgid = dev->gid[gid_index];
			id->mtu = sim_port_mtu(dev);
			if (id->src.ss_family == AF_INET) {
				struct sockaddr_in *in = (void *)&id->src;

				in->sin_addr.s_addr = dev->cfg.ipv4;
			} else if (id->src.ss_family == AF_INET6) {
				struct sockaddr_in6 *in6 = (void *)&id->src;

				memcpy(&in6->sin6_addr, dev->gid[gid_index].raw,
				       16);
			}
			cm_addr_set_port((struct sockaddr *)&id->src, port);
		}
	}
	if (status) {
		/* The kernel goes back to ADDR_BOUND and reports the error
		 * as an event, not from the command. */
		memset(&id->dst, 0, sizeof(id->dst));
		return ucma_event_queue(id, RDMA_CM_EVENT_ADDR_ERROR, status) ?
		       0 : -ENOMEM;
	}
	id->state = CM_ADDR_RESOLVED;
	return ucma_event_queue(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0) ?
	       0 : -ENOMEM;
}

int ucma_resolve_route(struct cm_id *id)
{
	if (id->state != CM_ADDR_RESOLVED)
		return -EINVAL;
	id->state = CM_ROUTE_RESOLVED;
	id->route_resolved = true;
	return ucma_event_queue(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0) ?
	       0 : -ENOMEM;
}

/* ---- queries ---- */

static void fill_path(const struct cm_id *id, struct ib_user_path_rec *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dgid, id->dgid.raw, 16);
	memcpy(p->sgid, id->sgid.raw, 16);
	p->pkey = htobe16(0xffff);
	p->hop_limit = CM_HOP_LIMIT;
	p->traffic_class = id->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->mtu_selector = 2;
	p->mtu = id->mtu;
	p->rate_selector = 2;
	p->rate = 7;	/* 40 Gb/s, as the port reports */
	p->packet_life_time_selector = 2;
	p->packet_life_time = CM_IBOE_PACKET_LIFETIME;
}

static uint32_t ibdev_index(const struct cm_id *id)
{
	return id->dev ? sim_ibdev_index(id->dev) : 0;
}

int ucma_query_route(struct cm_id *id, uint64_t response, uint16_t out)
{
	struct rdma_ucm_query_route_resp resp;

	memset(&resp, 0, sizeof(resp));
	memcpy(&resp.src_addr, &id->src,
	       id->src.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	       sizeof(resp.src_addr));
	memcpy(&resp.dst_addr, &id->dst,
	       id->dst.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	       sizeof(resp.dst_addr));
	if (id->dev) {
		resp.node_guid = id->dev->node_guid;
		resp.port_num = 1;
		resp.ibdev_index = ibdev_index(id);
		fill_path(id, &resp.ib_route[0]);
		resp.num_paths = id->route_resolved ? 1 : 0;
	}
	return copy_to_user(response, &resp,
			    out < sizeof(resp) ? out : sizeof(resp));
}

int ucma_query_addr(struct cm_id *id, uint64_t response, uint16_t out)
{
	struct rdma_ucm_query_addr_resp resp;

	if (out < offsetof(struct rdma_ucm_query_addr_resp, ibdev_index))
		return -ENOSPC;
	memset(&resp, 0, sizeof(resp));
	resp.src_size = (uint16_t)cm_addr_len((struct sockaddr *)&id->src);
	resp.dst_size = (uint16_t)cm_addr_len((struct sockaddr *)&id->dst);
	memcpy(&resp.src_addr, &id->src, resp.src_size);
	memcpy(&resp.dst_addr, &id->dst, resp.dst_size);
	if (id->dev) {
		resp.node_guid = id->dev->node_guid;
		resp.port_num = 1;
		resp.pkey = 0xffff;
		resp.ibdev_index = ibdev_index(id);
	}
	return copy_to_user(response, &resp,
			    out < sizeof(resp) ? out : sizeof(resp));
}

static void gid_sockaddr(const union ibv_gid *gid, uint16_t port,
			 uint16_t ps, struct sockaddr_ib *sib)
{
	memset(sib, 0, sizeof(*sib));
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff);
	memcpy(&sib->sib_addr, gid->raw, 16);
	sib->sib_sid = htobe64(((uint64_t)ps << 16) | port);
	sib->sib_sid_mask = htobe64(~0ull);
}

int ucma_query_gid(struct cm_id *id, uint64_t response, uint16_t out)
{
	struct rdma_ucm_query_addr_resp resp;
	struct sockaddr_ib sib;

	if (out < offsetof(struct rdma_ucm_query_addr_resp, ibdev_index))
		return -ENOSPC;
	memset(&resp, 0, sizeof(resp));
	if (id->dev) {
		resp.node_guid = id->dev->node_guid;
		resp.port_num = 1;
		resp.pkey = 0xffff;
		resp.ibdev_index = ibdev_index(id);
	}
	gid_sockaddr(&id->sgid, cm_addr_port((struct sockaddr *)&id->src),
		     id->ps, &sib);
	memcpy(&resp.src_addr, &sib, sizeof(sib));
	gid_sockaddr(&id->dgid, cm_addr_port((struct sockaddr *)&id->dst),
		     id->ps, &sib);
	memcpy(&resp.dst_addr, &sib, sizeof(sib));
	resp.src_size = resp.dst_size = sizeof(sib);
	return copy_to_user(response, &resp,
			    out < sizeof(resp) ? out : sizeof(resp));
}

/* The SA path record in wire order, as struct ib_path_rec_data holds it. */
struct path_record {
	uint64_t service_id;
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint16_t dlid;
	uint16_t slid;
	uint32_t flowlabel_hoplimit;
	uint8_t tclass;
	uint8_t reversible_numpath;
	uint16_t pkey;
	uint16_t qosclass_sl;
	uint8_t mtu;
	uint8_t rate;
	uint8_t packetlifetime;
	uint8_t preference;
	uint8_t reserved[6];
};

#define PATH_GMP		(1u << 0)
#define PATH_PRIMARY		(1u << 1)
#define PATH_BIDIRECTIONAL	((1u << 2) | (1u << 3))

int ucma_query_path(struct cm_id *id, uint64_t response, uint16_t out)
{
	struct {
		struct { __u32 num_paths, reserved; } hdr; /* path_resp head */
		struct ib_path_rec_data data;
	} resp;
	struct path_record rec;
	size_t len = sizeof(resp.hdr);

	if (out < sizeof(resp.hdr))
		return -ENOSPC;
	memset(&resp, 0, sizeof(resp));
	if (id->dev && id->route_resolved &&
	    out >= sizeof(resp.hdr) + sizeof(resp.data)) {
		memset(&rec, 0, sizeof(rec));
		rec.service_id = htobe64(((uint64_t)id->ps << 16) |
			cm_addr_port((struct sockaddr *)&id->dst));
		memcpy(rec.dgid, id->dgid.raw, 16);
		memcpy(rec.sgid, id->sgid.raw, 16);
		rec.flowlabel_hoplimit = htobe32(CM_HOP_LIMIT);
		rec.tclass = id->tos;
		rec.reversible_numpath = 0x80 | 1;
		rec.pkey = htobe16(0xffff);
		rec.mtu = (2u << 6) | id->mtu;
		rec.rate = (2u << 6) | 7;
		rec.packetlifetime = (2u << 6) | CM_IBOE_PACKET_LIFETIME;
		resp.hdr.num_paths = 1;
		resp.data.flags = PATH_GMP | PATH_PRIMARY | PATH_BIDIRECTIONAL;
		memcpy(resp.data.path_rec, &rec, sizeof(rec));
		len += sizeof(resp.data);
	}
	return copy_to_user(response, &resp, len);
}

/* ---- options ---- */

static int set_option_id(struct cm_id *id, uint32_t optname,
			 const uint8_t *val, uint32_t optlen)
{
	int v;

	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return -EINVAL;
		id->tos = val[0];
		id->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		if (!((v && id->state != CM_LISTEN) || id->state == CM_IDLE))
			return -EINVAL;
		id->reuseaddr = v != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return -EINVAL;
		if (id->state != CM_IDLE && id->state != CM_ADDR_BOUND)
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		id->afonly = v != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return -EINVAL;
		id->ack_timeout = val[0];
		id->ack_timeout_set = true;
		return 0;
	default:
		return -ENOSYS;
	}
}

static int set_option_ib(struct cm_id *id, uint32_t optname, uint32_t optlen)
{
	if (optname != RDMA_OPTION_IB_PATH)
		return -ENOSYS;
	if (!optlen || optlen % sizeof(struct ib_path_rec_data))
		return -EINVAL;
	/* A path for a RoCE id: the route is the address's own. */
	if (id->state != CM_ADDR_RESOLVED)
		return -EINVAL;
	return ucma_resolve_route(id);
}

/* The kernel duplicates the value (memdup_user) before it looks at the
 * level or the name: a value it cannot read is EFAULT for any option. */
int ucma_set_option(struct cm_id *id, const struct rdma_ucm_set_option *c)
{
	uint8_t *val = malloc(c->optlen ? c->optlen : 1);
	int ret;

	if (!val)
		return -ENOMEM;
	ret = copy_from_user(val, c->optval, c->optlen);
	if (!ret) {
		if (c->level == RDMA_OPTION_ID)
			ret = set_option_id(id, c->optname, val, c->optlen);
		else if (c->level == RDMA_OPTION_IB)
			ret = set_option_ib(id, c->optname, c->optlen);
		else
			ret = -ENOSYS;
	}
	free(val);
	return ret;
}
