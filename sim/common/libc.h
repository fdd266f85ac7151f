/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libc calls the sim makes for itself, from every layer: the one
 * gateway to libc besides the raw system calls of sys.h.
 *
 * In the preload library libc's names are the application's: the host
 * answers them (sim/host/), so a call of the sim's own through them would
 * be taken for the application's. The layers call through this table
 * instead. It starts as libc's functions as linked (what a unit test or a
 * tool wants); the host fills it when the library loads: the file and
 * interface calls with libc's real ones, the thread calls with its own,
 * which keep the signals the doorbell trap owns unblocked in every thread
 * of the sim. The ctest sim.libc_gateway holds the layers to it.
 */
#ifndef PVRDMA_SIM_LIBC_H
#define PVRDMA_SIM_LIBC_H

#include <dirent.h>
#include <ifaddrs.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

struct sim_libc {
	int (*open)(const char *path, int flags, ...);
	int (*close)(int fd);
	ssize_t (*read)(int fd, void *buf, size_t len);
	ssize_t (*readv)(int fd, const struct iovec *iov, int n);
	int (*ioctl)(int fd, unsigned long request, ...);
	int (*stat)(const char *path, struct stat *st);
	int (*lstat)(const char *path, struct stat *st);
	int (*fstat)(int fd, struct stat *st);
	int (*fcntl)(int fd, int cmd, ...);
	int (*socket)(int domain, int type, int protocol);
	int (*getifaddrs)(struct ifaddrs **list);
	int (*bind)(int fd, const struct sockaddr *addr, socklen_t len);
	int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
	int (*getsockname)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*getpeername)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*setsockopt)(int fd, int level, int name, const void *val,
			  socklen_t len);
	int (*getsockopt)(int fd, int level, int name, void *val,
			  socklen_t *len);
	ssize_t (*sendto)(int fd, const void *buf, size_t len, int flags,
			  const struct sockaddr *to, socklen_t tolen);
	ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
	ssize_t (*recvfrom)(int fd, void *buf, size_t len, int flags,
			    struct sockaddr *from, socklen_t *fromlen);
	ssize_t (*recvmsg)(int fd, struct msghdr *msg, int flags);
	DIR *(*opendir)(const char *path);
	struct dirent *(*readdir)(DIR *dir);
	int (*closedir)(DIR *dir);
	ssize_t (*readlink)(const char *path, char *buf, size_t len);
	int (*ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		     const sigset_t *mask);
	int (*pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
			      void *(*start)(void *), void *arg);
	int (*pthread_sigmask)(int how, const sigset_t *set, sigset_t *old);
	/* libc's own: the host's answers the application's jumps */
	void (*siglongjmp)(sigjmp_buf env, int val);
};

extern struct sim_libc sim_libc;

#endif /* PVRDMA_SIM_LIBC_H */
