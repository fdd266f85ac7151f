// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the command table of the rdma_cm file. Each command
 * is read from the user as Linux's rdma_ucm reads it: the header, then
 * the whole command structure whatever hdr.in says (CONNECT and ACCEPT
 * take hdr.in bytes of theirs, at least up to .reserved), through the
 * fault-safe copies (uaccess.c), so an address the process cannot read
 * is EFAULT and never a signal. Private data and addresses travel inside
 * the commands; responses and option values are at addresses the
 * commands name. Where the kernel checks the response length before it
 * reads the command (ENOSPC before EFAULT), so does this table.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cm.h"

#define UCMA_MAX_BACKLOG	1024
/* The kernel's KMALLOC_MAX_SIZE on x86-64: a longer option is EINVAL. */
#define UCMA_MAX_OPTLEN		(4u << 20)

/* One write() to the file: the command is read already (ucma_cmd_run). */
struct ucma_call {
	struct ucma_file *file;
	uint16_t out;		/* hdr.out: the response's room */
};

struct ucma_method {
	int (*fn)(const struct ucma_call *call, void *cmd);
	uint16_t cmd_size;
	/* CONNECT and ACCEPT grew (ECE): the kernel takes what hdr.in
	 * holds, at least up to .reserved (grown_min), and zeroes the
	 * rest. 0: the whole structure, whatever hdr.in says. */
	uint16_t grown_min;
	/* Checked before the command is read (ENOSPC before EFAULT). */
	uint16_t out_min;
};

static int cmd_create_id(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_create_id *c = cmd;
	struct rdma_ucm_create_id_resp resp;
	struct cm_id *id;
	uint8_t qp_type;
	int ret;

	switch (c->ps) {
	case RDMA_PS_TCP:
		qp_type = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qp_type = IBV_QPT_UD;
		break;
	case RDMA_PS_IB:
		qp_type = c->qp_type;
		break;
	default:
		return -EINVAL;
	}
	id = ucma_id_alloc(call->file, c->ps, qp_type);
	if (!id)
		return -ENOMEM;
	id->uid = c->uid;
	resp.id = id->handle;
	ret = copy_to_user(c->response, &resp, sizeof(resp));
	if (ret)
		ucma_id_destroy(id);
	return ret;
}

static int cmd_destroy_id(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_destroy_id *c = cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	if (!id)
		return ret;
	resp.events_reported = id->events_reported;
	ucma_id_destroy(id);
	return copy_to_user(c->response, &resp, sizeof(resp));
}

static int cmd_bind_ip(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_bind_ip *c = cmd;
	struct cm_id *id;
	int ret;

	if (c->addr.sin6_family != AF_INET && c->addr.sin6_family != AF_INET6)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_bind_id(id, (struct sockaddr *)&c->addr) : ret;
}

static int cmd_bind(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_bind *c = cmd;
	struct cm_id *id;
	int ret;

	if (c->reserved || !c->addr_size ||
	    c->addr_size != cm_addr_len((struct sockaddr *)&c->addr))
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_bind_id(id, (struct sockaddr *)&c->addr) : ret;
}

static int cmd_resolve_ip(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_resolve_ip *c = cmd;
	struct cm_id *id;
	int ret;

	if ((c->src_addr.sin6_family &&
	     !cm_addr_len((struct sockaddr *)&c->src_addr)) ||
	    !cm_addr_len((struct sockaddr *)&c->dst_addr))
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_resolve_addr(id, (struct sockaddr *)&c->src_addr,
				      (struct sockaddr *)&c->dst_addr) : ret;
}

static int cmd_resolve_addr(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_resolve_addr *c = cmd;
	struct sockaddr *src = (struct sockaddr *)&c->src_addr;
	struct sockaddr *dst = (struct sockaddr *)&c->dst_addr;
	struct cm_id *id;
	int ret;

	if (c->reserved || (c->src_size && c->src_size != cm_addr_len(src)) ||
	    !c->dst_size || c->dst_size != cm_addr_len(dst))
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_resolve_addr(id, c->src_size ? src : NULL, dst) : ret;
}

static int cmd_resolve_route(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_resolve_route *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_resolve_route(id) : ret;
}

static int cmd_query_route(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_query *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_query_route(id, c->response, call->out) : ret;
}

static int cmd_query(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_query *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	if (!id)
		return ret;
	switch (c->option) {
	case RDMA_USER_CM_QUERY_ADDR:
		return ucma_query_addr(id, c->response, call->out);
	case RDMA_USER_CM_QUERY_PATH:
		return ucma_query_path(id, c->response, call->out);
	case RDMA_USER_CM_QUERY_GID:
		return ucma_query_gid(id, c->response, call->out);
	default:
		return -ENOSYS;
	}
}

static int cmd_connect(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_connect *c = cmd;
	struct cm_id *id;
	int ret;

	if (!c->conn_param.valid)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? cm_connect(id, &c->conn_param) : ret;
}

static int cmd_listen(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_listen *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	if (!id)
		return ret;
	if (id->state == CM_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = ucma_bind_id(id, (struct sockaddr *)&any);
		if (ret)
			return ret;
	}
	if (id->state != CM_ADDR_BOUND && id->state != CM_LISTEN)
		return -EINVAL;
	if (id->state == CM_ADDR_BOUND && !id->reuseaddr) {
		/* A listener needs its port to itself. */
		id->state = CM_LISTEN;
		if (ucma_port_in_use(id, (struct sockaddr *)&id->src)) {
			id->state = CM_ADDR_BOUND;
			return -EADDRINUSE;
		}
	}
	id->state = CM_LISTEN;
	id->backlog = (int)c->backlog <= 0 || c->backlog > UCMA_MAX_BACKLOG ?
		      UCMA_MAX_BACKLOG : (int)c->backlog;
	return 0;
}

static int cmd_accept(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_accept *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	if (!id)
		return ret;
	if (!c->conn_param.valid)
		return cm_accept(id, NULL);
	ret = cm_accept(id, &c->conn_param);
	if (!ret)
		id->uid = c->uid;
	return ret;
}

static int cmd_reject(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_reject *c = cmd;
	struct cm_id *id;
	int ret;

	if (!c->reason)
		c->reason = CM_REJ_CONSUMER_DEFINED;
	if (c->reason != CM_REJ_CONSUMER_DEFINED &&
	    c->reason != CM_REJ_VENDOR_OPTION)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? cm_reject(id, c->reason, c->private_data,
			      c->private_data_len) : ret;
}

static int cmd_disconnect(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_disconnect *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	return id ? cm_disconnect(id) : ret;
}

static int cmd_init_qp_attr(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_init_qp_attr *c = cmd;
	struct ib_uverbs_qp_attr resp;
	struct cm_id *id;
	int ret;

	if (c->qp_state > IBV_QPS_ERR)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	if (!id)
		return ret;
	memset(&resp, 0, sizeof(resp));
	ret = cm_init_qp_attr(id, c->qp_state, &resp);
	return ret ? ret : copy_to_user(c->response, &resp, sizeof(resp));
}

static int cmd_get_event(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_get_event *c = cmd;

	return ucma_get_event(call->file, c->response, call->out);
}

static int cmd_set_option(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_set_option *c = cmd;
	struct cm_id *id;
	int ret;

	if (c->optlen > UCMA_MAX_OPTLEN)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_set_option(id, c) : ret;
}

static int cmd_notify(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_notify *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	return id ? cm_notify(id, c->event) : ret;
}

static int cmd_join_ip_mcast(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_join_ip_mcast *c = cmd;
	struct cm_id *id;
	int ret;

	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_join_mcast(id, c->uid, (struct sockaddr *)&c->addr,
				    c->response, call->out) : ret;
}

static int cmd_join_mcast(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_join_mcast *c = cmd;
	struct cm_id *id;
	int ret;

	if (c->addr_size != cm_addr_len((struct sockaddr *)&c->addr) ||
	    c->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return -EINVAL;
	id = ucma_id_get(call->file, c->id, &ret);
	return id ? ucma_join_mcast(id, c->uid, (struct sockaddr *)&c->addr,
				    c->response, call->out) : ret;
}

static int cmd_leave_mcast(const struct ucma_call *call, void *cmd)
{
	struct rdma_ucm_destroy_id *c = cmd;

	return ucma_leave_mcast(call->file, c->id, c->response);
}

static int cmd_migrate_id(const struct ucma_call *call, void *cmd)
{
	return ucma_migrate_id(call->file, cmd, call->out);
}

#define METHOD(name, fn_, cmd_struct, ...)				\
	[RDMA_USER_CM_CMD_##name] = {					\
		.fn = fn_,						\
		.cmd_size = sizeof(struct rdma_ucm_##cmd_struct),	\
		__VA_ARGS__						\
	}
/* The part of a grown command every caller sends. */
#define UNTIL_RESERVED(cmd_struct)					\
	.grown_min = offsetof(struct rdma_ucm_##cmd_struct, reserved) +	\
		     sizeof(((struct rdma_ucm_##cmd_struct *)0)->reserved)

/* GET_OPTION is not in rdma_ucm: ENOSYS. */
static const struct ucma_method methods[] = {
	METHOD(CREATE_ID, cmd_create_id, create_id,
	       .out_min = sizeof(struct rdma_ucm_create_id_resp)),
	METHOD(DESTROY_ID, cmd_destroy_id, destroy_id,
	       .out_min = sizeof(struct rdma_ucm_destroy_id_resp)),
	METHOD(BIND_IP, cmd_bind_ip, bind_ip),
	METHOD(RESOLVE_IP, cmd_resolve_ip, resolve_ip),
	METHOD(RESOLVE_ROUTE, cmd_resolve_route, resolve_route),
	METHOD(QUERY_ROUTE, cmd_query_route, query,
	       .out_min = offsetof(struct rdma_ucm_query_route_resp,
				   ibdev_index)),
	METHOD(CONNECT, cmd_connect, connect, UNTIL_RESERVED(connect)),
	METHOD(LISTEN, cmd_listen, listen),
	METHOD(ACCEPT, cmd_accept, accept, UNTIL_RESERVED(accept)),
	METHOD(REJECT, cmd_reject, reject),
	METHOD(DISCONNECT, cmd_disconnect, disconnect),
	METHOD(INIT_QP_ATTR, cmd_init_qp_attr, init_qp_attr,
	       .out_min = sizeof(struct ib_uverbs_qp_attr)),
	/* An older 32-bit librdmacm leaves out the padding and the ECE. */
	METHOD(GET_EVENT, cmd_get_event, get_event,
	       .out_min = sizeof(struct rdma_ucm_event_resp) -
			  sizeof(uint32_t) - sizeof(struct rdma_ucm_ece)),
	METHOD(SET_OPTION, cmd_set_option, set_option),
	METHOD(NOTIFY, cmd_notify, notify),
	METHOD(JOIN_IP_MCAST, cmd_join_ip_mcast, join_ip_mcast),
	METHOD(LEAVE_MCAST, cmd_leave_mcast, destroy_id,
	       .out_min = sizeof(struct rdma_ucm_destroy_id_resp)),
	METHOD(MIGRATE_ID, cmd_migrate_id, migrate_id),
	METHOD(QUERY, cmd_query, query),
	METHOD(BIND, cmd_bind, bind),
	METHOD(RESOLVE_ADDR, cmd_resolve_addr, resolve_addr),
	METHOD(JOIN_MCAST, cmd_join_mcast, join_mcast),
};

/* Room for the largest command structure of the table. */
union ucma_cmd_buf {
	struct rdma_ucm_create_id create_id;
	struct rdma_ucm_destroy_id destroy_id;
	struct rdma_ucm_bind_ip bind_ip;
	struct rdma_ucm_resolve_ip resolve_ip;
	struct rdma_ucm_resolve_route resolve_route;
	struct rdma_ucm_query query;
	struct rdma_ucm_connect connect;
	struct rdma_ucm_listen listen;
	struct rdma_ucm_accept accept;
	struct rdma_ucm_reject reject;
	struct rdma_ucm_disconnect disconnect;
	struct rdma_ucm_init_qp_attr init_qp_attr;
	struct rdma_ucm_get_event get_event;
	struct rdma_ucm_set_option set_option;
	struct rdma_ucm_notify notify;
	struct rdma_ucm_join_ip_mcast join_ip_mcast;
	struct rdma_ucm_migrate_id migrate_id;
	struct rdma_ucm_bind bind;
	struct rdma_ucm_resolve_addr resolve_addr;
	struct rdma_ucm_join_mcast join_mcast;
};

int ucma_cmd_header(uint64_t buf, size_t len, struct rdma_ucm_cmd_hdr *hdr)
{
	int ret;

	if (len < sizeof(*hdr))
		return -EINVAL;
	ret = copy_from_user(hdr, buf, sizeof(*hdr));
	if (ret)
		return ret;
	if (hdr->cmd >= sizeof(methods) / sizeof(methods[0]))
		return -EINVAL;
	if (hdr->in + sizeof(*hdr) > len)
		return -EINVAL;
	return 0;
}

int ucma_cmd_run(struct ucma_file *file, const struct rdma_ucm_cmd_hdr *hdr,
		 uint64_t in)
{
	const struct ucma_method *m = &methods[hdr->cmd];
	struct ucma_call call = { .file = file, .out = hdr->out };
	union ucma_cmd_buf c;
	size_t len = m->cmd_size;
	int ret;

	if (!m->fn)
		return -ENOSYS;
	if (hdr->out < m->out_min)
		return -ENOSPC;
	if (m->grown_min) {
		if (hdr->in < m->grown_min)
			return -EINVAL;
		memset(&c, 0, len);
		if (hdr->in < len)
			len = hdr->in;
	}
	ret = copy_from_user(&c, in, len);
	return ret ? ret : m->fn(&call, &c);
}
