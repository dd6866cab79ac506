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

# The lists of figures, from the figure table (user/model/figures.c):
#   <!-- figures: stat|json|export -->
#   ...
#   <!-- end figures -->
make -s build/figdoc
for page in docs/*.md dashboards/README.md; do
	grep -q '^<!-- figures: ' "$page" || continue
	awk '
		/^<!-- figures: [a-z]* -->$/ {
			print
			cmd = "build/figdoc " $3
			while ((cmd | getline l) > 0) print l
			close(cmd)
			skip = 1; next
		}
		/^<!-- end figures -->$/ { skip = 0 }
		!skip' "$page" >"$page.new"
	mv "$page.new" "$page"
done
