#!/bin/sh
# Rewrites the options block of each docs/COMMAND.md from `blkwise COMMAND
# --help`, whose text is user/cmd/options.c's.  tests/test_docs.sh fails when a
# page and the program differ; run this (after make) to bring them together.
#   <!-- options: blkwise COMMAND --help -->
#   ```
#   ...
#   ```
#   <!-- end options -->
set -eu
cd "$(dirname "$0")/.."
for page in docs/*.md; do
	cmd=$(sed -n 's/^<!-- options: blkwise \([a-z]*\) --help -->$/\1/p' "$page")
	[ -n "$cmd" ] || continue
	./blkwise "$cmd" --help >"$page.help"
	awk -v help="$page.help" '
		/^<!-- options: blkwise [a-z]* --help -->$/ {
			print; print "```"
			while ((getline l < help) > 0) print l
			print "```"; skip = 1; next
		}
		/^<!-- end options -->$/ { skip = 0 }
		!skip' "$page" >"$page.new"
	mv "$page.new" "$page"
	rm -f "$page.help"
done
