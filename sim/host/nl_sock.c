// SPDX-License-Identifier: BSD-2-Clause
/*
 * Netlink sockets the sim answers (nl_sock.h). The application's socket
 * is one end of a SOCK_SEQPACKET socketpair (record boundaries, and no
 * queue limit of ten datagrams); a request sent on it is answered into
 * the other end, the sim's, before the send returns. bind, getsockname
 * and recvmsg speak sockaddr_nl as the kernel's netlink does (libmnl and
 * libnl check the address length). An fd is taken for such a socket only
 * while it still names the same socket (its inode): a closed number is
 * forgotten, not confused with the next file to get it.
 */
#include "preload.h"

#include "nl_sock.h"
#include "rtnetlink.h"

#define MAX_NL_SOCKS	64
#define NL_REQ_MAX	65536

struct nl_sock {
	int fd;				/* the application's; -1: free */
	int sim_fd;
	ino_t ino;
	uint32_t portid;
	nl_handler_fn handler;
};

static struct nl_sock socks[MAX_NL_SOCKS];
static pthread_mutex_t socks_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint socks_open;
static uint32_t next_portid;

static ino_t ino_of(int fd)
{
	struct stat st;

	return sim_sys(SYS_fstat, fd, &st, 0) ? 0 : st.st_ino;
}

/* Entries whose fd no longer names their socket: the sim's end closed. */
static void socks_reap(void)
{
	unsigned int i;

	for (i = 0; i < MAX_NL_SOCKS; i++) {
		if (socks[i].fd < 0 || !socks[i].handler ||
		    ino_of(socks[i].fd) == socks[i].ino)
			continue;
		sim_fd_close(socks[i].sim_fd);
		socks[i] = (struct nl_sock){ .fd = -1 };
		atomic_fetch_sub(&socks_open, 1);
	}
}

/* A copy of fd's entry, if fd is one of the sockets; an entry whose fd
 * now names another file is forgotten. */
static bool nl_lookup(int fd, struct nl_sock *out)
{
	unsigned int i;
	bool found = false;

	if (fd < 0 || !atomic_load_explicit(&socks_open, memory_order_relaxed))
		return false;
	/* Most calls are on other sockets: look before taking the lock. */
	for (i = 0; i < MAX_NL_SOCKS; i++)
		if (__atomic_load_n(&socks[i].fd, __ATOMIC_RELAXED) == fd)
			break;
	if (i == MAX_NL_SOCKS)
		return false;
	pthread_mutex_lock(&socks_lock);
	for (i = 0; i < MAX_NL_SOCKS; i++) {
		if (!socks[i].handler || socks[i].fd != fd)
			continue;
		if (ino_of(fd) == socks[i].ino) {
			*out = socks[i];
			found = true;
		} else {
			sim_fd_close(socks[i].sim_fd);
			socks[i] = (struct nl_sock){ .fd = -1 };
			atomic_fetch_sub(&socks_open, 1);
		}
		break;
	}
	pthread_mutex_unlock(&socks_lock);
	return found;
}

int nl_sock_open(int type, nl_handler_fn handler)
{
	int flags = type & (SOCK_CLOEXEC | SOCK_NONBLOCK), sv[2], err;
	unsigned int i;

	if ((type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK)) != SOCK_RAW &&
	    (type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK)) != SOCK_DGRAM) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | flags, 0, sv))
		return -1;
	pthread_mutex_lock(&socks_lock);
	socks_reap();
	for (i = 0; i < MAX_NL_SOCKS && socks[i].handler; i++)
		;
	if (i == MAX_NL_SOCKS) {
		pthread_mutex_unlock(&socks_lock);
		err = ENOBUFS;
		goto fail;
	}
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	socks[i] = (struct nl_sock){
		.fd = sv[0], .sim_fd = sim_fd_own(sv[1]), .ino = ino_of(sv[0]),
		.handler = handler,
		/* The kernel's autobind: the pid first, then others. */
		.portid = next_portid++ ? (uint32_t)-4096 - next_portid :
					 (uint32_t)getpid(),
	};
	atomic_fetch_add(&socks_open, 1);
	pthread_mutex_unlock(&socks_lock);
	return sv[0];
fail:
	get_close()(sv[0]);
	get_close()(sv[1]);
	errno = err;
	return -1;
}

/* ---- answering ---- */

void nl_flush(struct nl_out *out)
{
	if (out->len)
		sim_sys(SYS_sendto, out->fd, out->dgram, out->len);
	out->len = 0;
}

void nl_begin(struct nl_out *out, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *h = (struct nlmsghdr *)out->msg;

	*h = (struct nlmsghdr){ .nlmsg_type = type, .nlmsg_flags = flags,
				.nlmsg_seq = out->seq,
				.nlmsg_pid = out->portid };
	out->mlen = NLMSG_HDRLEN;
	out->depth = 0;
	out->overflow = false;
}

void *nl_put(struct nl_out *out, uint16_t type, const void *data, size_t len)
{
	size_t total = NLA_HDRLEN + NLA_ALIGN(len);
	struct nlattr *a = (struct nlattr *)(out->msg + out->mlen);

	if (out->mlen + total > sizeof(out->msg)) {
		out->overflow = true;
		return NULL;
	}
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memset((char *)a + NLA_HDRLEN, 0, NLA_ALIGN(len));
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	out->mlen += total;
	return (char *)a + NLA_HDRLEN;
}

void nl_put_u8(struct nl_out *out, uint16_t type, uint8_t v)
{
	nl_put(out, type, &v, sizeof(v));
}

void nl_put_u32(struct nl_out *out, uint16_t type, uint32_t v)
{
	nl_put(out, type, &v, sizeof(v));
}

void nl_put_u64(struct nl_out *out, uint16_t type, uint64_t v)
{
	nl_put(out, type, &v, sizeof(v));
}

void nl_put_str(struct nl_out *out, uint16_t type, const char *s)
{
	nl_put(out, type, s, strlen(s) + 1);
}

void nl_nest_begin(struct nl_out *out, uint16_t type)
{
	size_t at = out->mlen;

	if (out->depth < sizeof(out->nest) / sizeof(out->nest[0]) &&
	    nl_put(out, type | NLA_F_NESTED, NULL, 0))
		out->nest[out->depth++] = at;
	else
		out->overflow = true;
}

void nl_nest_end(struct nl_out *out)
{
	struct nlattr *a;

	if (!out->depth)
		return;
	a = (struct nlattr *)(out->msg + out->nest[--out->depth]);
	a->nla_len = (uint16_t)(out->mlen - out->nest[out->depth]);
}

void nl_end(struct nl_out *out)
{
	struct nlmsghdr *h = (struct nlmsghdr *)out->msg;

	if (out->overflow)
		return;		/* a message the sim cannot fit: left out */
	h->nlmsg_len = (uint32_t)out->mlen;
	if (out->len + out->mlen > sizeof(out->dgram))
		nl_flush(out);
	memcpy(out->dgram + out->len, out->msg, out->mlen);
	out->len += NLMSG_ALIGN(out->mlen);
}

void nl_done(struct nl_out *out)
{
	int zero = 0;

	nl_begin(out, NLMSG_DONE, NLM_F_MULTI);
	memcpy(out->msg + out->mlen, &zero, sizeof(zero));
	out->mlen += sizeof(zero);
	nl_end(out);
}

void nl_error(struct nl_out *out, const struct nlmsghdr *req, int err)
{
	struct nlmsgerr e = { .error = err, .msg = *req };

	nl_begin(out, NLMSG_ERROR, err ? 0 : NLM_F_CAPPED);
	memcpy(out->msg + out->mlen, &e, sizeof(e));
	out->mlen += sizeof(e);
	nl_end(out);
}

const struct nlattr *nl_attr(const struct nlmsghdr *req, size_t hdrlen,
			     uint16_t type)
{
	const char *p = (const char *)NLMSG_DATA(req) + NLMSG_ALIGN(hdrlen);
	const char *end = (const char *)req + req->nlmsg_len;

	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* Every request message of buf[len], answered in order. */
static void answer(const struct nl_sock *s, const uint8_t *buf, size_t len)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	struct nl_out *o = malloc(sizeof(*o));
	int ret;

	if (!o)
		return;		/* the request goes unanswered, as ENOBUFS */
#define out (*o)
	out.fd = s->sim_fd;
	out.portid = s->portid;
	out.len = 0;
	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (!(h->nlmsg_flags & NLM_F_REQUEST))
			continue;
		out.seq = h->nlmsg_seq;
		ret = s->handler(&out, h);
		if (ret < 0)
			nl_error(&out, h, ret);
		else if ((h->nlmsg_flags & NLM_F_ACK) &&
			 !(h->nlmsg_flags & NLM_F_DUMP))
			nl_error(&out, h, 0);
	}
	nl_flush(&out);
#undef out
	free(o);
}

/* Buffers on the heap: no thread of the process (some have small
 * stacks) pays for them in its TLS. */
static ssize_t nl_send(const struct nl_sock *s, const struct iovec *iov,
		       size_t n)
{
	uint8_t *buf = malloc(NL_REQ_MAX);
	size_t len = 0, i, c;

	if (!buf) {
		errno = ENOBUFS;
		return -1;
	}
	for (i = 0; i < n; i++) {
		c = iov[i].iov_len;
		if (len + c > NL_REQ_MAX) {
			free(buf);
			errno = EMSGSIZE;
			return -1;
		}
		memcpy(buf + len, iov[i].iov_base, c);
		len += c;
	}
	answer(s, buf, len);
	free(buf);
	return (ssize_t)len;
}

/* ---- the socket calls ---- */

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct nl_sock s;

	if (!nl_lookup(fd, &s))
		return get_bind()(fd, addr, len);
	if (!addr || len < sizeof(struct sockaddr_nl) ||
	    addr->sa_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct nl_sock s;

	return nl_lookup(fd, &s) ? 0 : get_connect()(fd, addr, len);
}

static void nl_name(const struct nl_sock *s, uint32_t pid,
		    struct sockaddr *addr, socklen_t *len)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_pid = pid };

	if (!addr || !len)
		return;
	memcpy(addr, &nl, *len < sizeof(nl) ? *len : sizeof(nl));
	*len = sizeof(nl);
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct nl_sock s;

	if (!nl_lookup(fd, &s))
		return get_getsockname()(fd, addr, len);
	nl_name(&s, s.portid, addr, len);
	return 0;
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct nl_sock s;

	if (!nl_lookup(fd, &s))
		return get_getpeername()(fd, addr, len);
	nl_name(&s, 0, addr, len);
	return 0;
}

/* Netlink options (ext ack, strict checking, groups) are accepted. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct nl_sock s;

	if (level == SOL_NETLINK && nl_lookup(fd, &s))
		return 0;
	return get_setsockopt()(fd, level, name, val, len);
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct nl_sock s;

	if (level == SOL_NETLINK && nl_lookup(fd, &s)) {
		if (val && len && *len >= sizeof(int))
			*(int *)val = 0;
		return 0;
	}
	return get_getsockopt()(fd, level, name, val, len);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct nl_sock s;

	if (!nl_lookup(fd, &s)) {
		rtnl_note_send(fd, msg->msg_iov, msg->msg_iovlen);
		return get_sendmsg()(fd, msg, flags);
	}
	return nl_send(&s, msg->msg_iov, msg->msg_iovlen);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *addr, socklen_t alen)
{
	struct iovec iov = { (void *)buf, len };
	struct nl_sock s;

	if (!nl_lookup(fd, &s)) {
		rtnl_note_send(fd, &iov, 1);
		return get_sendto()(fd, buf, len, flags, addr, alen);
	}
	return nl_send(&s, &iov, 1);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return sendto(fd, buf, len, flags, NULL, 0);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct nl_sock s;
	socklen_t nlen;
	bool handled;
	void *name;
	ssize_t ret;

	if (!nl_lookup(fd, &s)) {
		ret = rtnl_recv(fd, msg, flags, &handled);
		return handled ? ret : get_recvmsg()(fd, msg, flags);
	}
	name = msg->msg_name;
	nlen = msg->msg_namelen;
	msg->msg_name = NULL;
	msg->msg_namelen = 0;
	ret = get_recvmsg()(fd, msg, flags);
	msg->msg_name = name;
	msg->msg_namelen = nlen;
	if (ret >= 0)
		nl_name(&s, 0, name, &msg->msg_namelen);
	return ret;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		 struct sockaddr *addr, socklen_t *alen)
{
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = addr, .msg_namelen = alen ? *alen : 0,
			    .msg_iov = &iov, .msg_iovlen = 1 };
	struct nl_sock s;
	bool handled;
	ssize_t ret;

	if (!nl_lookup(fd, &s)) {
		ret = rtnl_recv(fd, &m, flags, &handled);
		if (!handled)
			return get_recvfrom()(fd, buf, len, flags, addr, alen);
		if (alen && addr)
			*alen = m.msg_namelen;
		return ret;
	}
	ret = get_recvfrom()(fd, buf, len, flags, NULL, NULL);
	if (ret >= 0)
		nl_name(&s, 0, addr, alen);
	return ret;
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	return recvfrom(fd, buf, len, flags, NULL, NULL);
}

ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	return recv(fd, buf, len < buflen ? len : buflen, flags);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *addr, socklen_t *alen);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, struct sockaddr *addr, socklen_t *alen)
{
	return recvfrom(fd, buf, len < buflen ? len : buflen, flags, addr,
			alen);
}
