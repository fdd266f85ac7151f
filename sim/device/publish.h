/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the adapter publishes of its objects for same-host requesters
 * (publish.c), as the views of view.h. Each call runs with dev->lock held
 * (the segment's lock is taken after it).
 */
#ifndef PVRDMA_SIM_PUBLISH_H
#define PVRDMA_SIM_PUBLISH_H

#include "device.h"

/* The QP's responder state (created, modified, in error), and its end. */
void pub_qp(const struct sim_qp *qp);
void pub_qp_withdraw(const struct sim_qp *qp);
/*
 * The arm of a published CQ lives in the segment, where requesters that
 * write a CQE the arm covers take it: the device pulls it before it
 * decides on an event or a new arm and publishes it after, all under
 * pub_lock(). pub_cq() publishes the overflow too. pub_cq_notified(): a
 * requester took the arm, the event is due whatever the CQ's arm is now.
 */
void pub_cq_pull(struct sim_cq *cq);
void pub_cq(struct sim_cq *cq);
void pub_cq_notified(struct sim_cq *cq);
/* The events of arms that same-host requesters took and died before they
 * raised (view.h): raised now; true while others are under way (of a
 * live requester, or of one still dying). */
bool pub_raises_recover(struct sim_dev *dev);
/* An SRQ's limit changed. */
void pub_srq(const struct sim_srq *srq);
/* The adapter's own segment lock, around every take of a receive and
 * every CQE written to a published CQ (nests). */
void pub_lock(struct sim_dev *dev);
void pub_unlock(struct sim_dev *dev);

#endif /* PVRDMA_SIM_PUBLISH_H */
