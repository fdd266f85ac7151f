// SPDX-License-Identifier: BSD-2-Clause
/*
 * The uverbs character device as the kernel (6.1) answers write(): header
 * checks, the method table, how the core request/response and the driver
 * udata are cut out of a command, and the file's lifetime (mmap of the UAR,
 * close destroying everything the context still owns).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uaccess.h"
#include "uverbs_internal.h"

/* One write() method: sizes are those of the core structs, as the kernel
 * declares them; has_udata says the driver gets what follows them. */
struct uverbs_method {
	uverbs_handler handler;
	size_t req_size;
	size_t resp_size;
	bool has_resp;			/* legacy: request starts with .response */
	bool has_udata;
	bool is_ex;
};

#define LEGACY(fn, req, resp, udata) \
	{ fn, sizeof(req), resp, true, udata, false }
#define LEGACY_NORESP(fn, req, udata) \
	{ fn, sizeof(req), 0, false, udata, false }

static const struct uverbs_method legacy_methods[] = {
	[IB_USER_VERBS_CMD_GET_CONTEXT] =
		LEGACY(uverbs_get_context, struct ib_uverbs_get_context,
		       sizeof(struct ib_uverbs_get_context_resp), true),
	[IB_USER_VERBS_CMD_QUERY_DEVICE] =
		LEGACY(uverbs_query_device, struct ib_uverbs_query_device,
		       sizeof(struct ib_uverbs_query_device_resp), false),
	[IB_USER_VERBS_CMD_QUERY_PORT] =
		LEGACY(uverbs_query_port, struct ib_uverbs_query_port,
		       sizeof(struct ib_uverbs_query_port_resp), false),
	[IB_USER_VERBS_CMD_ALLOC_PD] =
		LEGACY(uverbs_alloc_pd, struct ib_uverbs_alloc_pd,
		       sizeof(struct ib_uverbs_alloc_pd_resp), true),
	[IB_USER_VERBS_CMD_DEALLOC_PD] =
		LEGACY_NORESP(uverbs_uobj_cmd, struct ib_uverbs_dealloc_pd,
			      false),
	[IB_USER_VERBS_CMD_DESTROY_AH] =
		LEGACY_NORESP(uverbs_destroy_ah, struct ib_uverbs_destroy_ah,
			      false),
	[IB_USER_VERBS_CMD_REG_MR] =
		LEGACY(uverbs_reg_mr, struct ib_uverbs_reg_mr,
		       sizeof(struct ib_uverbs_reg_mr_resp), true),
	[IB_USER_VERBS_CMD_DEREG_MR] =
		LEGACY_NORESP(uverbs_uobj_cmd, struct ib_uverbs_dereg_mr,
			      false),
	[IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL] =
		LEGACY(uverbs_create_comp_channel,
		       struct ib_uverbs_create_comp_channel,
		       sizeof(struct ib_uverbs_create_comp_channel_resp),
		       false),
	[IB_USER_VERBS_CMD_CREATE_CQ] =
		LEGACY(uverbs_create_cq, struct ib_uverbs_create_cq,
		       sizeof(struct ib_uverbs_create_cq_resp), true),
	[IB_USER_VERBS_CMD_DESTROY_CQ] =
		LEGACY(uverbs_uobj_cmd, struct ib_uverbs_destroy_cq,
		       sizeof(struct ib_uverbs_destroy_cq_resp), false),
	[IB_USER_VERBS_CMD_POLL_CQ] =
		LEGACY(uverbs_poll_cq, struct ib_uverbs_poll_cq,
		       sizeof(struct ib_uverbs_poll_cq_resp), false),
	[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ] =
		LEGACY_NORESP(uverbs_req_notify_cq,
			      struct ib_uverbs_req_notify_cq, false),
	[IB_USER_VERBS_CMD_CREATE_QP] =
		LEGACY(uverbs_create_qp, struct ib_uverbs_create_qp,
		       sizeof(struct ib_uverbs_create_qp_resp), true),
	[IB_USER_VERBS_CMD_QUERY_QP] =
		LEGACY(uverbs_uobj_cmd, struct ib_uverbs_query_qp,
		       sizeof(struct ib_uverbs_query_qp_resp), true),
	[IB_USER_VERBS_CMD_MODIFY_QP] =
		LEGACY_NORESP(uverbs_modify_qp, struct ib_uverbs_modify_qp,
			      true),
	[IB_USER_VERBS_CMD_DESTROY_QP] =
		LEGACY(uverbs_uobj_cmd, struct ib_uverbs_destroy_qp,
		       sizeof(struct ib_uverbs_destroy_qp_resp), false),
	[IB_USER_VERBS_CMD_CREATE_SRQ] =
		LEGACY(uverbs_create_srq, struct ib_uverbs_create_srq,
		       sizeof(struct ib_uverbs_create_srq_resp), true),
	[IB_USER_VERBS_CMD_MODIFY_SRQ] =
		LEGACY_NORESP(uverbs_modify_srq, struct ib_uverbs_modify_srq,
			      true),
	[IB_USER_VERBS_CMD_QUERY_SRQ] =
		LEGACY(uverbs_uobj_cmd, struct ib_uverbs_query_srq,
		       sizeof(struct ib_uverbs_query_srq_resp), false),
	[IB_USER_VERBS_CMD_DESTROY_SRQ] =
		LEGACY(uverbs_uobj_cmd, struct ib_uverbs_destroy_srq,
		       sizeof(struct ib_uverbs_destroy_srq_resp), false),
};

#define EX(fn, req_end, resp_end) \
	{ fn, req_end, resp_end, true, true, true }

static const struct uverbs_method ex_methods[] = {
	[IB_USER_VERBS_EX_CMD_QUERY_DEVICE] =
		EX(uverbs_ex_query_device,
		   offsetof(struct ib_uverbs_ex_query_device, reserved) + 4,
		   offsetof(struct ib_uverbs_ex_query_device_resp,
			    response_length) + 4),
	[IB_USER_VERBS_EX_CMD_CREATE_CQ] =
		EX(uverbs_ex_create_cq,
		   offsetof(struct ib_uverbs_ex_create_cq, reserved) + 4,
		   offsetof(struct ib_uverbs_ex_create_cq_resp,
			    response_length) + 4),
	[IB_USER_VERBS_EX_CMD_CREATE_QP] =
		EX(uverbs_ex_create_qp,
		   offsetof(struct ib_uverbs_ex_create_qp, source_qpn) + 4,
		   offsetof(struct ib_uverbs_ex_create_qp_resp,
			    response_length) + 4),
	[IB_USER_VERBS_EX_CMD_MODIFY_QP] =
		EX(uverbs_ex_modify_qp,
		   sizeof(struct ib_uverbs_modify_qp),
		   offsetof(struct ib_uverbs_ex_modify_qp_resp,
			    response_length) + 4),
};

static int uverbs_notsupp(struct uverbs_call *c)
{
	return -EOPNOTSUPP;
}

/* Commands this device has no driver op for (resize_cq, rereg_mr, MWs,
 * multicast, XRC, user AHs, SRQs where it has none) and unknown numbers,
 * as the kernel's "not supported" method: legacy, no sizes. */
static const struct uverbs_method notsupp_method = {
	uverbs_notsupp, 0, 0, false, false, false
};

static const struct uverbs_method *method_lookup(struct sim_dev *dev,
						 uint32_t command)
{
	uint32_t idx = command & IB_USER_VERBS_CMD_COMMAND_MASK;
	const struct uverbs_method *m = NULL;

	if (command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		if (idx < sizeof(ex_methods) / sizeof(ex_methods[0]))
			m = &ex_methods[idx];
	} else {
		if (idx < sizeof(legacy_methods) / sizeof(legacy_methods[0]))
			m = &legacy_methods[idx];
		/* The driver registers its SRQ ops only if the device has
		 * SRQs (HWv14 and later). */
		if (!sim_dev_max_srq(dev) &&
		    (idx == IB_USER_VERBS_CMD_CREATE_SRQ ||
		     idx == IB_USER_VERBS_CMD_MODIFY_SRQ ||
		     idx == IB_USER_VERBS_CMD_QUERY_SRQ ||
		     idx == IB_USER_VERBS_CMD_DESTROY_SRQ))
			m = NULL;
	}
	if (!m || !m->handler)
		return &notsupp_method;
	return m;
}

static int verify_hdr(const struct ib_uverbs_cmd_hdr *hdr,
		      const struct ib_uverbs_ex_cmd_hdr *ex, size_t count,
		      const struct uverbs_method *m)
{
	if (m->is_ex) {
		count -= sizeof(*hdr) + sizeof(*ex);
		if ((size_t)(hdr->in_words + ex->provider_in_words) * 8 !=
		    count)
			return -EINVAL;
		if ((size_t)hdr->in_words * 8 < m->req_size)
			return -ENOSPC;
		if (ex->cmd_hdr_reserved)
			return -EINVAL;
		if (ex->response) {
			if (!hdr->out_words && !ex->provider_out_words)
				return -EINVAL;
			if ((size_t)hdr->out_words * 8 < m->resp_size)
				return -ENOSPC;
		} else if (hdr->out_words || ex->provider_out_words) {
			return -EINVAL;
		}
		return 0;
	}
	if ((size_t)hdr->in_words * 4 != count)
		return -EINVAL;
	if (count < m->req_size + sizeof(*hdr)) {
		/* Old rdma-core sent DESTROY_CQ 8 bytes short; the kernel
		 * still takes it. */
		if (hdr->command == IB_USER_VERBS_CMD_DESTROY_CQ &&
		    count == 16)
			return 0;
		return -ENOSPC;
	}
	if ((size_t)hdr->out_words * 4 < m->resp_size)
		return -ENOSPC;
	return 0;
}

ssize_t uverbs_write(struct sim_file *f, const void *buf, size_t count)
{
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex = { 0 };
	const struct uverbs_method *m;
	struct uverbs_call c = { .f = f };
	uint64_t p = (uintptr_t)buf;	/* the application's */
	int ret;

	if (count < sizeof(hdr))
		return -EINVAL;
	if (sim_copy_from_user(&hdr, p, sizeof(hdr)))
		return -EFAULT;
	if (hdr.command & ~(uint32_t)(IB_USER_VERBS_CMD_FLAG_EXTENDED |
				      IB_USER_VERBS_CMD_COMMAND_MASK))
		return -EINVAL;
	m = method_lookup(f->dev, hdr.command);
	if (m->is_ex) {
		if (count < sizeof(hdr) + sizeof(ex))
			return -EINVAL;
		if (sim_copy_from_user(&ex, p + sizeof(hdr), sizeof(ex)))
			return -EFAULT;
	}
	ret = verify_hdr(&hdr, &ex, count, m);
	if (ret)
		return ret;
	c.command = hdr.command;
	p += sizeof(hdr);
	if (!m->is_ex) {
		size_t in_len = count - sizeof(hdr);
		size_t out_len = (size_t)hdr.out_words * 4;
		uint64_t response = 0;

		if (hdr.command == IB_USER_VERBS_CMD_DESTROY_CQ &&
		    in_len < m->req_size)
			in_len = m->req_size - 8;	/* the short form */
		if (m->has_udata) {
			c.udata_inlen = in_len - m->req_size;
			c.udata_in = c.udata_inlen ?
				p + m->req_size : 0;
			in_len = m->req_size;
		}
		if (m->has_resp) {
			if (sim_copy_from_user(&response, p,
					       sizeof(response)))
				return -EFAULT;
			if (m->has_udata) {
				c.udata_outlen = out_len - m->resp_size;
				out_len = m->resp_size;
				c.udata_out = c.udata_outlen ?
					response + out_len : 0;
			}
		} else {
			out_len = 0;
		}
		c.in = p;
		c.inlen = in_len;
		c.out = response;
		c.outlen = response ? out_len : 0;
		/* A response wanted but no place given: nothing can be
		 * written, the kernel's copy_to_user faults. */
		if (m->has_resp && !response && out_len)
			return -EFAULT;
	} else {
		p += sizeof(ex);
		c.in = p;
		c.inlen = (size_t)hdr.in_words * 8;
		c.out = ex.response;
		c.outlen = ex.response ? (size_t)hdr.out_words * 8 : 0;
		c.udata_inlen = (size_t)ex.provider_in_words * 8;
		c.udata_in = c.udata_inlen ? c.in + c.inlen : 0;
		c.udata_outlen = ex.response ?
			(size_t)ex.provider_out_words * 8 : 0;
		c.udata_out = c.udata_outlen ? c.out + c.outlen : 0;
	}

	/* Every command but GET_CONTEXT needs the context. */
	if (m->handler != uverbs_get_context &&
	    m->handler != uverbs_notsupp && !f->uctx)
		return -EINVAL;

	pthread_mutex_lock(&f->dev->lock);
	ret = m->handler(&c);
	pthread_mutex_unlock(&f->dev->lock);
	if (ret)
		return ret;
	return (ssize_t)count;
}

/* Core request: a shorter one is zero-extended, a longer one may only
 * carry zeros beyond what this kernel knows. */
int uverbs_request(struct uverbs_call *c, void *req, size_t len)
{
	uint8_t tail[64];
	size_t i, off, n;

	memset(req, 0, len);
	if (sim_copy_from_user(req, c->in,
			       c->inlen < len ? c->inlen : len))
		return -EFAULT;
	for (off = len; off < c->inlen; off += n) {
		n = c->inlen - off < sizeof(tail) ? c->inlen - off :
						    sizeof(tail);
		if (sim_copy_from_user(tail, c->in + off, n))
			return -EFAULT;
		for (i = 0; i < n; i++)
			if (tail[i])
				return -EOPNOTSUPP;
	}
	return 0;
}

/* Core response: what fits is written, the rest of the user's buffer is
 * zeroed. */
int uverbs_response(struct uverbs_call *c, const void *resp, size_t len)
{
	if (!c->outlen)
		return 0;
	if (!c->out)
		return -EFAULT;
	if (sim_copy_to_user(c->out, resp,
			     c->outlen < len ? c->outlen : len))
		return -EFAULT;
	if (len < c->outlen &&
	    sim_clear_user(c->out + len, c->outlen - len))
		return -EFAULT;
	return 0;
}

/*
 * Driver udata. The kernel's ib_copy_from_udata/ib_copy_to_udata do not
 * look at the lengths and would read or write past a short buffer; the
 * model refuses instead of touching memory it was not given.
 */
int udata_in(struct uverbs_call *c, void *req, size_t len)
{
	if (c->udata_inlen < len || !c->udata_in)
		return -EFAULT;
	return sim_copy_from_user(req, c->udata_in, len);
}

int udata_out(struct uverbs_call *c, const void *resp, size_t len)
{
	if (c->udata_outlen < len || !c->udata_out)
		return -EFAULT;
	return sim_copy_to_user(c->udata_out, resp, len);
}

/* ib_umem_get: the pages must exist in this process, else EFAULT. */
int uverbs_user_range_ok(uint64_t addr, uint64_t len)
{
	uint64_t start = addr & ~(uint64_t)(SIM_PAGE_SIZE - 1);
	uint64_t end;
	unsigned char vec[64];

	if (!addr || !len || addr + len < addr)
		return -EFAULT;
	/* mincore() takes whole pages: cover the last, partial one too. */
	end = (addr + len + SIM_PAGE_SIZE - 1) & ~(uint64_t)(SIM_PAGE_SIZE - 1);
	while (start < end) {
		uint64_t chunk = end - start;

		if (chunk > 64ull * SIM_PAGE_SIZE)
			chunk = 64ull * SIM_PAGE_SIZE;
		if (mincore((void *)(uintptr_t)start, chunk, vec))
			return -EFAULT;
		start += chunk;
	}
	return 0;
}

int uobj_add(struct sim_file *f, enum uobj_type type, void *obj,
	     uint32_t *handle)
{
	uint32_t i;

	for (i = 0; i < f->nuobjs; i++)
		if (f->uobjs[i].type == UOBJ_NONE)
			break;
	if (i == f->nuobjs) {
		uint32_t n = f->nuobjs ? f->nuobjs * 2 : 64;
		struct uobj *u = realloc(f->uobjs, n * sizeof(*u));

		if (!u)
			return -ENOMEM;
		memset(u + f->nuobjs, 0, (n - f->nuobjs) * sizeof(*u));
		f->uobjs = u;
		f->nuobjs = n;
	}
	f->uobjs[i].type = type;
	f->uobjs[i].obj = obj;
	*handle = i;
	return 0;
}

void *uobj_get(struct sim_file *f, enum uobj_type type, uint32_t handle)
{
	if (handle >= f->nuobjs || f->uobjs[handle].type != type)
		return NULL;
	return f->uobjs[handle].obj;
}

void uobj_del(struct sim_file *f, uint32_t handle)
{
	if (handle < f->nuobjs) {
		f->uobjs[handle].type = UOBJ_NONE;
		f->uobjs[handle].obj = NULL;
	}
}

struct uverbs_channel *uverbs_channel_find(struct sim_file *f, int fd)
{
	struct uverbs_channel *c;

	for (c = f->channels; c; c = c->next)
		if (c->ch.fd_user == fd && !c->ch.user_closed)
			return c;
	return NULL;
}

struct sim_file *uverbs_open(struct sim_dev *dev, int fd)
{
	struct sim_file *f = calloc(1, sizeof(*f));

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->dev = dev;
	f->fd = fd;
	return f;
}

void *uverbs_mmap(struct sim_file *f, void *addr, size_t len, int prot,
		  int flags, off_t offset)
{
	struct uverbs_uar *u;
	void *uar;

	/* pvrdma_mmap: exactly one page, page aligned; every such offset
	 * maps the context's UAR. */
	if (!f->uctx || len != SIM_PAGE_SIZE ||
	    (offset & (SIM_PAGE_SIZE - 1))) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	uar = sim_kernel_host.uar_map(f->uctx, addr);
	if (!uar || uar == MAP_FAILED) {
		free(u);
		errno = EAGAIN;		/* io_remap_pfn_range failed */
		return MAP_FAILED;
	}
	u->addr = uar;
	u->next = f->uars;
	f->uars = u;
	if (!f->uctx->uar)
		f->uctx->uar = uar;
	return uar;
}

/* Returns 0 when addr was a UAR of this file, -1/EINVAL otherwise. */
int uverbs_munmap(struct sim_file *f, void *addr, size_t len)
{
	struct uverbs_uar **pp, *u;

	for (pp = &f->uars; (u = *pp); pp = &u->next) {
		if (u->addr != addr)
			continue;
		*pp = u->next;
		if (f->uctx && f->uctx->uar == addr)
			f->uctx->uar = f->uars ? f->uars->addr : NULL;
		sim_kernel_host.uar_unmap(f->uctx, addr);
		free(u);
		return 0;
	}
	errno = EINVAL;
	return -1;
}

/* Everything the context still owns goes, in the kernel's order. */
static void uverbs_cleanup(struct sim_file *f)
{
	static const enum uobj_type order[] = {
		UOBJ_QP, UOBJ_SRQ, UOBJ_CQ, UOBJ_MR, UOBJ_PD,
	};
	unsigned int k;
	uint32_t i;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (i = f->nuobjs; i-- > 0;) {
			void *obj = f->uobjs[i].obj;

			if (f->uobjs[i].type != order[k])
				continue;
			uobj_classes[order[k]].free(f, obj);
			uobj_del(f, i);
		}
	}
}

void uverbs_close(struct sim_file *f)
{
	struct uverbs_channel *ch;
	struct uverbs_uar *u;

	if (!f)
		return;
	pthread_mutex_lock(&f->dev->lock);
	if (f->uctx)
		f->uctx->closing = true;
	uverbs_cleanup(f);
	while ((ch = f->channels)) {
		f->channels = ch->next;
		/* The application keeps its end; it now reads end-of-file. */
		uverbs_channel_free(ch);
	}
	pthread_mutex_unlock(&f->dev->lock);

	while ((u = f->uars)) {
		f->uars = u->next;
		sim_kernel_host.uar_unmap(f->uctx, u->addr);
		free(u);
	}
	if (f->uctx) {
		sim_fd_close(f->uctx->async_fd_dev);
		free(f->uctx);
	}
	free(f->uobjs);
	free(f);
}
