// SPDX-License-Identifier: BSD-2-Clause
/*
 * rdma_cm's refusals and failures, as a librdmacm application meets them:
 *
 *   rdmacm_cases --mode MODE --addr SERVER_IPV4 --port P [--server|--client]
 *
 *   no-listener  (pair) a connect to a port nobody listens on is REJECTED
 *                (IB CM reason 8); then the listened port connects
 *   reject       (pair) the server rejects with private data; the client
 *                gets REJECTED (reason 28) with the data intact, the
 *                server got the client's connect data intact
 *   peer-killed  (pair) the server dies (SIGKILL) once established; the
 *                client gets DISCONNECTED and its receive is flushed
 *   slow-accept  (pair) the server accepts only after SLOW_ACCEPT_SECONDS,
 *                past the REQ's first response timeout (4.3 s): the
 *                client's CM sends its REQ again, the server's CM answers
 *                that duplicate with an MRA, and the connection is made
 *   unowned      (single) resolving an address no adapter owns is
 *                ADDR_ERROR; the process's own address resolves
 *   unacked      (single) rdma_destroy_id waits until the events reported
 *                for the id are acknowledged; unreported ones are dropped
 *   mcast        (single) a multicast join as on a VM: accepted, then
 *                MULTICAST_ERROR (status -1) as librdmacm's attach of
 *                the QP fails with EOPNOTSUPP (vmw_pvrdma has none)
 *   fd           (single) the rdma_cm fd as the kernel's: read() is
 *                EINVAL (no read method; EBADF when not open for
 *                reading), pread() ESPIPE, write() on a read-only open
 *                EBADF; 1000 events left unread on a channel are all
 *                there to read afterwards, in order
 *   fork         (single) a fork()ed child opens its own channel and
 *                connects to its parent's listener: its CM agent gets
 *                the reject; the parent's own connect, in flight at the
 *                fork, is still answered to the parent
 *   closefds     (single) the application replaces every socket and
 *                eventfd it finds in its fd table (dup2 of /dev/null),
 *                then closes all its fds (close_range(3, ~0U, 0)): the
 *                CM's own descriptors are not among them, and a connect
 *                to a listener made afterwards still reaches it
 *   netdev       (single) the port's IP interface: getifaddrs, the
 *                if_* calls, the interface ioctls and sysfs name one
 *                Ethernet netdev (not the loopback) holding the port's
 *                IPv4 address and GID 0's link-local one; rdma_cm binds
 *                its address to the adapter; lo is still there and a
 *                TCP socket on the address still connects
 *   host_netdev  (single) the port's address is one of the host's
 *                interfaces' (--netdev, adapters across hosts): that
 *                interface is its netdev in sysfs, getifaddrs and
 *                SIOCGIFCONF list the address once, on that interface,
 *                and no pvrdma<N> is added; rdma_cm binds the address to
 *                the adapter
 *   mtu_follow   (single, root) the port's address is one of the host's
 *                interfaces' and no --mtu was given: as the interface's
 *                MTU goes to 9000 and to 1500 (SIOCSIFMTU), the same
 *                process sees the port's active MTU (ibv_query_port),
 *                rdma_cm's path MTU and the netdev's sysfs mtu follow:
 *                4096 and 1024
 *
 * Every wait is bounded (E2E_WAIT_SECONDS): a hang is a failure.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_packet.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

#include "e2e_common.h"

#define CHECK(cond, ...) E2E_CHECK(cond, __VA_ARGS__)

/* A consumer slower than ib_cm's first response timeout (4.096 us << 20). */
#define SLOW_ACCEPT_SECONDS	6

static struct rdma_event_channel *channel;
static struct sockaddr_in server_addr;
static const char *mode = "";
static bool is_server;

static bool mode_is(const char *m)
{
	return !strcmp(mode, m);
}

/* The next event, whatever it is; fails after the hang guard. */
static struct rdma_cm_event *next_event(void)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	CHECK(poll(&pfd, 1, E2E_WAIT_SECONDS * 1000) == 1,
	      "no rdma_cm event within %d s", E2E_WAIT_SECONDS);
	CHECK(!rdma_get_cm_event(channel, &ev), "rdma_get_cm_event: %s",
	      strerror(errno));
	return ev;
}

static struct rdma_cm_event *expect_event(enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = next_event();

	CHECK(ev->event == type, "event %s (status %d), want %s",
	      rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return ev;
}

static void pattern(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + 7 * i);
}

static struct rdma_cm_id *resolved_id(uint16_t port)
{
	struct sockaddr_in dst = server_addr;
	struct rdma_cm_id *id;

	dst.sin_port = htons(port);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(!rdma_resolve_route(id, 2000), "rdma_resolve_route: %s",
	      strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	return id;
}

static void make_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	CHECK(!rdma_create_qp(id, NULL, &attr), "rdma_create_qp: %s",
	      strerror(errno));
}

static struct rdma_cm_id *listen_on(uint16_t port)
{
	struct sockaddr_in sin = server_addr;
	struct rdma_cm_id *id;

	sin.sin_port = htons(port);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&sin),
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!rdma_listen(id, 4), "rdma_listen: %s", strerror(errno));
	return id;
}

/* ---- pairs ---- */

static void server(uint16_t port)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *listener = listen_on(port), *id;
	uint8_t want[56], rej[148];

	ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	if (mode_is("reject")) {
		pattern(want, sizeof(want), 0x31);
		CHECK(ev->param.conn.private_data_len >= sizeof(want),
		      "connect request carries %u bytes of private data",
		      ev->param.conn.private_data_len);
		CHECK(!memcmp(ev->param.conn.private_data, want, sizeof(want)),
		      "the client's private data changed on the way");
		rdma_ack_cm_event(ev);
		pattern(rej, sizeof(rej), 0x52);
		CHECK(!rdma_reject(id, rej, sizeof(rej)), "rdma_reject: %s",
		      strerror(errno));
		printf("rdmacm server: rejected\n");
		rdma_destroy_id(id);
		rdma_destroy_id(listener);
		return;
	}
	rdma_ack_cm_event(ev);
	make_qp(id, IBV_QPT_RC);
	if (mode_is("slow-accept"))
		sleep(SLOW_ACCEPT_SECONDS);
	CHECK(!rdma_accept(id, &param), "rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
	if (mode_is("peer-killed")) {
		printf("rdmacm server: dying now\n");
		fflush(stdout);
		raise(SIGKILL);
	}
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	printf("rdmacm server: done\n");
}

static void client(uint16_t port)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint8_t pdata[56], want[148];

	if (mode_is("no-listener")) {
		/* Nobody listens on port + 1: the server's CM rejects. */
		id = resolved_id(port + 1);
		make_qp(id, IBV_QPT_RC);
		CHECK(!rdma_connect(id, &param), "rdma_connect: %s",
		      strerror(errno));
		ev = expect_event(RDMA_CM_EVENT_REJECTED);
		CHECK(ev->status == 8, "rejected with reason %d, want 8",
		      ev->status);
		rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	id = resolved_id(port);
	make_qp(id, IBV_QPT_RC);
	if (mode_is("reject")) {
		pattern(pdata, sizeof(pdata), 0x31);
		param.private_data = pdata;
		param.private_data_len = sizeof(pdata);
	}
	CHECK(!rdma_connect(id, &param), "rdma_connect: %s", strerror(errno));
	if (mode_is("reject")) {
		ev = expect_event(RDMA_CM_EVENT_REJECTED);
		CHECK(ev->status == 28, "rejected with reason %d, want 28",
		      ev->status);
		pattern(want, sizeof(want), 0x52);
		CHECK(ev->param.conn.private_data_len == sizeof(want),
		      "reject carries %u bytes of private data, want %zu",
		      ev->param.conn.private_data_len, sizeof(want));
		CHECK(!memcmp(ev->param.conn.private_data, want, sizeof(want)),
		      "the reject's private data changed on the way");
		rdma_ack_cm_event(ev);
	} else if (mode_is("peer-killed")) {
		struct ibv_recv_wr wr = { .wr_id = 7 }, *bad;
		struct ibv_wc wc;
		int i;

		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
		CHECK(!ibv_post_recv(id->qp, &wr, &bad), "ibv_post_recv");
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
		/* What rping does: the QP goes to the error state. */
		CHECK(!rdma_disconnect(id) || errno == EINVAL,
		      "rdma_disconnect: %s", strerror(errno));
		for (i = 0; i < E2E_WAIT_SECONDS * 1000; i++) {
			if (ibv_poll_cq(id->recv_cq, 1, &wc) == 1)
				break;
			usleep(1000);
		}
		CHECK(i < E2E_WAIT_SECONDS * 1000 && wc.wr_id == 7 &&
		      wc.status == IBV_WC_WR_FLUSH_ERR,
		      "the receive was not flushed");
	} else {
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ESTABLISHED));
		CHECK(!rdma_disconnect(id), "rdma_disconnect: %s",
		      strerror(errno));
		rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_DISCONNECTED));
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	printf("rdmacm client: passed\n");
}

/* ---- single process ---- */

static void unowned(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(4791) };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	inet_pton(AF_INET, "127.99.0.1", &dst.sin_addr);
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_ADDR_ERROR);
	CHECK(ev->status < 0, "ADDR_ERROR with status %d", ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	/* Positive control: the process's own address. */
	rdma_destroy_id(resolved_id(4791));
}

static atomic_bool destroyed;

static void *destroyer(void *id)
{
	rdma_destroy_id(id);
	atomic_store(&destroyed, true);
	return NULL;
}

static void unacked(void)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in dst = server_addr;
	pthread_t t;

	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	/* The event is reported and not acknowledged: destroying the id
	 * must wait for the acknowledgement. */
	CHECK(!pthread_create(&t, NULL, destroyer, id), "pthread_create");
	usleep(200000);
	CHECK(!atomic_load(&destroyed),
	      "rdma_destroy_id returned before its event was acknowledged");
	rdma_ack_cm_event(ev);
	pthread_join(t, NULL);
	CHECK(atomic_load(&destroyed), "rdma_destroy_id did not return");

	/* An event queued but never read is not waited for. */
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
	      "rdma_resolve_addr: %s", strerror(errno));
	CHECK(!rdma_destroy_id(id), "rdma_destroy_id: %s", strerror(errno));
}

static void mcast(void)
{
	struct sockaddr_in src = server_addr, group = { .sin_family = AF_INET };
	static const uint8_t want[12] = { [10] = 0xff, [11] = 0xff };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	union ibv_gid gid;
	int ret;

	inet_pton(AF_INET, "239.1.2.3", &group.sin_addr);
	src.sin_port = 0;
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_UDP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&src),
	      "rdma_bind_addr: %s", strerror(errno));
	make_qp(id, IBV_QPT_UD);
	/* Linux takes the join on a RoCE port and reports it joined; the
	 * attach that librdmacm then makes fails (vmw_pvrdma has no
	 * multicast), which librdmacm reports as MULTICAST_ERROR, status -1. */
	CHECK(!rdma_join_multicast(id, (struct sockaddr *)&group, NULL),
	      "rdma_join_multicast: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_MULTICAST_ERROR);
	CHECK(ev->status == -1, "status %d, want -1", ev->status);
	gid = ev->param.ud.ah_attr.grh.dgid;
	CHECK(!memcmp(gid.raw, want, 12) &&
	      !memcmp(gid.raw + 12, &group.sin_addr, 4),
	      "the group's GID is not IPv4-mapped 239.1.2.3");
	rdma_ack_cm_event(ev);
	ret = ibv_attach_mcast(id->qp, &gid, 0);
	CHECK(ret == EOPNOTSUPP, "ibv_attach_mcast: %d, want EOPNOTSUPP", ret);
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&group) == 0,
	      "rdma_leave_multicast: %s", strerror(errno));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

/* The first line of a sysfs attribute, under SYSFS_PATH. */
static void sysfs_line(const char *rel, char *buf, size_t len)
{
	const char *root = getenv("SYSFS_PATH");
	char path[512];
	FILE *f;

	CHECK(root, "no SYSFS_PATH");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	CHECK(fgets(buf, (int)len, f), "%s: empty", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

#define FLOOD_IDS	1000

static void fd_semantics(void)
{
	static struct rdma_cm_id *ids[FLOOD_IDS];
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct iovec iov;
	char buf[64];
	int fd, i;

	/* No read method: the VFS's EINVAL, whatever the buffer. */
	errno = 0;
	CHECK(read(channel->fd, buf, sizeof(buf)) == -1 && errno == EINVAL,
	      "read: %s", strerror(errno));
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	errno = 0;
	CHECK(readv(channel->fd, &iov, 1) == -1 && errno == EINVAL,
	      "readv: %s", strerror(errno));
	errno = 0;
	CHECK(pread(channel->fd, buf, sizeof(buf), 0) == -1 &&
	      errno == ESPIPE, "pread: %s", strerror(errno));
	fd = open("/dev/infiniband/rdma_cm", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open O_WRONLY: %s", strerror(errno));
	errno = 0;
	CHECK(read(fd, buf, sizeof(buf)) == -1 && errno == EBADF,
	      "read of a write-only open: %s", strerror(errno));
	close(fd);
	fd = open("/dev/infiniband/rdma_cm", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open O_RDONLY: %s", strerror(errno));
	errno = 0;
	CHECK(write(fd, buf, 16) == -1 && errno == EBADF,
	      "write to a read-only open: %s", strerror(errno));
	close(fd);

	/* Events nobody reads yet: the kernel's queue has no bound. */
	for (i = 0; i < FLOOD_IDS; i++) {
		struct sockaddr_in dst = server_addr;

		CHECK(!rdma_create_id(channel, &ids[i], &ids[i], RDMA_PS_TCP),
		      "rdma_create_id #%d: %s", i, strerror(errno));
		CHECK(!rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst,
					 2000),
		      "rdma_resolve_addr #%d: %s", i, strerror(errno));
	}
	/* Every resolution has answered (or will, and is waited for). */
	for (i = 0; i < FLOOD_IDS; i++) {
		ev = expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
		CHECK(ev->id == ids[i], "event %d is for another id", i);
		rdma_ack_cm_event(ev);
	}
	CHECK(poll(&pfd, 1, 0) == 0, "an event after the last");
	for (i = 0; i < FLOOD_IDS; i++)
		rdma_destroy_id(ids[i]);
}

/* Connects id (no QP: the QPN given) with private data "who". */
static void connect_as(struct rdma_cm_id *id, const char *who)
{
	struct rdma_conn_param param = { .qp_num = 0x100,
					 .private_data = who,
					 .private_data_len = 8 };

	CHECK(!rdma_connect(id, &param), "%s: rdma_connect: %s", who,
	      strerror(errno));
}

static void expect_rejected_by(struct rdma_cm_id *id, const char *data)
{
	struct rdma_cm_event *ev = expect_event(RDMA_CM_EVENT_REJECTED);

	CHECK(ev->id == id, "REJECTED for another id");
	CHECK(ev->status == 28 && !memcmp(ev->param.conn.private_data, data,
					  8),
	      "rejected with reason %d, data '%.8s'", ev->status,
	      (const char *)ev->param.conn.private_data);
	rdma_ack_cm_event(ev);
}

static void forked(uint16_t port)
{
	struct rdma_cm_id *listener = listen_on(port), *mine, *req;
	struct rdma_cm_event *ev;
	int i, status, from_child = 0, from_parent = 0;
	bool got_reject = false, child_req;
	pid_t pid;

	mine = resolved_id(port);
	connect_as(mine, "parent\0");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		struct rdma_cm_id *id;

		/* The child's own channel, and a connect of its own. */
		channel = rdma_create_event_channel();
		CHECK(channel, "child: rdma_create_event_channel: %s",
		      strerror(errno));
		id = resolved_id(port);
		connect_as(id, "child\0\0\0");
		expect_rejected_by(id, "no-child");
		rdma_destroy_id(id);
		rdma_destroy_event_channel(channel);
		_exit(0);
	}
	/* Both requests come to the parent's listener; each is refused
	 * with data naming whose it was. The parent's own connect is then
	 * rejected, in whatever order with the child's request. */
	for (i = 0; i < 3; i++) {
		ev = next_event();
		if (ev->event == RDMA_CM_EVENT_REJECTED) {
			CHECK(ev->id == mine && ev->status == 28 &&
			      !memcmp(ev->param.conn.private_data, "no-paren",
				      8) && !got_reject,
			      "an unexpected REJECTED (status %d)",
			      ev->status);
			got_reject = true;
			rdma_ack_cm_event(ev);
			continue;
		}
		CHECK(ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		      ev->listen_id == listener, "event %s",
		      rdma_event_str(ev->event));
		req = ev->id;
		child_req = !memcmp(ev->param.conn.private_data, "child", 5);
		if (child_req)
			from_child++;
		else if (!memcmp(ev->param.conn.private_data, "parent", 6))
			from_parent++;
		CHECK(!rdma_reject(req, child_req ? "no-child" : "no-paren",
				   8), "rdma_reject: %s", strerror(errno));
		rdma_ack_cm_event(ev);
		rdma_destroy_id(req);
	}
	CHECK(from_child == 1 && from_parent == 1 && got_reject,
	      "%d requests from the child, %d from the parent, %s reject",
	      from_child, from_parent, got_reject ? "a" : "no");
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s",
	      strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child failed (status 0x%x)", status);
	rdma_destroy_id(mine);
	rdma_destroy_id(listener);
}

/* Every socket and eventfd in the fd table the application can replace
 * is replaced: none of them is the CM's. */
static void dup2_onto_socket(int fd, const char *target, void *arg)
{
	int null = *(int *)arg;

	if (fd < 3 || fd == null)
		return;
	if (strncmp(target, "socket:", 7) && !strstr(target, "[eventfd]"))
		return;
	CHECK(dup2(null, fd) == fd || errno == EBUSY,
	      "dup2 onto %d (%s): %s", fd, target, strerror(errno));
}

static void dup2_onto_sockets(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	CHECK(null >= 0, "/dev/null: %s", strerror(errno));
	e2e_fd_walk(dup2_onto_socket, &null);
	close(null);
}

static void close_fds(uint16_t port)
{
	struct rdma_cm_id *listener, *id, *req;
	struct rdma_cm_event *ev;

	/* The channel main() opened started the CM: its fds are made. */
	dup2_onto_sockets();
	CHECK(!close_range(3, ~0U, 0), "close_range: %s", strerror(errno));
	/* The old channel's fd went with the rest (its close now is EBADF,
	 * before the number can be given out again). */
	rdma_destroy_event_channel(channel);
	channel = rdma_create_event_channel();
	CHECK(channel, "rdma_create_event_channel: %s", strerror(errno));
	listener = listen_on(port);
	id = resolved_id(port);
	connect_as(id, "closefd\0");
	ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev->listen_id == listener &&
	      !memcmp(ev->param.conn.private_data, "closefd", 8),
	      "a CONNECT_REQUEST not of the connect");
	req = ev->id;
	CHECK(!rdma_reject(req, "rejected", 8), "rdma_reject: %s",
	      strerror(errno));
	rdma_ack_cm_event(ev);
	rdma_destroy_id(req);
	expect_rejected_by(id, "rejected");
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
}

static void netdev(void)
{
	struct sockaddr_in sin = server_addr;
	char name[IFNAMSIZ] = "", back[IF_NAMESIZE], rel[256], line[128];
	bool have_v6 = false, have_ll = false, have_lo = false;
	struct ifaddrs *all, *ifa;
	struct if_nameindex *ni, *p;
	struct rdma_cm_id *id;
	union ibv_gid gid0, gid;
	struct ifreq ifr, reqs[64];
	struct ifconf ifc = { .ifc_len = sizeof(reqs), .ifc_req = reqs };
	unsigned int idx;
	uint8_t mac[6];
	int s, l, c, i;
	socklen_t alen = sizeof(sin);

	/* getifaddrs: the address is on an Ethernet interface of its own. */
	CHECK(!getifaddrs(&all), "getifaddrs: %s", strerror(errno));
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr !=
		    server_addr.sin_addr.s_addr)
			continue;
		CHECK(!(ifa->ifa_flags & IFF_LOOPBACK) &&
		      (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING),
		      "%s: flags 0x%x", ifa->ifa_name, ifa->ifa_flags);
		snprintf(name, sizeof(name), "%s", ifa->ifa_name);
	}
	CHECK(name[0], "getifaddrs: no interface holds the port's address");
	idx = if_nametoindex(name);
	CHECK(idx, "if_nametoindex(%s): %s", name, strerror(errno));
	CHECK(if_indextoname(idx, back) && !strcmp(back, name),
	      "if_indextoname(%u) is not %s", idx, name);
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		if (!strcmp(ifa->ifa_name, "lo"))
			have_lo = true;
		if (strcmp(ifa->ifa_name, name) || !ifa->ifa_addr)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (void *)ifa->ifa_addr;

			have_v6 = IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) &&
				  s6->sin6_scope_id == idx;
			memcpy(gid0.raw, &s6->sin6_addr, 16);
		} else if (ifa->ifa_addr->sa_family == AF_PACKET) {
			struct sockaddr_ll *ll = (void *)ifa->ifa_addr;

			have_ll = ll->sll_hatype == ARPHRD_ETHER &&
				  ll->sll_ifindex == (int)idx;
			memcpy(mac, ll->sll_addr, 6);
		}
	}
	freeifaddrs(all);
	CHECK(have_v6, "%s: no link-local address of scope %u", name, idx);
	CHECK(have_ll, "%s: no Ethernet link entry", name);
	CHECK(have_lo, "getifaddrs lost lo");

	ni = if_nameindex();
	CHECK(ni, "if_nameindex: %s", strerror(errno));
	for (p = ni; p->if_index && strcmp(p->if_name, name); p++)
		;
	CHECK(p->if_index == idx, "if_nameindex: %s missing", name);
	if_freenameindex(ni);

	/* The interface ioctls. */
	s = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(s >= 0, "socket: %s", strerror(errno));
	CHECK(!ioctl(s, SIOCGIFCONF, &ifc), "SIOCGIFCONF: %s",
	      strerror(errno));
	for (i = 0; i < ifc.ifc_len / (int)sizeof(reqs[0]); i++)
		if (!strcmp(reqs[i].ifr_name, name))
			break;
	CHECK(i < ifc.ifc_len / (int)sizeof(reqs[0]) &&
	      ((struct sockaddr_in *)&reqs[i].ifr_addr)->sin_addr.s_addr ==
	      server_addr.sin_addr.s_addr, "SIOCGIFCONF: no %s", name);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	CHECK(!ioctl(s, SIOCGIFINDEX, &ifr) && ifr.ifr_ifindex == (int)idx,
	      "SIOCGIFINDEX");
	CHECK(!ioctl(s, SIOCGIFFLAGS, &ifr) &&
	      !(ifr.ifr_flags & IFF_LOOPBACK) && (ifr.ifr_flags & IFF_UP),
	      "SIOCGIFFLAGS");
	CHECK(!ioctl(s, SIOCGIFADDR, &ifr) &&
	      ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr ==
	      server_addr.sin_addr.s_addr, "SIOCGIFADDR");
	CHECK(!ioctl(s, SIOCGIFHWADDR, &ifr) &&
	      ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER &&
	      !memcmp(ifr.ifr_hwaddr.sa_data, mac, 6), "SIOCGIFHWADDR");
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_ifindex = (int)idx;
	CHECK(!ioctl(s, SIOCGIFNAME, &ifr) && !strcmp(ifr.ifr_name, name),
	      "SIOCGIFNAME");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	CHECK(!ioctl(s, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_LOOPBACK),
	      "lo is not the loopback any more");
	close(s);

	/* rdma_cm binds the address to the adapter, GID 0 its link-local. */
	sin.sin_port = 0;
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&sin) && id->verbs,
	      "rdma_bind_addr: %s", strerror(errno));
	CHECK(!ibv_query_gid(id->verbs, id->port_num, 0, &gid) &&
	      !memcmp(gid.raw, gid0.raw, 16), "GID 0 is not %s's link-local",
	      name);

	/* sysfs: the port's ndevs, the PCI function's net/ and class/net. */
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/ndevs/1",
		 ibv_get_device_name(id->verbs->device));
	sysfs_line(rel, line, sizeof(line));
	CHECK(!strcmp(line, name), "gid_attrs/ndevs/1 is %s, not %s", line,
	      name);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/device/net/%s/ifindex",
		 ibv_get_device_name(id->verbs->device), name);
	sysfs_line(rel, line, sizeof(line));
	CHECK((unsigned int)atoi(line) == idx, "device/net: ifindex %s", line);
	snprintf(rel, sizeof(rel), "class/net/%s/ifindex", name);
	sysfs_line(rel, line, sizeof(line));
	CHECK((unsigned int)atoi(line) == idx, "class/net: ifindex %s", line);
	rdma_destroy_id(id);

	/* Real TCP on the address still goes through the host's loopback. */
	sin = server_addr;
	sin.sin_port = 0;
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0 && c >= 0, "socket: %s", strerror(errno));
	CHECK(!bind(l, (struct sockaddr *)&sin, sizeof(sin)) && !listen(l, 1),
	      "bind/listen on the port's address: %s", strerror(errno));
	CHECK(!getsockname(l, (struct sockaddr *)&sin, &alen), "getsockname");
	CHECK(!connect(c, (struct sockaddr *)&sin, sizeof(sin)),
	      "connect to the port's address: %s", strerror(errno));
	close(c);
	close(l);
}

static void host_netdev(void)
{
	char name[IFNAMSIZ] = "", rel[256], line[128];
	struct ifreq reqs[64];
	struct ifconf ifc = { .ifc_len = sizeof(reqs), .ifc_req = reqs };
	struct sockaddr_in sin = server_addr;
	struct ifaddrs *all, *ifa;
	struct if_nameindex *ni, *p;
	struct rdma_cm_id *id;
	unsigned int idx;
	int listed = 0, s, i;

	CHECK(!getifaddrs(&all), "getifaddrs: %s", strerror(errno));
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		CHECK(strncmp(ifa->ifa_name, "pvrdma", 6),
		      "getifaddrs: %s added for a host interface's address",
		      ifa->ifa_name);
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr !=
		    server_addr.sin_addr.s_addr)
			continue;
		snprintf(name, sizeof(name), "%s", ifa->ifa_name);
		listed++;
	}
	freeifaddrs(all);
	CHECK(listed == 1, "getifaddrs lists the port's address %d times",
	      listed);
	idx = if_nametoindex(name);
	CHECK(idx, "if_nametoindex(%s): %s", name, strerror(errno));
	CHECK(!if_nametoindex("pvrdma0"), "if_nametoindex knows pvrdma0");
	ni = if_nameindex();
	CHECK(ni, "if_nameindex: %s", strerror(errno));
	for (p = ni; p->if_index; p++)
		CHECK(strncmp(p->if_name, "pvrdma", 6),
		      "if_nameindex: %s added", p->if_name);
	if_freenameindex(ni);

	s = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(s >= 0, "socket: %s", strerror(errno));
	CHECK(!ioctl(s, SIOCGIFCONF, &ifc), "SIOCGIFCONF: %s",
	      strerror(errno));
	close(s);
	for (listed = 0, i = 0; i < ifc.ifc_len / (int)sizeof(reqs[0]); i++)
		if (((struct sockaddr_in *)&reqs[i].ifr_addr)->sin_addr.s_addr ==
		    server_addr.sin_addr.s_addr)
			listed++;
	CHECK(listed == 1, "SIOCGIFCONF lists the port's address %d times",
	      listed);

	sin.sin_port = 0;
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&sin) && id->verbs,
	      "rdma_bind_addr: %s", strerror(errno));
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/ndevs/1",
		 ibv_get_device_name(id->verbs->device));
	sysfs_line(rel, line, sizeof(line));
	CHECK(!strcmp(line, name), "gid_attrs/ndevs/1 is %s, not %s", line,
	      name);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/device/net/%s/ifindex",
		 ibv_get_device_name(id->verbs->device), name);
	sysfs_line(rel, line, sizeof(line));
	CHECK((unsigned int)atoi(line) == idx, "device/net: ifindex %s", line);
	snprintf(rel, sizeof(rel), "class/net/%s/ifindex", name);
	sysfs_line(rel, line, sizeof(line));
	CHECK((unsigned int)atoi(line) == idx, "class/net: ifindex %s", line);
	rdma_destroy_id(id);
}

/* The interface that holds the port's address. */
static void iface_of_port(char name[IFNAMSIZ])
{
	struct ifaddrs *all, *ifa;

	name[0] = 0;
	CHECK(!getifaddrs(&all), "getifaddrs: %s", strerror(errno));
	for (ifa = all; ifa; ifa = ifa->ifa_next)
		if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr ==
		    server_addr.sin_addr.s_addr)
			snprintf(name, IFNAMSIZ, "%s", ifa->ifa_name);
	freeifaddrs(all);
	CHECK(name[0], "no interface holds the port's address");
}

static void iface_set_mtu(const char *name, int mtu)
{
	struct ifreq ifr = { .ifr_mtu = mtu };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK(s >= 0, "socket: %s", strerror(errno));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	CHECK(!ioctl(s, SIOCSIFMTU, &ifr), "SIOCSIFMTU %s %d: %s", name, mtu,
	      strerror(errno));
	close(s);
}

/* With the interface at iface_mtu, everything that reports the port's
 * MTU says want, asked by this one process. */
static void expect_port_mtu(struct ibv_context *ctx, const char *name,
			    int iface_mtu, enum ibv_mtu want)
{
	struct ibv_port_attr pa;
	struct rdma_cm_id *id;
	char rel[256], line[64];

	iface_set_mtu(name, iface_mtu);
	CHECK(!ibv_query_port(ctx, 1, &pa), "ibv_query_port: %s",
	      strerror(errno));
	CHECK(pa.active_mtu == want, "interface MTU %d: active_mtu %d, want %d",
	      iface_mtu, pa.active_mtu, want);
	CHECK(pa.max_mtu == IBV_MTU_4096, "max_mtu %d", pa.max_mtu);
	id = resolved_id(20000);
	CHECK(id->route.num_paths >= 1 && id->route.path_rec,
	      "no path record");
	CHECK(id->route.path_rec->mtu == want,
	      "interface MTU %d: rdma_cm path MTU %d, want %d", iface_mtu,
	      id->route.path_rec->mtu, want);
	rdma_destroy_id(id);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/device/net/%s/mtu",
		 ibv_get_device_name(ctx->device), name);
	sysfs_line(rel, line, sizeof(line));
	CHECK(atoi(line) == iface_mtu, "sysfs netdev mtu %s, want %d", line,
	      iface_mtu);
}

static void mtu_follow(void)
{
	struct sockaddr_in sin = server_addr;
	struct rdma_cm_id *id;
	char name[IFNAMSIZ];

	iface_of_port(name);
	sin.sin_port = 0;
	CHECK(!rdma_create_id(channel, &id, NULL, RDMA_PS_TCP),
	      "rdma_create_id: %s", strerror(errno));
	CHECK(!rdma_bind_addr(id, (struct sockaddr *)&sin) && id->verbs,
	      "rdma_bind_addr: %s", strerror(errno));
	expect_port_mtu(id->verbs, name, 9000, IBV_MTU_4096);
	expect_port_mtu(id->verbs, name, 1500, IBV_MTU_1024);
	expect_port_mtu(id->verbs, name, 9000, IBV_MTU_4096);
	rdma_destroy_id(id);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	bool pair = false;
	int port = 20000, c;

	server_addr.sin_family = AF_INET;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			is_server = pair = true;
			break;
		case 'c':
			pair = true;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'a':
			CHECK(inet_pton(AF_INET, optarg,
					&server_addr.sin_addr) == 1,
			      "bad address %s", optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	channel = rdma_create_event_channel();
	CHECK(channel, "rdma_create_event_channel: %s", strerror(errno));
	if (pair && is_server)
		server((uint16_t)port);
	else if (pair)
		client((uint16_t)port);
	else if (mode_is("unowned"))
		unowned();
	else if (mode_is("unacked"))
		unacked();
	else if (mode_is("mcast"))
		mcast();
	else if (mode_is("netdev"))
		netdev();
	else if (mode_is("host_netdev"))
		host_netdev();
	else if (mode_is("mtu_follow"))
		mtu_follow();
	else if (mode_is("fd"))
		fd_semantics();
	else if (mode_is("fork"))
		forked((uint16_t)port);
	else if (mode_is("closefds"))
		close_fds((uint16_t)port);
	else
		CHECK(0, "unknown mode '%s'", mode);
	rdma_destroy_event_channel(channel);
	if (!pair)
		printf("rdmacm %s: passed\n", mode);
	return 0;
}
