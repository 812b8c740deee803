#include "coll/device_reduce_launch.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "device/cuda_driver.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/device_reduce/reduce_inputs.h"
#include "kernels/device_reduce/reduce_inputs_image.h"

namespace spccl {

namespace {

namespace dr = kernels::device_reduce;

const device::EmbeddedModule& reduceModule() {
  static const device::EmbeddedModule module(dr::reduceInputsImage(), dr::reduceInputsImageBytes());
  return module;
}

std::string kernelName(spcclDataType_t type, spcclRedOp_t op) {
  return std::string(dr::kKernelPrefix) + dr::typeSuffix(type) + "_" + dr::opSuffix(op);
}

bool hasKernel(spcclDataType_t type, spcclRedOp_t op) {
  return dr::typeSuffix(type) != nullptr && dr::opSuffix(op) != nullptr;
}

}  // namespace

bool deviceAllReduceAvailable() {
  // The driver as the call's memory-kind checks found it: no new lookup
  // per call where none is loaded (cuda_driver.h).
  return reduceModule().present() && device::cudaDriverFoundSoFar() != nullptr &&
         device::cudaModuleDriver() != nullptr && device::cudaIpcDriver() != nullptr;
}

spcclResult_t prepareDeviceAllReduce(spcclDataType_t datatype, spcclRedOp_t op) {
  if (!hasKernel(datatype, op))
    return SPCCL_FAIL(spcclInvalidArgument, "no device-resident kernel for type %d, op %d",
                      static_cast<int>(datatype), static_cast<int>(op));
  device::CuFunction function = nullptr;
  return reduceModule().function(kernelName(datatype, op), &function);
}

bool deviceReduceLoaded(spcclDataType_t datatype, spcclRedOp_t op) {
  device::CuFunction function = nullptr;
  return hasKernel(datatype, op) &&
         reduceModule().function(kernelName(datatype, op), &function) == spcclSuccess;
}

bool readInFirstLaunch(size_t index) { return index < static_cast<size_t>(dr::kMaxInputs); }

spcclResult_t launchDeviceReduce(const char* name, spcclDataType_t datatype, spcclRedOp_t op,
                                 const std::vector<device::CuDevicePtr>& inputs,
                                 device::CuDevicePtr out, size_t count, device::CuStream stream) {
  const std::string kernel = kernelName(datatype, op);
  device::CuFunction function = nullptr;
  SPCCL_CHECK(reduceModule().function(kernel, &function));
  constexpr unsigned kThreads = 256;
  const size_t blocks = std::clamp<size_t>((count + kThreads - 1) / kThreads, 1, size_t{1} << 16);
  size_t next = 0;
  for (int launches = 0; next < inputs.size(); ++launches) {
    dr::ReduceInputsArgs args{};
    int k = 0;
    if (next > 0) args.inputs[k++] = out;
    while (k < dr::kMaxInputs && next < inputs.size()) args.inputs[k++] = inputs[next++];
    args.inputCount = k;
    args.output = out;
    args.count = count;
    args.divisor =
        next == inputs.size() && op == spcclAvg ? static_cast<int32_t>(inputs.size()) : 0;
    void* params[] = {&args};
    const device::CuResult result = device::cudaModuleDriver()->launchKernel(
        function, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1, 0, stream, params, nullptr);
    if (result != 0) {
      // The launches queued before this one read the peers' buffers and
      // write `out`: they must be done before the call returns (and the
      // peers leave the barrier), so the failure waits for them.
      if (launches > 0) (void)device::cudaDriver()->streamSynchronize(stream);
      return SPCCL_FAIL(spcclSystemError, "%s: kernel %s: %s", name, kernel.c_str(),
                        device::describeCuError("cuLaunchKernel", result).c_str());
    }
  }
  return spcclSuccess;
}

}  // namespace spccl
