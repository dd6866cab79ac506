// SPDX-License-Identifier: GPL-2.0
/*
 * The option text of every subcommand (options.h), and --help's rendering
 * of it.  The order here is the order --help prints them in.  Defaults are
 * spelled out, not computed.  Nothing here parses: tools/optdoc.c links this
 * file alone to write the man page's option lists (tools/sync-docs.sh), and
 * tests/test_docs.sh holds the man page and docs/ to it.
 */
#include <string.h>
#include "cmd/options.h"
#include "tune/tuner.h"
#include "watch/watch.h"

#define S BW_CMD_STAT
#define T BW_CMD_TUNE
#define E BW_CMD_EXPORT
#define R BW_CMD_RECORD
#define A BW_CMD_ANALYZE

const struct bw_optdoc bw_optdocs[] = {
	{ S | E, 'd', "device", "DEV",
	  "watch DEV: a name (loop3), a block special file (/dev/mapper/vg-lv) or MAJ:MIN; a partition folds into its disk; repeatable, up to 256 times.  Default: every device with a size (and, for loop, a backing file)" },
	{ T, 'd', "device", "DEV",
	  "tune DEV (named as for stat); repeatable, up to 256 times.  Default: every device on bfq" },
	{ R, 'd', "device", "DEV",
	  "record DEV only (named as for stat); repeatable, up to 256 times.  Default: every device" },
	{ A, 'd', "device", "DEV", "only DEV (its name in the trace, or MAJ:MIN); repeatable, up to 256 times" },
	{ R, 'o', "output", "FILE", "the trace file to write (required; read it with analyze)" },
	{ E, 'l', "listen", "[ADDR]:PORT",
	  "where to listen (default :9796, every IPv6 and IPv4 address; 127.0.0.1:9796 for the local host only; an IPv6 ADDR in brackets, [::1]:9796)" },
	{ S, 'i', "interval", "SECS", "seconds per report, 0.01 to 86400 (default 1)" },
	{ T, 'i', "interval", "SECS", "measurement window in seconds, 0.2 to 86400 (default 1)" },
	{ E, 'i', "interval", "SECS",
	  "seconds between samples of the BPF maps, 0.1 to 86400 (default 1), and the least span of the interval gauges; a scrape takes a new sample when the last is 50 ms old" },
	{ A, 'i', "interval", "SECS", "seconds per interval of the figures over time (default 1)" },
	{ S, 'c', "count", "COUNT", "stop after COUNT reports" },
	{ S, 'z', NULL, NULL, "leave out devices with no I/O in the interval" },
	{ S, 'j', "json", NULL, "one JSON object per interval (JSON Lines)" },
	{ S, 's', "streams", "[=BY]",
	  "also streams, per process (BY=process, the default) or per cgroup v2 (BY=cgroup); costs a hash lookup per I/O" },
	{ S | E, BW_OPT_EXACT, "exact", NULL,
	  "the exact tier throughout: Q, issue and completion programs and the in-flight word, for every request's own times, exact busy time and, every interval, solo service time (S1), P_eff and the class, mean and maximum depth and dispatch stalls (several times the light tier's cost per I/O: docs/cost.md).  Default: the light tier, one completion program reading the kernel's own stamps, with slices (--exact-period); --streams and --tune imply --exact" },
	{ S | E, BW_OPT_EXACT_PERIOD, "exact-period", "SECS",
	  "on the light tier, a slice every SECS seconds (default 0.5; 0: never): where the kernel's stamps are a plug's cached clock (Linux 6.9 and later) a timing slice, in which the light tier times requests itself, marked ~; at start, when a workload moves and every 20 s an exact slice instead, in which the exact tier measures S1, P_eff, depth and stalls, marked ~; between them the light tier's estimates, marked *" },
	{ S | E, BW_OPT_EXACT_SLICE, "exact-slice", "SECS",
	  "how long each slice lasts (default: what --exact-budget pays at the last rate of I/O)" },
	{ S | E, BW_OPT_EXACT_BUDGET, "exact-budget", "PCT",
	  "the share of one CPU, in percent, the slices may take (default 0.25): at a low rate of I/O they run throughout, at a high one for milliseconds of each period" },
	{ S, BW_OPT_MAX_CPU, "max-cpu", "PCT",
	  "at most PCT percent of one CPU for blkwise, its programs and its process, at any rate of I/O: first the slices shorten, then the light tier runs for a share of each cycle of periods; counts, bytes and merges are then diskstats', histograms and percentiles cover the share said (default 0: none)" },
	{ E, BW_OPT_MAX_CPU, "max-cpu", "PCT",
	  "at most PCT percent of one CPU for blkwise, its programs and its process, at any rate of I/O: first the slices shorten, then the light tier runs for a share of each cycle of periods; counts, bytes and merges are diskstats', histograms cover the share blkwise_observed_ratio says (default 1; 0: none)" },
	{ S, BW_OPT_MAX_DEV, "max-devices", "N", "device slots to size the maps for, 1 to 1024" },
	{ S, BW_OPT_BIO_CACHE, "bio-cache", NULL,
	  "also the per-cpu bio alloc cache, per bio_set and CPU: exact hits and misses where fentry loads, else only the cache-flagged bios block_bio_queue shows (labelled)" },
	{ S, BW_OPT_VIRTIO, "virtio", NULL,
	  "also virtio disks' ring buffers, direct or through an indirect descriptor (indirect share), where fentry loads" },
	{ T, BW_OPT_ONCE, "once", NULL,
	  "decide from one window (probing if needed), leave the setting in place and exit (--restore puts it back)" },
	{ E, BW_OPT_USER, "user", "USER",
	  "run as USER after loading BPF, with no capabilities from Linux 6.5, CAP_BPF alone before (default nobody; USER must exist; root keeps every capability)" },
	{ E, BW_OPT_BPF_STATS, "bpf-stats", NULL,
	  "have the kernel count BPF run time while running (two clock reads per program run), for blkwise_bpf_run_seconds_total; needs CAP_SYS_ADMIN at start" },
	{ E, BW_OPT_MAX_CONN, "max-connections", "N",
	  "concurrent HTTP connections, 1 to 65536 (default 4096; fewer if RLIMIT_NOFILE cannot hold them); a request's header must come within 5 s, a whole request within 10 s of the accept; a scraper's connection stays open 120 s between scrapes" },
	{ E, BW_OPT_MAX_PER_IP, "max-per-ip", "N",
	  "concurrent connections from one address (default 64); more are closed at once" },
	{ E, BW_OPT_WEB_CONFIG, "web.config.file", "FILE",
	  "TLS, client certificates, basic auth and headers, in Prometheus exporter-toolkit's format (docs/web-config.md): read as root at start, an error naming its line is a usage error; SIGHUP re-reads users and headers" },
	{ E, BW_OPT_BIO_CACHE, "bio-cache", NULL,
	  "also blkwise_bio_cache_events_total: the per-cpu bio alloc cache per bio_set, method exact or tracepoint" },
	{ E, BW_OPT_CGROUPS, "cgroups", "[=DEPTH]",
	  "also per cgroup: requests, bytes and a service-time histogram per device, cgroup and op, charged to the cgroup the kernel charges (the bio's blkg: for a buffered write, the cgroup that dirtied the page), labelled by its path; DEPTH keeps that many components of a path, counting deeper cgroups in their ancestor (default: all); costs a second completion program" },
	{ E, BW_OPT_CGROUP_PATH, "cgroup-path", "PATH", "with --cgroups, only cgroups at or under PATH (e.g. /system.slice)" },
	{ E, BW_OPT_CGROUPS_MAX, "cgroups-max", "N",
	  "with --cgroups, publish at most N cgroups, those with the most requests (default 100; blkwise_cgroups_omitted counts the rest)" },
	{ E, BW_OPT_TUNE, "tune", NULL,
	  "also tune BFQ idling, as blkwise tune does, in the same process; the options from --dry-run to --json are the tuner's and need --tune" },
	{ T | E, 'n', "dry-run", NULL, "decide and log, write nothing" },
	{ T | E, BW_OPT_POLICY, "policy", "throughput|latency",
	  "throughput (default), or latency: idling must win by 20%" },
	{ T | E, BW_OPT_SCHED, "set-scheduler", "bfq", "switch devices to bfq first (put back on exit)" },
	{ T | E, BW_OPT_LL, "low-latency", "0|1", "set bfq's low_latency (put back on exit)" },
	{ T | E, BW_OPT_MAX_IDLE, "max-idle-us", "US",
	  "ceiling of a nonzero slice_idle_us, 1000 to 1000000 (default 8000, bfq's default)" },
	{ T | E, BW_OPT_STRICT_IDLE, "strict-idle-us", "US",
	  "the least nonzero slice_idle_us while strict_guarantees is on for sequential streams, 1000 to 1000000 (default 20000): a reader later than it breaks the idling" },
	{ T | E, BW_OPT_NO_STRICT, "no-strict", NULL,
	  "never set bfq's strict_guarantees (tried, and kept only if faster, where BFQ stops idling although idling is set, after a probe of 0 that lost on a spindle, or where random sync reads queue in a shallow device)" },
	{ T | E, BW_OPT_RUN_DIR, "run-dir", "DIR",
	  "where the values found and the locks are kept (default /run/blkwise)" },
	{ E, BW_OPT_TUNE_WINDOW, "tune-window", "SECS", "the tuner's measurement window (default 1)" },
	{ T, 'j', "json", NULL, "one JSON object per decision (JSON Lines)" },
	{ E, 'j', "json", NULL, "the tuner's decisions as JSON Lines on standard output" },
	{ T, BW_OPT_RESTORE, "restore", NULL,
	  "put back what a tuner that did not exit cleanly changed (takes only -d, --run-dir and --verbose)" },
	{ R, 't', "duration", "SECS", "stop after SECS seconds (default: on Ctrl-C or SIGTERM)" },
	{ R, BW_OPT_MAX_SIZE, "max-size", "SIZE", "stop once the file reaches SIZE (K, M, G suffixes)" },
	{ R, BW_OPT_BUFFER, "buffer", "SIZE", "BPF ring buffer size, a power of two, 64K to 1G (default 16M)" },
	{ A, 'f', "format", "FMT", "text (default), json (one object) or csv (one table)" },
	{ A, 's', "streams", "[=BY]",
	  "streams per process (BY=process, the default) or per cgroup v2 (BY=cgroup): the cgroup each request is charged to, by the rule of stat --streams=cgroup (a trace of format version 2; version 1 and blktrace captures are refused)" },
	{ A, BW_OPT_TABLE, "table", "T",
	  "the table --format csv writes: intervals (default), totals, latency, streams, outliers or what_if" },
	{ A, BW_OPT_CSV_DIR, "csv-dir", "DIR", "every table as DIR/T.csv (besides the chosen format)" },
	{ A, 'j', "json", NULL, "--format json" },
	{ A, BW_OPT_FROM, "from", "T", "only events T seconds or more from the trace's start" },
	{ A, BW_OPT_TO, "to", "T", "only events less than T seconds from the trace's start" },
	{ A, 'a', "all", NULL, "text: every interval, idle ones too" },
	{ A, BW_OPT_NO_EXACT, "no-exact", NULL,
	  "one pass: percentiles from histogram buckets, up to 0.4% below the exact values" },
	{ A, BW_OPT_HTML, "html", "FILE", "a self-contained HTML report with SVG charts" },
	{ A, BW_OPT_PERFETTO, "perfetto", "FILE", "Chrome trace-event JSON (ui.perfetto.dev)" },
	{ A, BW_OPT_WHAT_IF, "what-if-tune", NULL, "the decisions blkwise tune's policy would have taken" },
	{ S | T, BW_OPT_STATE_DIR, "state-dir", "DIR",
	  "where learned solo service times are kept (default /var/lib/blkwise)" },
	{ E, BW_OPT_STATE_DIR, "state-dir", "DIR",
	  "where learned solo service times are kept (default /var/lib/blkwise; still saved after the drop to --user)" },
	{ S | T | E, BW_OPT_NO_STATE, "no-state", NULL, "neither read nor write learned solo service times" },
	{ S | T | E | R, 'v', "verbose", NULL, "libbpf messages, map memory, the attach chosen" },
	{ S | T | E | R, BW_OPT_BTF, "btf", "FILE", "kernel BTF, when /sys/kernel/btf/vmlinux is missing" },
	{ S | T | E | R, BW_OPT_RAW_TP, "force-raw-tp", NULL, "raw_tp programs even where tp_btf loads" },
	{ S | T | E | R, BW_OPT_VERSION, "version", NULL, "version, git commit and libbpf version" },
	{ S | T | E | R | A, 'h', "help", NULL, "these options, on standard output" },
	{}
};

#define HELP_COL 23

static int print_left(FILE *f, const struct bw_optdoc *o)
{
	int n;

	if (o->val < BW_OPT_LONG_ONLY)
		n = fprintf(f, "  -%c%s", o->val, o->lng ? ", " : "");
	else
		n = fprintf(f, "      ");
	if (o->lng)
		n += fprintf(f, "--%s", o->lng);
	if (o->arg)
		n += fprintf(f, "%s%s", strncmp(o->arg, "[=", 2) ? " " : "", o->arg);
	return n;
}

/* Words of the help text, wrapped before column 80, continued at HELP_COL. */
void bw_opts_help(FILE *f, unsigned int cmd)
{
	const struct bw_optdoc *o;
	const char *p;
	int col, w;

	for (o = bw_optdocs; o->help; o++) {
		if (!(o->cmds & cmd))
			continue;
		col = print_left(f, o);
		col += fprintf(f, "%*s", col <= HELP_COL - 2 ? HELP_COL - col : 2, "");
		for (p = o->help; *p; p += strspn(p, " ")) {
			w = strcspn(p, " ");
			if (p != o->help && col + 1 + w >= 80)
				col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
			else if (p != o->help)
				col += fprintf(f, " ");
			col += fprintf(f, "%.*s", w, p);
			p += w;
		}
		fputc('\n', f);
	}
}
