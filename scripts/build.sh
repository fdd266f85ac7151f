#!/bin/sh
# Configures and builds one tree: scripts/build.sh BUILD_DIR [cmake args...]
# A tree already configured is configured again only when cmake arguments
# are given, which then change its cache.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
if [ ! -f "$dir/build.ninja" ]; then
	cmake -S "$top" -B "$dir" -G Ninja "$@" >/dev/null
elif [ "$#" -gt 0 ]; then
	cmake -S "$top" -B "$dir" "$@" >/dev/null
fi
cmake --build "$dir" -j"$(nproc)"
