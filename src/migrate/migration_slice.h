// Which migrated columns each helper computes (SEMI-migration, section IV-B):
// helpers are renumbered from the straggler, r' = (r + e - r_k) mod e, and
// helper r' takes columns [m(r' - 1), m r' - 1] with m = L_mig / (e - 1).
// The paper leaves the remainder of that division out; here the first
// L_mig mod (e - 1) helpers take one column more (evenBlock), so every
// column is computed exactly once. Pure, so every rank derives the same
// assignment and the tests can check it exhaustively.
#pragma once

#include <cstddef>
#include <span>

#include "coll/partition.h"

namespace spccl::migrate {

// The slice of `total` migrated columns that `rank` computes when
// `straggler` sheds them onto the other nranks - 1 ranks; empty for the
// straggler itself and for nranks == 1.
ElementRange migrationSlice(int rank, int straggler, int nranks, size_t total);

// The same over an explicit helper set (several migrators, Eq. (3)):
// helpers[] are the ranks that take work, in rank order; they are
// renumbered cyclically starting after `migrator`. Empty if rank is not a
// helper.
ElementRange helperSlice(int rank, int migrator, std::span<const int> helpers, size_t total);

}  // namespace spccl::migrate
