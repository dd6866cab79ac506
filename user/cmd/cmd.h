/* SPDX-License-Identifier: GPL-2.0 */
/* The subcommands, as user/cmd/main.c dispatches them. */
#ifndef BLKWISE_CMD_H
#define BLKWISE_CMD_H

int cmd_stat(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_analyze(int argc, char **argv);

#endif /* BLKWISE_CMD_H */
