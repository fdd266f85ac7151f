/* SPDX-License-Identifier: BSD-2-Clause */
/* The sim's own fds, out of the application's way: see fds.c. */
#ifndef PVRDMA_SIM_FDS_H
#define PVRDMA_SIM_FDS_H

#include <stdbool.h>

#define SIM_FD_BITMAP_FDS	(1 << 20)
/* Takes fd (just made by the sim) as the sim's: returns the number to use
 * from now on (moved high, close-on-exec). */
int sim_fd_own(int fd);
/* Closes an fd sim_fd_own() or sim_fd_adopt() returned. */
int sim_fd_close(int fd);
/* Takes fd (just made and placed by the sim) as the sim's where it is. */
int sim_fd_adopt(int fd);
/* fd, the sim's, no longer names the sim's file (an inline close nothing
 * could see, the number reused): forgets it without closing it. */
void sim_fd_abandon(int fd);
bool sim_fd_is_own(int fd);
/* The first of the sim's fds in [from, last], or -1. */
int sim_fd_next_own(unsigned int from, unsigned int last);

#endif /* PVRDMA_SIM_FDS_H */
