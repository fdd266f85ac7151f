#!/bin/sh
# man_environment.sh SRC: the ENVIRONMENT section of pvrdma(7) documents
# exactly the PVRDMA_* variables the provider reads (getenv() or one of its
# env_*() helpers in providers/pvrdma): none is missing, none is stale.
set -eu
src=$1
. "$(dirname "$0")/lib.sh"

page=$src/man/pvrdma.7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

grep -ohE '(getenv|env_[a-z_]+)\("PVRDMA_[A-Z0-9_]+"' \
	"$src"/providers/pvrdma/*.c |
	sed -E 's/.*"(PVRDMA_[A-Z0-9_]+)"/\1/' | sort -u >"$work/read"
[ -s "$work/read" ] || fail "found no PVRDMA_* variable read in providers/pvrdma"

# The tags of the .TP paragraphs of ENVIRONMENT: the line after each .TP.
awk '/^\.SH / { in_env = ($2 == "ENVIRONMENT") ; next }
     in_env && tag { print; tag = 0; next }
     in_env && /^\.TP/ { tag = 1 }' "$page" |
	grep -oE 'PVRDMA_[A-Z0-9_]+' | sort -u >"$work/documented"

if ! diff -u "$work/read" "$work/documented" >&2; then
	fail "pvrdma(7) ENVIRONMENT (+) differs from what providers/pvrdma reads (-)"
fi
echo "pvrdma(7) documents $(tr '\n' ' ' <"$work/read")"
