// SPDX-License-Identifier: BSD-2-Clause
/*
 * Route netlink with the simulated netdevs (pvrdma<N>, netdev.c) in it:
 * `ip link`, `ip addr`, `ip -j addr show pvrdma0`. The application's
 * NETLINK_ROUTE socket is the kernel's own; the sim notes the link and
 * address dumps and the link queries naming a netdev of its own that are
 * sent on it (rtnl_note_send), and when the kernel's answer is received
 * (rtnl_recv) adds its links and addresses before the dump's NLMSG_DONE,
 * or answers the query in place of the kernel's ENODEV. Everything else
 * (routes, neighbours, changes, notifications) is the kernel's alone; a
 * change asked of a simulated netdev gets the kernel's ENODEV.
 */
#include "preload.h"

#include <linux/if_arp.h>
#include <linux/rtnetlink.h>

#include "netdev.h"
#include "nl_sock.h"
#include "rtnetlink.h"

#define MAX_RTNL_SOCKS	64
#define MAX_NOTED	8
#define RTNL_BUF	65536

enum noted_kind { NOTE_NONE, NOTE_LINKS, NOTE_ADDRS, NOTE_LINK };

struct noted {
	uint32_t seq;
	uint8_t kind;
	uint8_t family;
	uint16_t flags;		/* of the request */
	bool filtered;		/* a dump of one interface: dev, or a host's */
	struct sim_dev *dev;	/* NOTE_LINK, or the dump's filter */
};

struct rtnl_sock {
	bool used;
	int fd;
	ino_t ino;
	struct noted noted[MAX_NOTED];
	unsigned int next;
	size_t pending_len;	/* a datagram received and changed */
	uint8_t *pending;
	struct sockaddr_nl from;
};

static struct rtnl_sock rsocks[MAX_RTNL_SOCKS];
static pthread_mutex_t rsocks_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint rsocks_open;

static ino_t ino_of(int fd)
{
	struct stat st;

	return sim_sys(SYS_fstat, fd, &st, 0) ? 0 : st.st_ino;
}

static bool any_simulated(void)
{
	unsigned int i;

	for (i = 0; i < sim_global.num_adapters; i++)
		if (sim_netdev_simulated(&sim_devs[i]))
			return true;
	return false;
}

void rtnl_track(int fd)
{
	struct rtnl_sock *r = NULL;
	unsigned int i;
	uint8_t *buf;

	if (fd < 0 || !any_simulated())
		return;
	pthread_mutex_lock(&rsocks_lock);
	/* A slot free, or whose fd was closed unseen (the number reused, or
	 * its socket gone). */
	for (i = 0; i < MAX_RTNL_SOCKS && !r; i++)
		if (!rsocks[i].used || rsocks[i].fd == fd ||
		    ino_of(rsocks[i].fd) != rsocks[i].ino)
			r = &rsocks[i];
	buf = r && r->pending ? r->pending : malloc(RTNL_BUF);
	if (r && buf) {
		*r = (struct rtnl_sock){ .used = true, .fd = fd,
					 .ino = ino_of(fd), .pending = buf };
		atomic_store(&rsocks_open, 1);
	} else if (buf && !(r && r->pending)) {
		free(buf);
	}
	pthread_mutex_unlock(&rsocks_lock);
}

/* fd's entry, with rsocks_lock held; NULL (not held) if none. */
static struct rtnl_sock *rtnl_lookup(int fd)
{
	unsigned int i;

	if (fd < 0 || !atomic_load_explicit(&rsocks_open, memory_order_relaxed))
		return NULL;
	for (i = 0; i < MAX_RTNL_SOCKS; i++)
		if (__atomic_load_n(&rsocks[i].used, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&rsocks[i].fd, __ATOMIC_RELAXED) == fd)
			break;
	if (i == MAX_RTNL_SOCKS)
		return NULL;
	pthread_mutex_lock(&rsocks_lock);
	if (rsocks[i].used && rsocks[i].fd == fd &&
	    ino_of(fd) == rsocks[i].ino)
		return &rsocks[i];
	if (rsocks[i].fd == fd)
		rsocks[i].used = false;
	pthread_mutex_unlock(&rsocks_lock);
	return NULL;
}

/* The simulated netdev a link query names (index or IFLA_IFNAME). */
static struct sim_dev *queried_dev(const struct nlmsghdr *h)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	const struct nlattr *a;
	struct sim_dev *dev;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return NULL;
	if (ifi->ifi_index)
		dev = sim_netdev_by_index((unsigned int)ifi->ifi_index);
	else if ((a = nl_attr(h, sizeof(*ifi), IFLA_IFNAME)) &&
		 memchr((const char *)a + NLA_HDRLEN, 0,
			a->nla_len - NLA_HDRLEN))
		dev = sim_netdev_by_name((const char *)a + NLA_HDRLEN);
	else
		return NULL;
	return dev && sim_netdev_simulated(dev) ? dev : NULL;
}

/* The interface index a dump is filtered by (strict checking), or 0. */
static unsigned int dump_filter(const struct nlmsghdr *h)
{
	if (h->nlmsg_type == RTM_GETLINK &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return (unsigned int)((const struct ifinfomsg *)
				      NLMSG_DATA(h))->ifi_index;
	if (h->nlmsg_type == RTM_GETADDR &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg)))
		return ((const struct ifaddrmsg *)NLMSG_DATA(h))->ifa_index;
	return 0;
}

static void note(struct rtnl_sock *r, const struct nlmsghdr *h)
{
	bool dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	struct noted n = { .seq = h->nlmsg_seq, .flags = h->nlmsg_flags };
	unsigned int index;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtgenmsg)))
		return;
	n.family = ((const struct rtgenmsg *)NLMSG_DATA(h))->rtgen_family;
	if (h->nlmsg_type == RTM_GETLINK && dump)
		n.kind = NOTE_LINKS;
	else if (h->nlmsg_type == RTM_GETADDR && dump)
		n.kind = NOTE_ADDRS;
	else if (h->nlmsg_type == RTM_GETLINK && (n.dev = queried_dev(h)))
		n.kind = NOTE_LINK;
	else
		return;
	if (dump && (index = dump_filter(h))) {
		n.filtered = true;
		n.dev = sim_netdev_by_index(index);
		if (n.dev && !sim_netdev_simulated(n.dev))
			n.dev = NULL;
	}
	r->noted[r->next++ % MAX_NOTED] = n;
}

void rtnl_note_send(int fd, const struct iovec *iov, size_t n)
{
	struct rtnl_sock *r = rtnl_lookup(fd);
	const struct nlmsghdr *h;
	size_t len;

	if (!r)
		return;
	/* Requests fit their first buffer (libmnl, libnl, iproute2). */
	if (n && iov[0].iov_base) {
		h = iov[0].iov_base;
		len = iov[0].iov_len;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
			if (h->nlmsg_flags & NLM_F_REQUEST)
				note(r, h);
	}
	pthread_mutex_unlock(&rsocks_lock);
}

/* ---- the netdev's messages ---- */

static void put_link(struct nl_out *out, const struct sim_dev *dev,
		     uint16_t flags)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC, .ifi_type = ARPHRD_ETHER,
		.ifi_index = (int)sim_netdev_ifindex(dev),
		.ifi_flags = NETDEV_FLAGS | IFF_LOWER_UP,
	};
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	char name[IFNAMSIZ];

	sim_netdev_name(dev, name);
	nl_begin(out, RTM_NEWLINK, flags);
	memcpy(out->msg + out->mlen, &ifi, sizeof(ifi));
	out->mlen += NLMSG_ALIGN(sizeof(ifi));
	nl_put_str(out, IFLA_IFNAME, name);
	nl_put_u32(out, IFLA_TXQLEN, 1000);
	nl_put_u8(out, IFLA_OPERSTATE, 6);	/* IF_OPER_UP */
	nl_put_u8(out, IFLA_LINKMODE, 0);
	nl_put_u32(out, IFLA_MTU, sim_netdev_mtu(dev));
	nl_put_u32(out, IFLA_GROUP, 0);
	nl_put_u32(out, IFLA_NUM_TX_QUEUES, 1);
	nl_put_u32(out, IFLA_NUM_RX_QUEUES, 1);
	nl_put_u8(out, IFLA_CARRIER, 1);
	nl_put_str(out, IFLA_QDISC, "noqueue");
	nl_put(out, IFLA_ADDRESS, dev->cfg.mac, 6);
	nl_put(out, IFLA_BROADCAST, bcast, 6);
	nl_end(out);
}

static void put_addr(struct nl_out *out, const struct sim_dev *dev,
		     int family)
{
	struct ifaddrmsg ifa = { .ifa_family = (uint8_t)family,
				 .ifa_flags = IFA_F_PERMANENT,
				 .ifa_index = sim_netdev_ifindex(dev) };
	struct in6_addr a6;
	struct in_addr a4;
	char name[IFNAMSIZ];

	if (family == AF_INET ? !sim_netdev_ipv4(dev, &a4) :
				!sim_netdev_ipv6(dev, &a6))
		return;
	sim_netdev_name(dev, name);
	ifa.ifa_prefixlen = family == AF_INET ? 8 : 64;	/* ifaddrs.c */
	ifa.ifa_scope = family == AF_INET ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	nl_begin(out, RTM_NEWADDR, NLM_F_MULTI);
	memcpy(out->msg + out->mlen, &ifa, sizeof(ifa));
	out->mlen += NLMSG_ALIGN(sizeof(ifa));
	if (family == AF_INET) {
		nl_put(out, IFA_ADDRESS, &a4, sizeof(a4));
		nl_put(out, IFA_LOCAL, &a4, sizeof(a4));
		nl_put_str(out, IFA_LABEL, name);
	} else {
		nl_put(out, IFA_ADDRESS, &a6, sizeof(a6));
	}
	nl_put_u32(out, IFA_FLAGS, IFA_F_PERMANENT);
	nl_end(out);
}

/* The sim's messages for a noted request, into out. */
static void additions(struct nl_out *out, const struct noted *n)
{
	unsigned int i;

	if (n->kind == NOTE_LINK) {
		put_link(out, n->dev, 0);
		return;
	}
	for (i = 0; i < sim_global.num_adapters; i++) {
		struct sim_dev *dev = &sim_devs[i];

		if (!sim_netdev_simulated(dev) || (n->filtered && n->dev != dev))
			continue;
		if (n->kind == NOTE_LINKS)
			put_link(out, dev, NLM_F_MULTI);
		if (n->kind == NOTE_ADDRS && n->family != AF_INET6)
			put_addr(out, dev, AF_INET);
		if (n->kind == NOTE_ADDRS && n->family != AF_INET)
			put_addr(out, dev, AF_INET6);
	}
}

/* The error a DONE or an ERROR carries. */
static int carried_error(const struct nlmsghdr *h)
{
	int err = 0;

	if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
		memcpy(&err, NLMSG_DATA(h), sizeof(err));
	return err;
}

/* The noted request h ends (a dump's DONE, or the end of one filtered by
 * a simulated netdev the kernel does not know), or the ENODEV of a query
 * naming one. */
static struct noted *noted_for(struct rtnl_sock *r, const struct nlmsghdr *h)
{
	bool done = h->nlmsg_type == NLMSG_DONE,
	     error = h->nlmsg_type == NLMSG_ERROR;
	unsigned int i;

	for (i = 0; i < MAX_NOTED; i++) {
		struct noted *n = &r->noted[i];

		if (!n->kind || n->seq != h->nlmsg_seq || !(done || error))
			continue;
		if (n->kind == NOTE_LINK)
			return error && carried_error(h) == -ENODEV ? n : NULL;
		if (done && !n->filtered)
			return n;
		if (n->filtered && n->dev && carried_error(h) == -ENODEV)
			return n;
		if (done || error)
			memset(n, 0, sizeof(*n));	/* a host's interface */
		return NULL;
	}
	return NULL;
}

/* buf[len] as received, with the sim's messages in: into r->pending. */
static void rewrite(struct rtnl_sock *r, const uint8_t *buf, size_t len)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	struct nl_out *a = malloc(sizeof(*a));
	size_t out = 0, hl;
	struct noted *n;

	if (!a) {
		memcpy(r->pending, buf, len);
		r->pending_len = len;
		return;
	}
#define add (*a)

	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		hl = NLMSG_ALIGN(h->nlmsg_len);
		n = noted_for(r, h);
		if (n) {
			add.fd = -1;
			add.len = 0;
			add.seq = h->nlmsg_seq;
			add.portid = h->nlmsg_pid;
			additions(&add, n);
			if (out + add.len <= RTNL_BUF) {
				memcpy(r->pending + out, add.dgram, add.len);
				out += add.len;
			}
			if (n->kind != NOTE_LINK && carried_error(h)) {
				/* the kernel's ENODEV: ends with the sim's */
				add.len = 0;
				nl_done(&add);
				memcpy(r->pending + out, add.dgram, add.len);
				out += add.len;
				memset(n, 0, sizeof(*n));
				continue;
			}
			memset(n, 0, sizeof(*n));
			if (h->nlmsg_type == NLMSG_ERROR)
				continue;	/* answered instead */
		}
		if (out + hl > RTNL_BUF)
			break;
		memcpy(r->pending + out, h, hl);
		out += hl;
	}
#undef add
	free(a);
	r->pending_len = out;
}

ssize_t rtnl_recv(int fd, struct msghdr *msg, int flags, bool *handled)
{
	struct rtnl_sock *r = rtnl_lookup(fd);
	uint8_t *buf = r ? malloc(RTNL_BUF) : NULL;
	struct iovec iov = { buf, RTNL_BUF };
	struct msghdr m = { .msg_name = NULL, .msg_iov = &iov,
			    .msg_iovlen = 1 };
	size_t len, done = 0, c, i;
	ssize_t ret;

	*handled = r != NULL;
	if (!r)
		return -1;
	if (!buf) {
		pthread_mutex_unlock(&rsocks_lock);
		errno = ENOBUFS;
		return -1;
	}
	if (!r->pending_len) {
		m.msg_name = &r->from;
		m.msg_namelen = sizeof(r->from);
		ret = get_recvmsg()(fd, &m, flags & ~(MSG_PEEK | MSG_TRUNC));
		if (ret <= 0) {
			pthread_mutex_unlock(&rsocks_lock);
			free(buf);
			return ret;
		}
		rewrite(r, buf, (size_t)ret);
	}
	free(buf);
	len = r->pending_len;
	for (i = 0; i < msg->msg_iovlen && done < len; i++) {
		c = msg->msg_iov[i].iov_len < len - done ?
		    msg->msg_iov[i].iov_len : len - done;
		if (!c)
			continue;	/* a peek at the length alone */
		memcpy(msg->msg_iov[i].iov_base, r->pending + done, c);
		done += c;
	}
	msg->msg_flags = done < len ? MSG_TRUNC : 0;
	if (msg->msg_name) {
		c = msg->msg_namelen < sizeof(r->from) ? msg->msg_namelen :
							 sizeof(r->from);
		memcpy(msg->msg_name, &r->from, c);
		msg->msg_namelen = sizeof(r->from);
	}
	if (!(flags & MSG_PEEK))
		r->pending_len = 0;	/* a datagram: the rest is dropped */
	pthread_mutex_unlock(&rsocks_lock);
	return (flags & MSG_TRUNC) ? (ssize_t)len : (ssize_t)done;
}
