#include "compress/schedule_parts.h"

#include <cstring>

#include "base/check.h"

namespace spccl::compress {
namespace {

const unsigned char* elementAt(const void* base, spcclDataType_t type, size_t index) {
  return static_cast<const unsigned char*>(base) + index * spcclTypeSize(type);
}

float* residualAt(const CompressedCall& call, size_t index) {
  return call.residual ? call.residual + index : nullptr;
}

// Elements [begin, ...) of the call in an f32 buffer (sendbuff or
// recvbuff), as a kernels.h run: contiguous, or on the call's rows.
kernels::F32Run runAt(const CompressedCall& call, const void* buffer, size_t begin) {
  return kernels::F32Run{static_cast<float*>(const_cast<void*>(buffer)), call.rows, call.hidden,
                         begin};
}

// Output tensors of at least this many bytes are written past the caches
// (streaming_stores.h): larger than a core's share of the last-level cache,
// they are out of it by the time anyone reads them.
constexpr size_t kStreamOutputBytes = size_t{8} << 20;

// recvbuff's run, which zeroes the pruned rows where the call asks for it.
kernels::F32Run outputRunAt(const CompressedCall& call, size_t begin) {
  kernels::F32Run run = runAt(call, call.recvbuff, begin);
  if (call.rows != nullptr && call.zeroPrunedOf != 0) {
    run.tokens = call.zeroPrunedOf;
    run.kept = call.count / call.hidden;
    run.stream = run.tokens * call.hidden * sizeof(float) >= kStreamOutputBytes;
  }
  return run;
}

}  // namespace

std::vector<size_t> encodedOffsets(const CompressedCall& call, const ChunkLayout& layout) {
  std::vector<size_t> offsets(static_cast<size_t>(layout.nranks) + 1, 0);
  for (int c = 0; c < layout.nranks; ++c)
    offsets[c + 1] = offsets[c] + layout.encodedBytes(call.spec, c);
  return offsets;
}

void encodeInput(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                 unsigned char* out) {
  if (call.rows != nullptr) {
    ctx.kernels().quantizeRun(call.spec, runAt(call, call.sendbuff, begin), length, out);
    return;
  }
  ctx.kernels().quantize[call.type](call.spec, elementAt(call.sendbuff, call.type, begin), length,
                                    out, residualAt(call, begin));
}

void encodePartialSum(const CollContext& ctx, const CompressedCall& call, size_t begin,
                      size_t length, const float* acc, unsigned char* out) {
  ctx.kernels().quantize[spcclFloat32](call.spec, acc, length, out, residualAt(call, begin));
}

void finishOwnedSum(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    int divisor, float* acc, unsigned char* out) {
  // Avg divides before quantizing, so the scale (and the error) is the
  // average's; f32 division, as the dense kernels' divide().
  if (divisor != 0) ctx.kernels().divide[spcclFloat32](acc, length, divisor);
  if (call.type != spcclFloat32) {
    encodePartialSum(ctx, call, begin, length, acc, out);
    decodeIntoOutput(ctx, call, begin, length, out);
    return;
  }
  ctx.kernels().quantizeDecode(call.spec, acc, length, out, residualAt(call, begin),
                               outputRunAt(call, begin));
}

void reduceOwnedSum(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    const std::vector<const unsigned char*>& decodings, unsigned char* out,
                    float* decoded) {
  // Avg divides before quantizing, as finishOwnedSum.
  const int divisor = call.op == spcclAvg ? ctx.nranks() : 0;
  const kernels::F32Run output =
      decoded != nullptr ? kernels::F32Run{decoded} : outputRunAt(call, begin);
  ctx.kernels().reduceQuantizeDecode(call.spec, runAt(call, call.sendbuff, begin), decodings.data(),
                                     static_cast<int>(decodings.size()), divisor, length, out,
                                     residualAt(call, begin), output);
}

void loadInputChunk(const CollContext& ctx, const CompressedCall& call, size_t begin, size_t length,
                    float* acc) {
  std::memset(acc, 0, length * sizeof(float));
  ctx.kernels().widenAdd[call.type](acc, elementAt(call.sendbuff, call.type, begin), length);
}

void sumInputAndDecoding(const CollContext& ctx, const CompressedCall& call, size_t begin,
                         size_t length, const unsigned char* codes, float* acc) {
  if (call.type == spcclFloat32) {
    ctx.kernels().dequantizeOnto(call.spec, codes, length, runAt(call, call.sendbuff, begin), acc);
    return;
  }
  loadInputChunk(ctx, call, begin, length, acc);
  ctx.kernels().dequantizeAdd(call.spec, codes, length, acc);
}

void decodeIntoOutput(const CollContext& ctx, const CompressedCall& call, size_t begin,
                      size_t length, const unsigned char* codes) {
  if (call.rows != nullptr) {
    ctx.kernels().dequantizeRun(call.spec, codes, length, outputRunAt(call, begin));
    return;
  }
  void* out = static_cast<unsigned char*>(call.recvbuff) + begin * spcclTypeSize(call.type);
  ctx.kernels().dequantize[call.type](call.spec, codes, length, out);
}

spcclResult_t checkEncodedSize(const CollContext& ctx, const CompressedCall& call, int peer,
                               size_t received, size_t expected) {
  if (received == expected) return spcclSuccess;
  // The configurations were agreed before any code moved (configuration
  // agreement), so the peer broke the protocol: spcclRemoteError, which
  // breaks the communicator and tells the other ranks (runCollective).
  return SPCCL_FAIL(spcclRemoteError,
                    "%s #%llu: rank %d sent %zu bytes of codes where %zu were expected (the "
                    "ranks agreed on the compression configuration; different spccl versions?)",
                    call.name, static_cast<unsigned long long>(ctx.seq()), peer, received,
                    expected);
}

}  // namespace spccl::compress
