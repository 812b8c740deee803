// kernels.h's f32 runs (quantizeRun, dequantizeRun, dequantizeOnto,
// quantizeDecode, reduceQuantizeDecode) in every fast variant: on a contiguous run and on rows, the
// same bytes and bits as the plain codecs on the run's elements packed (token_rows.h's gather), for
// both codecs, rows shorter and longer than a segment and a block, blocks across rows, zeros and a
// NaN; and output runs that zero the rows they skip (F32Run::tokens), written chunk by chunk as a
// schedule writes them.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/kernels.h"

namespace spccl::kernels {
namespace {

std::vector<uint32_t> bitsOf(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<uint32_t>(v[i]);
  return out;
}

struct Case {
  size_t tokens, hidden, block;
  Codec codec;
  int bits;
};

// A Gaussian tensor of c.tokens rows of c.hidden values (one -0.0, and a
// NaN in the larger ones when withNan), about half its rows (the last one
// always), and those rows packed one after another.
struct RowsInput {
  std::vector<float> tensor;
  std::vector<size_t> rows;
  std::vector<float> packed;
};

RowsInput rowsInput(const Case& c, std::mt19937_64& rng, bool withNan) {
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  RowsInput in;
  in.tensor.resize(c.tokens * c.hidden);
  for (float& v : in.tensor) v = gauss(rng);
  in.tensor[c.hidden] = -0.0f;
  if (withNan && c.tokens > 20) in.tensor[17 * c.hidden + 3] = NAN;
  for (size_t t = 0; t < c.tokens; ++t)
    if (rng() % 2 == 0 || t + 1 == c.tokens) in.rows.push_back(t);
  for (size_t r : in.rows)
    in.packed.insert(in.packed.end(), in.tensor.begin() + r * c.hidden,
                     in.tensor.begin() + (r + 1) * c.hidden);
  return in;
}

std::vector<std::pair<std::string, KernelTable>> fastTables() {
  std::vector<std::pair<std::string, KernelTable>> tables;
  for (CodecVariant v : kCodecVariants) {
    if (!codecVariantSupported(v)) continue;
    KernelTable t{};
    addCompressionKernels(t, v);
    tables.emplace_back(codecVariantName(v), t);
  }
  return tables;
}

TEST(CompressF32Runs, RunsEqualThePackedElements) {
  std::mt19937_64 rng(29);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const Case cases[] = {{40, 100, 256, Codec::Piecewise, 4},
                        {9, 5000, 256, Codec::Piecewise, 3},
                        {30, 64, 7, Codec::Linear, 5},
                        {12, 1, 4, Codec::Piecewise, 8},
                        {6, 4099, 1000, Codec::Linear, 2}};
  for (const Case& c : cases) {
    const QuantizerSpec spec{c.codec, c.bits, c.block};
    RowsInput input = rowsInput(c, rng, true);
    std::vector<float>& tensor = input.tensor;
    std::vector<size_t>& rows = input.rows;
    std::vector<float>& packed = input.packed;
    // A run starting inside a row, as a schedule's chunk does.
    const size_t first = c.hidden / 2, count = packed.size() - first;
    const F32Run onRows{tensor.data(), rows.data(), c.hidden, first};
    const F32Run contiguous{packed.data(), nullptr, 0, first};
    const float* elements = packed.data() + first;
    for (const auto& [name, fast] : fastTables()) {
      const std::string where = name + " hidden " + std::to_string(c.hidden) + " block " +
                                std::to_string(c.block) + " bits " + std::to_string(c.bits);
      std::vector<unsigned char> want(quantizedBytes(spec, count));
      fast.quantize[spcclFloat32](spec, elements, count, want.data(), nullptr);
      for (const F32Run& run : {onRows, contiguous}) {
        std::vector<unsigned char> got(want.size());
        fast.quantizeRun(spec, run, count, got.data());
        ASSERT_EQ(got, want) << where << " quantizeRun";
      }
      // dequantizeRun: the decoding lands on the run's elements only.
      std::vector<float> decoded(count);
      fast.dequantize[spcclFloat32](spec, want.data(), count, decoded.data());
      std::vector<float> wantTensor(tensor);
      for (size_t i = 0; i < count; ++i) {
        const size_t at = first + i;
        wantTensor[rows[at / c.hidden] * c.hidden + at % c.hidden] = decoded[i];
      }
      std::vector<float> gotTensor(tensor);
      fast.dequantizeRun(spec, want.data(), count,
                         F32Run{gotTensor.data(), rows.data(), c.hidden, first});
      ASSERT_EQ(bitsOf(gotTensor), bitsOf(wantTensor)) << where << " dequantizeRun";
      // dequantizeOnto: zeroed, widenAdd, dequantizeAdd, bit for bit.
      std::vector<float> wantAcc(count + 1, 0.0f);
      fast.widenAdd[spcclFloat32](wantAcc.data(), elements, count);
      fast.dequantizeAdd(spec, want.data(), count, wantAcc.data());
      for (const F32Run& run : {onRows, contiguous}) {
        std::vector<float> gotAcc(count + 1, 0.0f);  // nothing is written past count
        fast.dequantizeOnto(spec, want.data(), count, run, gotAcc.data());
        ASSERT_EQ(bitsOf(gotAcc), bitsOf(wantAcc)) << where << " dequantizeOnto";
      }
      // quantizeDecode: quantize's bytes (and residual), dequantizeRun's bits.
      for (bool feedback : {false, true}) {
        std::vector<float> wantResidual(count), gotResidual(count);
        for (size_t i = 0; i < count; ++i) wantResidual[i] = gotResidual[i] = 0.01f * gauss(rng);
        std::vector<unsigned char> wantCodes(want.size()), gotCodes(want.size());
        fast.quantize[spcclFloat32](spec, elements, count, wantCodes.data(),
                                    feedback ? wantResidual.data() : nullptr);
        std::vector<float> wantOut(tensor), gotOut(tensor);
        const F32Run wantRun{wantOut.data(), rows.data(), c.hidden, first};
        fast.dequantizeRun(spec, wantCodes.data(), count, wantRun);
        fast.quantizeDecode(spec, elements, count, gotCodes.data(),
                            feedback ? gotResidual.data() : nullptr,
                            F32Run{gotOut.data(), rows.data(), c.hidden, first});
        ASSERT_EQ(gotCodes, wantCodes) << where << " quantizeDecode feedback " << feedback;
        ASSERT_EQ(bitsOf(gotOut), bitsOf(wantOut))
            << where << " quantizeDecode feedback " << feedback;
        ASSERT_EQ(bitsOf(gotResidual), bitsOf(wantResidual)) << where << " quantizeDecode";
        std::vector<float> flat(count);
        fast.quantizeDecode(spec, elements, count, gotCodes.data(), nullptr,
                            F32Run{flat.data(), nullptr, 0, 0});
        std::vector<float> flatWant(count);
        fast.dequantize[spcclFloat32](spec, gotCodes.data(), count, flatWant.data());
        ASSERT_EQ(bitsOf(flat), bitsOf(flatWant)) << where << " quantizeDecode contiguous";
      }
    }
  }
}

// reduceQuantizeDecode: the bytes, residuals and output bits of the passes
// it replaces (an accumulator zeroed, widenAdd-ed with the input,
// dequantizeAdd-ed with each decoding in order, divided, then
// quantizeDecode-d), on rows and contiguous, with 0 to 3 decodings, sum
// and avg, with and without feedback; blocks across segments (1000, 5000)
// make the kernel sum a block's rest twice.
TEST(CompressF32Runs, ReduceQuantizeDecodeEqualsTheAccumulatorPasses) {
  std::mt19937_64 rng(37);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const Case cases[] = {{40, 100, 256, Codec::Piecewise, 4},
                        {9, 5000, 256, Codec::Piecewise, 3},
                        {30, 64, 7, Codec::Linear, 5},
                        {6, 4099, 1000, Codec::Linear, 2},
                        {5, 3000, 5000, Codec::Piecewise, 8}};
  for (const Case& c : cases) {
    const QuantizerSpec spec{c.codec, c.bits, c.block};
    RowsInput input = rowsInput(c, rng, false);
    std::vector<float>& tensor = input.tensor;
    std::vector<size_t>& rows = input.rows;
    std::vector<float>& packed = input.packed;
    const size_t first = c.hidden / 2, count = packed.size() - first;
    const float* elements = packed.data() + first;
    for (const auto& [name, fast] : fastTables()) {
      std::vector<std::vector<unsigned char>> codes(3);
      for (auto& encoded : codes) {
        std::vector<float> peer(count);
        for (float& v : peer) v = gauss(rng);
        encoded.resize(quantizedBytes(spec, count));
        fast.quantize[spcclFloat32](spec, peer.data(), count, encoded.data(), nullptr);
      }
      const unsigned char* decodings[3] = {codes[0].data(), codes[1].data(), codes[2].data()};
      for (int k = 0; k <= 3; ++k)
        for (int divisor : {0, 3})
          for (bool feedback : {false, true})
            for (bool onRows : {true, false}) {
              const std::string where = name + " block " + std::to_string(c.block) + " decodings " +
                                        std::to_string(k) + " divisor " + std::to_string(divisor) +
                                        " feedback " + std::to_string(feedback) + " rows " +
                                        std::to_string(onRows);
              std::vector<float> wantResidual(count), gotResidual(count);
              for (size_t i = 0; i < count; ++i)
                wantResidual[i] = gotResidual[i] = 0.01f * gauss(rng);
              std::vector<float> acc(count, 0.0f);
              fast.widenAdd[spcclFloat32](acc.data(), elements, count);
              for (int d = 0; d < k; ++d) fast.dequantizeAdd(spec, decodings[d], count, acc.data());
              if (divisor != 0)
                for (float& v : acc) v = divideTruncating(v, divisor);
              std::vector<unsigned char> wantCodes(codes[0].size()), gotCodes(codes[0].size());
              std::vector<float> wantOut(tensor), gotOut(tensor);
              fast.quantizeDecode(spec, acc.data(), count, wantCodes.data(),
                                  feedback ? wantResidual.data() : nullptr,
                                  F32Run{wantOut.data(), rows.data(), c.hidden, first});
              const F32Run base = onRows ? F32Run{tensor.data(), rows.data(), c.hidden, first}
                                         : F32Run{packed.data(), nullptr, 0, first};
              fast.reduceQuantizeDecode(spec, base, decodings, k, divisor, count, gotCodes.data(),
                                        feedback ? gotResidual.data() : nullptr,
                                        F32Run{gotOut.data(), rows.data(), c.hidden, first});
              ASSERT_EQ(gotCodes, wantCodes) << where;
              ASSERT_EQ(bitsOf(gotOut), bitsOf(wantOut)) << where;
              ASSERT_EQ(bitsOf(gotResidual), bitsOf(wantResidual)) << where;
            }
    }
  }
}

// An output run with tokens set, through the cache or streamed: the kept
// rows get the decoding, every other row +0, whichever chunk of the run
// writes next to it; chunks
// split mid-row and at a row's start, the first and last rows pruned or
// kept, runs of adjacent kept rows.
TEST(CompressF32Runs, OutputRunsZeroThePrunedRows) {
  std::mt19937_64 rng(31);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const QuantizerSpec spec{Codec::Piecewise, 4, 256};
  struct Rows {
    size_t tokens, hidden;
    std::vector<size_t> kept;
  };
  const Rows cases[] = {{12, 100, {0, 1, 2, 5, 6, 9}},
                        {12, 100, {3, 4, 11}},
                        {10, 1500, {1, 2, 3, 4, 7}},
                        {9, 64, {8}},
                        {9, 64, {0}}};
  for (const Rows& c : cases) {
    std::vector<float> tensor(c.tokens * c.hidden);
    for (float& v : tensor) v = gauss(rng) + 10.0f;  // never +0
    std::vector<float> packed;
    for (size_t r : c.kept)
      packed.insert(packed.end(), tensor.begin() + r * c.hidden,
                    tensor.begin() + (r + 1) * c.hidden);
    const size_t count = packed.size();
    // Chunk bounds: a row's start, mid-row, the end.
    std::vector<size_t> bounds{0};
    if (c.kept.size() > 1) bounds.push_back(c.hidden);
    bounds.push_back(count - c.hidden / 3);
    bounds.push_back(count);
    for (const auto& [name, fast] : fastTables())
      for (bool stream : {false, true}) {
        std::vector<float> want(tensor.size(), 0.0f), got(tensor);
        for (size_t k = 0; k + 1 < bounds.size(); ++k) {
          const size_t begin = bounds[k], len = bounds[k + 1] - begin;
          std::vector<unsigned char> codes(quantizedBytes(spec, len));
          fast.quantize[spcclFloat32](spec, packed.data() + begin, len, codes.data(), nullptr);
          std::vector<float> decoded(len);
          fast.dequantize[spcclFloat32](spec, codes.data(), len, decoded.data());
          for (size_t i = 0; i < len; ++i) {
            const size_t at = begin + i;
            want[c.kept[at / c.hidden] * c.hidden + at % c.hidden] = decoded[i];
          }
          const F32Run out{got.data(), c.kept.data(), c.hidden, begin,
                           c.tokens,   c.kept.size(), stream};
          if (k == 1)  // the owned chunk of a schedule
            fast.quantizeDecode(spec, packed.data() + begin, len, codes.data(), nullptr, out);
          else
            fast.dequantizeRun(spec, codes.data(), len, out);
        }
        ASSERT_EQ(bitsOf(got), bitsOf(want))
            << name << " stream " << stream << " tokens " << c.tokens << " hidden " << c.hidden
            << " kept " << c.kept.size();
      }
  }
}

}  // namespace
}  // namespace spccl::kernels
