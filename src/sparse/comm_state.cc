#include "sparse/comm_state.h"

#include "sparse/index_partition.h"

namespace spccl::sparse {

CommState::CommState(uint64_t commId) : seed(mix64(commId)) {}

}  // namespace spccl::sparse
