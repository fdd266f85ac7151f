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

/* The part of a grown command every caller sends. */
#define UCMA_UNTIL_RESERVED(cmd)					\
	(offsetof(struct rdma_ucm_##cmd, reserved) +			\
	 sizeof(((struct rdma_ucm_##cmd *)0)->reserved))

typedef int (*ucma_cmd_fn)(struct ucma_file *file, int fd, uint64_t in,
			   uint16_t in_len, uint16_t out);

static int cmd_create_id(struct ucma_file *file, int fd, uint64_t in,
			 uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_create_id c;
	struct rdma_ucm_create_id_resp resp;
	struct cm_id *id;
	uint8_t qp_type;
	int ret;

	(void)fd, (void)in_len;
	if (out < sizeof(resp))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	switch (c.ps) {
	case RDMA_PS_TCP:
		qp_type = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qp_type = IBV_QPT_UD;
		break;
	case RDMA_PS_IB:
		qp_type = c.qp_type;
		break;
	default:
		return -EINVAL;
	}
	id = ucma_id_alloc(file, c.ps, qp_type);
	if (!id)
		return -ENOMEM;
	id->uid = c.uid;
	resp.id = id->handle;
	ret = copy_to_user(c.response, &resp, sizeof(resp));
	if (ret)
		ucma_id_destroy(id);
	return ret;
}

static int cmd_destroy_id(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_destroy_id c;
	struct rdma_ucm_destroy_id_resp resp;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	if (out < sizeof(resp))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	if (!id)
		return ret;
	resp.events_reported = id->events_reported;
	ucma_id_destroy(id);
	return copy_to_user(c.response, &resp, sizeof(resp));
}

static int cmd_bind_ip(struct ucma_file *file, int fd, uint64_t in,
		       uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_bind_ip c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.addr.sin6_family != AF_INET && c.addr.sin6_family != AF_INET6)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_bind_id(id, (struct sockaddr *)&c.addr) : ret;
}

static int cmd_bind(struct ucma_file *file, int fd, uint64_t in,
		    uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_bind c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.reserved || !c.addr_size ||
	    c.addr_size != cm_addr_len((struct sockaddr *)&c.addr))
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_bind_id(id, (struct sockaddr *)&c.addr) : ret;
}

static int cmd_resolve_ip(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_resolve_ip c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if ((c.src_addr.sin6_family &&
	     !cm_addr_len((struct sockaddr *)&c.src_addr)) ||
	    !cm_addr_len((struct sockaddr *)&c.dst_addr))
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_resolve_addr(id, (struct sockaddr *)&c.src_addr,
				      (struct sockaddr *)&c.dst_addr) : ret;
}

static int cmd_resolve_addr(struct ucma_file *file, int fd, uint64_t in,
			    uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_resolve_addr c;
	struct sockaddr *src = (struct sockaddr *)&c.src_addr;
	struct sockaddr *dst = (struct sockaddr *)&c.dst_addr;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.reserved || (c.src_size && c.src_size != cm_addr_len(src)) ||
	    !c.dst_size || c.dst_size != cm_addr_len(dst))
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_resolve_addr(id, c.src_size ? src : NULL, dst) : ret;
}

static int cmd_resolve_route(struct ucma_file *file, int fd, uint64_t in,
			     uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_resolve_route c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_resolve_route(id) : ret;
}

static int cmd_query_route(struct ucma_file *file, int fd, uint64_t in,
			   uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_query c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	if (out < offsetof(struct rdma_ucm_query_route_resp, ibdev_index))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_query_route(id, c.response, out) : ret;
}

static int cmd_query(struct ucma_file *file, int fd, uint64_t in,
		     uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_query c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	if (!id)
		return ret;
	switch (c.option) {
	case RDMA_USER_CM_QUERY_ADDR:
		return ucma_query_addr(id, c.response, out);
	case RDMA_USER_CM_QUERY_PATH:
		return ucma_query_path(id, c.response, out);
	case RDMA_USER_CM_QUERY_GID:
		return ucma_query_gid(id, c.response, out);
	default:
		return -ENOSYS;
	}
}

/*
 * CONNECT and ACCEPT grew (ECE): the kernel takes what hdr.in holds, at
 * least up to .reserved, and zeroes the rest.
 */
static int copy_grown_cmd(void *c, size_t size, size_t min, uint64_t in,
			  uint16_t in_len)
{
	if (in_len < min)
		return -EINVAL;
	memset(c, 0, size);
	return copy_from_user(c, in, in_len < size ? in_len : size);
}

static int cmd_connect(struct ucma_file *file, int fd, uint64_t in,
		       uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_connect c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)out;
	ret = copy_grown_cmd(&c, sizeof(c), UCMA_UNTIL_RESERVED(connect), in,
			     in_len);
	if (ret)
		return ret;
	if (!c.conn_param.valid)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? cm_connect(id, &c.conn_param) : ret;
}

static int cmd_listen(struct ucma_file *file, int fd, uint64_t in,
		      uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_listen c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
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
	id->backlog = (int)c.backlog <= 0 || c.backlog > UCMA_MAX_BACKLOG ?
		      UCMA_MAX_BACKLOG : (int)c.backlog;
	return 0;
}

static int cmd_accept(struct ucma_file *file, int fd, uint64_t in,
		      uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_accept c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)out;
	ret = copy_grown_cmd(&c, sizeof(c), UCMA_UNTIL_RESERVED(accept), in,
			     in_len);
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	if (!id)
		return ret;
	if (!c.conn_param.valid)
		return cm_accept(id, NULL);
	ret = cm_accept(id, &c.conn_param);
	if (!ret)
		id->uid = c.uid;
	return ret;
}

static int cmd_reject(struct ucma_file *file, int fd, uint64_t in,
		      uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_reject c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (!c.reason)
		c.reason = CM_REJ_CONSUMER_DEFINED;
	if (c.reason != CM_REJ_CONSUMER_DEFINED &&
	    c.reason != CM_REJ_VENDOR_OPTION)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? cm_reject(id, c.reason, c.private_data,
			      c.private_data_len) : ret;
}

static int cmd_disconnect(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_disconnect c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	return id ? cm_disconnect(id) : ret;
}

static int cmd_init_qp_attr(struct ucma_file *file, int fd, uint64_t in,
			    uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_init_qp_attr c;
	struct ib_uverbs_qp_attr resp;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	if (out < sizeof(resp))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.qp_state > IBV_QPS_ERR)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	if (!id)
		return ret;
	memset(&resp, 0, sizeof(resp));
	ret = cm_init_qp_attr(id, c.qp_state, &resp);
	return ret ? ret : copy_to_user(c.response, &resp, sizeof(resp));
}

static int cmd_get_event(struct ucma_file *file, int fd, uint64_t in,
			 uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_get_event c;
	int ret;

	(void)in_len;
	/* An older 32-bit librdmacm leaves out the padding and the ECE. */
	if (out < sizeof(struct rdma_ucm_event_resp) - sizeof(uint32_t) -
		  sizeof(struct rdma_ucm_ece))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	return ret ? ret : ucma_get_event(file, fd, c.response, out);
}

static int cmd_set_option(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_set_option c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.optlen > UCMA_MAX_OPTLEN)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_set_option(id, &c) : ret;
}

static int cmd_notify(struct ucma_file *file, int fd, uint64_t in,
		      uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_notify c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len, (void)out;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	return id ? cm_notify(id, c.event) : ret;
}

static int cmd_join_ip_mcast(struct ucma_file *file, int fd, uint64_t in,
			     uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_join_ip_mcast c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_join_mcast(id, c.uid, (struct sockaddr *)&c.addr,
				    c.response, out) : ret;
}

static int cmd_join_mcast(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_join_mcast c;
	struct cm_id *id;
	int ret;

	(void)fd, (void)in_len;
	ret = copy_from_user(&c, in, sizeof(c));
	if (ret)
		return ret;
	if (c.addr_size != cm_addr_len((struct sockaddr *)&c.addr) ||
	    c.join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return -EINVAL;
	id = ucma_id_get(file, c.id, &ret);
	return id ? ucma_join_mcast(id, c.uid, (struct sockaddr *)&c.addr,
				    c.response, out) : ret;
}

static int cmd_leave_mcast(struct ucma_file *file, int fd, uint64_t in,
			   uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_destroy_id c;
	int ret;

	(void)fd, (void)in_len;
	if (out < sizeof(struct rdma_ucm_destroy_id_resp))
		return -ENOSPC;
	ret = copy_from_user(&c, in, sizeof(c));
	return ret ? ret : ucma_leave_mcast(file, c.id, c.response);
}

static int cmd_migrate_id(struct ucma_file *file, int fd, uint64_t in,
			  uint16_t in_len, uint16_t out)
{
	struct rdma_ucm_migrate_id c;
	int ret;

	(void)fd, (void)in_len;
	ret = copy_from_user(&c, in, sizeof(c));
	return ret ? ret : ucma_migrate_id(file, &c, out);
}

/* GET_OPTION is not in rdma_ucm: ENOSYS. */
static const ucma_cmd_fn cmd_table[] = {
	[RDMA_USER_CM_CMD_CREATE_ID]	= cmd_create_id,
	[RDMA_USER_CM_CMD_DESTROY_ID]	= cmd_destroy_id,
	[RDMA_USER_CM_CMD_BIND_IP]	= cmd_bind_ip,
	[RDMA_USER_CM_CMD_RESOLVE_IP]	= cmd_resolve_ip,
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = cmd_resolve_route,
	[RDMA_USER_CM_CMD_QUERY_ROUTE]	= cmd_query_route,
	[RDMA_USER_CM_CMD_CONNECT]	= cmd_connect,
	[RDMA_USER_CM_CMD_LISTEN]	= cmd_listen,
	[RDMA_USER_CM_CMD_ACCEPT]	= cmd_accept,
	[RDMA_USER_CM_CMD_REJECT]	= cmd_reject,
	[RDMA_USER_CM_CMD_DISCONNECT]	= cmd_disconnect,
	[RDMA_USER_CM_CMD_INIT_QP_ATTR]	= cmd_init_qp_attr,
	[RDMA_USER_CM_CMD_GET_EVENT]	= cmd_get_event,
	[RDMA_USER_CM_CMD_GET_OPTION]	= NULL,
	[RDMA_USER_CM_CMD_SET_OPTION]	= cmd_set_option,
	[RDMA_USER_CM_CMD_NOTIFY]	= cmd_notify,
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = cmd_join_ip_mcast,
	[RDMA_USER_CM_CMD_LEAVE_MCAST]	= cmd_leave_mcast,
	[RDMA_USER_CM_CMD_MIGRATE_ID]	= cmd_migrate_id,
	[RDMA_USER_CM_CMD_QUERY]	= cmd_query,
	[RDMA_USER_CM_CMD_BIND]		= cmd_bind,
	[RDMA_USER_CM_CMD_RESOLVE_ADDR]	= cmd_resolve_addr,
	[RDMA_USER_CM_CMD_JOIN_MCAST]	= cmd_join_mcast,
};

int ucma_cmd_header(uint64_t buf, size_t len, struct rdma_ucm_cmd_hdr *hdr)
{
	int ret;

	if (len < sizeof(*hdr))
		return -EINVAL;
	ret = copy_from_user(hdr, buf, sizeof(*hdr));
	if (ret)
		return ret;
	if (hdr->cmd >= sizeof(cmd_table) / sizeof(cmd_table[0]))
		return -EINVAL;
	if (hdr->in + sizeof(*hdr) > len)
		return -EINVAL;
	return 0;
}

int ucma_cmd_run(struct ucma_file *file, int fd,
		 const struct rdma_ucm_cmd_hdr *hdr, uint64_t in)
{
	ucma_cmd_fn fn = cmd_table[hdr->cmd];

	return fn ? fn(file, fd, in, hdr->in, hdr->out) : -ENOSYS;
}
