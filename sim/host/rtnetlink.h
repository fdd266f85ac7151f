/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Route netlink with the simulated netdevs in it (rtnetlink.c). Only the
 * preload library includes this.
 */
#ifndef PVRDMA_SIM_RTNETLINK_H
#define PVRDMA_SIM_RTNETLINK_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* A NETLINK_ROUTE socket the application just made (when an adapter has
 * a simulated netdev). */
void rtnl_track(int fd);
/* Requests being sent on fd: the dumps and queries to add to. */
void rtnl_note_send(int fd, const struct iovec *iov, size_t n);
/* recvmsg() on fd; *handled false if fd is not tracked (nothing done). */
ssize_t rtnl_recv(int fd, struct msghdr *msg, int flags, bool *handled);

#endif /* PVRDMA_SIM_RTNETLINK_H */
