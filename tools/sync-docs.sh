#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Writes every part of the manual that has one source from it (after make):
# the options of docs/COMMAND.md and the man page (user/cmd/optdocs.c), the
# lists of figures (user/model/figures.c), the measured tables and the
# values quoted from docs/results/ (tools/docgen.py says which markers).
# tests/test_docs.sh fails when a page and its source differ.
set -eu
cd "$(dirname "$0")/.."
make -s blkwise build/figdoc build/optdoc
exec python3 tools/docgen.py write
