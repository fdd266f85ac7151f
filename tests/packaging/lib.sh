# Shared by the packaging tests (sourced, POSIX sh).

SKIP=77

fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

skip()
{
	echo "SKIP: $*" >&2
	exit $SKIP
}

multiarch()
{
	dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
		gcc -print-multiarch
}

# need_tools "cmd:package ..." -- installs the packages of missing commands
# with apt-get when we are root (as in CI), skips the test otherwise.
need_tools()
{
	missing=""
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 ||
			missing="$missing ${pair#*:}"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		skip "missing packages:$missing"
	fi
	echo "installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null ||
		fail "apt-get install$missing"
}

# copy_tree SRC DEST -- the source tree as a fresh checkout would have it
# plus files not committed yet, without build directories or .git.
copy_tree()
{
	rm -rf "$2"
	mkdir -p "$2"
	if git -C "$1" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$1" ls-files -z -co --exclude-standard |
			(cd "$1" && xargs -0 tar -cf - --) | tar -C "$2" -xf -
	else
		tar -C "$1" --exclude='./build*' --exclude=./.git -cf - . |
			tar -C "$2" -xf -
	fi
}

# same_list WHAT EXPECTED_FILE ACTUAL_FILE -- both sorted, compared.
same_list()
{
	sort -o "$2" "$2"
	sort -o "$3" "$3"
	if ! diff -u "$2" "$3" >&2; then
		fail "$1: contents differ from the expected layout (-expected +actual)"
	fi
	echo "$1: layout as expected"
}

# show_log FILE -- the errors of a failed build and how it ended.
show_log()
{
	grep -E -A3 'error|FAILED|CMake Error' "$1" | head -60 >&2 || true
	echo "--- last lines of $1:" >&2
	tail -8 "$1" >&2
}
