// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim rdma_cm: the /dev/infiniband/rdma_cm file, answered as Linux
 * 6.1's rdma_ucm answers librdmacm (<rdma/rdma_user_cm.h>, ABI 4).
 *
 * A write() is one command (ucma_cmd.c decodes it): struct
 * rdma_ucm_cmd_hdr, then the command; responses go to the address the
 * command names, through the fault-safe user copies. Ids are
 * numbered process-wide (the kernel's ctx_table) and belong to the file
 * that created them; another file's id is EINVAL, an unknown one ENOENT.
 * Errors are the kernel's: EINVAL for a bad header or a command in the
 * wrong state, ENOSYS for a command rdma_ucm leaves out (GET_OPTION) or an
 * unknown option, ENOSPC for a response buffer too small, EAGAIN for
 * GET_EVENT on an O_NONBLOCK file with nothing queued, EFAULT for a
 * command, response or option the process cannot read or write.
 *
 * Events are queued per file in order. A CONNECT_REQUEST carries a new id
 * that only becomes usable when the event is read (the kernel's
 * ucma_finish_ctx); until then it counts against the listener's backlog.
 * DESTROY_ID and LEAVE_MCAST return how many events were reported for the
 * id, which librdmacm waits to see acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/uio.h>

#include "cm.h"
#include "fds.h"

pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
struct cm_id *cm_ids;

static struct sim_table id_table;
static uint32_t id_next;

#define UCMA_MAX_ID		0xffffffu

/* ---- multicast joins (refused later by the device's attach) ---- */

struct ucma_mc {
	struct ucma_mc *next;
	uint32_t handle;
	uint64_t uid;
	struct cm_id *id;
	uint32_t events_reported;
};

static struct ucma_mc *mcs;
static uint32_t mc_next;

/* ---- helpers ---- */

static void file_update_readiness(struct ucma_file *file)
{
	eventfd_t v;

	if (file->head && !file->readable) {
		eventfd_write(file->fd, 1);
		file->readable = true;
	} else if (!file->head && file->readable) {
		eventfd_read(file->fd, &v);
		file->readable = false;
	}
}

struct cm_id *ucma_id_get(struct ucma_file *file, uint32_t handle,
			    int *err)
{
	struct cm_id *id = sim_table_get(&id_table, handle);

	if (!id || id->destroyed || (id->listener && !id->reported)) {
		*err = -ENOENT;
		return NULL;
	}
	if (id->file != file) {
		*err = -EINVAL;
		return NULL;
	}
	return id;
}

struct cm_id *ucma_id_alloc(struct ucma_file *file, uint16_t ps,
			    uint8_t qp_type)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	if (sim_table_alloc(&id_table, 0, UCMA_MAX_ID, &id_next, id,
			    &id->handle)) {
		free(id);
		return NULL;
	}
	id->file = file;
	id->ps = ps;
	id->qp_type = qp_type;
	id->sock = -1;
	id->state = CM_IDLE;
	id->mtu = IBV_MTU_1024;
	id->next = cm_ids;
	cm_ids = id;
	return id;
}

static void id_free(struct cm_id *id)
{
	struct cm_id **p;

	for (p = &cm_ids; *p; p = &(*p)->next)
		if (*p == id) {
			*p = id->next;
			break;
		}
	sim_table_del(&id_table, id->handle);
	free(id);
}

struct cm_id *ucma_child_alloc(struct cm_id *listener)
{
	struct cm_id *child;

	if (listener->backlog <= 0)
		return NULL;
	child = ucma_id_alloc(listener->file, listener->ps, listener->qp_type);
	if (!child)
		return NULL;
	child->listener = listener;
	child->child = true;
	child->reuseaddr = listener->reuseaddr;
	child->tos = listener->tos;
	child->tos_set = listener->tos_set;
	child->ack_timeout = listener->ack_timeout;
	child->ack_timeout_set = listener->ack_timeout_set;
	listener->backlog--;
	return child;
}

/* The kernel's ucma_cleanup_events: a listener's unreported connection
 * requests take their new ids with them. */
void ucma_event_drop_id(struct cm_id *id)
{
	struct ucma_file *file = id->file;
	struct ucma_event **p = &file->head, *e, *dropped = NULL;

	file->tail = NULL;
	while ((e = *p)) {
		if (e->id == id && !e->mc) {
			*p = e->next;
			e->next = dropped;
			dropped = e;
			continue;
		}
		file->tail = e;
		p = &e->next;
	}
	file_update_readiness(file);
	/* Unlinked first: destroying a child edits the same queue. */
	while ((e = dropped)) {
		dropped = e->next;
		if (e->child && !e->child->reported)
			ucma_id_destroy(e->child);
		free(e);
	}
}

/*
 * An unreported child goes with the CONNECT_REQUEST that would report it:
 * its file may be closed before its listener's (the ids of a file go in
 * any order), or the listener migrated to another file.
 */
static void drop_child_event(struct cm_id *child)
{
	struct ucma_file *file = child->listener->file;
	struct ucma_event **p = &file->head, *e;

	file->tail = NULL;
	while ((e = *p)) {
		if (e->child == child) {
			*p = e->next;
			free(e);
			child->listener->backlog++;
			continue;
		}
		file->tail = e;
		p = &e->next;
	}
	file_update_readiness(file);
}

void ucma_id_destroy(struct cm_id *id)
{
	struct ucma_mc **m = &mcs, *mc;

	if (id->listener && !id->reported)
		drop_child_event(id);
	id->destroyed = true;
	cm_destroy(id);
	ucma_event_drop_id(id);
	while ((mc = *m)) {
		if (mc->id == id) {
			*m = mc->next;
			free(mc);
			continue;
		}
		m = &mc->next;
	}
	id_free(id);
}

/*
 * A connection's new id is the user's only once ACCEPT gave it a uid:
 * until then, as in rdma_ucm, nothing that happens to it (a REJ or the
 * peer's death before the accept) reaches the file. The accept then
 * fails, because the connection has moved on, and the id is destroyed
 * as any other.
 */
static bool id_taken(const struct cm_id *id)
{
	return !id->child || id->uid;
}

struct ucma_event *ucma_event_queue(struct cm_id *id, uint32_t event,
				    int status)
{
	struct ucma_file *file = id->file;
	struct ucma_event *e;

	if (!id_taken(id))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->id = id;
	e->resp.uid = id->uid;
	e->resp.id = id->handle;
	e->resp.event = event;
	e->resp.status = (uint32_t)status;
	if (file->tail)
		file->tail->next = e;
	else
		file->head = e;
	file->tail = e;
	file_update_readiness(file);
	pthread_cond_broadcast(&file->cond);
	return e;
}

/* ---- events ---- */

int ucma_get_event(struct ucma_file *file, uint64_t response, uint16_t out)
{
	struct ucma_event *e;
	struct ucma_mc *mc;
	size_t len;
	int ret, fl;

	/*
	 * O_NONBLOCK of the open file, read through the file's own dup: the
	 * process's number may be closed by another thread, and reused by a
	 * non-blocking file, from the moment write() found the file (the
	 * kernel's command keeps the file, and so does this one).
	 */
	fl = sim_libc.fcntl(file->fd, F_GETFL);
	while (!file->head) {
		if (fl >= 0 && (fl & O_NONBLOCK))
			return -EAGAIN;
		pthread_cond_wait(&file->cond, &cm_lock);
	}
	e = file->head;
	len = out < sizeof(e->resp) ? out : sizeof(e->resp);
	ret = copy_to_user(response, &e->resp, len);
	if (ret)
		return ret;
	file->head = e->next;
	if (!file->head)
		file->tail = NULL;
	file_update_readiness(file);
	if (e->mc) {
		for (mc = mcs; mc; mc = mc->next)
			if (mc->handle == e->mc_id)
				mc->events_reported++;
	} else {
		e->id->events_reported++;
	}
	if (e->child) {
		e->child->reported = true;
		e->child->listener = NULL;
		e->id->backlog++;
	}
	free(e);
	return 0;
}

/* ---- multicast ---- */

int ucma_join_mcast(struct cm_id *id, uint64_t uid,
		    const struct sockaddr *addr, uint64_t response,
		    uint16_t out)
{
	struct rdma_ucm_create_id_resp resp;
	struct ucma_event *e;
	struct ucma_mc *mc;
	union ibv_gid mgid;
	int ret;

	if (out < sizeof(resp))
		return -ENOSPC;
	if (!cm_addr_len(addr))
		return -EINVAL;
	if (id->state != CM_ADDR_BOUND && id->state != CM_ADDR_RESOLVED)
		return -EINVAL;
	if (id->qp_type != IBV_QPT_UD || cm_addr_any(addr) || !id->dev)
		return -EINVAL;
	/* Linux has no IPv6 groups on a RoCE v2 port (ENOTSUPP, 524). */
	if (addr->sa_family != AF_INET && id->dev->cfg.roce == 2)
		return -524;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	mc->handle = mc_next++;
	mc->uid = uid;
	mc->id = id;
	resp.id = mc->handle;
	ret = copy_to_user(response, &resp, sizeof(resp));
	if (ret) {
		free(mc);
		return ret;
	}
	mc->next = mcs;
	mcs = mc;
	/*
	 * The join itself succeeds on a RoCE port; the device has no
	 * multicast groups (max_mcast_grp 0), so attaching the QP to the
	 * group fails and librdmacm reports MULTICAST_ERROR. The group's
	 * GID is Linux's on RoCE: an IPv4 group is IPv4-mapped on RoCE v2,
	 * ff0e::ffff:a.b.c.d on RoCE v1.
	 */
	cm_addr_gid(addr, &mgid);
	if (addr->sa_family == AF_INET && id->dev->cfg.roce == 1) {
		mgid.raw[0] = 0xff;
		mgid.raw[1] = 0x0e;
	}
	e = ucma_event_queue(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (!e)
		return 0;
	e->mc = true;
	e->mc_id = mc->handle;
	e->resp.uid = uid;
	e->resp.id = mc->handle;
	e->resp.param.ud.qp_num = 0xffffff;
	e->resp.param.ud.qkey = CM_UDP_QKEY;
	memcpy(e->resp.param.ud.ah_attr.grh.dgid, mgid.raw, 16);
	e->resp.param.ud.ah_attr.grh.sgid_index = (uint8_t)id->sgid_index;
	e->resp.param.ud.ah_attr.grh.hop_limit =
		addr->sa_family == AF_INET ? CM_HOP_LIMIT : 1;
	e->resp.param.ud.ah_attr.is_global = 1;
	e->resp.param.ud.ah_attr.port_num = 1;
	return 0;
}

int ucma_leave_mcast(struct ucma_file *file, uint32_t handle,
		     uint64_t response)
{
	struct rdma_ucm_destroy_id_resp resp;
	struct ucma_mc **p, *mc;
	struct ucma_event **ep, *e;

	for (p = &mcs; (mc = *p); p = &mc->next)
		if (mc->handle == handle)
			break;
	if (!mc)
		return -ENOENT;
	if (mc->id->file != file)
		return -EINVAL;
	*p = mc->next;
	ep = &file->head;
	file->tail = NULL;
	while ((e = *ep)) {
		if (e->mc && e->mc_id == handle) {
			*ep = e->next;
			free(e);
			continue;
		}
		file->tail = e;
		ep = &e->next;
	}
	file_update_readiness(file);
	resp.events_reported = mc->events_reported;
	free(mc);
	return copy_to_user(response, &resp, sizeof(resp));
}

/* ---- migrate ---- */

/*
 * Written to the file the id moves to; c->fd is the file it is on now
 * (the kernel's order: the new file takes it from the current one).
 */
int ucma_migrate_id(struct ucma_file *to,
		    const struct rdma_ucm_migrate_id *c, uint16_t out)
{
	struct rdma_ucm_migrate_resp resp;
	struct ucma_file *from = sim_kernel_host.ucma_file_of_fd((int)c->fd);
	struct ucma_event **p, *e;
	struct cm_id *id;
	int ret;

	if (out < sizeof(resp))
		return -ENOSPC;
	if (!from)
		return sim_libc.fcntl((int)c->fd, F_GETFD) < 0 ? -ENOENT :
								   -EINVAL;
	id = ucma_id_get(from, c->id, &ret);
	if (!id)
		return ret;
	resp.events_reported = id->events_reported;
	if (to != from) {
		/* The id's queued events move with it, in order. */
		p = &from->head;
		from->tail = NULL;
		while ((e = *p)) {
			if (e->id == id) {
				*p = e->next;
				e->next = NULL;
				if (to->tail)
					to->tail->next = e;
				else
					to->head = e;
				to->tail = e;
				continue;
			}
			from->tail = e;
			p = &e->next;
		}
		id->file = to;
		file_update_readiness(from);
		file_update_readiness(to);
		pthread_cond_broadcast(&to->cond);
	}
	return copy_to_user(c->response, &resp, sizeof(resp));
}

/* ---- the file ---- */

struct ucma_file *ucma_open(int fd)
{
	struct ucma_file *file = calloc(1, sizeof(*file));

	if (!file)
		return NULL;
	file->fd = sim_fd_own((int)sim_libc.fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (file->fd < 0) {
		free(file);
		return NULL;
	}
	pthread_cond_init(&file->cond, NULL);
	pthread_mutex_lock(&cm_lock);
	if (cm_agent_start()) {
		pthread_mutex_unlock(&cm_lock);
		pthread_cond_destroy(&file->cond);
		sim_fd_close(file->fd);
		free(file);
		errno = ENODEV;
		return NULL;
	}
	pthread_mutex_unlock(&cm_lock);
	return file;
}

/* The last reference to the file went (cm_lock held): its ids go. */
static void file_release(struct ucma_file *file)
{
	struct cm_id *id;
	struct ucma_event *e;

	/* Destroying one id can destroy others (a listener's unreported
	 * requests): start over after each. */
	do {
		for (id = cm_ids; id; id = id->next)
			if (id->file == file)
				break;
		if (id)
			ucma_id_destroy(id);
	} while (id);
	while ((e = file->head)) {
		file->head = e->next;
		free(e);
	}
	sim_fd_close(file->fd);
}

void ucma_close(struct ucma_file *file)
{
	bool last;

	pthread_mutex_lock(&cm_lock);
	file->closed = true;
	last = !file->users;
	if (last)
		file_release(file);
	pthread_mutex_unlock(&cm_lock);
	if (last) {
		pthread_cond_destroy(&file->cond);
		free(file);
	}
}

ssize_t ucma_write(struct ucma_file *file, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint64_t in = (uintptr_t)buf + sizeof(hdr);
	bool last;
	int ret;

	ret = ucma_cmd_header((uintptr_t)buf, len, &hdr);
	if (ret)
		return ret;
	pthread_mutex_lock(&cm_lock);
	if (file->closed) {
		pthread_mutex_unlock(&cm_lock);
		return -EBADF;
	}
	file->users++;
	ret = ucma_cmd_run(file, &hdr, in);
	last = !--file->users && file->closed;
	if (last)
		file_release(file);
	pthread_mutex_unlock(&cm_lock);
	if (last) {
		pthread_cond_destroy(&file->cond);
		free(file);
	}
	return ret ? ret : (ssize_t)len;
}
