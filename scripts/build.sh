#!/bin/sh
# Configures and builds one tree: scripts/build.sh BUILD_DIR [cmake args...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
[ -f "$dir/build.ninja" ] || cmake -S "$top" -B "$dir" -G Ninja "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
