/* SPDX-License-Identifier: GPL-2.0 */
/* analyze --what-if-tune: tune's policy over a replay's intervals (user/model/whatif.c, pure). */
#ifndef BLKWISE_WHATIF_H
#define BLKWISE_WHATIF_H

#include "model/replay.h"
#include "model/policy.h"

struct bw_whatif;
struct bw_whatif *bw_whatif_new(void);
void bw_whatif_free(struct bw_whatif *r);
/* Whether r replays anything (NULL: no --what-if-tune). */
bool bw_whatif_on(const struct bw_whatif *r);
void bw_whatif_tick(struct bw_whatif *r, const struct bw_replay_tick *t);
void bw_whatif_print(const struct bw_whatif *r, FILE *f);
/* The decisions: how many (0 when off), one as a JSON object (-1: an empty
 * one, for a CSV header), all as "what_if". */
int bw_whatif_count(const struct bw_whatif *r);
void bw_whatif_decision_json(const struct bw_whatif *r, struct bw_json *j, int i);
void bw_whatif_json(const struct bw_whatif *r, struct bw_json *j);
/* Decision i: when, on which device (its name). */
const struct bw_policy_decision *bw_whatif_decision(const struct bw_whatif *r, int i, double *t,
						  const char **dev);

#endif /* BLKWISE_WHATIF_H */
