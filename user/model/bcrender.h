/* SPDX-License-Identifier: GPL-2.0 */
/* The bio alloc cache's figures in stat's text and JSON (user/model/bcrender.c, pure). */
#ifndef BLKWISE_BCRENDER_H
#define BLKWISE_BCRENDER_H

#include "model/model.h"

const char *bw_bc_method_name(enum bw_bc_method m);
double bw_bc_hit_ratio(const struct bw_bc_stats *s);
const char *bw_bc_field_name(enum bw_bc_field f);
/* Whether method m measures field f (tracepoint: the queued counts only). */
bool bw_bc_field_shown(enum bw_bc_method m, enum bw_bc_field f);
void bw_bc_render_json(struct bw_json *j, const struct bw_bc_snap *b);
void bw_bc_render_text(FILE *f, const struct bw_bc_snap *b);

#endif /* BLKWISE_BCRENDER_H */
