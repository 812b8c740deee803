#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds a consumer with
# find_package(spccl) and one with pkg-config, and runs one on 2 ranks.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
prefix=$(mktemp -d /tmp/spccl-install.XXXXXX)
work=$(mktemp -d /tmp/spccl-consumer.XXXXXX)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -L "$prefix/lib/libspccl.so"
readelf -d "$prefix/lib/libspccl.so" | grep -q 'SONAME.*libspccl.so.0'
cmake -S "$source/tests/install/consumer" -B "$work/cmake" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -std=c99 -o "$work/pc-consumer" \
  "$source/examples/allreduce.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs spccl)
LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/spcclrun" -n 2 -- "$work/cmake/consumer"
LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/spcclrun" -n 2 -- "$work/pc-consumer"
echo "install check: find_package and pkg-config consumers built and ran"
