// SPDX-License-Identifier: GPL-2.0
/*
 * The per-device figures, one row each (figures.h): what stat's table, the
 * JSON of stat and analyze, and export's families show, in that order, and
 * what each is.  A counter of every op (op_off) needs nothing else: its
 * count and rate over an interval come from the interval's sum of every
 * op (struct bw_interval's sum), its series per op from the cumulative
 * counters.
 */
#include <math.h>
#include <string.h>
#include "model/figures.h"

#define OPS(field) (offsetof(struct bw_op_stats, field) + 1)

/* ---- values of an interval (stat, analyze) ---- */

#define IV(name, expr) \
	static double iv_##name(const struct bw_interval *iv) { return (expr); }
#define IVS(name, expr) \
	static const char *ivs_##name(const struct bw_interval *iv, const struct bw_class *cls) \
	{ (void)cls; return (expr); }

static double known_u64(bool unknown, __u64 v)
{
	return unknown ? NAN : (double)v;
}

static double known_s64(__s64 v)
{
	return v < 0 ? NAN : (double)v;
}

IVS(name, iv->name)
IVS(identity, iv->identity)
IVS(identity_note, iv->identity_note)
IV(gone, iv->gone)
IV(bio_based, iv->bio_based)
IVS(slaves, iv->slaves)
IVS(holders, iv->holders)
IV(r_per_s, iv->r_per_s)
IV(w_per_s, iv->w_per_s)
IV(d_per_s, iv->d_per_s)
IV(f_per_s, iv->f_per_s)
IV(r_mb, iv->r_mb_per_s)
IV(w_mb, iv->w_mb_per_s)
IV(svc_mean, iv->svc_mean_ms)
IV(svc_p50, iv->svc_p50_ms)
IV(svc_p99, iv->svc_p99_ms)
IV(queue_mean, iv->queue_mean_ms)
IV(total_mean, iv->total_mean_ms)
IVS(tier, iv->light ? "light" : "exact")
IVS(timing_source, iv->timing_source)
IV(timing_share, iv->timing_share)
IVS(depth_source, iv->depth_source)
IVS(p_eff_source, iv->p_eff_source)
IV(stamp_plugged_share, iv->stamp_plugged_share)
IV(sampled, iv->sampled)
IV(sample_age, iv->sampled ? iv->sample_age_s : NAN)
IV(sample_s, iv->sampled ? iv->sample_s : NAN)
IV(exact_share, iv->exact_share)
IV(depth, iv->depth_busy)
IV(depth_max, known_u64(iv->depth_max_unknown, iv->depth_max))
IV(busy, iv->busy_pct)
IVS(busy_source, iv->busy_source)
IV(p_eff, iv->p_eff)
IVS(p_eff_why, iv->p_eff_why)
IV(solo_ms, iv->solo_ms)
IV(solo_ios, (double)iv->solo_ios)
IVS(s1_source, iv->s1_source)
IV(s1_age, iv->s1_age_s)
IV(s1_coverage, iv->s1_coverage)
IV(seg_per_rq, iv->seg_per_rq)
/* Not carried (blktrace, bios), or no requests: unknown. */
IV(segments, known_u64(isnan(iv->seg_per_rq), iv->segments))
IV(kb_per_rq, iv->kb_per_rq)
IV(fsync_writes, (double)iv->fsync_writes)
IV(merges_diskstats, known_s64(iv->merges_diskstats))
IV(vio_indirect, known_s64(iv->vio_indirect))
IV(vio_direct, known_s64(iv->vio_direct))
IV(vio_descs, known_s64(iv->vio_descs))
IV(indirect_share, iv->indirect_share)
IV(stall_s, iv->stall_s)
IV(stall_share, iv->stall_share)
IV(stalls, known_u64(iv->stall_unknown, iv->stall_episodes))
IV(q_ios, (double)iv->q_ios)
IV(unmatched, (double)iv->unmatched)
IV(untracked, (double)iv->untracked)
/* The light tier has no per-request entry a reissue could find: not measured. */
IV(lost, known_u64(iv->light, iv->lost))
IV(lost_now, known_u64(iv->light, iv->lost_now))
IV(svc_samples, (double)iv->svc_hist_samples)
IV(queue_samples, (double)iv->queue_hist_samples)

static const char *ivs_class(const struct bw_interval *iv, const struct bw_class *cls)
{
	(void)iv;
	return bw_class_name(cls ? cls->cls : BW_CLASS_UNKNOWN);
}

static const char *ivs_class_source(const struct bw_interval *iv, const struct bw_class *cls)
{
	(void)iv;
	if (!cls || cls->cls == BW_CLASS_UNKNOWN)
		return NULL;
	return cls->stored ? "stored" : "live";
}

/* ---- cumulative values of a device (export) ---- */

/*
 * The light tier's, and the exact tier's before 5.12 (no busy periods
 * without fetch-and-add): the kernel's io_ticks, as node_exporter's
 * node_disk_io_time_seconds_total.
 */
static double cum_busy(const struct bw_expo_dev *d)
{
	if (d->cum->light || d->cum->busy_unknown)
		return d->cum->io_ticks_known ? d->cum->io_ticks_ms / 1e3 : NAN;
	return d->cum->busy_ns / 1e9;
}

/* Dispatch stalls (docs/design.md): absent where not measured (before 5.12, the light tier). */
static bool stalls_unknown(const struct bw_expo_dev *d)
{
	return d->cum->stall_unknown || d->cum->busy_unknown || d->cum->light;
}

#define CUM(name, expr) \
	static double cum_##name(const struct bw_expo_dev *d) { return (expr); }

CUM(stall_s, stalls_unknown(d) ? NAN : d->cum->stall_ns / 1e9)
CUM(stalls, stalls_unknown(d) ? NAN : (double)d->cum->stalls)
CUM(inflight, (double)d->cum->inflight)
CUM(depth, d->depth_mean)
CUM(p_eff, d->p_eff)
CUM(work, d->solo_work_s)
CUM(known, (double)d->solo_known)
/* Absent on the light tier, which cannot tell a lost completion (docs/design.md). */
CUM(lost, d->cum->light ? NAN : (double)d->cum->lost)
CUM(unmatched, (double)d->cum->unmatched)
CUM(fsync, (double)d->cum->fsync_writes)
CUM(idle, d->slice_idle_us < 0 ? NAN : d->slice_idle_us / 1e6)
CUM(tuned, d->tune ? 1 : NAN)
CUM(probes, d->tune ? d->tune->probes : NAN)
CUM(probe_s, d->tune ? d->tune->probe_s : NAN)

/* ---- the table ---- */

#define COL(c, w, p) .col = c, .width = w, .prec = p, .cell = BW_CELL_NUM
#define JNUM(k, p) .json = k, .jtype = BW_J_NUM, .jprec = p
#define JINT(k) .json = k, .jtype = BW_J_INT
#define JSTR(k) .json = k, .jtype = BW_J_STR
#define JBOOL(k) .json = k, .jtype = BW_J_BOOL
#define PROM(n, t) .prom = n, .ptype = t

const struct bw_figure bw_figures[] = {
	{ JSTR("device"), .str = ivs_name, .special = BW_SP_INFO,
	  PROM("blkwise_device", BW_PROM_INFO), .ptype_doc = "gauge (1)",
	  .labels = "device, identity, identity_kind, model, rotational",
	  .help = "A device's stable identity (names change across boots; join on device): "
		  "identity_kind says what it is (wwid, serial, the backing file of a loop "
		  "device, or devt, which is not stable).",
	  .col_help = "the kernel's name of the device" },
	{ PROM("blkwise_device_present", BW_PROM_GAUGE), .special = BW_SP_PRESENT,
	  .ptype_doc = "gauge (0/1)",
	  .help = "1 while the device is there; 0 once it went (detached, removed), its other "
		  "series left out until a device of that name returns; for every -d device, "
		  "and any other shown since the start." },
	{ JSTR("identity"), .str = ivs_identity,
	  .help = "The device's stable identity, as blkwise_device_info's identity label." },
	{ JSTR("identity_note"), .str = ivs_identity_note,
	  .help = "Why the identity may not be stable, or null." },
	{ JBOOL("gone"), .get = iv_gone, .help = "The device went during the interval." },
	{ JBOOL("bio_based"), .get = iv_bio_based,
	  .help = "A bio-based device: measured from a bio's queueing to its completion." },
	{ .json = "slaves", .jtype = BW_J_SPECIAL, .special = BW_SP_NAMES, .str = ivs_slaves,
	  .help = "The devices this one stands on (sysfs slaves)." },
	{ .json = "holders", .jtype = BW_J_SPECIAL, .special = BW_SP_NAMES, .str = ivs_holders,
	  .help = "The devices standing on this one (sysfs holders)." },
	{ PROM("blkwise_requests", BW_PROM_COUNTER), .op_off = OPS(ios), .with_fsync = true,
	  .help = "Completed requests, as /proc/diskstats counts them (writes include "
		  "blkwise_fsync_writes)." },
	{ PROM("blkwise_fsync_writes", BW_PROM_COUNTER), .cum = cum_fsync,
	  .help = "Empty flush writes (an fsync's): completed as writes, never issued, so with "
		  "no service time." },
	{ PROM("blkwise_bytes", BW_PROM_COUNTER), .op_off = OPS(bytes),
	  .help = "Bytes of completed requests." },
	{ COL("r/s", 8, 1), JNUM("reads_per_s", 2), .get = iv_r_per_s,
	  .help = "Read requests completed per second." },
	{ COL("w/s", 8, 1), JNUM("writes_per_s", 2), .get = iv_w_per_s,
	  .help = "Write requests completed per second (the empty flush writes included)." },
	{ JNUM("discards_per_s", 2), .get = iv_d_per_s,
	  .help = "Discard requests completed per second." },
	{ JNUM("flushes_per_s", 2), .get = iv_f_per_s,
	  .help = "Flush requests completed per second." },
	{ COL("rMB/s", 7, 2), JNUM("read_mb_per_s", 3), .get = iv_r_mb,
	  .help = "MiB read per second." },
	{ COL("wMB/s", 7, 2), JNUM("write_mb_per_s", 3), .get = iv_w_mb,
	  .help = "MiB written per second." },
	{ .col = "svc_ms", .width = 7, .prec = 3, .cell = BW_CELL_TIMED, JNUM("svc_mean_ms", 6),
	  .get = iv_svc_mean,
	  .help = "Mean service time, issue to completion (blktrace's D2C).",
	  .col_help = "mean service time, issue to completion (D2C); ~ when measured on the exact "
		      "slices' requests (timing_source sampled), ! when from issue stamps a plug "
		      "cached (stamp_plugged_share over 1%: longer than the truth)" },
	{ COL("p50_ms", 7, 3), JNUM("svc_p50_ms", 6), .get = iv_svc_p50,
	  .help = "Median service time, from the log-linear histogram (within 6.25%)." },
	{ COL("p99_ms", 7, 3), JNUM("svc_p99_ms", 6), .get = iv_svc_p99,
	  .help = "99th percentile of service time, from the same histogram." },
	{ COL("q_ms", 7, 3), JNUM("queue_mean_ms", 6), .get = iv_queue_mean,
	  .help = "Mean queue time, from the request's allocation to its issue (Q2D)." },
	{ JNUM("total_mean_ms", 6), .get = iv_total_mean,
	  .help = "Mean total time, from the request's allocation to its completion (Q2C)." },
	{ PROM("blkwise_service_seconds", BW_PROM_HISTOGRAM), .special = BW_SP_HIST_SERVICE,
	  .labels = "device, op, le",
	  .help = "Service time: dispatch to the device until completion (D2C)." },
	{ PROM("blkwise_queue_seconds", BW_PROM_HISTOGRAM), .special = BW_SP_HIST_QUEUE,
	  .labels = "device, op, le",
	  .help = "Queue time: allocation of the request until dispatch (Q2D, as "
		  "/proc/diskstats times it), of completions whose request had an allocation "
		  "stamp." },
	{ JSTR("tier"), .str = ivs_tier,
	  .help = "The tier that measured it: light (the default) or exact." },
	{ JSTR("timing_source"), .str = ivs_timing_source,
	  .help = "Where service and queue time come from: issue (the exact tier's issue "
		  "program); on the light tier stamp (the kernel's rq->io_start_time_ns), "
		  "issue_fallback (its issue program, for a queue that keeps no stamp) or sampled "
		  "(where the kernel's stamps are a plug's cached clock: the requests the exact "
		  "slices timed during the interval)." },
	{ JNUM("timing_share", 4), .get = iv_timing_share,
	  .help = "Share of the interval's completions that service and queue time were measured "
		  "on: 1, or the exact slices' share where timing_source is sampled." },
	{ JNUM("stamp_plugged_share", 4), .get = iv_stamp_plugged_share,
	  .help = "The light tier: share of completions whose issue stamp was a plug's cached "
		  "clock, read before the issue (Linux 6.9 and later): service time from such "
		  "stamps is too long, and queue time 0; null on the exact tier." },
	{ JBOOL("exact_sampled"), .get = iv_sampled,
	  .help = "Depth, stalls, S1 and P_eff are the last exact slice's (the light tier)." },
	{ JNUM("exact_sample_age_s", 3), .get = iv_sample_age,
	  .help = "How long ago that slice was sampled." },
	{ JNUM("exact_sample_s", 3), .get = iv_sample_s, .help = "How long that slice ran." },
	{ JNUM("exact_share", 4), .get = iv_exact_share,
	  .help = "The share of time the exact tier has run since the start." },
	{ COL("depth", 6, 2), JNUM("depth_mean_busy", 3), .get = iv_depth,
	  PROM("blkwise_depth_mean", BW_PROM_GAUGE), .cum = cum_depth,
	  .help = "Mean requests in flight while busy, over the last interval (the light tier: "
		  "the last exact slice's sample)." },
	{ JSTR("depth_source"), .str = ivs_depth_source,
	  .help = "Where depth comes from: exact (the exact tier), sampled (an exact slice within "
		  "the interval), estimated (the light tier: Little's law, requests times service "
		  "time over busy time)." },
	{ COL("max", 4, 0), JINT("depth_max"), .get = iv_depth_max,
	  .help = "Most requests in flight at once during the interval." },
	{ .json = "inflight", .jtype = BW_J_SPECIAL, .special = BW_SP_INFLIGHT,
	  PROM("blkwise_inflight_requests", BW_PROM_GAUGE), .cum = cum_inflight,
	  .help = "Requests dispatched and not completed, now." },
	{ COL("busy%", 6, 1), JNUM("busy_pct", 2), .get = iv_busy,
	  .help = "Share of the interval with at least one request in flight, in percent (the "
		  "light tier: from the kernel's io_ticks, busy_source)." },
	{ JSTR("busy_source"), .str = ivs_busy_source,
	  .help = "Where busy time comes from: exact (the in-flight word) or io_ticks (the "
		  "kernel's, the light tier's)." },
	{ PROM("blkwise_device_busy_seconds", BW_PROM_COUNTER), .cum = cum_busy,
	  .help = "Time with at least one request in flight (iostat's %util numerator; the light "
		  "tier and before 5.12: the kernel's io_ticks, in whole jiffies, as "
		  "node_disk_io_time_seconds_total)." },
	{ .col = "P_eff", .width = 6, .prec = 2, .cell = BW_CELL_PEFF, JNUM("p_eff", 3),
	  .get = iv_p_eff, PROM("blkwise_effective_parallelism", BW_PROM_GAUGE), .cum = cum_p_eff,
	  .help = "P_eff over the last interval (the light tier: an exact slice's within it, else "
		  "its estimate, p_eff_source): solo-equivalent work per busy second; absent (JSON: "
		  "null) while undetermined.",
	  .col_help = "effective parallelism, ~ from an exact slice within the interval, * the light "
		      "tier's estimate (requests x S1 over busy time); while undetermined, why" },
	{ JSTR("p_eff_source"), .str = ivs_p_eff_source,
	  .help = "Where P_eff comes from: exact (the exact tier), sampled (an exact slice within "
		  "the interval), estimated (the light tier: requests times S1 over busy time from "
		  "io_ticks); null while undetermined." },
	{ JSTR("p_eff_undetermined_why"), .str = ivs_p_eff_why,
	  .help = "Why P_eff is undetermined, or null." },
	{ JNUM("solo_svc_ms", 4), .get = iv_solo_ms,
	  .help = "S1 of the interval's dominant op and size class: the mean service time of a "
		  "request alone on the device." },
	{ JINT("solo_samples"), .get = iv_solo_ios, .help = "Solo samples behind the S1 used." },
	{ JSTR("s1_source"), .str = ivs_s1_source,
	  .help = "Where S1 comes from: live, or stored (learned before a restart)." },
	{ JNUM("s1_age_s", 0), .get = iv_s1_age, .help = "A stored S1's age." },
	{ JNUM("s1_coverage", 3), .get = iv_s1_coverage,
	  .help = "Share of completions whose S1 was known." },
	{ PROM("blkwise_solo_work_seconds", BW_PROM_COUNTER), .cum = cum_work,
	  .help = "Sum of S1 over completed requests whose S1 is known." },
	{ PROM("blkwise_solo_known_requests", BW_PROM_COUNTER), .cum = cum_known,
	  .help = "Completed requests whose S1 is known." },
	{ PROM("blkwise_solo_service_seconds", BW_PROM_GAUGE), .special = BW_SP_SOLO,
	  .labels = "device, op, size_bytes",
	  .help = "S1: mean service time of a request alone on the device, per op and size "
		  "class (size_bytes: the class's upper bound, 4096 .. 524288)." },
	{ .col = "class", .width = -7, .cell = BW_CELL_TEXT, JSTR("class"), .str = ivs_class,
	  PROM("blkwise_device_class", BW_PROM_GAUGE), .special = BW_SP_CLASS,
	  .labels = "device, class", .ptype_doc = "gauge (0/1)",
	  .help = "The device's class from its effective parallelism: deep, shallow or unknown "
		  "(in export, 1 for the current one)." },
	{ JSTR("class_source"), .str = ivs_class_source,
	  .help = "Where the class comes from: live, or stored until live evidence decides." },
	{ .json = "class_reason", .jtype = BW_J_SPECIAL, .special = BW_SP_CLASS_REASON,
	  .help = "The numbers behind the class: median P_eff, samples, seconds of evidence." },
	{ PROM("blkwise_device_state", BW_PROM_INFO), .special = BW_SP_STATE,
	  .labels = "device, s1_source, class_source", .ptype_doc = "gauge (1)",
	  .help = "Where the device's S1 and class come from: stored (the state directory, "
		  "learned before), live, or none." },
	{ PROM("blkwise_device_scheduler", BW_PROM_GAUGE), .special = BW_SP_SCHED,
	  .labels = "device, scheduler", .ptype_doc = "gauge (1)",
	  .help = "The device's active I/O scheduler (none when there is none)." },
	{ PROM("blkwise_bfq_slice_idle_seconds", BW_PROM_GAUGE), .cum = cum_idle,
	  .help = "BFQ's slice_idle_us, in seconds (bfq devices only)." },
	{ COL("seg/rq", 6, 2), JNUM("seg_per_rq", 3), .get = iv_seg_per_rq,
	  .help = "Physical segments per request (nr_phys_segments)." },
	{ JINT("segments"), .get = iv_segments,
	  .help = "Physical segments of the interval's requests." },
	{ .json = "seg_hist", .jtype = BW_J_SPECIAL, .special = BW_SP_SEG_HIST,
	  PROM("blkwise_segments_per_request", BW_PROM_HISTOGRAM), .labels = "device, op, le",
	  .help = "Physical segments per completed request (JSON: [lo, hi, requests] per "
		  "non-empty bucket)." },
	{ JNUM("kb_per_rq", 2), .get = iv_kb_per_rq, .help = "KiB per request." },
	{ .col = "merge/s", .width = 8, .prec = 1, .cell = BW_CELL_NUM, JINT("merges"),
	  .json_rate = "merges_per_s", .op_off = OPS(merges),
	  PROM("blkwise_merges", BW_PROM_COUNTER), .summary = "merges",
	  .help = "Bio and request merges the block layer traces (diskstats also counts "
		  "multi-range discard merges)." },
	{ JINT("merges_diskstats"), .get = iv_merges_diskstats,
	  .help = "Merges as /proc/diskstats counts them, or null where it is not read." },
	{ .col = "requeue/s", .width = 8, .prec = 1, .cell = BW_CELL_NUM, JINT("requeues"),
	  .json_rate = "requeues_per_s", .op_off = OPS(requeues),
	  PROM("blkwise_requeues", BW_PROM_COUNTER), .summary = "requeues",
	  .help = "Requests sent back from the driver to be issued again." },
	{ JINT("fsync_writes"), .get = iv_fsync_writes,
	  .help = "Empty flush writes (an fsync's), counted in the writes." },
	{ JINT("virtio_indirect"), .get = iv_vio_indirect, .virtio = true,
	  .help = "stat --virtio: ring buffers added with an indirect descriptor table." },
	{ JINT("virtio_direct"), .get = iv_vio_direct, .virtio = true,
	  .help = "stat --virtio: ring buffers added with descriptors in the ring." },
	{ JINT("virtio_descs"), .get = iv_vio_descs, .virtio = true,
	  .help = "stat --virtio: their descriptors." },
	{ JNUM("indirect_share", 3), .get = iv_indirect_share, .virtio = true,
	  .help = "stat --virtio: the indirect ones' share." },
	{ JNUM("dispatch_stall_s", 6), .get = iv_stall_s,
	  PROM("blkwise_dispatch_stall_seconds", BW_PROM_COUNTER), .cum = cum_stall_s,
	  .help = "Time with requests waiting to be dispatched (inserted or requeued, not issued) "
		  "while fewer than the device's largest observed depth were in flight; absent "
		  "(JSON: null) where not measured (before 5.12, and the light tier)." },
	{ .col = "stall%", .width = 6, .prec = 1, .cell = BW_CELL_NUM, .scale = 100,
	  JNUM("dispatch_stall_share", 4), .get = iv_stall_share,
	  .help = "Dispatch stalls' share of busy time (the table: in percent); - before 5.12." },
	{ JINT("dispatch_stalls"), .get = iv_stalls,
	  PROM("blkwise_dispatch_stalls", BW_PROM_COUNTER), .cum = cum_stalls,
	  .help = "Dispatch stall episodes begun." },
	{ JINT("errors"), .op_off = OPS(errors), PROM("blkwise_errors", BW_PROM_COUNTER),
	  .summary = "errors",
	  .help = "Requests completed with an error." },
	{ JINT("q_ios"), .get = iv_q_ios,
	  .help = "Completions whose request carried an allocation stamp (queue time's count)." },
	{ JINT("unmatched_total"), .get = iv_unmatched,
	  PROM("blkwise_unmatched_completions", BW_PROM_COUNTER), .cum = cum_unmatched,
	  .summary = "completions whose issue was not seen",
	  .help = "Completions whose dispatch was not seen (issued before attach)." },
	{ JINT("untracked_total"), .get = iv_untracked,
	  .help = "Requests the per-request table had no room for." },
	{ JINT("lost_completions_total"), .get = iv_lost,
	  PROM("blkwise_lost_completions", BW_PROM_COUNTER), .cum = cum_lost,
	  .summary = "issues whose completion was not seen",
	  .help = "Requests whose completion was never seen; absent (JSON: null) on the light "
		  "tier, which cannot tell them." },
	{ JINT("lost_completions"), .get = iv_lost_now,
	  .help = "Lost completions found in the interval." },
	{ JINT("svc_hist_samples"), .get = iv_svc_samples,
	  .help = "Completions in the service time histogram." },
	{ JINT("queue_hist_samples"), .get = iv_queue_samples,
	  .help = "Completions in the queue time histogram." },
	{ .json = "ops", .jtype = BW_J_SPECIAL, .special = BW_SP_OPS,
	  .help = "Per op (read, write, discard, flush, passthrough): ios and bytes." },
	{ PROM("blkwise_tune_enabled", BW_PROM_GAUGE), .cum = cum_tuned, .ptype_doc = "gauge (1)",
	  .help = "1 when the device is being tuned (export --tune)." },
	{ PROM("blkwise_tune_decisions", BW_PROM_COUNTER), .special = BW_SP_TUNE_ACTIONS,
	  .labels = "device, action",
	  .help = "Tuner decisions by action: set, probe, keep, revert, repair (export --tune)." },
	{ PROM("blkwise_tune_probes", BW_PROM_COUNTER), .cum = cum_probes,
	  .help = "Probes of another idling setting (export --tune)." },
	{ PROM("blkwise_tune_probe_seconds", BW_PROM_COUNTER), .cum = cum_probe_s,
	  .help = "Time spent probing (export --tune)." },
};

const size_t bw_nfigures = sizeof(bw_figures) / sizeof(bw_figures[0]);

__u64 bw_fig_interval_count(const struct bw_figure *f, const struct bw_interval *iv)
{
	__u64 v;

	memcpy(&v, (const char *)&iv->sum + f->op_off - 1, sizeof(v));
	return v;
}

__u64 bw_fig_op_count(const struct bw_figure *f, const struct bw_snap_dev *cum, int op)
{
	__u64 v;

	memcpy(&v, (const char *)&cum->op[op] + f->op_off - 1, sizeof(v));
	/* Empty flush writes: writes, as diskstats (and node_exporter) count them. */
	if (f->with_fsync && op == BW_OP_WRITE)
		v += cum->fsync_writes;
	return v;
}

void bw_fig_summary(FILE *f, const struct bw_interval *iv)
{
	const char *sep = "";
	double v;
	size_t i;

	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		if (!r->summary)
			continue;
		v = r->op_off ? (double)bw_fig_interval_count(r, iv) : r->get(iv);
		if (isnan(v))
			fprintf(f, "%s%s -", sep, r->summary);
		else
			fprintf(f, "%s%s %.0f", sep, r->summary, v);
		sep = ", ";
	}
}

const struct bw_figure *bw_fig_special(enum bw_fig_special sp)
{
	size_t i;

	for (i = 0; i < bw_nfigures; i++)
		if (bw_figures[i].special == sp)
			return &bw_figures[i];
	return NULL;
}

/* ---- the docs' lists ---- */

static const char *const type_doc[] = {
	[BW_PROM_COUNTER] = "counter", [BW_PROM_GAUGE] = "gauge",
	[BW_PROM_HISTOGRAM] = "histogram", [BW_PROM_SUMMARY] = "summary",
	[BW_PROM_INFO] = "gauge (1)",
};

/* A HELP as a table cell: without its final stop. */
static void cell_text(FILE *f, const char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '.')
		n--;
	fprintf(f, "%.*s", (int)n, s);
}

/*
 * The table's or the JSON's words for a figure; P_eff's column goes on with
 * its codes, from the one list of them (bw_peff_whys).
 */
static void fig_text(FILE *f, const struct bw_figure *r, const char *s,
		     void (*text)(FILE *f, const char *s))
{
	int i;

	text(f, s);
	if (r->cell != BW_CELL_PEFF || s != r->col_help)
		return;
	for (i = 0; i < BW_WHY_N; i++) {
		fputs(i ? ", " : ": ", f);
		text(f, bw_peff_whys[i].code);
		fputc(' ', f);
		text(f, bw_peff_whys[i].legend);
	}
}

static void prom_name(FILE *f, const struct bw_figure *r)
{
	fprintf(f, "| `%s%s`", r->prom, r->ptype == BW_PROM_COUNTER ? "_total" :
		r->ptype == BW_PROM_INFO ? "_info" : "");
}

static void doc_export(FILE *f)
{
	size_t i;

	fprintf(f, "| metric | type | labels | meaning |\n|---|---|---|---|\n");
	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];
		const char *labels = r->labels ? r->labels : r->op_off ? "device, op" : "device";

		if (!r->prom)
			continue;
		prom_name(f, r);
		fprintf(f, " | %s | ", r->ptype_doc ? r->ptype_doc : type_doc[r->ptype]);
		for (; *labels; labels++) {
			size_t n = strcspn(labels, ", ");

			fprintf(f, "`%.*s`", (int)n, labels);
			labels += n;
			if (!*labels)
				break;
			fputs(", ", f);
			labels++;
		}
		fputs(" | ", f);
		cell_text(f, r->help);
		fputs(" |\n", f);
	}
}

static void doc_stat(FILE *f)
{
	size_t i;

	fprintf(f, "| column | JSON | meaning |\n|---|---|---|\n");
	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		if (r->cell == BW_CELL_NONE)
			continue;
		fprintf(f, "| `%s` | `%s` | ", r->col, r->json_rate ? r->json_rate : r->json);
		fig_text(f, r, r->col_help ? r->col_help : r->help, cell_text);
		fputs(r->op_off ? ", per second |\n" : " |\n", f);
	}
}

static void doc_json(FILE *f)
{
	size_t i;

	fprintf(f, "| key | meaning |\n|---|---|\n");
	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		/* A column's key is in the columns' list (a rate's: its count's is not). */
		if (!r->json || (r->cell != BW_CELL_NONE && !r->json_rate))
			continue;
		fprintf(f, "| `%s` | ", r->json);
		fig_text(f, r, r->col_help && r->jtype != BW_J_NUM ? r->col_help : r->help, cell_text);
		fputs(r->op_off ? ", in the interval |\n" : " |\n", f);
	}
}

/* Text for roff: a backslash and a minus escaped, the final stop left out. */
static void roff_text(FILE *f, const char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '.')
		n--;
	for (; n--; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* The man page's list of stat's columns. */
static void doc_man(FILE *f)
{
	size_t i;

	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		if (r->cell == BW_CELL_NONE)
			continue;
		fputs(".TP\n.BR ", f);
		roff_text(f, r->col);
		fputs(" \" (", f);
		roff_text(f, r->json_rate ? r->json_rate : r->json);
		fputs(")\"\n", f);
		fig_text(f, r, r->col_help ? r->col_help : r->help, roff_text);
		fputs(r->op_off ? ", per second\n" : "\n", f);
	}
}

/* The man page's list of the JSON keys (a column's key is with the column). */
static void doc_manjson(FILE *f)
{
	size_t i;

	for (i = 0; i < bw_nfigures; i++) {
		const struct bw_figure *r = &bw_figures[i];

		if (!r->json || (r->cell != BW_CELL_NONE && !r->json_rate))
			continue;
		fputs(".TP\n.B ", f);
		roff_text(f, r->json);
		fputc('\n', f);
		fig_text(f, r, r->col_help && r->jtype != BW_J_NUM ? r->col_help : r->help, roff_text);
		fputs(r->op_off ? ", in the interval\n" : "\n", f);
	}
}

/* Every key of a device's JSON object, one a line. */
static void doc_keys(FILE *f)
{
	size_t i;

	for (i = 0; i < bw_nfigures; i++) {
		if (bw_figures[i].json_rate)
			fprintf(f, "%s\n", bw_figures[i].json_rate);
		if (bw_figures[i].json)
			fprintf(f, "%s\n", bw_figures[i].json);
	}
}

int bw_figures_doc(FILE *f, const char *which)
{
	static const struct {
		const char *name;
		void (*doc)(FILE *f);
	} docs[] = {
		{ "export", doc_export }, { "stat", doc_stat }, { "json", doc_json },
		{ "man", doc_man }, { "manjson", doc_manjson }, { "keys", doc_keys },
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		if (!strcmp(which, docs[i].name)) {
			docs[i].doc(f);
			return 0;
		}
	}
	return -1;
}
