#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# In the guest: until rdma_cm has a listener whose cm_id number is above
# AFTER (-1: any listener), at most SECONDS; prints that number. The
# kernel numbers cm_ids in increasing order, so a listener opened after
# another one has the higher number.
#
#   guest_cm_listen.sh AFTER [SECONDS]
after=${1:--1}
limit=${2:-60}
end=$(($(date +%s) + limit))
while [ "$(date +%s)" -lt "$end" ]; do
	n=$(rdma res show cm_id |
		sed -n 's/.* cm-idn \([0-9]*\) state LISTEN .*/\1/p' | sort -n | tail -1)
	[ -n "$n" ] && [ "$n" -gt "$after" ] && { echo "$n"; exit 0; }
	sleep 0.2
done
exit 1
