/* SPDX-License-Identifier: BSD-2-Clause */
/* The sim's own threads, safe to fork() around: see spawn.c. */
#ifndef PVRDMA_SIM_SPAWN_H
#define PVRDMA_SIM_SPAWN_H

#include <pthread.h>

/*
 * sim_libc.pthread_create() for a thread of the sim (same arguments and
 * result), that returns only once the new thread runs fn: what the C
 * library and a sanitizer runtime do to start a thread is over by then.
 * A fork() from another thread meanwhile waits for that too.
 */
int sim_thread_create(pthread_t *thread, const pthread_attr_t *attr,
		      void *(*fn)(void *), void *arg);
/* Registers the fork handlers now (the first sim_thread_create() does
 * otherwise): pthread_atfork() must not run with a lock a prepare handler
 * takes held. */
void sim_thread_fork_init(void);

#endif /* PVRDMA_SIM_SPAWN_H */
