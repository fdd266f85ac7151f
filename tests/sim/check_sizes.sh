#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# No function over 120 lines and no source file over 800 lines under the
# given directories. A table is data, not a function: its initializer's
# brace does not open a line, so it is not counted.
#
#   check_sizes.sh TOP DIR... [-- EXCEPTION...]
#
# DIRs are relative to TOP. An EXCEPTION (DIR/FILE or DIR/FILE:FUNCTION)
# is one known to be over and being cut; an exception no longer over
# fails too, so that the list only shrinks.
set -eu
MAX_FUNC=120
MAX_FILE=800

top=$1
shift
dirs=
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
	dirs="$dirs $1"
	shift
done
[ "$#" -gt 0 ] && shift
exceptions=$*

cd "$top"
# One line each: WHAT LINES. A function counts from its opening brace to
# its closing one; its name is the identifier before the first "(" of
# its signature.
over=$(find $dirs -name '*.[ch]' | LC_ALL=C sort | while read -r f; do
	n=$(wc -l <"$f")
	[ "$n" -le "$MAX_FILE" ] || echo "$f $n"
	awk -v f="$f" -v max="$MAX_FUNC" '
		/^$/ || /^}/ { sig = "" }
		/^[A-Za-z_].*\(/ && sig == "" { sig = $0 }
		/^\{/ { start = NR; name = sig; sub(/\(.*/, "", name)
			sub(/.*[ *]/, "", name); next }
		/^}/ && start { if (NR - start + 1 > max)
				print f ":" name " " NR - start + 1
			start = 0 }
	' "$f"
done)

status=0
while read -r what n; do
	[ -n "$what" ] || continue
	case " $exceptions " in
	*" $what "*) echo "known, being cut: $what ($n lines)" ;;
	*) echo "too long: $what ($n lines)"; status=1 ;;
	esac
done <<EOT
$over
EOT
for e in $exceptions; do
	case "
$over" in
	*"
$e "*) ;;
	*) echo "no longer over: drop the exception $e"; status=1 ;;
	esac
done
exit "$status"
