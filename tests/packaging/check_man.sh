#!/bin/sh
# check_man.sh PAGE [NAME...]: the page renders with man and groff without a
# single warning, and its NAME section gives whatis/apropos (and man, through
# mandb's index) each NAME, by default the page's own name. A page of
# functions names the functions.
set -eu
page=$1
shift

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
if [ $# -eq 0 ]; then
	name=$(basename "$page")
	set -- "${name%.*}"
fi
for name in "$@"; do
	if ! lexgrog "$page" | grep -q "\"$name - "; then
		echo "$page: NAME section does not give '$name' to whatis:" \
			"$(lexgrog "$page")" >&2
		exit 1
	fi
done
echo "$page renders cleanly"
