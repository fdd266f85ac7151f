# SPDX-License-Identifier: BSD-2-Clause
# Cross-building the provider for 64-bit Arm on Debian:
#   cmake -DCMAKE_TOOLCHAIN_FILE=scripts/toolchain-aarch64-linux-gnu.cmake
# with gcc-aarch64-linux-gnu and libibverbs-dev:arm64 installed
# (dpkg --add-architecture arm64). The sim is x86-64 only and is left out.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# libibverbs for arm64 from its multiarch directory, never the build
# machine's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
