// SPDX-License-Identifier: BSD-2-Clause
/*
 * Object types and the one destroy and query path (uverbs_internal.h):
 * each command that names one object is a row of a table that says what
 * it does to it (destroy, read), where the handle is in its request and
 * the type it must name; each type is a class saying whether an object is
 * busy, what its responses report and how it is freed. The kernel answers
 * every destroy the same way (ENOENT for a handle that does not name an
 * object of that type, EBUSY while other objects use it, then the
 * response's counts, and the object is gone) and every query too (EINVAL
 * for no such object).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "uverbs_internal.h"

static bool pd_busy(const void *obj)
{
	return ((const struct sim_pd *)obj)->refs;
}

static bool cq_busy(const void *obj)
{
	return ((const struct sim_cq *)obj)->refs;
}

static bool srq_busy(const void *obj)
{
	return ((const struct sim_srq *)obj)->refs;
}

const struct uobj_class uobj_classes[] = {
	[UOBJ_PD] = { .busy = pd_busy, .free = uverbs_pd_free },
	[UOBJ_MR] = { .free = uverbs_mr_free },
	[UOBJ_CQ] = { .busy = cq_busy, .report = uverbs_cq_report,
		      .free = uverbs_cq_free },
	[UOBJ_QP] = { .report = uverbs_qp_report, .free = uverbs_qp_free,
		      .query = uverbs_qp_query },
	[UOBJ_SRQ] = { .busy = srq_busy, .report = uverbs_srq_report,
		       .free = uverbs_srq_free, .query = uverbs_srq_query },
};

/* A command that names one object by its handle: what it does to it,
 * its request, where the handle is, its response. */
enum uobj_access { UOBJ_DESTROY = 1, UOBJ_READ };

struct uobj_cmd {
	enum uobj_access access;
	enum uobj_type type;
	size_t req_size;
	size_t handle_off;
	size_t resp_size;		/* 0: none */
};

#define UOBJ_CMD(cmd, acc, t, req, handle, resp)			\
	[IB_USER_VERBS_CMD_##cmd] = {					\
		acc, t, sizeof(struct req), offsetof(struct req, handle), \
		resp }

static const struct uobj_cmd uobj_cmds[] = {
	UOBJ_CMD(DEALLOC_PD, UOBJ_DESTROY, UOBJ_PD, ib_uverbs_dealloc_pd,
		 pd_handle, 0),
	UOBJ_CMD(DEREG_MR, UOBJ_DESTROY, UOBJ_MR, ib_uverbs_dereg_mr,
		 mr_handle, 0),
	UOBJ_CMD(DESTROY_CQ, UOBJ_DESTROY, UOBJ_CQ, ib_uverbs_destroy_cq,
		 cq_handle, sizeof(struct ib_uverbs_destroy_cq_resp)),
	UOBJ_CMD(DESTROY_QP, UOBJ_DESTROY, UOBJ_QP, ib_uverbs_destroy_qp,
		 qp_handle, sizeof(struct ib_uverbs_destroy_qp_resp)),
	UOBJ_CMD(DESTROY_SRQ, UOBJ_DESTROY, UOBJ_SRQ, ib_uverbs_destroy_srq,
		 srq_handle, sizeof(struct ib_uverbs_destroy_srq_resp)),
	UOBJ_CMD(QUERY_QP, UOBJ_READ, UOBJ_QP, ib_uverbs_query_qp,
		 qp_handle, sizeof(struct ib_uverbs_query_qp_resp)),
	UOBJ_CMD(QUERY_SRQ, UOBJ_READ, UOBJ_SRQ, ib_uverbs_query_srq,
		 srq_handle, sizeof(struct ib_uverbs_query_srq_resp)),
};

/* Large enough for every such request and response. */
#define UOBJ_CMD_MAX	128
_Static_assert(sizeof(struct ib_uverbs_query_qp) <= UOBJ_CMD_MAX &&
	       sizeof(struct ib_uverbs_query_qp_resp) <= UOBJ_CMD_MAX &&
	       sizeof(struct ib_uverbs_destroy_cq) <= UOBJ_CMD_MAX &&
	       sizeof(struct ib_uverbs_destroy_cq_resp) <= UOBJ_CMD_MAX,
	       "UOBJ_CMD_MAX");

/* The kernel's destroy: ENOENT for no such object, EBUSY while others use
 * it; the response reports what the application got of it. */
static int uobj_destroy(struct uverbs_call *c, const struct uobj_cmd *d,
			void *obj, uint32_t handle)
{
	const struct uobj_class *k = &uobj_classes[d->type];
	uint64_t resp[UOBJ_CMD_MAX / 8] = { 0 };

	if (!obj)
		return -ENOENT;
	if (k->busy && k->busy(obj))
		return -EBUSY;
	if (k->report)
		k->report(c->f, obj, resp);
	uobj_del(c->f, handle);
	k->free(c->f, obj);
	return d->resp_size ? uverbs_response(c, resp, d->resp_size) : 0;
}

/* The kernel's query: EINVAL for no such object. */
static int uobj_read(struct uverbs_call *c, const struct uobj_cmd *d,
		     void *obj)
{
	uint64_t resp[UOBJ_CMD_MAX / 8] = { 0 };

	if (!obj)
		return -EINVAL;
	uobj_classes[d->type].query(obj, resp);
	return uverbs_response(c, resp, d->resp_size);
}

int uverbs_uobj_cmd(struct uverbs_call *c)
{
	const struct uobj_cmd *d =
		&uobj_cmds[c->command & IB_USER_VERBS_CMD_COMMAND_MASK];
	uint64_t req[UOBJ_CMD_MAX / 8];
	uint32_t handle;
	int ret;

	ret = uverbs_request(c, req, d->req_size);
	if (ret)
		return ret;
	memcpy(&handle, (uint8_t *)req + d->handle_off, sizeof(handle));
	if (d->access == UOBJ_DESTROY)
		return uobj_destroy(c, d, uobj_get(c->f, d->type, handle),
				    handle);
	return uobj_read(c, d, uobj_get(c->f, d->type, handle));
}
