/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every per-device figure, declared once (figures.c): its column in stat's
 * table, its key in the JSON of stat and analyze, its Prometheus family,
 * and the one text that explains it (the family's HELP, and the docs' lists,
 * which tools/sync-docs.sh writes from `blkwise-figures`).  render.c and
 * promfmt.c are driven by the table; a figure with a shape of its own (an
 * object, a histogram, an info) is named here and written by the renderer
 * its `special` names.  Pure.
 */
#ifndef BLKWISE_FIGURES_H
#define BLKWISE_FIGURES_H

#include <stddef.h>
#include "model/promfmt.h"

/* How stat's table shows a figure. */
enum bw_fig_cell {
	BW_CELL_NONE,	/* not a column */
	BW_CELL_NUM,	/* get() x scale, "-" when NAN */
	BW_CELL_PEFF,	/* P_eff: "~" when sampled, the short reason when undetermined */
	BW_CELL_TIMED,	/* service time: "~" when sampled, "!" when a plug's stamps (bw_timing_mark) */
	BW_CELL_TEXT,	/* str(), left-aligned */
};

/* How the JSON shows it. */
enum bw_fig_json {
	BW_J_NONE,
	BW_J_NUM,	/* get(), jprec decimals, null when not finite */
	BW_J_INT,	/* get() as a whole number, null when NAN */
	BW_J_STR,	/* str(), null when NULL */
	BW_J_BOOL,	/* get() != 0 */
	BW_J_SPECIAL,	/* render.c writes it (special) */
};

/* A figure the renderers write by a rule of their own. */
enum bw_fig_special {
	BW_SP_NONE,
	BW_SP_NAMES,		/* JSON: a space-separated list as an array (str) */
	BW_SP_INFLIGHT,		/* JSON: requests in flight now (the caller's) */
	BW_SP_CLASS_REASON,	/* JSON: the numbers behind the class */
	BW_SP_SEG_HIST,		/* JSON: requests by segment count */
	BW_SP_OPS,		/* JSON: per op ios and bytes */
	BW_SP_INFO,		/* export: the device's identity */
	BW_SP_PRESENT,		/* export: written with the exporter's own figures */
	BW_SP_HIST_SERVICE,	/* export: histograms per op */
	BW_SP_HIST_QUEUE,
	BW_SP_SOLO,		/* export: S1 per op and size class */
	BW_SP_CLASS,		/* export: the class, one series per class */
	BW_SP_SCHED,		/* export: the scheduler */
	BW_SP_STATE,		/* export: where S1 and the class come from */
	BW_SP_TUNE_ACTIONS,	/* export: decisions by action */
};

struct bw_figure {
	/* stat's table: header, width (negative: left-aligned), decimals */
	const char *col;
	signed char width, prec;
	enum bw_fig_cell cell;
	double scale;		/* the cell shows get() x scale (0: 1) */
	/* JSON: key, decimals; for a counter of every op, the key of its rate too */
	const char *json;
	enum bw_fig_json jtype;
	signed char jprec;
	const char *json_rate;
	bool virtio;		/* only where stat --virtio shows the ring buffers */
	/* export: family, type, labels and type as the docs say them */
	const char *prom;
	enum bw_prom_type ptype;
	const char *labels;	/* NULL: "device", or "device, op" for a counter of every op */
	const char *ptype_doc;	/* NULL: the type's name */
	/* What it is: the family's HELP, and every list of the docs. */
	const char *help;
	const char *col_help;	/* the table's and JSON's words where they differ */
	const char *summary;	/* analyze's summary line of the whole trace names it so */
	/* The value. */
	double (*get)(const struct bw_interval *iv);
	const char *(*str)(const struct bw_interval *iv, const struct bw_class *cls);
	double (*cum)(const struct bw_expo_dev *d);	/* export's one series per device */
	size_t op_off;		/* a counter of every op: offsetof(struct bw_op_stats) + 1 */
	bool with_fsync;	/* export's writes count the empty flush writes */
	enum bw_fig_special special;
};

extern const struct bw_figure bw_figures[];
extern const size_t bw_nfigures;

/* A counter of every op (op_off): over the interval, all ops; cumulative, one op. */
__u64 bw_fig_interval_count(const struct bw_figure *f, const struct bw_interval *iv);
__u64 bw_fig_op_count(const struct bw_figure *f, const struct bw_snap_dev *cum, int op);
/* analyze's summary of a device's whole trace: "merges N, requeues N, ...", the figures with a summary. */
void bw_fig_summary(FILE *f, const struct bw_interval *iv);
/* The row of a figure of a shape of its own. */
const struct bw_figure *bw_fig_special(enum bw_fig_special sp);
/*
 * The docs' lists: stat's columns ("stat"), the JSON keys ("json"), export's
 * per-device families ("export"), in markdown; stat's columns and the other
 * JSON keys for the man page ("man", "manjson"); the JSON keys alone, one a
 * line ("keys").  -1: no such list.
 */
int bw_figures_doc(FILE *f, const char *which);

#endif /* BLKWISE_FIGURES_H */
