// SPDX-License-Identifier: GPL-2.0
/*
 * Prints a list of the docs from the figure table (user/model/figures.c):
 *   figdoc stat     stat's columns (markdown)
 *   figdoc json     the JSON keys of a device (markdown)
 *   figdoc export   export's per-device families (markdown)
 *   figdoc man      stat's columns for the man page (roff)
 *   figdoc manjson  the other JSON keys for the man page (roff)
 *   figdoc keys     the JSON keys, one a line (tests/agree.py is held to them)
 * tools/sync-docs.sh writes them between <!-- figures: WHICH --> and
 * <!-- end figures --> markers (in the man page, .\" figures: man and
 * .\" end figures); tests/test_docs.sh checks them.
 */
#include <stdio.h>
#include "model/figures.h"

int main(int argc, char **argv)
{
	if (argc != 2 || bw_figures_doc(stdout, argv[1])) {
		fprintf(stderr, "usage: figdoc stat|json|export|man|manjson|keys\n");
		return 2;
	}
	return 0;
}
