// SPDX-License-Identifier: BSD-2-Clause
/*
 * A deterministic fuzzer of rdma_cm's kernel ABI, run under pvrdma-sim as
 * any application is: raw write() commands on rdma_cm files it opened
 * itself, over every command number (and unknown ones), with random
 * headers and sizes, ids and multicast handles it was answered or made
 * up, addresses of the adapter, of no one, of every family, private data
 * and options, and pointers of every kind (valid, NULL, unmapped,
 * read-only, PROT_NONE, straddling the end of memory, kernel, program
 * text, misaligned, random) for the command, each response, the event
 * buffer and the option value. Connections to its own listeners go
 * through. Every answer must be a byte count or -1 with an errno of
 * rdma_ucm's; the process must not die.
 *
 * Then rdma_cm must still work: librdmacm connects an RC QP to a listener
 * of this process over the adapter's address and a SEND arrives intact.
 *
 *   kabi_fuzz_cm --addr IPV4 --port PORT [--seed N] [--count N]
 */
#include "e2e_common.h"
#include "fuzz_rng.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rdma/rdma_user_cm.h>

#include "kabi_fuzz_cm.h"

#define PAGE		4096u
#define POOL_PAGES	16u
#define KERNEL_ADDR	0xffff888000000000ull
#define UNMAPPED_ADDR	0x1000ull	/* below mmap_min_addr */
#define REOPEN_EVERY	5000u	/* commands per pair of files */
#define MAX_KEEP	64u
#define NCMDS		(RDMA_USER_CM_CMD_JOIN_MCAST + 1)

static bool verbose;		/* KABI_FUZZ_VERBOSE: each command */
static struct in_addr adapter_addr;
static uint16_t adapter_port;

struct fuzz {
	int fd[2];		/* two files: MIGRATE_ID moves ids between */
	uint8_t *pool;		/* read-write, then a PROT_NONE guard */
	uint8_t *rdonly, *none;
	uint8_t *edge;		/* read-write page, then PROT_NONE */
	uint32_t ids[MAX_KEEP], mcs[MAX_KEEP];
	unsigned int nids, nmcs;
	uint64_t resp;		/* the last command's response address */
	unsigned long ok, failed, errnos[160], answered[NCMDS + 1];
};

static uint64_t pick_ptr(struct fuzz *z, size_t len, unsigned int valid_pct)
{
	uint64_t p = (uintptr_t)z->pool + below(POOL_PAGES - 2) * PAGE;

	if (chance(valid_pct))
		return p;
	switch (below(9)) {
	case 0:
		return 0;
	case 1:
		return UNMAPPED_ADDR + below(PAGE);
	case 2:
		return (uintptr_t)z->rdonly + below(64) * 8;
	case 3:
		return (uintptr_t)z->none + below(PAGE);
	case 4:
		return (uintptr_t)z->edge + PAGE -
		       (len ? below((uint32_t)(len < PAGE ? len : PAGE)) : 0);
	case 5:
		return KERNEL_ADDR + below(1u << 20) * 8;
	case 6:
		return (uintptr_t)&rnd;
	case 7:
		return p + 1 + below(PAGE - 1);
	default:
		return rnd();
	}
}

static void keep(uint32_t *arr, unsigned int *n, uint32_t v)
{
	if (*n < MAX_KEEP)
		arr[(*n)++] = v;
	else
		arr[below(MAX_KEEP)] = v;
}

static uint32_t pick_from(const uint32_t *arr, unsigned int n)
{
	if (n && chance(85))
		return arr[below(n)];
	return chance(50) ? below(8) : (uint32_t)rnd();
}

/* An address for a bind, a resolve or a join: mostly the adapter's. */
static void fill_addr(void *dst, size_t room, uint16_t *size)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	uint8_t *b = dst;
	unsigned int k = below(10);

	sin.sin_port = htons(chance(50) ? adapter_port + 1 + below(4) :
			     (uint16_t)rnd());
	sin6.sin6_port = sin.sin_port;
	memset(b, 0, room);
	if (k < 5) {
		sin.sin_addr = adapter_addr;
	} else if (k == 5) {
		sin.sin_addr.s_addr = htonl(0xe0000001u + below(16));
	} else if (k == 6) {
		sin.sin_addr.s_addr = htonl(0x7f000001u + below(1u << 20));
	} else if (k == 7) {
		sin6.sin6_addr.s6_addr[15] = (uint8_t)below(2);
		memcpy(b, &sin6, sizeof(sin6));
		*size = sizeof(sin6);
		return;
	} else if (k == 8) {
		*size = (uint16_t)below((uint32_t)room + 1);
		for (k = 0; k < room; k++)
			b[k] = (uint8_t)rnd();
		return;
	}
	memcpy(b, &sin, sizeof(sin));
	*size = chance(90) ? sizeof(sin) : (uint16_t)below(200);
}

static void fill_conn_param(struct rdma_ucm_conn_param *p)
{
	unsigned int i;

	p->valid = chance(90);
	p->private_data_len = (uint8_t)(chance(80) ? below(57) : rnd());
	for (i = 0; i < sizeof(p->private_data); i++)
		p->private_data[i] = (uint8_t)rnd();
	p->responder_resources = (uint8_t)below(8);
	p->initiator_depth = (uint8_t)below(8);
	p->retry_count = (uint8_t)below(8);
	p->rnr_retry_count = (uint8_t)below(8);
	p->qp_num = chance(50) ? below(64) : (uint32_t)rnd();
}

/* Any command's structure. */
union cmd_buf {
	struct rdma_ucm_create_id create;
	struct rdma_ucm_destroy_id destroy;
	struct rdma_ucm_bind_ip bind_ip;
	struct rdma_ucm_bind bind;
	struct rdma_ucm_resolve_route route;
	struct rdma_ucm_resolve_ip res_ip;
	struct rdma_ucm_resolve_addr res_addr;
	struct rdma_ucm_query query;
	struct rdma_ucm_connect connect;
	struct rdma_ucm_listen listen;
	struct rdma_ucm_accept accept;
	struct rdma_ucm_reject reject;
	struct rdma_ucm_init_qp_attr qp_attr;
	struct rdma_ucm_get_event event;
	struct rdma_ucm_set_option opt;
	struct rdma_ucm_notify notify;
	struct rdma_ucm_join_ip_mcast join_ip;
	struct rdma_ucm_join_mcast join;
	struct rdma_ucm_migrate_id migrate;
	uint8_t raw[512];
};

/* The commands that carry addresses: their length, 0 for another. */
static size_t fill_addr_cmd(uint32_t cmd, union cmd_buf *u, uint32_t id,
			    uint64_t resp)
{
	size_t len = 0;
	uint16_t sz;

	switch (cmd) {
	case RDMA_USER_CM_CMD_BIND_IP:
		u->bind_ip.id = id;
		fill_addr(&u->bind_ip.addr, sizeof(u->bind_ip.addr), &sz);
		len = sizeof(u->bind_ip);
		break;
	case RDMA_USER_CM_CMD_BIND:
		u->bind.id = id;
		fill_addr(&u->bind.addr, sizeof(u->bind.addr),
			  &u->bind.addr_size);
		len = sizeof(u->bind);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		u->res_ip.id = id;
		if (chance(30))
			fill_addr(&u->res_ip.src_addr,
				  sizeof(u->res_ip.src_addr), &sz);
		fill_addr(&u->res_ip.dst_addr, sizeof(u->res_ip.dst_addr), &sz);
		len = sizeof(u->res_ip);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		u->res_addr.id = id;
		if (chance(30))
			fill_addr(&u->res_addr.src_addr,
				  sizeof(u->res_addr.src_addr),
				  &u->res_addr.src_size);
		fill_addr(&u->res_addr.dst_addr, sizeof(u->res_addr.dst_addr),
			  &u->res_addr.dst_size);
		len = sizeof(u->res_addr);
		break;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
		u->join_ip.id = id;
		u->join_ip.uid = rnd();
		u->join_ip.response = resp;
		fill_addr(&u->join_ip.addr, sizeof(u->join_ip.addr), &sz);
		len = sizeof(u->join_ip);
		break;
	case RDMA_USER_CM_CMD_JOIN_MCAST:
		u->join.id = id;
		u->join.uid = rnd();
		u->join.response = resp;
		u->join.join_flags = below(3);
		fill_addr(&u->join.addr, sizeof(u->join.addr),
			  &u->join.addr_size);
		len = sizeof(u->join);
		break;
	default:
		return 0;
	}
	return len;
}

/* The command structure: plausible, but any field may be anything. */
static size_t fill_cmd(struct fuzz *z, uint32_t cmd, uint8_t *c,
		       size_t room, uint16_t *out)
{
	union cmd_buf u;
	uint32_t id = pick_from(z->ids, z->nids);
	uint64_t resp = pick_ptr(z, 512, 85);
	size_t len;

	memset(&u, 0, sizeof(u));
	z->resp = resp;
	*out = 512;
	len = fill_addr_cmd(cmd, &u, id, resp);
	if (len)
		goto done;
	len = sizeof(u.destroy);
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: {
		static const uint16_t ps[] = { RDMA_PS_TCP, RDMA_PS_UDP,
					       RDMA_PS_IB, RDMA_PS_IPOIB, 7 };

		u.create.ps = ps[below(5)];
		u.create.qp_type = (uint8_t)(chance(80) ? IBV_QPT_RC : rnd());
		u.create.uid = rnd();
		u.create.response = resp;
		len = sizeof(u.create);
		break;
	}
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY:
		u.query.id = id;
		u.query.option = below(4);
		u.query.response = resp;
		len = sizeof(u.query);
		break;
	case RDMA_USER_CM_CMD_CONNECT:
		u.connect.id = id;
		fill_conn_param(&u.connect.conn_param);
		len = chance(80) ? sizeof(u.connect) : below(sizeof(u.connect));
		break;
	case RDMA_USER_CM_CMD_LISTEN:
		u.listen.id = id;
		u.listen.backlog = chance(80) ? below(8) : (uint32_t)rnd();
		len = sizeof(u.listen);
		break;
	case RDMA_USER_CM_CMD_ACCEPT:
		u.accept.id = id;
		u.accept.uid = rnd();
		fill_conn_param(&u.accept.conn_param);
		len = chance(80) ? sizeof(u.accept) : below(sizeof(u.accept));
		break;
	case RDMA_USER_CM_CMD_REJECT:
		u.reject.id = id;
		u.reject.reason = (uint8_t)(chance(80) ? 0 : rnd());
		u.reject.private_data_len = (uint8_t)rnd();
		len = sizeof(u.reject);
		break;
	case RDMA_USER_CM_CMD_INIT_QP_ATTR:
		u.qp_attr.id = id;
		u.qp_attr.qp_state = below(10);
		u.qp_attr.response = resp;
		len = sizeof(u.qp_attr);
		break;
	case RDMA_USER_CM_CMD_GET_EVENT:
		u.event.response = pick_ptr(z, 512, 70);
		len = sizeof(u.event);
		break;
	case RDMA_USER_CM_CMD_SET_OPTION:
		u.opt.id = id;
		u.opt.level = chance(80) ? below(2) : (uint32_t)rnd();
		u.opt.optname = below(6);
		u.opt.optlen = chance(80) ? below(8) * 4 :
			       (chance(50) ? (uint32_t)rnd() : 64 * below(3));
		if (u.opt.optlen > 4 * PAGE && chance(90))
			u.opt.optlen = 4;
		u.opt.optval = pick_ptr(z, u.opt.optlen, 70);
		len = sizeof(u.opt);
		break;
	case RDMA_USER_CM_CMD_NOTIFY:
		u.notify.id = id;
		u.notify.event = below(20);
		len = sizeof(u.notify);
		break;
	case RDMA_USER_CM_CMD_MIGRATE_ID:
		u.migrate.id = id;
		u.migrate.fd = (uint32_t)(chance(80) ? z->fd[below(2)] :
					  (int)below(64));
		u.migrate.response = resp;
		len = sizeof(u.migrate);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE:
	case RDMA_USER_CM_CMD_DISCONNECT:
		/* both are { id, ... } */
		u.route.id = id;
		u.route.timeout_ms = 2000;
		len = sizeof(u.route);
		break;
	case RDMA_USER_CM_CMD_LEAVE_MCAST:
		id = pick_from(z->mcs, z->nmcs);
		/* fall through */
	default:	/* DESTROY_ID, unknown */
		u.destroy.id = id;
		u.destroy.response = resp;
		break;
	}
done:
	if (chance(3))
		*out = (uint16_t)below(64);
	if (chance(2))
		u.raw[below(sizeof(u.raw))] ^= (uint8_t)(1u << below(8));
	if (len > room)
		len = room;
	memcpy(c, &u, len);
	return len;
}

/* The command buffer itself, mostly valid. */
static ssize_t send_cmd(struct fuzz *z, int fd, const uint8_t *buf,
			size_t len, size_t claimed)
{
	uint8_t *at = z->pool + (POOL_PAGES - 1) * PAGE - len;

	switch (chance(90) ? 0 : below(5)) {
	case 1:
		return write(fd, NULL, claimed);
	case 2:
		return write(fd, (void *)(uintptr_t)KERNEL_ADDR, claimed);
	case 3:
		return write(fd, z->none + below(PAGE), claimed);
	case 4:
		/* cut short by a PROT_NONE page */
		memcpy(z->edge + PAGE - len, buf, len);
		return write(fd, z->edge + PAGE - len + below(16), claimed);
	default:
		break;
	}
	memcpy(at, buf, len);
	return write(fd, at, claimed);
}

static void fuzz_one(struct fuzz *z)
{
	uint8_t buf[sizeof(struct rdma_ucm_cmd_hdr) + 512];
	struct rdma_ucm_cmd_hdr *hdr = (void *)buf;
	static const uint32_t path[] = {
		RDMA_USER_CM_CMD_CREATE_ID, RDMA_USER_CM_CMD_RESOLVE_ADDR,
		RDMA_USER_CM_CMD_RESOLVE_ROUTE, RDMA_USER_CM_CMD_BIND,
		RDMA_USER_CM_CMD_LISTEN, RDMA_USER_CM_CMD_CONNECT,
		RDMA_USER_CM_CMD_ACCEPT, RDMA_USER_CM_CMD_GET_EVENT,
		RDMA_USER_CM_CMD_DISCONNECT, RDMA_USER_CM_CMD_JOIN_MCAST,
	};
	/* Half the commands along a connection's path, so that ids get
	 * there; the others any command, or none. */
	uint32_t npath = sizeof(path) / sizeof(path[0]);
	uint32_t cmd = chance(50) ? path[below(npath)] :
		       chance(95) ? below(NCMDS) : (uint32_t)rnd();
	int fd = z->fd[chance(90) ? 0 : 1];
	size_t len, claimed;
	uint16_t out;
	ssize_t ret;

	len = fill_cmd(z, cmd, buf + sizeof(*hdr), sizeof(buf) - sizeof(*hdr),
		       &out);
	hdr->cmd = cmd;
	hdr->in = (uint16_t)(chance(95) ? len : below(600));
	hdr->out = out;
	len += sizeof(*hdr);
	claimed = chance(95) ? len : below(700);
	if (verbose) {
		printf("cmd %u in %u out %u len %zu claimed %zu:", cmd,
		       hdr->in, hdr->out, len, claimed);
		for (size_t b = 0; b < len && b < 48; b++)
			printf(" %02x", buf[b]);
		printf("\n");
		fflush(stdout);
	}
	ret = send_cmd(z, fd, buf, len, claimed);
	E2E_CHECK(ret == -1 || ret == (ssize_t)claimed,
		  "command %u: write() returned %zd of %zu", cmd, ret, claimed);
	if (ret < 0) {
		/* ENOTSUPP (524) is the kernel's own errno, which rdma_cm
		 * lets out for an IPv6 group on a RoCE v2 port. */
		E2E_CHECK((errno > 0 && errno < 160 && errno != EBADF) ||
			  errno == 524, "command %u: errno %d", cmd, errno);
		z->failed++;
		z->errnos[errno == 524 ? 0 : errno]++;
		return;
	}
	z->ok++;
	z->answered[cmd < NCMDS ? cmd : NCMDS]++;
	/* The new id or join, where the answer is ours to read (an
	 * event's id is after its uid). */
	if (z->resp - (uintptr_t)z->pool < (POOL_PAGES - 1) * PAGE - 12) {
		uint32_t v;

		memcpy(&v, (void *)(uintptr_t)z->resp, sizeof(v));
		if (cmd == RDMA_USER_CM_CMD_CREATE_ID)
			keep(z->ids, &z->nids, v);
		else if (cmd == RDMA_USER_CM_CMD_JOIN_IP_MCAST ||
			 cmd == RDMA_USER_CM_CMD_JOIN_MCAST)
			keep(z->mcs, &z->nmcs, v);
		memcpy(&v, (void *)(uintptr_t)(z->resp + 8), sizeof(v));
		if (cmd == RDMA_USER_CM_CMD_GET_EVENT)
			keep(z->ids, &z->nids, v);
	}
}

/* The ids and joins of the files: harvested from the files' own answers
 * (a CREATE_ID at a valid response, as librdmacm sends it). */
static void harvest(struct fuzz *z, int fd)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_create_id c;
	} w = { { RDMA_USER_CM_CMD_CREATE_ID, sizeof(w.c),
		  sizeof(struct rdma_ucm_create_id_resp) },
		{ .ps = RDMA_PS_TCP } };
	struct rdma_ucm_create_id_resp resp;

	w.c.response = (uintptr_t)&resp;
	w.c.ps = chance(70) ? RDMA_PS_TCP : RDMA_PS_UDP;
	if (write(fd, &w, sizeof(w)) == (ssize_t)sizeof(w))
		keep(z->ids, &z->nids, resp.id);
	keep(z->mcs, &z->nmcs, below(16));
}

static void reopen(struct fuzz *z)
{
	unsigned int f;

	for (f = 0; f < 2; f++) {
		if (z->fd[f] >= 0)
			close(z->fd[f]);
		/* Never blocking: a GET_EVENT with nothing queued is EAGAIN. */
		z->fd[f] = open("/dev/infiniband/rdma_cm",
				O_RDWR | O_CLOEXEC | O_NONBLOCK);
		E2E_CHECK(z->fd[f] >= 0, "open rdma_cm: %s", strerror(errno));
	}
	z->nids = z->nmcs = 0;
	for (f = 0; f < 8; f++)
		harvest(z, z->fd[f % 2]);
}

static void map_pools(struct fuzz *z)
{
	z->pool = mmap(NULL, POOL_PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	z->rdonly = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	z->none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	z->edge = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	E2E_CHECK(z->pool != MAP_FAILED && z->rdonly != MAP_FAILED &&
		  z->none != MAP_FAILED && z->edge != MAP_FAILED, "mmap");
	/* What a command says may be written stays in the pool. */
	mprotect(z->pool + (POOL_PAGES - 1) * PAGE, PAGE, PROT_NONE);
	mprotect(z->edge + PAGE, PAGE, PROT_NONE);
}

int main(int argc, char **argv)
{
	struct fuzz z = { .fd = { -1, -1 } };
	unsigned long count = 100000, i;
	uint64_t seed = 1;
	const char *addr = NULL;
	int a, e;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = strtoull(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--count") && a + 1 < argc)
			count = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--addr") && a + 1 < argc)
			addr = argv[++a];
		else if (!strcmp(argv[a], "--port") && a + 1 < argc)
			adapter_port = (uint16_t)atoi(argv[++a]);
		else
			E2E_CHECK(0, "usage: kabi_fuzz_cm --addr IPV4 --port P "
				  "[--seed N] [--count N]");
	}
	E2E_CHECK(addr && inet_pton(AF_INET, addr, &adapter_addr) == 1 &&
		  adapter_port, "--addr and --port are needed");
	rng_state = seed;
	verbose = getenv("KABI_FUZZ_VERBOSE") != NULL;
	map_pools(&z);
	for (i = 0; i < count; i++) {
		if (i % REOPEN_EVERY == 0)
			reopen(&z);
		fuzz_one(&z);
	}
	close(z.fd[0]);
	close(z.fd[1]);

	printf("kabi_fuzz_cm: seed %" PRIu64 ", %lu commands: %lu answered, "
	       "%lu refused\n", seed, count, z.ok, z.failed);
	for (e = 1; e < 160; e++)
		if (z.errnos[e])
			printf("  %-12s %lu\n", e2e_errno_name(e), z.errnos[e]);
	if (z.errnos[0])
		printf("  %-12s %lu\n", "ENOTSUPP", z.errnos[0]);
	for (e = 0; e <= NCMDS; e++)
		if (z.answered[e])
			printf("  command %2d answered %lu\n", e,
			       z.answered[e]);
	E2E_CHECK(z.errnos[EFAULT] && z.ok, "no EFAULT or no answer");
	kabi_fuzz_cm_traffic(&adapter_addr, adapter_port);
	printf("kabi_fuzz_cm: traffic after the fuzzing: passed\n");
	return 0;
}
