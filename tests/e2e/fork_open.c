// SPDX-License-Identifier: BSD-2-Clause
/*
 * fork() while another thread is inside the sim's open() of a device
 * file: the child opens a device file too, as it could on a kernel. The
 * program brings its own calloc() (as a program with its own allocator
 * does), which the sim's bookkeeping of open files allocates through; it
 * sleeps there once, with the sim's lock held, while the main thread
 * forks. A child left with that lock held would hang: an alarm ends it
 * and the test fails.
 *
 * Not for a sanitizer's tree: its runtime owns calloc().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define DEVICE	"/dev/infiniband/uverbs0"

void *__libc_calloc(size_t n, size_t size);

enum { SLOW_OFF, SLOW_ARMED, SLOW_INSIDE };
static atomic_int slow = SLOW_OFF;

void *calloc(size_t n, size_t size)
{
	int armed = SLOW_ARMED;

	if (atomic_compare_exchange_strong(&slow, &armed, SLOW_INSIDE))
		usleep(300000);		/* the fork() comes meanwhile */
	return __libc_calloc(n, size);
}

static void *opener(void *arg)
{
	int *fd = arg;

	atomic_store(&slow, SLOW_ARMED);
	*fd = open(DEVICE, O_RDWR | O_CLOEXEC);
	return NULL;
}

int main(void)
{
	int fd = -1, status, child_fd;
	pthread_t t;
	pid_t pid;

	if (pthread_create(&t, NULL, opener, &fd)) {
		printf("FAIL: pthread_create\n");
		return 1;
	}
	while (atomic_load(&slow) != SLOW_INSIDE)
		usleep(1000);
	pid = fork();
	if (pid == 0) {
		alarm(10);
		child_fd = open(DEVICE, O_RDWR | O_CLOEXEC);
		_exit(child_fd >= 0 ? 0 : 2);
	}
	pthread_join(t, NULL);
	if (pid < 0 || fd < 0) {
		printf("FAIL: fork or the thread's open: %s\n", strerror(errno));
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("FAIL: the child's open of %s: %s\n", DEVICE,
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ?
		       "hung (alarm)" : "failed");
		return 1;
	}
	close(fd);
	printf("fork during another thread's open of %s: the child opens it: passed\n",
	       DEVICE);
	return 0;
}
