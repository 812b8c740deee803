// Writing f32 runs with non-temporal (streaming) stores: for an output far
// larger than the caches (token top-k's 64 MiB tensors), a plain store
// first reads every line it writes (write-allocate), so half of the
// output's memory traffic is reads of bytes about to be overwritten;
// streaming stores write whole lines without reading them. Small outputs
// keep plain stores: their next reader finds them in cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace spccl::kernels::codec_passes {

// to[i] = from[i] (from == nullptr: +0), i < n; plain stores up to a 16-byte
// boundary and after the last whole vector.
inline void streamFloats(float* to, const float* from, size_t n) {
#if defined(__SSE2__)
  size_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(to + i) & 15) != 0; ++i)
    to[i] = from ? from[i] : 0.0f;
  // A cache line (16 floats) per iteration where there are that many: the
  // write-combining buffer fills and leaves whole.
  if (from != nullptr) {
    for (; i + 16 <= n; i += 16)
      for (size_t k = 0; k < 16; k += 4) _mm_stream_ps(to + i + k, _mm_loadu_ps(from + i + k));
    for (; i + 4 <= n; i += 4) _mm_stream_ps(to + i, _mm_loadu_ps(from + i));
  } else {
    const __m128 zero = _mm_setzero_ps();
    for (; i + 16 <= n; i += 16)
      for (size_t k = 0; k < 16; k += 4) _mm_stream_ps(to + i + k, zero);
    for (; i + 4 <= n; i += 4) _mm_stream_ps(to + i, zero);
  }
  for (; i < n; ++i) to[i] = from ? from[i] : 0.0f;
#else
  if (from != nullptr)
    std::memcpy(to, from, n * sizeof(float));
  else
    std::memset(to, 0, n * sizeof(float));
#endif
}

// Orders the streaming stores before any later store (they are weakly
// ordered): a reader told the output is ready sees it.
inline void fenceStreamedFloats() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// to[i] = from[i] (nullptr: +0), streamed or through the cache.
inline void writeFloats(float* to, const float* from, size_t n, bool stream) {
  if (stream) {
    streamFloats(to, from, n);
  } else if (from != nullptr) {
    std::memcpy(to, from, n * sizeof(float));
  } else {
    std::memset(to, 0, n * sizeof(float));
  }
}

}  // namespace spccl::kernels::codec_passes
