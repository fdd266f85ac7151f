/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libc's own functions behind the names the preload library answers:
 * SIM_REAL_FUNCS lists each one once, get_NAME() returns libc's NAME
 * (real.c resolves it past this library with dlsym(RTLD_NEXT) on first
 * use, so calls made before the constructor work). X(ret, name, args...)
 * for a current symbol, XC(...) for one kept only for old binaries
 * (asked for by version).
 */
#ifndef PVRDMA_SIM_REAL_H
#define PVRDMA_SIM_REAL_H

#define SIM_REAL_FUNCS(X, XC) \
	X(int, open, const char *, int, ...) \
	X(int, open64, const char *, int, ...) \
	X(int, openat, int, const char *, int, ...) \
	X(int, openat64, int, const char *, int, ...) \
	X(int, __open_2, const char *, int) \
	X(int, __open64_2, const char *, int) \
	X(int, __openat_2, int, const char *, int) \
	X(int, __openat64_2, int, const char *, int) \
	X(int, stat, const char *, struct stat *) \
	X(int, stat64, const char *, struct stat64 *) \
	X(int, lstat, const char *, struct stat *) \
	X(int, lstat64, const char *, struct stat64 *) \
	X(int, fstat, int, struct stat *) \
	X(int, fstat64, int, struct stat64 *) \
	X(int, fstatat, int, const char *, struct stat *, int) \
	X(int, fstatat64, int, const char *, struct stat64 *, int) \
	X(int, statx, int, const char *, int, unsigned int, struct statx *) \
	XC(int, __xstat, int, const char *, struct stat *) \
	XC(int, __xstat64, int, const char *, struct stat64 *) \
	XC(int, __lxstat, int, const char *, struct stat *) \
	XC(int, __lxstat64, int, const char *, struct stat64 *) \
	XC(int, __fxstat, int, int, struct stat *) \
	XC(int, __fxstat64, int, int, struct stat64 *) \
	XC(int, __fxstatat, int, int, const char *, struct stat *, int) \
	XC(int, __fxstatat64, int, int, const char *, struct stat64 *, int) \
	X(ssize_t, write, int, const void *, size_t) \
	X(ssize_t, read, int, void *, size_t) \
	X(ssize_t, readv, int, const struct iovec *, int) \
	X(ssize_t, pread, int, void *, size_t, off_t) \
	X(ssize_t, pread64, int, void *, size_t, off64_t) \
	X(ssize_t, __read_chk, int, void *, size_t, size_t) \
	X(int, ioctl, int, unsigned long, ...) \
	X(int, getifaddrs, struct ifaddrs **) \
	X(void, freeifaddrs, struct ifaddrs *) \
	X(unsigned int, if_nametoindex, const char *) \
	X(char *, if_indextoname, unsigned int, char *) \
	X(struct if_nameindex *, if_nameindex, void) \
	X(int, close, int) \
	X(int, close_range, unsigned int, unsigned int, int) \
	X(void, closefrom, int) \
	X(int, dup, int) \
	X(int, dup2, int, int) \
	X(int, dup3, int, int, int) \
	X(int, fcntl, int, int, ...) \
	X(int, fcntl64, int, int, ...) \
	X(int, socket, int, int, int) \
	X(long, syscall, long, ...) \
	X(int, access, const char *, int) \
	X(int, faccessat, int, const char *, int, int) \
	X(int, euidaccess, const char *, int) \
	X(ssize_t, getxattr, const char *, const char *, void *, size_t) \
	X(ssize_t, lgetxattr, const char *, const char *, void *, size_t) \
	X(ssize_t, listxattr, const char *, char *, size_t) \
	X(ssize_t, llistxattr, const char *, char *, size_t) \
	X(int, sigaction, int, const struct sigaction *, struct sigaction *) \
	X(sighandler_t, signal, int, sighandler_t) \
	X(sighandler_t, sysv_signal, int, sighandler_t) \
	X(sighandler_t, sigset, int, sighandler_t) \
	X(int, sighold, int) \
	X(int, sigrelse, int) \
	X(int, sigignore, int) \
	X(int, siginterrupt, int, int) \
	X(int, sigprocmask, int, const sigset_t *, sigset_t *) \
	X(int, pthread_sigmask, int, const sigset_t *, sigset_t *) \
	X(int, sigsuspend, const sigset_t *) \
	X(int, sigpending, sigset_t *) \
	X(int, ppoll, struct pollfd *, nfds_t, const struct timespec *, \
		const sigset_t *) \
	X(int, pselect, int, fd_set *, fd_set *, fd_set *, \
		const struct timespec *, const sigset_t *) \
	X(int, epoll_pwait, int, struct epoll_event *, int, int, \
		const sigset_t *) \
	X(int, epoll_pwait2, int, struct epoll_event *, int, \
		const struct timespec *, const sigset_t *) \
	X(int, setcontext, const ucontext_t *) \
	X(int, swapcontext, ucontext_t *, const ucontext_t *) \
	X(void, siglongjmp, sigjmp_buf, int) \
	X(void, __longjmp_chk, sigjmp_buf, int) \
	X(int, pthread_create, pthread_t *, const pthread_attr_t *, \
		void *(*)(void *), void *) \
	X(int, pthread_attr_setsigmask_np, pthread_attr_t *, const sigset_t *) \
	X(int, pthread_attr_getsigmask_np, const pthread_attr_t *, sigset_t *) \
	X(int, pthread_attr_destroy, pthread_attr_t *) \
	X(int, timer_create, clockid_t, struct sigevent *, timer_t *) \
	X(int, timer_delete, timer_t) \
	X(int, mq_notify, int, const struct sigevent *) \
	X(int, execve, const char *, char *const[], char *const[]) \
	X(int, execv, const char *, char *const[]) \
	X(int, execvp, const char *, char *const[]) \
	X(int, execvpe, const char *, char *const[], char *const[]) \
	X(int, fexecve, int, char *const[], char *const[])

/* The file-system calls of sysfs at its real paths (sys_dirs.c). */
#define SIM_REAL_SYS_FUNCS(X) \
	X(DIR *, opendir, const char *) \
	X(DIR *, fdopendir, int) \
	X(int, closedir, DIR *) \
	X(struct dirent *, readdir, DIR *) \
	X(void, rewinddir, DIR *) \
	X(char *, realpath, const char *, char *) \
	X(ssize_t, readlink, const char *, char *, size_t) \
	X(ssize_t, readlinkat, int, const char *, char *, size_t) \
	X(int, chdir, const char *) \
	X(int, fchdir, int) \
	X(char *, getcwd, char *, size_t) \
	X(FILE *, fopen, const char *, const char *) \
	X(FILE *, fopen64, const char *, const char *) \
	X(FILE *, freopen, const char *, const char *, FILE *) \
	X(FILE *, freopen64, const char *, const char *, FILE *) \
	X(int, nftw, const char *, __nftw_func_t, int, int) \
	X(int, ftw, const char *, __ftw_func_t, int) \
	X(int, glob, const char *, int, \
		int (*)(const char *, int), glob_t *) \
	X(int, scandir, const char *, struct dirent ***, \
		int (*)(const struct dirent *), \
		int (*)(const struct dirent **, const struct dirent **)) \
	X(int, scandirat, int, const char *, struct dirent ***, \
		int (*)(const struct dirent *), \
		int (*)(const struct dirent **, const struct dirent **))

/* The socket calls of the netlink sockets the sim answers (nl_sock.c). */
#define SIM_REAL_NL_FUNCS(X) \
	X(int, bind, int, const struct sockaddr *, socklen_t) \
	X(int, connect, int, const struct sockaddr *, socklen_t) \
	X(int, getsockname, int, struct sockaddr *, socklen_t *) \
	X(int, getpeername, int, struct sockaddr *, socklen_t *) \
	X(int, setsockopt, int, int, int, const void *, socklen_t) \
	X(int, getsockopt, int, int, int, void *, socklen_t *) \
	X(ssize_t, sendmsg, int, const struct msghdr *, int) \
	X(ssize_t, sendto, int, const void *, size_t, int, \
		const struct sockaddr *, socklen_t) \
	X(ssize_t, recvmsg, int, struct msghdr *, int) \
	X(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *, \
		socklen_t *)

#define SIM_REAL_DECLARE(ret, name, ...)				\
	ret (*get_##name(void))(__VA_ARGS__);
SIM_REAL_FUNCS(SIM_REAL_DECLARE, SIM_REAL_DECLARE)
SIM_REAL_SYS_FUNCS(SIM_REAL_DECLARE)
SIM_REAL_NL_FUNCS(SIM_REAL_DECLARE)
#undef SIM_REAL_DECLARE

#endif /* PVRDMA_SIM_REAL_H */
