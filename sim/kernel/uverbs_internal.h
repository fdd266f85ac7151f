/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim: internals of the ib_uverbs + vmw_pvrdma model, shared by
 * uverbs*.c only. The rest of the sim sees struct sim_file as opaque.
 */
#ifndef PVRDMA_SIM_UVERBS_INTERNAL_H
#define PVRDMA_SIM_UVERBS_INTERNAL_H

#include <sys/types.h>

#include "event_pipe.h"
#include "fds.h"
#include "kernel.h"
#include "libc.h"
#include "pin.h"

/* PVRDMA_PAGE_DIR_MAX_PAGES of the driver: 1 directory of 512 tables. */
#define SIM_PAGE_DIR_MAX_PAGES	(512u * 512u)

/* First device numbers the adapter hands out (QPN 0 and 1 are special). */
#define SIM_FIRST_PDN		1u
#define SIM_FIRST_CQN		1u
#define SIM_FIRST_SRQN		1u
#define SIM_FIRST_KEY		1u
#define SIM_FIRST_QP_HANDLE	2u
/* With namespaces the on-wire QPNs come from their own range. */
#define SIM_FIRST_NS_QPN	0x100u
#define SIM_MAX_QPN		0xffffffu

/* Kinds of objects in a file's handle space (one space for all, as the
 * kernel's per-file xarray). */
enum uobj_type {
	UOBJ_NONE = 0,
	UOBJ_PD,
	UOBJ_MR,
	UOBJ_CQ,
	UOBJ_QP,
	UOBJ_SRQ,
};

struct uobj {
	enum uobj_type type;
	void *obj;
};

/* A completion channel: a pipe, one event a packet (event_pipe.c). */
struct uverbs_channel {
	struct sim_comp_channel ch;
	int fd_drain;			/* the sim's read end */
	dev_t st_dev;			/* identity of the user's end, so a */
	ino_t st_ino;			/* reused fd number is not mistaken */
	struct uverbs_channel *next;
};

struct uverbs_uar {
	void *addr;
	struct uverbs_uar *next;
};

/* One open uverbs file: the kernel's ib_uverbs_file + its ucontext. */
struct sim_file {
	struct sim_dev *dev;
	int fd;
	struct sim_ucontext *uctx;	/* NULL until GET_CONTEXT */
	dev_t async_st_dev;
	ino_t async_st_ino;
	struct uobj *uobjs;		/* handle -> object */
	uint32_t nuobjs;
	struct uverbs_channel *channels;
	struct uverbs_uar *uars;
};

/*
 * What a handler gets: the core request/response and the driver udata.
 * All four are addresses in the application, which may be anything: they
 * are only ever read or written through uaccess.h (the helpers below).
 */
struct uverbs_call {
	struct sim_file *f;
	uint32_t command;
	uint64_t in;			/* core request (after the headers) */
	size_t inlen;
	uint64_t out;			/* core response, may be 0 */
	size_t outlen;
	uint64_t udata_in;		/* vendor request */
	size_t udata_inlen;
	uint64_t udata_out;		/* vendor response */
	size_t udata_outlen;
};

typedef int (*uverbs_handler)(struct uverbs_call *c);

/* uverbs.c: request/response helpers with the kernel's rules. */
int uverbs_request(struct uverbs_call *c, void *req, size_t len);
int uverbs_response(struct uverbs_call *c, const void *resp, size_t len);
int udata_in(struct uverbs_call *c, void *req, size_t len);
int udata_out(struct uverbs_call *c, const void *resp, size_t len);
int uverbs_user_range_ok(uint64_t addr, uint64_t len);

/* uverbs.c: the file's handle space. */
int uobj_add(struct sim_file *f, enum uobj_type type, void *obj,
	     uint32_t *handle);
void *uobj_get(struct sim_file *f, enum uobj_type type, uint32_t handle);
void uobj_del(struct sim_file *f, uint32_t handle);
/* Device tables: place an object at a chosen number. */
struct uverbs_channel *uverbs_channel_find(struct sim_file *f, int fd);
void uverbs_channel_free(struct uverbs_channel *ch);

/* events.c: events not yet read by the application when their object
 * goes away are taken back, as the kernel drops them from its queue. */
uint32_t sim_event_comp_reclaim(struct uverbs_channel *chan,
				uint64_t cq_user_handle);
uint32_t sim_event_async_reclaim(struct sim_file *f, uint64_t element);

/* device_attr.c */
void sim_device_attr_fill(const struct sim_dev *dev,
			  struct ib_uverbs_query_device_resp *r);
void sim_port_attr_fill(struct sim_dev *dev,
			struct ib_uverbs_query_port_resp *r);
uint32_t sim_dev_max_srq(const struct sim_dev *dev);
uint32_t sim_dev_max_qp_wr(const struct sim_dev *dev);
uint32_t sim_dev_max_srq_wr(const struct sim_dev *dev);
uint32_t sim_dev_max_cqe(const struct sim_dev *dev);
uint32_t sim_dev_max_pkeys(void);
uint32_t sim_dev_max_qp_rd_atom(void);
uint32_t sim_dev_max_qp_init_rd_atom(void);

/* Handlers, by file. */
int uverbs_get_context(struct uverbs_call *c);
int uverbs_query_device(struct uverbs_call *c);
int uverbs_ex_query_device(struct uverbs_call *c);
int uverbs_query_port(struct uverbs_call *c);
int uverbs_alloc_pd(struct uverbs_call *c);
int uverbs_reg_mr(struct uverbs_call *c);
int uverbs_create_comp_channel(struct uverbs_call *c);
int uverbs_destroy_ah(struct uverbs_call *c);
int uverbs_create_cq(struct uverbs_call *c);
int uverbs_ex_create_cq(struct uverbs_call *c);
int uverbs_poll_cq(struct uverbs_call *c);
int uverbs_req_notify_cq(struct uverbs_call *c);
int uverbs_create_qp(struct uverbs_call *c);
int uverbs_ex_create_qp(struct uverbs_call *c);
int uverbs_modify_qp(struct uverbs_call *c);
int uverbs_ex_modify_qp(struct uverbs_call *c);
int uverbs_create_srq(struct uverbs_call *c);
int uverbs_modify_srq(struct uverbs_call *c);

/*
 * uobj.c: what the generic paths need of each object type, and the one
 * destroy path and one query path of every command that names an object
 * by its handle (DEALLOC_PD, DEREG_MR, DESTROY_CQ/QP/SRQ; QUERY_QP/SRQ):
 * the command table says which handle of the request names which type
 * and what the command does to it, the type's class says whether it is
 * busy, what the responses report and how it is freed. Close frees with
 * the same.
 */
struct uobj_class {
	/* Users keep it from being destroyed (EBUSY); NULL: never. */
	bool (*busy)(const void *obj);
	/* Fills the destroy response; NULL: the command has none. */
	void (*report)(struct sim_file *f, void *obj, void *resp);
	/* Frees it (dev->lock held). */
	void (*free)(struct sim_file *f, void *obj);
	/* Fills the query response (zeroed); NULL: no query command. */
	void (*query)(const void *obj, void *resp);
};

extern const struct uobj_class uobj_classes[];	/* by enum uobj_type */

/* The handler of every command of uobj.c's table. */
int uverbs_uobj_cmd(struct uverbs_call *c);

/* The classes' operations, by file. */
void uverbs_pd_free(struct sim_file *f, void *pd);
void uverbs_mr_free(struct sim_file *f, void *mr);
void uverbs_cq_free(struct sim_file *f, void *cq);
void uverbs_cq_report(struct sim_file *f, void *cq, void *resp);
void uverbs_qp_free(struct sim_file *f, void *qp);
void uverbs_qp_report(struct sim_file *f, void *qp, void *resp);
void uverbs_qp_query(const void *qp, void *resp);
void uverbs_srq_free(struct sim_file *f, void *srq);
void uverbs_srq_report(struct sim_file *f, void *srq, void *resp);
void uverbs_srq_query(const void *srq, void *resp);

static inline uint32_t sim_roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < 0x80000000u)
		r <<= 1;
	return r;
}

/* ---- events.c: the device raises events (dev->lock held): installed
 * as its upcalls (struct sim_device_upcalls) by sim_kernel_init() ---- */
/* After CQEs were added: fires one completion event if the CQ is armed for
 * them (solicited: a solicited or an error CQE was among them). */
void sim_event_comp(struct sim_cq *cq, bool solicited);
void sim_event_async(struct sim_ucontext *uctx, uint64_t element,
		     enum ibv_event_type type, uint32_t *reported);

/* ---- qp_state.c ---- */
bool sim_qp_transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			  enum ibv_qp_type type, int mask);

#endif /* PVRDMA_SIM_UVERBS_INTERNAL_H */
