// SPDX-License-Identifier: BSD-2-Clause
/*
 * Context, device/port queries, protection domains, memory regions and
 * completion channels: what ib_uverbs does with these commands and what
 * vmw_pvrdma adds in its udata.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uverbs_internal.h"

/* One event a datagram; the application's end is close-on-exec like the
 * kernel's anon inode fds, and a reader that went away never SIGPIPEs. */
static int event_socketpair(int *user_end, int *dev_end, dev_t *st_dev,
			    ino_t *st_ino)
{
	int sv[2];
	struct stat st;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
	if (sim_libc.fstat(sv[0], &st)) {
		sim_libc.close(sv[0]);
		sim_libc.close(sv[1]);
		return -ENOMEM;
	}
	*user_end = sv[0];
	*dev_end = sim_fd_own(sv[1]);
	*st_dev = st.st_dev;
	*st_ino = st.st_ino;
	return 0;
}

int uverbs_get_context(struct uverbs_call *c)
{
	struct ib_uverbs_get_context cmd;
	struct ib_uverbs_get_context_resp resp = { 0 };
	struct pvrdma_alloc_ucontext_resp uresp = { 0 };
	struct sim_file *f = c->f;
	struct sim_ucontext *uctx;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (f->uctx)
		return -EINVAL;
	uctx = calloc(1, sizeof(*uctx));
	if (!uctx)
		return -ENOMEM;
	uctx->dev = f->dev;
	uctx->cmd_fd = f->fd;
	ret = event_socketpair(&uctx->async_fd_user, &uctx->async_fd_dev,
			       &f->async_st_dev, &f->async_st_ino);
	if (ret) {
		free(uctx);
		return ret;
	}
	resp.async_fd = (uint32_t)uctx->async_fd_user;
	resp.num_comp_vectors = 1;
	/* The driver sizes the provider's QP table by the device's max_qp. */
	uresp.qp_tab_size = SIM_MAX_QP;

	ret = uverbs_response(c, &resp, sizeof(resp));
	if (!ret)
		ret = udata_out(c, &uresp, sizeof(uresp));
	if (ret) {
		sim_libc.close(uctx->async_fd_user);
		sim_fd_close(uctx->async_fd_dev);
		free(uctx);
		return ret;
	}
	f->uctx = uctx;
	/* The same-host segment is mapped now, with the device, not later
	 * in the middle of what the program does with its address space
	 * (an address it just unmapped must stay unmapped for it). */
	sim_dev_shared_open(f->dev);
	return 0;
}

int uverbs_query_device(struct uverbs_call *c)
{
	struct ib_uverbs_query_device cmd;
	struct ib_uverbs_query_device_resp resp;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	sim_device_attr_fill(c->f->dev, &resp);
	return uverbs_response(c, &resp, sizeof(resp));
}

int uverbs_ex_query_device(struct uverbs_call *c)
{
	struct ib_uverbs_ex_query_device cmd;
	struct ib_uverbs_ex_query_device_resp resp;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	/* pvrdma_query_device takes no vendor data either way. */
	if (c->udata_inlen || c->udata_outlen)
		return -EINVAL;
	memset(&resp, 0, sizeof(resp));
	sim_device_attr_fill(c->f->dev, &resp.base);
	resp.response_length = c->outlen < sizeof(resp) ?
		(uint32_t)c->outlen : (uint32_t)sizeof(resp);
	/* No ODP, timestamps, RSS, TM or moderation on this device. */
	return uverbs_response(c, &resp, sizeof(resp));
}

int uverbs_query_port(struct uverbs_call *c)
{
	struct ib_uverbs_query_port cmd;
	struct ib_uverbs_query_port_resp resp;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.port_num != 1)
		return -EINVAL;
	sim_port_attr_fill(c->f->dev, &resp);
	return uverbs_response(c, &resp, sizeof(resp));
}

int uverbs_alloc_pd(struct uverbs_call *c)
{
	struct ib_uverbs_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp = { 0 };
	struct pvrdma_alloc_pd_resp uresp = { 0 };
	struct sim_dev *dev = c->f->dev;
	struct sim_pd *pd;
	uint32_t next = SIM_FIRST_PDN;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->uctx = c->f->uctx;
	/* The driver counts PDs against the device's max_pd. */
	ret = -sim_table_alloc(&dev->pds, SIM_FIRST_PDN,
			       SIM_FIRST_PDN + SIM_MAX_PD - 1, &next, pd,
			       &pd->pdn);
	if (ret)
		goto err_free;
	ret = uobj_add(c->f, UOBJ_PD, pd, &pd->handle);
	if (ret)
		goto err_dev;
	resp.pd_handle = pd->handle;
	uresp.pdn = pd->pdn;
	ret = uverbs_response(c, &resp, sizeof(resp));
	if (!ret)
		ret = udata_out(c, &uresp, sizeof(uresp));
	if (ret)
		goto err_uobj;
	return 0;

err_uobj:
	uobj_del(c->f, pd->handle);
err_dev:
	sim_table_del(&dev->pds, pd->pdn);
err_free:
	free(pd);
	return ret;
}

void uverbs_pd_free(struct sim_file *f, void *obj)
{
	struct sim_pd *pd = obj;

	sim_table_del(&f->dev->pds, pd->pdn);
	free(pd);
}

#define SIM_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			  IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
			  IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
			  IBV_ACCESS_RELAXED_ORDERING)

int uverbs_reg_mr(struct uverbs_call *c)
{
	struct ib_uverbs_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp = { 0 };
	struct sim_dev *dev = c->f->dev;
	struct sim_pd *pd;
	struct sim_mr *mr;
	uint64_t npages;
	uint32_t key;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	/* uverbs: the offset into the first page must match. */
	if ((cmd.start ^ cmd.hca_va) & (SIM_PAGE_SIZE - 1))
		return -EINVAL;
	/* ib_check_mr_access */
	if (cmd.access_flags & ~SIM_ACCESS_KNOWN)
		return -EINVAL;
	if ((cmd.access_flags & (IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(cmd.access_flags & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (cmd.access_flags & IBV_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	pd = uobj_get(c->f, UOBJ_PD, cmd.pd_handle);
	if (!pd)
		return -EINVAL;
	/* pvrdma_reg_user_mr */
	if (!cmd.length || cmd.length > 0xffffffffull)
		return -EINVAL;
	ret = uverbs_user_range_ok(cmd.start, cmd.length);
	if (ret)
		return ret;
	ret = sim_mr_pin_check(cmd.start, cmd.length, (int)cmd.access_flags);
	if (ret)
		return ret;
	npages = ((cmd.start + cmd.length + SIM_PAGE_SIZE - 1) / SIM_PAGE_SIZE) -
		 cmd.start / SIM_PAGE_SIZE;
	if (npages > SIM_PAGE_DIR_MAX_PAGES)
		return -EINVAL;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->pd = pd;
	mr->addr = cmd.start;
	mr->iova = cmd.hca_va;
	mr->length = cmd.length;
	mr->access = (int)cmd.access_flags;
	sim_mr_pin_track(mr);
	if (!dev->next_key)
		dev->next_key = SIM_FIRST_KEY;
	ret = -sim_table_alloc(&dev->mrs, SIM_FIRST_KEY,
			       SIM_FIRST_KEY + SIM_MAX_MR - 1, &dev->next_key,
			       mr, &key);
	if (ret)
		goto err_free;
	/* The device hands out one key an MR, used as lkey and rkey. */
	mr->lkey = key;
	mr->rkey = key;
	ret = uobj_add(c->f, UOBJ_MR, mr, &mr->handle);
	if (ret)
		goto err_dev;
	resp.mr_handle = mr->handle;
	resp.lkey = mr->lkey;
	resp.rkey = mr->rkey;
	ret = uverbs_response(c, &resp, sizeof(resp));
	if (ret)
		goto err_uobj;
	pd->refs++;
	sim_mr_publish(dev, mr);
	return 0;

err_uobj:
	uobj_del(c->f, mr->handle);
err_dev:
	sim_table_del(&dev->mrs, key);
err_free:
	sim_mr_pin_release(mr);
	free(mr);
	return ret;
}

void uverbs_mr_free(struct sim_file *f, void *obj)
{
	struct sim_mr *mr = obj;

	sim_mr_withdraw(f->dev, mr);
	sim_table_del(&f->dev->mrs, mr->lkey);
	mr->pd->refs--;
	sim_mr_pin_release(mr);
	free(mr);
}

/*
 * The kernel frees a channel when its last user (the fd, a CQ) goes; the
 * sim does not see the application's close(), so channels whose user end
 * is gone and that no CQ uses are let go here, before a new one is made:
 * a program that makes and destroys channels does not pile up pipes.
 */
void uverbs_channel_free(struct uverbs_channel *ch)
{
	struct sim_event_pipe p = {
		.user = ch->ch.fd_user, .dev = ch->ch.fd_dev,
		.drain = ch->fd_drain,
	};

	sim_event_pipe_close(&p);
	free(ch);
}

static void channels_prune(struct sim_file *f)
{
	struct uverbs_channel **pp = &f->channels, *ch;
	struct stat st;

	while ((ch = *pp)) {
		if (ch->ch.refs || (!ch->ch.user_closed &&
				    !sim_libc.fstat(ch->ch.fd_user, &st) &&
				    st.st_dev == ch->st_dev &&
				    st.st_ino == ch->st_ino)) {
			pp = &ch->next;
			continue;
		}
		*pp = ch->next;
		uverbs_channel_free(ch);
	}
}

/* Names channels for same-host requesters (adapters have their locks). */
static _Atomic uint64_t channel_ids;

int uverbs_create_comp_channel(struct uverbs_call *c)
{
	struct ib_uverbs_create_comp_channel cmd;
	struct ib_uverbs_create_comp_channel_resp resp = { 0 };
	struct sim_event_pipe p;
	struct uverbs_channel *ch;
	struct stat st;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	channels_prune(c->f);
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ret = sim_event_pipe_open(&p);
	if (ret) {
		free(ch);
		return ret;
	}
	ch->ch.fd_user = p.user;
	ch->ch.fd_dev = p.dev;
	ch->fd_drain = p.drain;
	ch->ch.id = atomic_fetch_add(&channel_ids, 1) + 1;
	/* Both ends of a pipe are its one inode. */
	if (!sim_libc.fstat(ch->ch.fd_user, &st)) {
		ch->st_dev = st.st_dev;
		ch->st_ino = st.st_ino;
		ch->ch.dev_ino = st.st_ino;
	}
	resp.fd = (uint32_t)ch->ch.fd_user;
	ret = uverbs_response(c, &resp, sizeof(resp));
	if (ret) {
		sim_libc.close(ch->ch.fd_user);
		uverbs_channel_free(ch);
		return ret;
	}
	ch->next = c->f->channels;
	c->f->channels = ch;
	return 0;
}

/* Address handles: vmw_pvrdma has no create_user_ah, so CREATE_AH is not
 * supported and no AH handle can exist; DESTROY_AH finds nothing. */
int uverbs_destroy_ah(struct uverbs_call *c)
{
	struct ib_uverbs_destroy_ah cmd;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return -ENOENT;
}
