// The sparse benchmark's own flags, on top of the shared nccl-tests ones
// (perf_options.h). The names of the library's enums it accepts and prints
// are the library's own (spcclSparseAlgorithmName, ...).
#pragma once

#include <cstdint>
#include <string>

#include "common/perf_options.h"
#include "common/sparse_workload.h"
#include "spccl.h"

namespace spccl::perf {

struct SparseOptions {
  SparseWorkloadSpec workload;
  spcclSparseAlgorithm_t algorithm = spcclSparseAuto;
  spcclSparseEncoding_t encoding = spcclEncodingAuto;
  spcclSparsePartitioner_t partitioner = spcclPartitionAuto;
  uint64_t tag = 0;      // -t; 0: each row gets its own (see sparseTagFor)
  std::string inputDir;  // --input: replay .npy files instead of generating
  // --coo: time spcclSparseAllReduceCooToCoo on the inputs' non-zeros
  // (extracted before timing), as frameworks that keep sparse gradients in
  // COO call it and as Gloo's sparse all-reduce is timed; the result is
  // densified after timing for the check.
  bool cooInterface = false;
};

// -D/--density -O/--overlap -Z/--zipf -H/--row-width -a/--algorithm
// -E/--encoding -P/--partitioner -t/--tag --input --seed --coo; the validation
// also restricts -o to the ops the sparse all-reduce has (sum, avg).
// The extension writes into *options, which must outlive the parse.
OptionExtension sparseOptionExtension(SparseOptions* options);

// The tag a row's calls carry: -t when given, else one derived from the
// row (nonzero), so every row's profile and stats are its own.
uint64_t sparseTagFor(const SparseOptions& options, size_t count, spcclDataType_t type,
                      spcclRedOp_t op);

}  // namespace spccl::perf
