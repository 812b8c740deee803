// Reading a run of kept rows (token top-k, f32_runs.h) a segment at a time
// costs about twice what the same bytes cost contiguous: every 4 KiB row
// starts a stream of its own, which the hardware prefetcher picks up only
// after a few misses and drops at the row's end (a 32 MiB read as 8192
// random rows of 4 KiB: 3.2-3.5 ms against 1.4-1.6 ms contiguous, one
// thread; huge pages change neither). Prefetching the next segment's lines
// into L2 while the current one is copied, one line per line copied, takes
// a third off (2.1-2.2 ms); the same into L1, or all of a segment's lines
// at once, does not help (docs/perf/compressed_cpu.md).
#pragma once

#include <cstddef>

#include "kernels/cpu/compress/magnitude_lanes.h"  // SPCCL_ALWAYS_INLINE
#include "kernels/kernels.h"

namespace spccl::kernels::codec_passes {

// Walks run elements [from, end) a cache line (16 floats) at a time and
// prefetches each into L2; next() is one step, a no-op past end.
class RowLinePrefetcher {
 public:
  RowLinePrefetcher(const F32Run& run, size_t from, size_t end)
      : run_(run),
        left_(end > from ? end - from : 0),
        row_((run.first + from) / run.hidden),
        column_((run.first + from) % run.hidden) {}

  // The first element of the line next() prefetches; done() past end.
  bool done() const { return left_ == 0; }
  const float* address() const { return run_.base + run_.rows[row_] * run_.hidden + column_; }

  SPCCL_ALWAYS_INLINE void next() {
    if (left_ == 0) return;
    // Locality 2: into L2 (prefetcht1), not L1, whose fill buffers the
    // copy itself needs.
    __builtin_prefetch(address(), 0, 2);
    const size_t step = left_ < kLineFloats ? left_ : kLineFloats;
    left_ -= step;
    column_ += step;
    while (column_ >= run_.hidden && left_ != 0) {
      column_ -= run_.hidden;
      ++row_;
    }
  }

  static constexpr size_t kLineFloats = 16;

 private:
  const F32Run& run_;
  size_t left_;
  size_t row_;
  size_t column_;
};

}  // namespace spccl::kernels::codec_passes
