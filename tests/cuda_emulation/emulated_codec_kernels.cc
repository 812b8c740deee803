#include "emulated_codec_kernels.h"

#include <cstring>
#include <initializer_list>
#include <utility>

#include "kernels/cuda/quantize_groups.h"
#include "kernels/device_codecs/accumulate_codes.h"
#include "kernels/device_codecs/decode_codes.h"
#include "kernels/device_codecs/encode_codes.h"
#include "kernels/kernels.h"

namespace spccl::emulation {

namespace {

namespace dc = spccl::kernels::device_codecs;

// What a GPU would refuse: a bit width, block size or element type the
// kernels do not have.
bool validShape(int32_t bits, uint64_t blockSize, int32_t type) {
  return bits >= 2 && bits <= 8 && blockSize != 0 && type >= dc::kElementF32 &&
         type <= dc::kElementBf16;
}

// A kernel's one parameter, and the bytes of an encoding of its count
// elements (the codec does not change the size); false: a shape the
// kernels do not have.
template <typename Args>
bool readArgs(void** params, Args* args, size_t* encoded) {
  std::memcpy(args, params[0], sizeof(Args));
  if (!validShape(args->bits, args->blockSize, args->type)) return false;
  const spccl::kernels::QuantizerSpec spec{spccl::kernels::Codec::Piecewise, args->bits,
                                           static_cast<size_t>(args->blockSize)};
  *encoded = spccl::kernels::quantizedBytes(spec, args->count);
  return true;
}

// Every (address, bytes) range with bytes lies in memory the stream's
// device reaches, as a GPU would fault (here at launch).
CuResult reachAll(std::initializer_list<std::pair<uint64_t, uint64_t>> ranges,
                  const KernelAccess& access) {
  for (const auto& [address, bytes] : ranges)
    if (bytes > 0)
      if (const CuResult r = access(address, bytes); r != kSuccess) return r;
  return kSuccess;
}

}  // namespace

bool isCodecKernel(const std::string& name) {
  return name == dc::kDecodeKernel || name == dc::kEncodeScalesKernel ||
         name == dc::kEncodeCodesKernel || name == dc::kAccumulateKernel;
}

namespace {

// The encode kernels: the input's elements, the residual (where there is
// one) and the encoding lie in memory the stream's device reaches; the
// work is every block's scale or every group's codes.
CuResult prepareEncode(const std::string& name, void** params, const KernelAccess& access,
                       std::function<void()>* work) {
  dc::EncodeArgs args{};
  size_t encoded = 0;
  if (!readArgs(params, &args, &encoded)) return kInvalidValue;
  if (const CuResult r =
          reachAll({{args.in, args.count * dc::elementBytes(args.type)},
                    {args.residual, args.residual != 0 ? args.count * sizeof(float) : 0},
                    {args.out, encoded}},
                   access);
      r != kSuccess)
    return r;
  if (name == dc::kEncodeScalesKernel)
    *work = [args] {
      for (uint64_t b = 0; b < args.blocks; ++b) dc::encodeScale(args, b);
    };
  else
    *work = [args] {
      for (uint64_t g = 0; g < spccl::kernels::cuda::codeGroups(args.count); ++g)
        dc::encodeGroup(args, g);
    };
  return kSuccess;
}

// The ring's accumulate kernel: the input (where given), the codes (where
// given) and the f32 accumulator lie in memory the stream's device reaches.
CuResult prepareAccumulate(void** params, const KernelAccess& access, std::function<void()>* work) {
  dc::AccumulateArgs args{};
  size_t encoded = 0;
  if (!readArgs(params, &args, &encoded)) return kInvalidValue;
  if (const CuResult r =
          reachAll({{args.in, args.in != 0 ? args.count * dc::elementBytes(args.type) : 0},
                    {args.encoded, args.encoded != 0 ? encoded : 0},
                    {args.acc, args.count * sizeof(float)}},
                   access);
      r != kSuccess)
    return r;
  *work = [args] {
    for (uint64_t i = 0; i < args.count; ++i) dc::accumulateOne(args, i);
  };
  return kSuccess;
}

}  // namespace

CuResult prepareCodecKernel(const std::string& name, unsigned /*gridX*/, unsigned blockX,
                            void** params, const KernelAccess& access,
                            std::function<void()>* work) {
  if (!isCodecKernel(name) || params == nullptr || blockX != dc::kThreads) return kInvalidValue;
  if (name == dc::kAccumulateKernel) return prepareAccumulate(params, access, work);
  if (name != dc::kDecodeKernel) return prepareEncode(name, params, access, work);
  dc::DecodeArgs args{};
  size_t encoded = 0;
  if (!readArgs(params, &args, &encoded)) return kInvalidValue;
  if (const CuResult r = reachAll(
          {{args.encoded, encoded}, {args.out, args.count * dc::elementBytes(args.type)}}, access);
      r != kSuccess)
    return r;
  *work = [args] {
    for (uint64_t i = 0; i < args.count; ++i) dc::decodeOne(args, i);
  };
  return kSuccess;
}

}  // namespace spccl::emulation
