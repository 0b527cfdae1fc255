#!/usr/bin/env bash
# Installs roost from a build tree into a scratch prefix, then builds and runs a consumer twice:
# with find_package(roost CONFIG) and with pkg-config.
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# A compiler whose default standard is older than C++20 (clang++ 14's is C++14): the target must bring it.
cmake -S "$src/tests/install" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="-std=gnu++14" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
c++ -O2 "$src/tests/install/main.cpp" $(pkg-config --cflags roost) $(pkg-config --libs roost) -o "$work/pc-consumer"
"$work/pc-consumer"
echo "install: find_package and pkg-config consumers both ran"
