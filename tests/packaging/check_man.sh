#!/bin/sh
# check_man.sh PAGE: the page renders with man and groff without a single
# warning, and its NAME section is what apropos/whatis will index.
set -eu
page=$1

. "$(dirname "$0")/lib.sh"
need_tools man:man-db lexgrog:man-db groff:groff-base

out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
if [ -n "$out" ]; then
	printf '%s: man warnings:\n%s\n' "$page" "$out" >&2
	exit 1
fi
out=$(groff -man -t -Tutf8 -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	printf '%s: groff warnings:\n%s\n' "$page" "$out" >&2
	exit 1
fi
name=$(basename "$page")
name=${name%.*}
if ! lexgrog "$page" | grep -q "\"$name - "; then
	echo "$page: NAME section does not parse for whatis: $(lexgrog "$page")" >&2
	exit 1
fi
echo "$page renders cleanly"
