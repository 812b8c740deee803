#include <algorithm>

#include "device_kernels/embedded_launches.cuh"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/device_codecs/accumulate_codes.h"
#include "kernels/device_codecs/decode_codes.h"
#include "kernels/device_codecs/encode_codes.h"
#include "kernels/device_reduce/reduce_inputs.h"
#include "kernels/device_rows/move_rows.h"
#include "kernels/device_sparse/extract_nonzeros.h"

namespace dcod = spccl::kernels::device_codecs;
namespace dred = spccl::kernels::device_reduce;
namespace drow = spccl::kernels::device_rows;
namespace dsp = spccl::kernels::device_sparse;

// Defined by the embedded sources, compiled into this target
// (perf/CMakeLists.txt): the very kernels of libspccl's fatbins.
extern "C" __global__ void spcclReduceInputs_f32_sum(dred::ReduceInputsArgs args);
extern "C" __global__ void spcclCountNonZeros_f32(dsp::ExtractArgs args);
extern "C" __global__ void spcclScanBlockCounts(dsp::ExtractArgs args);
extern "C" __global__ void spcclWriteNonZeros_f32(dsp::ExtractArgs args);
extern "C" __global__ void spcclZeroFill_f32(dsp::ScatterArgs args);
extern "C" __global__ void spcclScatterPairs_f32(dsp::ScatterArgs args);
extern "C" __global__ void spcclGatherRows(drow::RowsArgs args);
extern "C" __global__ void spcclScatterRows(drow::RowsArgs args);
extern "C" __global__ void spcclEncodeScales(const __grid_constant__ dcod::EncodeArgs args);
extern "C" __global__ void spcclEncodeCodes(const __grid_constant__ dcod::EncodeArgs args);
extern "C" __global__ void spcclDecodeCodes(const __grid_constant__ dcod::DecodeArgs args);
extern "C" __global__ void spcclAccumulateCodes(const __grid_constant__ dcod::AccumulateArgs args);

namespace spccl::perf::device_kernels {

namespace {

constexpr unsigned kBlockThreads = 256;

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// signedLevels() of the spec's codec and bits, as libspccl passes them.
kernels::cuda::LevelTable codecLevels(const kernels::QuantizerSpec& spec) {
  const int magnitudeBits = spec.bits - 1;
  return spec.codec == kernels::Codec::Linear
             ? kernels::cuda::levelTableOf(kernels::LinearMagnitude(magnitudeBits), spec.bits)
             : kernels::cuda::levelTableOf(kernels::PiecewiseMagnitude(magnitudeBits), spec.bits);
}

// The fields the encode, decode and accumulate arguments share: count f32
// elements coded by `spec`.
template <typename CodecArgs>
void setCodeLayout(const kernels::QuantizerSpec& spec, uint64_t count, CodecArgs* args) {
  args->count = count;
  args->blockSize = spec.blockSize;
  args->blocks = kernels::quantizedBlockCount(spec, count);
  args->bits = spec.bits;
  args->type = dcod::kElementF32;
  args->levels = codecLevels(spec);
}

}  // namespace

unsigned gridStrideBlocks(uint64_t items) {
  return static_cast<unsigned>(
      std::clamp<uint64_t>((items + kBlockThreads - 1) / kBlockThreads, 1, uint64_t{1} << 16));
}

void reduceSum(const float* const* inputs, int inputCount, float* out, uint64_t count,
               cudaStream_t stream) {
  dred::ReduceInputsArgs args{};
  for (int k = 0; k < inputCount && k < dred::kMaxInputs; ++k) args.inputs[k] = address(inputs[k]);
  args.inputCount = std::min(inputCount, dred::kMaxInputs);
  args.output = address(out);
  args.count = count;
  spcclReduceInputs_f32_sum<<<gridStrideBlocks(count), kBlockThreads, 0, stream>>>(args);
}

uint64_t extractTiles(uint64_t count) { return dsp::tilesFor(count); }

void extractNonZeros(const float* in, uint64_t count, const ExtractBuffers& buffers,
                     cudaStream_t stream) {
  dsp::ExtractArgs args{};
  args.input = address(in);
  args.count = count;
  args.blocks = dsp::tilesFor(count);
  args.blockCounts = address(buffers.blockCounts);
  args.blockSignedZeros = address(buffers.blockSignedZeros);
  args.totals = address(buffers.totals);
  args.outIndices = address(buffers.indices);
  args.outValues = address(buffers.values);
  args.capacity = buffers.capacity;
  args.indexBytes = sizeof(uint64_t);  // buffers.indices is uint64
  const auto tiles = static_cast<unsigned>(args.blocks);
  spcclCountNonZeros_f32<<<tiles, dsp::kThreads, 0, stream>>>(args);
  spcclScanBlockCounts<<<1, dsp::kScanThreads, 0, stream>>>(args);
  spcclWriteNonZeros_f32<<<tiles, dsp::kThreads, 0, stream>>>(args);
}

void zeroFillAndScatter(float* out, uint64_t count, const uint64_t* indices, const float* values,
                        uint64_t nnz, cudaStream_t stream) {
  // The bench keeps 64-bit indices (the width the spccl call uses past
  // 2^32 elements); the call's own width is dsp::indexBytesFor(count).
  const dsp::ScatterArgs args{address(out),    count, address(indices),
                              address(values), nnz,   sizeof(uint64_t)};
  spcclZeroFill_f32<<<gridStrideBlocks(count), dsp::kThreads, 0, stream>>>(args);
  if (nnz > 0) spcclScatterPairs_f32<<<gridStrideBlocks(nnz), dsp::kThreads, 0, stream>>>(args);
}

namespace {

drow::RowsArgs rowsArgsOf(const RowsBuffers& buffers) {
  const uint64_t tensor = address(buffers.tensor), packed = address(buffers.packed);
  // The word width libspccl launches with (compress/device_rows.cc).
  return drow::RowsArgs{tensor,
                        packed,
                        address(buffers.rows),
                        buffers.rowCount,
                        buffers.rowBytes,
                        buffers.tokens,
                        drow::wordBytesFor(tensor, packed, buffers.rowBytes)};
}

}  // namespace

void gatherRows(const RowsBuffers& buffers, cudaStream_t stream) {
  const drow::RowsArgs args = rowsArgsOf(buffers);
  spcclGatherRows<<<gridStrideBlocks(drow::words(args)), drow::kThreads, 0, stream>>>(args);
}

void scatterRows(const RowsBuffers& buffers, cudaStream_t stream) {
  const drow::RowsArgs args = rowsArgsOf(buffers);
  spcclScatterRows<<<gridStrideBlocks(drow::words(args)), drow::kThreads, 0, stream>>>(args);
}

void encode(const kernels::QuantizerSpec& spec, const float* in, float* residual,
            unsigned char* out, uint64_t count, cudaStream_t stream) {
  dcod::EncodeArgs args{};
  args.in = address(in);
  args.residual = address(residual);
  args.out = address(out);
  setCodeLayout(spec, count, &args);
  args.linear = spec.codec == kernels::Codec::Linear ? 1 : 0;
  args.piecewise = kernels::PiecewiseMagnitude(spec.bits - 1);
  args.linearMagnitude = kernels::LinearMagnitude(spec.bits - 1);
  spcclEncodeScales<<<gridStrideBlocks(args.blocks), dcod::kThreads, 0, stream>>>(args);
  spcclEncodeCodes<<<gridStrideBlocks(kernels::cuda::codeGroups(count)), dcod::kThreads, 0,
                     stream>>>(args);
}

void decode(const kernels::QuantizerSpec& spec, const unsigned char* encoded, float* out,
            uint64_t count, cudaStream_t stream) {
  dcod::DecodeArgs args{};
  args.encoded = address(encoded);
  args.out = address(out);
  setCodeLayout(spec, count, &args);
  spcclDecodeCodes<<<gridStrideBlocks(count), dcod::kThreads, 0, stream>>>(args);
}

void accumulate(const kernels::QuantizerSpec& spec, const float* in, const unsigned char* encoded,
                float* acc, uint64_t count, cudaStream_t stream) {
  dcod::AccumulateArgs args{};
  args.in = address(in);
  args.encoded = address(encoded);
  args.acc = address(acc);
  setCodeLayout(spec, count, &args);
  spcclAccumulateCodes<<<gridStrideBlocks(count), dcod::kThreads, 0, stream>>>(args);
}

}  // namespace spccl::perf::device_kernels
