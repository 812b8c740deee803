#include "routing.h"

namespace spccl::nccl {

size_t elementSize(int datatype) {
  // ncclDataType_t and spcclDataType_t share their values 0..9.
  if (datatype < 0 || datatype >= static_cast<int>(spcclNumTypes)) return 0;
  return spcclTypeSize(static_cast<spcclDataType_t>(datatype));
}

namespace {

bool isFloat(int datatype) {
  return datatype == ncclFloat16 || datatype == ncclFloat32 || datatype == ncclFloat64 ||
         datatype == ncclBfloat16;
}

// spcclCompressedAllReduce's types.
bool compressible(int datatype) {
  return datatype == ncclFloat16 || datatype == ncclFloat32 || datatype == ncclBfloat16;
}

}  // namespace

Route decideRoute(const Settings& settings, const CallShape& call, bool inGroup) {
  const bool forward = settings.mode == Mode::Forward;
  const bool forwardDevice = forward && call.deviceBuffers;
  auto dense = [&](Reason reason) {
    if (forwardDevice) return Route{Target::Nccl, Reason::DeviceBuffer};
    return Route{forward ? Target::Nccl : Target::SpcclDense, reason};
  };
  if (!call.allReduce) return dense(Reason::NotAllReduce);
  if (elementSize(call.datatype) == 0) return dense(Reason::NoSpcclType);
  if (call.nranks < 2) return dense(Reason::SingleRank);
  if (call.op != ncclSum && call.op != ncclAvg) return dense(Reason::OpNotSumAvg);
  if (!isFloat(call.datatype)) return dense(Reason::NotFloat);
  // Small calls: the sparse call's agreement round costs more than it can
  // save. Count and type are the same on every rank, so is this test.
  if (call.bytes < settings.minBytes) return dense(Reason::BelowThreshold);
  if (settings.compress.enabled && compressible(call.datatype))
    return Route{Target::SpcclCompressed, Reason::None};
  if (!settings.sparse) return dense(Reason::SparseOff);
  if (!forwardDevice) return Route{Target::SpcclSparse, Reason::None};
  // The density probe blocks for an exchange with the other ranks, which
  // a thread driving several ranks in one group cannot wait for.
  if (settings.deviceDensity <= 0) return Route{Target::Nccl, Reason::DeviceBuffer};
  if (inGroup) return Route{Target::Nccl, Reason::DeviceInGroup};
  return Route{Target::SpcclSparse, Reason::None, true};
}

Route routeByDensity(const Settings& settings, const Route& route, double agreedDensity) {
  if (!route.needsDensity) return route;
  if (agreedDensity <= settings.deviceDensity) return Route{Target::SpcclSparse, Reason::None};
  return Route{Target::Nccl, Reason::DeviceDense};
}

namespace {

const char* reasonText(Reason reason) {
  switch (reason) {
    case Reason::None:
    case Reason::NotAllReduce:
      return "";
    case Reason::SingleRank:
      return " (single rank)";
    case Reason::NoSpcclType:
      return " (type without a spccl twin)";
    case Reason::NotFloat:
      return " (not a float type)";
    case Reason::OpNotSumAvg:
      return " (op not sum or avg)";
    case Reason::BelowThreshold:
      return " (below SPCCL_INTERPOSE_MIN_BYTES)";
    case Reason::SparseOff:
      return " (SPCCL_NCCL_SPARSE=0)";
    case Reason::DeviceBuffer:
      return " (device buffers)";
    case Reason::DeviceDense:
      return " (device buffers, denser than SPCCL_NCCL_DEVICE_DENSITY)";
    case Reason::DeviceInGroup:
      return " (device buffers in a group)";
  }
  return "";
}

}  // namespace

std::string pathName(const Route& route, const CompressSetting& compress) {
  switch (route.target) {
    case Target::SpcclSparse:
      return "spccl sparse";
    case Target::SpcclCompressed:
      return "spccl compressed " + describe(compress);
    case Target::SpcclDense:
      return std::string("spccl dense") + reasonText(route.reason);
    case Target::Nccl:
      return std::string("nccl") + reasonText(route.reason);
  }
  return "?";
}

const char* sparsePathName(spcclSparseAlgorithm_t chosen) {
  switch (chosen) {
    case spcclSparseBalancedParallelism:
      return "spccl sparse: bp (balanced parallelism)";
    case spcclSparseHierarchical:
      return "spccl sparse: hc (hierarchical)";
    case spcclSparseAllGather:
      return "spccl sparse: ag (all-gather of COO)";
    case spcclSparseBlock:
      return "spccl sparse: block";
    default:
      return "spccl sparse call, planner chose dense ring";
  }
}

}  // namespace spccl::nccl
