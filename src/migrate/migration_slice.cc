#include "migrate/migration_slice.h"

#include <algorithm>

namespace spccl::migrate {

ElementRange migrationSlice(int rank, int straggler, int nranks, size_t total) {
  if (nranks < 2 || rank == straggler) return {0, 0};
  const int renumbered = relativeRank(rank, straggler, nranks);  // r' in 1 .. e-1
  return evenBlock(total, nranks - 1, renumbered - 1);
}

ElementRange helperSlice(int rank, int migrator, std::span<const int> helpers, size_t total) {
  const auto found = std::find(helpers.begin(), helpers.end(), rank);
  if (found == helpers.end()) return {0, 0};
  // Helpers after the migrator in rank order come first, then the wrap:
  // with every other rank a helper this is exactly r' - 1.
  const auto firstAfter = std::upper_bound(helpers.begin(), helpers.end(), migrator);
  const int h = static_cast<int>(helpers.size());
  const int position = static_cast<int>(found - helpers.begin());
  const int start = static_cast<int>(firstAfter - helpers.begin());
  return evenBlock(total, h, positiveMod(position - start, h));
}

}  // namespace spccl::migrate
