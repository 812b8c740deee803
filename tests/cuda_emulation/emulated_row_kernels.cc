#include "emulated_row_kernels.h"

#include <cstring>

#include "kernels/device_rows/move_rows.h"

namespace spccl::emulation {

namespace {

namespace dr = spccl::kernels::device_rows;

}  // namespace

bool isRowKernel(const std::string& name) {
  return name == dr::kGatherKernel || name == dr::kScatterKernel || name == dr::kZeroKernel;
}

uint64_t rowKernelWordBytes(void** params) {
  dr::RowsArgs args{};
  std::memcpy(&args, params[0], sizeof(args));
  return args.wordBytes;
}

CuResult prepareRowKernel(const std::string& name, unsigned /*gridX*/, unsigned blockX,
                          void** params, const KernelAccess& access, std::function<void()>* work) {
  if (!isRowKernel(name) || params == nullptr || blockX != dr::kThreads) return kInvalidValue;
  dr::RowsArgs args{};
  std::memcpy(&args, params[0], sizeof(args));
  const bool zero = name == dr::kZeroKernel;
  const uint64_t packedBytes = args.rowCount * args.rowBytes;
  // Every range the kernel reads or writes lies in memory the stream's
  // device reaches, as a GPU would fault (here at launch).
  const std::pair<uint64_t, uint64_t> ranges[] = {{args.tensor, args.tokens * args.rowBytes},
                                                  {args.rows, args.rowCount * sizeof(uint64_t)},
                                                  {args.packed, zero ? 0 : packedBytes}};
  for (const auto& [address, bytes] : ranges)
    if (bytes > 0)
      if (const CuResult r = access(address, bytes); r != kSuccess) return r;
  // A word the GPU could not load or store whole: misaligned, as the
  // launch's word width promised otherwise.
  const uint64_t w = args.wordBytes;
  if ((w != 1 && w != sizeof(uint32_t) && w != sizeof(dr::Word16)) ||
      (args.tensor | (zero ? 0 : args.packed) | args.rowBytes) % w != 0)
    return kInvalidValue;
  const dr::Move move = zero                        ? dr::Move::Zero
                        : name == dr::kGatherKernel ? dr::Move::Gather
                                                    : dr::Move::Scatter;
  *work = [move, args] {
    for (uint64_t i = 0; i < dr::words(args); ++i) dr::moveUnit(move, args, i);
  };
  return kSuccess;
}

}  // namespace spccl::emulation
