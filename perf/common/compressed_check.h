// The error of a compressed all-reduce against the exact (f64) dense sum,
// element by element, with the documented bound (docs/compressed.md):
// max |error|, RMSE, relative error and the number of elements beyond the
// bound. In the token top-k mode only the kept rows are checked, and the
// bound's blocks are those of the packed kept rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/compressed_flags.h"
#include "common/perf_session.h"

namespace spccl::perf {

struct ErrorStats {
  double maxAbs = 0, sumSquares = 0, sumSquaresExact = 0;
  size_t checked = 0;
  int64_t wrong = 0;
};

// keptRows nullptr: the whole tensor of `count` elements; otherwise the
// rows (ascending token indices, flags.hidden elements each) that were
// reduced, possibly none.
// Collective (f64 all-reduces of the inputs and of the block maxima).
ErrorStats checkAgainstExact(const PerfSession& s, const CompressedFlags& f, spcclDataType_t type,
                             spcclRedOp_t op, const std::vector<unsigned char>& input,
                             const std::vector<unsigned char>& output, size_t count,
                             const std::vector<size_t>* keptRows);

}  // namespace spccl::perf
