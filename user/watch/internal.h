/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of user/watch/ share and nothing outside it calls:
 * watch.c (devices, intervals, the store) over slices.c (the exact tier's
 * slices beside the light tier) over cost.c (what watching costs, and the
 * ceiling's plan); no file calls one above it.
 */
#ifndef BLKWISE_WATCH_INTERNAL_H
#define BLKWISE_WATCH_INTERNAL_H

#include "watch/watch.h"

/* watch.c */
/* One determined P_eff (or NAN) of secs seconds into the device's class. */
void bw_watch_class_sample(struct bw_watch_dev *s, double p_eff, double secs);

/* slices.c */
/* The exact tier for slices, beside a light tier (none at a period of 0, or before 5.12). */
int bw_slices_open(struct bw_watch *w);
/* The exact tier's share of the time since start, at now. */
double bw_slices_share(const struct bw_watch *w, __u64 now);
/*
 * An interval ended: rate, the completions per second the devices made in
 * it, sets the share the slices take; svc_ms, their longest mean service
 * time, how long a timing slice waits for its requests; moved, a watched
 * device's workload changed (bw_workload_moved): an exact slice now.
 */
void bw_slices_interval(struct bw_watch *w, double rate, double svc_ms, bool moved);

/* The device's entry, or NULL. */
struct bw_watch_dev *bw_watch_find(struct bw_watch *w, __u32 dev);

/* cost.c: the lowest; it calls neither watch.c nor slices.c. */
/* The BPF objects the session runs, the core first, into objs; how many. */
#define BW_WATCH_MAX_OBJS 6
int bw_watch_objects(const struct bw_watch *w, struct bpf_object **objs);
void bw_cost_start(struct bw_watch *w);
/* Ends and starts calibration windows; ns until the next is due. */
__u64 bw_cost_poll(struct bw_watch *w);
/* A period began: the cost since the last, and the plan for the next. */
void bw_cost_update(struct bw_watch *w);
/* Under a ceiling, the light tier on: the rate checked; ns until the next check. */
__u64 bw_cost_guard(struct bw_watch *w, bool *replanned);
/* An interval ended: its cost (struct bw_cost_state's bpf, user, light_share). */
void bw_cost_interval(struct bw_watch *w);
double bw_cost_thread_s(void);
void bw_cost_switch(struct bw_watch *w, bool light, bool on, double cpu_s);
void bw_cost_close(struct bw_watch *w);

#endif /* BLKWISE_WATCH_INTERNAL_H */
