// SPDX-License-Identifier: BSD-2-Clause
/*
 * Threads and notifications: pthread_create (and the mask of its
 * attributes), timer_create and mq_notify threads start with the owned
 * signals' view of their creator, as the kernel carries a mask. See
 * preload.h.
 */
#include "preload.h"

static void *thread_start(void *p);

#define ATTR_MASKS	64

static struct {
	const pthread_attr_t *attr;
	unsigned int bits;
} attr_masks[ATTR_MASKS];

static pthread_mutex_t attr_masks_lock = PTHREAD_MUTEX_INITIALIZER;

static void attr_bits_set(const pthread_attr_t *attr, unsigned int bits)
{
	int i, free_slot = -1;

	pthread_mutex_lock(&attr_masks_lock);
	for (i = 0; i < ATTR_MASKS; i++) {
		if (attr_masks[i].attr == attr) {
			attr_masks[i].attr = NULL;
			free_slot = i;
		} else if (!attr_masks[i].attr && free_slot < 0) {
			free_slot = i;
		}
	}
	if (bits && free_slot >= 0) {
		attr_masks[free_slot].attr = attr;
		attr_masks[free_slot].bits = bits;
	}
	pthread_mutex_unlock(&attr_masks_lock);
}

static unsigned int attr_bits(const pthread_attr_t *attr)
{
	unsigned int bits = 0;
	int i;

	pthread_mutex_lock(&attr_masks_lock);
	for (i = 0; i < ATTR_MASKS; i++)
		if (attr_masks[i].attr == attr)
			bits = attr_masks[i].bits;
	pthread_mutex_unlock(&attr_masks_lock);
	return bits;
}

int pthread_attr_setsigmask_np(pthread_attr_t *attr, const sigset_t *set)
{
	sigset_t copy;
	int ret;

	if (!set) {
		ret = get_pthread_attr_setsigmask_np()(attr, NULL);
		if (!ret)
			attr_bits_set(attr, 0);
		return ret;
	}
	copy = *set;
	sim_signal_strip(&copy);
	ret = get_pthread_attr_setsigmask_np()(attr, &copy);
	if (!ret)
		attr_bits_set(attr, sim_signal_bits(set));
	return ret;
}

int pthread_attr_getsigmask_np(const pthread_attr_t *attr, sigset_t *set)
{
	int ret = get_pthread_attr_getsigmask_np()(attr, set);

	if (!ret)
		sim_signal_add_bits(set, attr_bits(attr));
	return ret;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
	attr_bits_set(attr, 0);
	return get_pthread_attr_destroy()(attr);
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	unsigned int blocked;
};

static void *thread_start(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;

	free(p);
	sim_signal_set_blocked(ts.blocked);
	return ts.fn(ts.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	unsigned int blocked = sim_signal_blocked();
	struct thread_start *ts;
	sigset_t set;
	int ret;

	if (attr && get_pthread_attr_getsigmask_np() &&
	    !get_pthread_attr_getsigmask_np()(attr, &set))
		blocked = attr_bits(attr);
	if (!blocked)		/* nothing to carry over: no wrapper */
		return get_pthread_create()(thread, attr, fn, arg);
	ts = malloc(sizeof(*ts));
	if (!ts)
		return EAGAIN;
	ts->fn = fn;
	ts->arg = arg;
	ts->blocked = blocked;
	ret = get_pthread_create()(thread, attr, thread_start, ts);
	if (ret)
		free(ts);
	return ret;
}

struct notify_call {
	void (*fn)(union sigval);
	union sigval value;
	timer_t timer;
	bool once;			/* mq_notify: one notification */
	struct notify_call *next;
};

#define TIMER_GRAVEYARD	64

static struct notify_call *timer_calls;

static struct notify_call *timer_graveyard[TIMER_GRAVEYARD];

static unsigned int timer_graveyard_next;

static pthread_mutex_t timer_calls_lock = PTHREAD_MUTEX_INITIALIZER;

static void notify_start(union sigval v)
{
	struct notify_call *nc = v.sival_ptr, call = *nc;
	unsigned long owned = 0;
	sigset_t set;

	sigemptyset(&set);
	sim_signal_add_bits(&set, (1u << SIM_OWNED_SIGNALS) - 1);
	memcpy(&owned, &set, sizeof(owned));
	sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&owned, 0,
		 SIM_KSIGSET_SIZE, 0, 0);
	sim_signal_set_blocked((1u << SIM_OWNED_SIGNALS) - 1);
	if (call.once)
		free(nc);
	call.fn(call.value);
}

static struct notify_call *notify_wrap(const struct sigevent *sev,
				       struct sigevent *copy, bool once)
{
	struct notify_call *nc;

	if (!sev || sev->sigev_notify != SIGEV_THREAD ||
	    !sev->sigev_notify_function)
		return NULL;
	nc = calloc(1, sizeof(*nc));
	if (!nc)
		return NULL;
	nc->fn = sev->sigev_notify_function;
	nc->value = sev->sigev_value;
	nc->once = once;
	*copy = *sev;
	copy->sigev_notify_function = notify_start;
	copy->sigev_value.sival_ptr = nc;
	return nc;
}

int timer_create(clockid_t clock, struct sigevent *sev, timer_t *timer)
{
	struct sigevent copy;
	struct notify_call *nc = notify_wrap(sev, &copy, false);
	int ret;

	ret = get_timer_create()(clock, nc ? &copy : sev, timer);
	if (!nc)
		return ret;
	if (ret) {
		free(nc);
		return ret;
	}
	nc->timer = *timer;
	pthread_mutex_lock(&timer_calls_lock);
	nc->next = timer_calls;
	timer_calls = nc;
	pthread_mutex_unlock(&timer_calls_lock);
	return 0;
}

int timer_delete(timer_t timer)
{
	struct notify_call **pp, *nc = NULL;
	int ret = get_timer_delete()(timer);

	if (ret)
		return ret;
	pthread_mutex_lock(&timer_calls_lock);
	for (pp = &timer_calls; *pp; pp = &(*pp)->next) {
		if ((*pp)->timer == timer) {
			nc = *pp;
			*pp = nc->next;
			break;
		}
	}
	/* A notification of the timer may still be starting: what it
	 * reads is freed only a few deletions later. */
	if (nc) {
		free(timer_graveyard[timer_graveyard_next]);
		timer_graveyard[timer_graveyard_next] = nc;
		timer_graveyard_next = (timer_graveyard_next + 1) %
				       TIMER_GRAVEYARD;
	}
	pthread_mutex_unlock(&timer_calls_lock);
	return 0;
}

int mq_notify(int mqd, const struct sigevent *sev)
{
	struct sigevent copy;
	struct notify_call *nc = notify_wrap(sev, &copy, true);
	int ret = get_mq_notify()(mqd, nc ? &copy : sev);

	if (ret)
		free(nc);
	return ret;
}
