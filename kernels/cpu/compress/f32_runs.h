// kernels.h's F32Run for the fast codecs (codec_passes.h): a source that
// reads a run a segment at a time, and sinks that write a decoding to a run
// or add it onto one. A contiguous run is read and written in place; a run
// of rows is gathered into, or scattered from, the segment's f32 scratch,
// which stays in L1: the codecs' loops then see contiguous floats, so the
// bytes and values are those of the rows packed first, without the pass
// over the whole tensor that packing them costs.
#pragma once

#include <algorithm>
#include <cstring>

#include "kernels/cpu/compress/codec_passes.h"
#include "kernels/cpu/compress/row_prefetch.h"
#include "kernels/cpu/compress/streaming_stores.h"
#include "kernels/kernels.h"

namespace spccl::kernels::codec_passes {

// Calls piece(tensorElement, runOffset, n, keptRow) for the pieces of
// elements [begin, begin + n) of a run of rows, keptRow the index in
// run.rows of a piece's first row. Adjacent kept rows make one piece (at
// 50 % kept, half the rows have a kept neighbour): fewer, longer copies.
template <typename Piece>
SPCCL_ALWAYS_INLINE void forEachRowPiece(const F32Run& run, size_t begin, size_t n,
                                         const Piece& piece) {
  for (size_t done = 0; done < n;) {
    const size_t at = run.first + begin + done;
    const size_t firstRow = at / run.hidden, column = at % run.hidden;
    size_t row = firstRow;
    size_t len = std::min(n - done, run.hidden - column);
    while (done + len < n && run.rows[row + 1] == run.rows[row] + 1) {
      ++row;
      len += std::min(n - done - len, run.hidden);
    }
    piece(run.rows[firstRow] * run.hidden + column, done, len, firstRow);
    done += len;
  }
}

// Elements [begin, begin + n) of the run: in place, or gathered into
// scratch. A run of rows whose length is given (count) also prefetches the
// next n elements into L2 as it copies, a line per line (row_prefetch.h).
inline const float* runElements(const F32Run& run, size_t begin, size_t n, float* scratch,
                                size_t count = 0) {
  if (run.rows == nullptr) return run.base + run.first + begin;
  const size_t ahead = begin + n < count ? std::min(count, begin + 2 * n) : begin + n;
  RowLinePrefetcher prefetch(run, begin + n, ahead);
  forEachRowPiece(run, begin, n, [&](size_t tensor, size_t offset, size_t len, size_t) {
    constexpr size_t kLine = RowLinePrefetcher::kLineFloats;
    const float* from = run.base + tensor;
    float* to = scratch + offset;
    size_t j = 0;
    for (; j + kLine <= len; j += kLine) {
      prefetch.next();
      std::memcpy(to + j, from + j, kLine * sizeof(float));
    }
    std::memcpy(to + j, from + j, (len - j) * sizeof(float));
  });
  return scratch;
}

// quantize's input: a run of count elements, no error feedback.
struct RunSource {
  static constexpr bool kFeedback = false;
  F32Run run;
  size_t count;
  float* residual = nullptr;  // unused (kFeedback)

  SPCCL_ALWAYS_INLINE Float32Conversion::Inputs inputs(size_t begin, size_t n,
                                                       float* scratch) const {
    return {runElements(run, begin, n, scratch, count)};
  }
  template <typename Inputs>
  SPCCL_ALWAYS_INLINE float value(const Inputs& x, size_t, size_t j) const {
    return x[j];
  }
};

// The rows an output run of kept rows skips (F32Run::tokens), zeroed by
// the writes next to them: the pruned rows before kept row j with j's
// first element (run element `at`), those after the last kept row with
// its last element (a segment ending at run element `end`). Each is
// written once, between the kept rows around it, in row order.
SPCCL_ALWAYS_INLINE void zeroGapBefore(const F32Run& run, size_t at, size_t keptRow) {
  if (at % run.hidden != 0) return;
  const size_t from = keptRow == 0 ? 0 : run.rows[keptRow - 1] + 1;
  writeFloats(run.base + from * run.hidden, nullptr, (run.rows[keptRow] - from) * run.hidden,
              run.stream);
}
SPCCL_ALWAYS_INLINE void zeroTailAfter(const F32Run& run, size_t end) {
  if (end != run.kept * run.hidden) return;
  const size_t from = run.rows[run.kept - 1] + 1;
  writeFloats(run.base + from * run.hidden, nullptr, (run.tokens - from) * run.hidden, run.stream);
}

// The decoding stored to a run: in place, or staged in scratch and
// scattered to the rows when the segment is done (zeroing the pruned rows
// between them where the run asks for it, streamed where it asks for it).
struct RunStoreSink {
  struct Outputs {
    float* staged;
    const F32Run* run;  // nullptr: staged is the run itself
    size_t begin;
    SPCCL_ALWAYS_INLINE void put(size_t j, float v) const { staged[j] = v; }
    void finish(size_t n) const {
      if (run == nullptr) return;
      const size_t start = run->first + begin;
      forEachRowPiece(*run, begin, n, [&](size_t tensor, size_t offset, size_t len, size_t row) {
        if (run->tokens != 0) zeroGapBefore(*run, start + offset, row);
        writeFloats(run->base + tensor, staged + offset, len, run->stream);
      });
      if (run->tokens != 0) zeroTailAfter(*run, start + n);
      if (run->stream) fenceStreamedFloats();
    }
  };
  F32Run run;
  SPCCL_ALWAYS_INLINE Outputs outputs(size_t begin, size_t, float* scratch) const {
    if (run.rows == nullptr) return {run.base + run.first + begin, nullptr, begin};
    return {scratch, &run, begin};
  }
};

// acc = (0 + the run) + the decoding: loadInputChunk's zeroing and widening
// and the first dequantizeAdd in one pass, with their roundings (0 + x
// turns -0 into +0, as the zeroed accumulator did).
struct OntoSink {
  struct Outputs {
    const float* base;
    float* acc;
    SPCCL_ALWAYS_INLINE void put(size_t j, float v) const { acc[j] = (0.0f + base[j]) + v; }
    SPCCL_ALWAYS_INLINE void finish(size_t) const {}
  };
  F32Run base;
  float* acc;
  SPCCL_ALWAYS_INLINE Outputs outputs(size_t begin, size_t n, float* scratch) const {
    return {runElements(base, begin, n, scratch), acc + begin};
  }
};

// kernels.h's quantizeDecode: f32 in, with or without feedback, the
// decoding to a run.
template <typename Packer>
SPCCL_ALWAYS_INLINE void quantizeDecode(const QuantizerSpec& spec, const float* in, size_t count,
                                        unsigned char* out, float* residual,
                                        const F32Run& decoded) {
  if (residual)
    quantizeSource<Packer>(spec, Source<Float32Conversion, true>{in, residual}, count, out,
                           RunStoreSink{decoded});
  else
    quantizeSource<Packer>(spec, Source<Float32Conversion, false>{in, nullptr}, count, out,
                           RunStoreSink{decoded});
}

}  // namespace spccl::kernels::codec_passes
