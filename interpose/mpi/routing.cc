#include "routing.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace spccl::mpi {

namespace {

// The rows of the sparse all-reduce's schedules on sets, labelled with the
// library's own names (spcclSparseAlgorithmName) and a gloss for readers
// of the report. Dense has no row here: SparsePlannerDense.
struct SparseRow {
  Path path;
  spcclSparseAlgorithm_t algorithm;
  const char* gloss;  // after the name, for readers of the report
};
constexpr SparseRow kSparseRows[] = {
    {Path::SparseBalancedParallelism, spcclSparseBalancedParallelism, " (balanced parallelism)"},
    {Path::SparseHierarchical, spcclSparseHierarchical, " (hierarchical)"},
    {Path::SparseAllGather, spcclSparseAllGather, " (all-gather of COO)"},
    {Path::SparseBlock, spcclSparseBlock, ""},
};

// "spccl sparse: hc (hierarchical)", built once so that pathName can hand
// out the pointers; plain chars, as the report may print while the
// process exits.
const char* sparseRowLabel(Path path) {
  struct Labels {
    char text[std::size(kSparseRows)][64];
  };
  static const Labels labels = [] {
    Labels all{};
    for (size_t i = 0; i < std::size(kSparseRows); ++i) {
      const SparseRow& row = kSparseRows[i];
      std::snprintf(all.text[i], sizeof(all.text[i]), "spccl sparse: %s%s",
                    spcclSparseAlgorithmName(row.algorithm), row.gloss);
    }
    return all;
  }();
  for (size_t i = 0; i < std::size(kSparseRows); ++i)
    if (kSparseRows[i].path == path) return labels.text[i];
  return "?";
}

}  // namespace

bool parsePolicy(const char* text, Policy* policy) {
  static const struct {
    const char* name;
    Policy policy;
  } kPolicies[] = {{"off", Policy::Off},
                   {"dense", Policy::Dense},
                   {"sparse", Policy::Sparse},
                   {"auto", Policy::Auto}};
  for (const auto& p : kPolicies) {
    if (std::strcmp(text, p.name) == 0) {
      *policy = p.policy;
      return true;
    }
  }
  return false;
}

const char* policyName(Policy policy) {
  switch (policy) {
    case Policy::Off:
      return "off";
    case Policy::Dense:
      return "dense";
    case Policy::Sparse:
      return "sparse";
    case Policy::Auto:
      return "auto";
  }
  return "?";
}

const char* pathName(Path path) {
  switch (path) {
    case Path::SparseBalancedParallelism:
    case Path::SparseHierarchical:
    case Path::SparseAllGather:
    case Path::SparseBlock:
      return sparseRowLabel(path);
    case Path::SparsePlannerDense:
      return "spccl sparse call, planner chose dense ring";
    case Path::SpcclDense:
      return "spccl dense all-reduce";
    case Path::MpiPolicyOff:
      return "mpi: SPCCL_INTERPOSE=off";
    case Path::MpiEmpty:
      return "mpi: count 0";
    case Path::MpiBelowThreshold:
      return "mpi: below SPCCL_INTERPOSE_MIN_BYTES";
    case Path::MpiOpNotSum:
      return "mpi: op is not MPI_SUM";
    case Path::MpiTypeNotRouted:
      return "mpi: datatype not routed (derived, pair or no spccl twin)";
    case Path::MpiIntercomm:
      return "mpi: intercommunicator";
    case Path::MpiSingleRank:
      return "mpi: single-rank communicator";
    case Path::MpiShadowUnavailable:
      return "mpi: spccl unavailable on this communicator";
    case Path::MpiNested:
      return "mpi: nested call";
    case Path::Count:
      break;
  }
  return "?";
}

Path sparsePath(spcclSparseAlgorithm_t chosen) {
  for (const SparseRow& row : kSparseRows)
    if (row.algorithm == chosen) return row.path;
  return Path::SparsePlannerDense;
}

namespace {

// spccl's integer type of the C integer type T (MPI_LONG is 4 or 8 bytes
// depending on the platform, so the table asks the compiler).
template <typename T>
constexpr spcclDataType_t integerTypeOf() {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 1 || sizeof(T) == 4 || sizeof(T) == 8));
  if constexpr (sizeof(T) == 1) return std::is_signed_v<T> ? spcclInt8 : spcclUint8;
  if constexpr (sizeof(T) == 4) return std::is_signed_v<T> ? spcclInt32 : spcclUint32;
  return std::is_signed_v<T> ? spcclInt64 : spcclUint64;
}

struct TypeEntry {
  MPI_Datatype mpi;
  spcclDataType_t spccl;
};

// Predefined handles only: a derived type (even a dup of MPI_FLOAT) is a
// different handle and is not found, which is what keeps it on MPI.
// MPI_SHORT and other 2-byte integers have no spccl twin.
const TypeEntry kTypes[] = {
    {MPI_FLOAT, spcclFloat32},
    {MPI_DOUBLE, spcclFloat64},
    {MPI_INT, integerTypeOf<int>()},
    {MPI_UNSIGNED, integerTypeOf<unsigned>()},
    {MPI_LONG, integerTypeOf<long>()},
    {MPI_UNSIGNED_LONG, integerTypeOf<unsigned long>()},
    {MPI_LONG_LONG, integerTypeOf<long long>()},
    {MPI_LONG_LONG_INT, integerTypeOf<long long>()},
    {MPI_UNSIGNED_LONG_LONG, integerTypeOf<unsigned long long>()},
    {MPI_SIGNED_CHAR, integerTypeOf<signed char>()},
    {MPI_UNSIGNED_CHAR, integerTypeOf<unsigned char>()},
    {MPI_INT8_T, spcclInt8},
    {MPI_UINT8_T, spcclUint8},
    {MPI_INT32_T, spcclInt32},
    {MPI_UINT32_T, spcclUint32},
    {MPI_INT64_T, spcclInt64},
    {MPI_UINT64_T, spcclUint64},
#ifdef MPIX_C_FLOAT16
    {MPIX_C_FLOAT16, spcclFloat16},
#endif
};

}  // namespace

bool spcclTypeOf(MPI_Datatype datatype, spcclDataType_t* type) {
  for (const TypeEntry& entry : kTypes) {
    if (entry.mpi == datatype) {
      *type = entry.spccl;
      return true;
    }
  }
  return false;
}

Route decideRoute(Policy policy, size_t minBytes, const CallShape& call) {
  Route route;
  auto stay = [&](Path reason) {
    route.target = Route::Target::Mpi;
    route.mpiReason = reason;
    return route;
  };
  if (policy == Policy::Off) return stay(Path::MpiPolicyOff);
  if (call.intercomm) return stay(Path::MpiIntercomm);
  if (!call.typeRouted) return stay(Path::MpiTypeNotRouted);
  if (!call.opIsSum) return stay(Path::MpiOpNotSum);
  if (call.commSize < 2) return stay(Path::MpiSingleRank);
  if (call.count <= 0) return stay(Path::MpiEmpty);  // MPI reports a negative count
  switch (policy) {
    case Policy::Dense:
      route.target = Route::Target::SpcclDense;
      break;
    case Policy::Sparse:
      route.target = Route::Target::SpcclSparse;
      break;
    default:
      // Small messages: MPI's latency beats the sparse call's agreement
      // round. count and type are the same on every rank, so is this test.
      if (call.bytes < minBytes) return stay(Path::MpiBelowThreshold);
      route.target = Route::Target::SpcclSparse;
      break;
  }
  return route;
}

}  // namespace spccl::mpi
