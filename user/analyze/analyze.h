/* SPDX-License-Identifier: GPL-2.0 */
/* analyze's input (our trace or a blktrace capture) and its extra outputs. */
#ifndef BLKWISE_ANALYZE_H
#define BLKWISE_ANALYZE_H

#include "model/replay.h"
#include "model/whatif.h"
#include "sys/sys.h"

/* input.c: a path to an event source. */
struct bw_input {
	FILE *f;
	struct bw_treader r;
	struct bw_btreader *bt;
	FILE *files[BW_BT_MAX_FILES];
	char *names[BW_BT_MAX_FILES];
	int nfiles;
	char err[512];
};
/* 0, or an exit code after saying why. */
int bw_input_open(struct bw_input *in, const char *path, struct bw_tsource *src);
void bw_input_close(struct bw_input *in);

/* report.c: --html, --perfetto and --what-if-tune, fed as the replay goes. */
struct bw_report;
int bw_report_open(struct bw_report **out, const char *html, const char *perfetto,
		   bool what_if, const struct bw_tsource *src, const char *trace);
void bw_report_tick(struct bw_report *r, const struct bw_replay_tick *t);
void bw_report_req(struct bw_report *r, const struct bw_replay_req *q);
/* Finish the files; 0, or -1 after saying which failed. */
int bw_report_close(struct bw_report *r, const struct bw_replay *rp);
/* The what-if replay (user/model/whatif.h), or NULL without --what-if-tune. */
struct bw_whatif *bw_report_whatif(const struct bw_report *r);

/* html.c: --html's page (trace: the file's name, for its title). */
struct bw_html;
int bw_html_open(struct bw_html **out, const char *path, const char *trace);
void bw_html_tick(struct bw_html *h, const struct bw_replay_tick *t);
void bw_html_req(struct bw_html *h, const struct bw_replay_req *q);
/* Writes the page (unless rp is NULL), closes it; 0, or -1 after saying why. */
int bw_html_close(struct bw_html *h, const struct bw_replay *rp, const struct bw_whatif *wi,
		  const struct bw_tsource *src, const char *path);

#endif /* BLKWISE_ANALYZE_H */
