// SPDX-License-Identifier: BSD-2-Clause
/* The libc gateway (libc.h): libc's functions until the host fills it. */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "libc.h"

struct sim_libc sim_libc = {
	.open = open,
	.close = close,
	.read = read,
	.readv = readv,
	.ioctl = ioctl,
	.stat = stat,
	.lstat = lstat,
	.fstat = fstat,
	.fcntl = fcntl,
	.socket = socket,
	.getifaddrs = getifaddrs,
	.bind = bind,
	.connect = connect,
	.getsockname = getsockname,
	.getpeername = getpeername,
	.setsockopt = setsockopt,
	.getsockopt = getsockopt,
	.sendto = sendto,
	.sendmsg = sendmsg,
	.recvfrom = recvfrom,
	.recvmsg = recvmsg,
	.opendir = opendir,
	.readdir = readdir,
	.closedir = closedir,
	.readlink = readlink,
	.ppoll = ppoll,
	.pthread_create = pthread_create,
	.pthread_sigmask = pthread_sigmask,
	.siglongjmp = siglongjmp,
};
