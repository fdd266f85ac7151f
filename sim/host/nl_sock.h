/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Netlink sockets the sim answers in place of the kernel (nl_sock.c): the
 * application's end of a datagram socketpair, whose requests a handler
 * of the protocol answers into the sim's end before send() returns, so
 * recv, poll and select see the answers as they would the kernel's. And
 * a builder of netlink messages for the handlers. Only the preload
 * library includes this.
 */
#ifndef PVRDMA_SIM_NL_SOCK_H
#define PVRDMA_SIM_NL_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

/* The replies to one request, packed into datagrams the size a reader of
 * MNL_SOCKET_BUFFER_SIZE (a page) takes whole. */
#define NL_DGRAM_MAX	4096

struct nl_out {
	int fd;				/* the sim's end */
	uint32_t portid, seq;		/* of the request being answered */
	size_t len;			/* bytes in dgram */
	uint8_t dgram[NL_DGRAM_MAX];
	uint8_t msg[NL_DGRAM_MAX];	/* the message being built */
	size_t mlen;
	size_t nest[4];			/* open nests: offsets in msg */
	unsigned int depth;
	bool overflow;			/* the message outgrew msg */
};

/* Answers one request message; errors are sent as NLMSG_ERROR by the
 * caller when it returns a negative errno. */
typedef int (*nl_handler_fn)(struct nl_out *out, const struct nlmsghdr *req);

/* socket(AF_NETLINK, type, protocol) answered by handler. */
int nl_sock_open(int type, nl_handler_fn handler);

/* Message building: begin, attributes and nests, end (appended to the
 * datagram, which is sent when full or by nl_flush). */
void nl_begin(struct nl_out *out, uint16_t type, uint16_t flags);
void *nl_put(struct nl_out *out, uint16_t type, const void *data, size_t len);
void nl_put_u8(struct nl_out *out, uint16_t type, uint8_t v);
void nl_put_u32(struct nl_out *out, uint16_t type, uint32_t v);
void nl_put_u64(struct nl_out *out, uint16_t type, uint64_t v);
void nl_put_str(struct nl_out *out, uint16_t type, const char *s);
void nl_nest_begin(struct nl_out *out, uint16_t type);
void nl_nest_end(struct nl_out *out);
void nl_end(struct nl_out *out);
/* NLMSG_DONE of a dump, or the NLMSG_ERROR (err 0: an ack) of req. */
void nl_done(struct nl_out *out);
void nl_error(struct nl_out *out, const struct nlmsghdr *req, int err);
void nl_flush(struct nl_out *out);

/* The attribute of type in the request's payload after hdrlen bytes. */
const struct nlattr *nl_attr(const struct nlmsghdr *req, size_t hdrlen,
			     uint16_t type);

#endif /* PVRDMA_SIM_NL_SOCK_H */
