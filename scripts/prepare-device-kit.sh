#!/usr/bin/env bash
# Fills .devkit/ (git-ignored) with what a bare lent GPU machine lacks for
# tests/gpu/run_on_gpu.sh: its image has the CUDA toolkit, CMake, ninja and
# PyTorch, but none of Debian's -dev packages. Run here (Debian, with
# scripts/install-deps.sh done), then carry ".devkit" to the device:
#
#   .devkit/googletest/          GoogleTest 1.12 sources (googletest/, googlemock/), built by
#                                cmake/SpcclFeatures.cmake when find_package(GTest) fails
#   .devkit/openssl/include/     OpenSSL headers, with the arch-specific configuration.h and
#                                opensslconf.h folded in
#   .devkit/openssl/lib/         libcrypto.a (position-independent: it links into libspccl.so)
#                                for -DOPENSSL_ROOT_DIR=.devkit/openssl -DOPENSSL_USE_STATIC_LIBS=ON
#   .devkit/nccl/include/nccl.h  the nccl.h (and nccl_device/) libspccl_nccl.so is built against
#                                on the device
#
# Usage: scripts/prepare-device-kit.sh [--check]   (--check also links libcrypto.a into a
#        test shared library and prints the kit's size)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kit=$root/.devkit
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

gtest_src=${SPCCL_GTEST_SRC:-/usr/src/googletest}
openssl_inc=/usr/include/openssl
openssl_arch_inc=/usr/include/$multiarch/openssl
libcrypto_a=/usr/lib/$multiarch/libcrypto.a
nccl_h=""
for candidate in /usr/local/cuda/include/nccl.h /usr/include/nccl.h; do
  [[ -z $nccl_h && -f $candidate ]] && nccl_h=$candidate
done

for need in "$gtest_src/googletest/CMakeLists.txt" "$openssl_inc/opensslv.h" "$libcrypto_a"; do
  [[ -e $need ]] || {
    echo "prepare-device-kit: $need is missing (scripts/install-deps.sh: libgtest-dev, libssl-dev)" >&2
    exit 1
  }
done

rm -rf "$kit"
mkdir -p "$kit/openssl/include/openssl" "$kit/openssl/lib"

# GoogleTest: sources and CMake files only (no docs, samples or its own tests).
for part in googletest googlemock; do
  mkdir -p "$kit/googletest/$part"
  cp -r "$gtest_src/$part/CMakeLists.txt" "$gtest_src/$part/cmake" "$gtest_src/$part/include" \
    "$gtest_src/$part/src" "$kit/googletest/$part/"
done
cp "$gtest_src/CMakeLists.txt" "$kit/googletest/"

# OpenSSL: headers (the arch-specific ones next to the rest, where <openssl/...> finds them).
cp -L "$openssl_inc"/*.h "$kit/openssl/include/openssl/"
if [[ -d $openssl_arch_inc ]]; then
  cp -L "$openssl_arch_inc"/*.h "$kit/openssl/include/openssl/"
fi
cp -L "$libcrypto_a" "$kit/openssl/lib/libcrypto.a"
strip --strip-debug "$kit/openssl/lib/libcrypto.a" 2>/dev/null || true

if [[ -n $nccl_h ]]; then
  mkdir -p "$kit/nccl/include"
  cp -L "$nccl_h" "$kit/nccl/include/nccl.h"
  # NCCL's device API headers (2.28 on): the host functions torch imports.
  nccl_dir=$(dirname "$nccl_h")
  if [[ -d $nccl_dir/nccl_device ]]; then
    cp -rL "$nccl_dir/nccl_device" "$kit/nccl/include/"
    [[ -f $nccl_dir/nccl_device.h ]] && cp -L "$nccl_dir/nccl_device.h" "$kit/nccl/include/"
  fi
fi

cat >"$kit/README" <<EOF
Made by scripts/prepare-device-kit.sh on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC').
googletest: $(grep -m1 -oP 'GOOGLETEST_VERSION \K[0-9.]+' "$gtest_src/CMakeLists.txt" || echo '?')
openssl: $(grep -m1 -oP '# *define OPENSSL_FULL_VERSION_STR "\K[^"]+' "$openssl_inc/opensslv.h" || echo '?') (static libcrypto.a)
nccl.h: ${nccl_h:-none}
EOF

if [[ ${1:-} == --check ]]; then
  # libcrypto.a must be position-independent to link into libspccl.so.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cat >"$tmp/t.c" <<'EOF'
#include <openssl/evp.h>
#include <openssl/hmac.h>
int spccl_kit_check(unsigned char *out) {
  unsigned int n = 0;
  return HMAC(EVP_sha256(), "k", 1, (const unsigned char *)"m", 1, out, &n) != 0 ? (int)n : -1;
}
EOF
  gcc -fPIC -shared -o "$tmp/libt.so" "$tmp/t.c" -I"$kit/openssl/include" \
    -Wl,--no-undefined -Wl,--exclude-libs,ALL "$kit/openssl/lib/libcrypto.a" -ldl -pthread
  if readelf -d "$tmp/libt.so" | grep -q 'NEEDED.*libcrypto'; then
    echo "prepare-device-kit: the test library still needs libcrypto.so" >&2
    exit 1
  fi
  echo "prepare-device-kit: libcrypto.a links into a shared library (PIC)"
fi
cat "$kit/README"
echo "prepare-device-kit: $(du -sh "$kit" | cut -f1) in $kit (carry: .devkit)"
