// SPDX-License-Identifier: GPL-2.0
/*
 * The option text of every subcommand (options.h).  The order here is the
 * order --help prints them in.  Defaults are spelled out, not computed:
 * tests/test_docs.sh compares this text with the man page and docs/.
 */
#include <string.h>
#include "cmd/options.h"

#define S BW_CMD_STAT
#define T BW_CMD_TUNE
#define E BW_CMD_EXPORT
#define R BW_CMD_RECORD
#define A BW_CMD_ANALYZE

const struct bw_optdoc bw_optdocs[] = {
	{ S | E, 'd', "device", "DEV",
	  "watch DEV: a name (loop3), a block special file (/dev/mapper/vg-lv) or MAJ:MIN; a partition folds into its disk; repeatable.  Default: every device with a size (and, for loop, a backing file)" },
	{ T, 'd', "device", "DEV",
	  "tune DEV (named as for stat); repeatable.  Default: every device on bfq" },
	{ R, 'd', "device", "DEV",
	  "record DEV only (named as for stat); repeatable.  Default: every device" },
	{ A, 'd', "device", "DEV", "only DEV (its name in the trace, or MAJ:MIN); repeatable" },
	{ R, 'o', "output", "FILE", "the trace file to write (required; read it with analyze)" },
	{ E, 'l', "listen", "[ADDR]:PORT",
	  "where to listen (default :9796, every address; 127.0.0.1:9796 for the local host only)" },
	{ S, 'i', "interval", "SECS", "seconds per report, 0.01 to 86400 (default 1)" },
	{ T, 'i', "interval", "SECS", "measurement window in seconds (default 1)" },
	{ E, 'i', "interval", "SECS",
	  "seconds between samples of the BPF maps, 0.1 to 86400 (default 1), and the least span of the interval gauges; a scrape takes a new sample when the last is 50 ms old" },
	{ A, 'i', "interval", "SECS", "seconds per interval of the figures over time (default 1)" },
	{ S, 'c', "count", "COUNT", "stop after COUNT reports" },
	{ S, 'z', NULL, NULL, "leave out devices with no I/O in the interval" },
	{ S, 'j', "json", NULL, "one JSON object per interval (JSON Lines)" },
	{ S, 's', "streams", "[=BY]",
	  "also streams, per process (BY=process, the default) or per cgroup v2 (BY=cgroup); costs a hash lookup per I/O" },
	{ S | E, 0, "exact", NULL,
	  "the exact tier throughout: issue and completion programs and the in-flight word, for exact busy time and, every interval, solo service time (S1), P_eff and the class, mean and maximum depth and dispatch stalls (about 3x the light tier's cost per I/O).  Default: the light tier, one completion program reading the kernel's own stamps, with the exact tier in slices (--exact-period); --streams and --tune imply --exact" },
	{ S | E, 0, "exact-period", "SECS",
	  "on the light tier, run the exact tier for a slice of every SECS seconds (default 20; 0: never), so that S1, P_eff, the class, depth and stalls stay known, marked sampled; the first slice lasts 3 s at least" },
	{ S | E, 0, "exact-slice", "SECS", "how long each exact slice lasts (default 1)" },
	{ S, 0, "max-devices", "N", "device slots to size the maps for, 1 to 1024" },
	{ S, 0, "bio-cache", NULL,
	  "also the per-cpu bio alloc cache, per bio_set and CPU: exact hits and misses where fentry loads, else only the cache-flagged bios block_bio_queue shows (labelled)" },
	{ S, 0, "virtio", NULL,
	  "also virtio disks' ring buffers, direct or through an indirect descriptor (indirect share), where fentry loads" },
	{ T, 0, "once", NULL,
	  "decide from one window (probing if needed), leave the setting in place and exit (--restore puts it back)" },
	{ E, 0, "user", "USER", "run as USER after loading BPF (default nobody)" },
	{ E, 0, "bpf-stats", NULL,
	  "have the kernel count BPF run time while running (two clock reads per program run), for blkwise_bpf_run_seconds_total" },
	{ E, 0, "max-connections", "N",
	  "concurrent HTTP connections, 1 to 65536 (default 4096; fewer if RLIMIT_NOFILE cannot hold them); a request's header must come within 5 s, a whole request within 10 s of the accept" },
	{ E, 0, "max-per-ip", "N", "concurrent connections from one address (default 64)" },
	{ E, 0, "web.config.file", "FILE",
	  "TLS, client certificates, basic auth and headers, in Prometheus exporter-toolkit's format (read as root at start; SIGHUP re-reads users and headers)" },
	{ E, 0, "bio-cache", NULL,
	  "also blkwise_bio_cache_events_total: the per-cpu bio alloc cache per bio_set, method exact or tracepoint" },
	{ E, 0, "tune", NULL,
	  "also tune BFQ idling, as blkwise tune does, in the same process; the options from --dry-run to --json are the tuner's and need --tune" },
	{ T | E, 'n', "dry-run", NULL, "decide and log, write nothing" },
	{ T | E, 0, "policy", "throughput|latency",
	  "throughput (default), or latency: idling must win by 20%" },
	{ T | E, 0, "set-scheduler", "bfq", "switch devices to bfq first (put back on exit)" },
	{ T | E, 0, "low-latency", "0|1", "set bfq's low_latency (put back on exit)" },
	{ T | E, 0, "max-idle-us", "US",
	  "ceiling of a nonzero slice_idle_us (default 8000, bfq's default)" },
	{ T | E, 0, "strict-idle-us", "US",
	  "the least nonzero slice_idle_us while strict_guarantees is on for sequential streams (default 20000): a reader later than it breaks the idling" },
	{ T | E, 0, "no-strict", NULL,
	  "never set bfq's strict_guarantees (tried, and kept only if faster, where BFQ stops idling although idling is set, after a probe of 0 that lost on a spindle, or where random sync reads queue in a shallow device)" },
	{ T | E, 0, "run-dir", "DIR",
	  "where the values found and the locks are kept (default /run/blkwise)" },
	{ E, 0, "tune-window", "SECS", "the tuner's measurement window (default 1)" },
	{ T, 'j', "json", NULL, "one JSON object per decision (JSON Lines)" },
	{ E, 'j', "json", NULL, "the tuner's decisions as JSON Lines on standard output" },
	{ T, 0, "restore", NULL,
	  "put back what a tuner that did not exit cleanly changed (takes only -d, --run-dir and --verbose)" },
	{ R, 't', "duration", "SECS", "stop after SECS seconds (default: on Ctrl-C or SIGTERM)" },
	{ R, 0, "max-size", "SIZE", "stop once the file reaches SIZE (K, M, G suffixes)" },
	{ R, 0, "buffer", "SIZE", "BPF ring buffer size, a power of two, 64K to 1G (default 16M)" },
	{ A, 'f', "format", "FMT", "text (default), json (one object) or csv (one table)" },
	{ A, 0, "table", "T",
	  "the table --format csv writes: intervals (default), totals, latency, streams, outliers or what_if" },
	{ A, 0, "csv-dir", "DIR", "every table as DIR/T.csv (besides the chosen format)" },
	{ A, 'j', "json", NULL, "--format json" },
	{ A, 0, "from", "T", "only events T seconds or more from the trace's start" },
	{ A, 0, "to", "T", "only events less than T seconds from the trace's start" },
	{ A, 'a', "all", NULL, "text: every interval, idle ones too" },
	{ A, 0, "no-exact", NULL,
	  "one pass: percentiles from histogram buckets, up to 0.4% below the exact values" },
	{ A, 0, "html", "FILE", "a self-contained HTML report with SVG charts" },
	{ A, 0, "perfetto", "FILE", "Chrome trace-event JSON (ui.perfetto.dev)" },
	{ A, 0, "what-if-tune", NULL, "the decisions blkwise tune's policy would have taken" },
	{ S | T, 0, "state-dir", "DIR",
	  "where learned solo service times are kept (default /var/lib/blkwise)" },
	{ E, 0, "state-dir", "DIR",
	  "where learned solo service times are kept (default /var/lib/blkwise; still saved after the drop to --user)" },
	{ S | T | E, 0, "no-state", NULL, "neither read nor write learned solo service times" },
	{ S | T | E | R, 'v', "verbose", NULL, "libbpf messages, map memory, the attach chosen" },
	{ S | T | E | R, 0, "btf", "FILE", "kernel BTF, when /sys/kernel/btf/vmlinux is missing" },
	{ S | T | E | R, 0, "force-raw-tp", NULL, "raw_tp programs even where tp_btf loads" },
	{ S | T | E | R, 0, "version", NULL, "version, git commit and libbpf version" },
	{ S | T | E | R | A, 'h', "help", NULL, "these options, on standard output" },
	{}
};

#define HELP_COL 23

static int print_left(FILE *f, const struct bw_optdoc *o)
{
	int n;

	if (o->shrt)
		n = fprintf(f, "  -%c%s", o->shrt, o->lng ? ", " : "");
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
