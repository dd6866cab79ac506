// SPDX-License-Identifier: GPL-2.0
/*
 * Prints a list of the docs from the figure table (user/model/figures.c):
 *   figdoc stat     stat's columns
 *   figdoc json     the JSON keys of a device
 *   figdoc export   export's per-device families
 * tools/sync-docs.sh writes them between <!-- figures: WHICH --> and
 * <!-- end figures --> markers; tests/test_docs.sh checks them.
 */
#include <stdio.h>
#include <string.h>
#include "model/figures.h"

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "stat") && strcmp(argv[1], "json") &&
			  strcmp(argv[1], "export"))) {
		fprintf(stderr, "usage: figdoc stat|json|export\n");
		return 2;
	}
	bw_figures_doc(stdout, argv[1]);
	return 0;
}
