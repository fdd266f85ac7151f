/* SPDX-License-Identifier: BSD-2-Clause */
/* A completion channel's events: see event_pipe.c. */
#ifndef PVRDMA_SIM_EVENT_PIPE_H
#define PVRDMA_SIM_EVENT_PIPE_H

#include <stdbool.h>
#include <stddef.h>

struct sim_event_pipe {
	int user;	/* read end, the application's */
	int dev;	/* write end, the sim's: non-blocking */
	int drain;	/* read end, the sim's: non-blocking */
};

/* Makes the pipe: 0, or a negative errno (nothing left open). */
int sim_event_pipe_open(struct sim_event_pipe *p);
/* A new read end of the pipe fd is an end of, non-blocking and the
 * sim's to own: the fd, or a negative errno. */
long sim_event_pipe_reader(int fd);
/* Closes the sim's ends (the application's is its own). */
void sim_event_pipe_close(struct sim_event_pipe *p);
/* One event into the write end fd, the sim's or a peer's copy of it:
 * false if it could not go in whole (the reader left it full). */
bool sim_event_post(int fd, const void *desc, size_t len);

#endif /* PVRDMA_SIM_EVENT_PIPE_H */
