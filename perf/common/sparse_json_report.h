// -J FILE for the sparse benchmark: the dense report's envelope and option
// keys, plus the sparse options, and per row everything in the table plus
// the planner's reason and per-candidate predictions.
#pragma once

#include <string>
#include <vector>

#include "common/json_report.h"
#include "common/sparse_options.h"
#include "common/sparse_result.h"

namespace spccl::perf {

// False (after saying why on stderr) when the file cannot be written.
bool writeSparseJsonReport(const std::string& path, const PerfOptions& options,
                           const SparseOptions& sparseOptions, const RunSummary& summary,
                           const std::vector<SparseSizeResult>& rows);

}  // namespace spccl::perf
