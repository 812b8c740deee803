// spccl_info --dump FILE...: reads flight recorder dumps (spcclCommDump,
// or the lines a timeout, spcclCommAbort or a fatal signal appended to a
// SPCCL_DEBUG_FILE), prints each one's calls, and, per communicator, which
// rank is behind: "rank 2 never reached call #17 AllReduce; ranks 0,1,3
// are waiting in it" (docs/observability.md, "Flight recorder").
#pragma once

#include <string>
#include <vector>

namespace spccl::info {

// Returns the exit status: 0, or 1 when a file cannot be read or no file
// holds a dump.
int printFlightReport(const std::vector<std::string>& paths);

}  // namespace spccl::info
