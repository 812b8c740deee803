// chaos_rank's leak modes: many communicator lifetimes in one process,
// with the process's fds, RSS, threads and /dev/shm mappings printed after
// a warm-up and at the end (proc_stats.h); a count that grows is a leak.
#pragma once

#include <cstddef>

namespace spccl::chaos {

// `cycles` times: a communicator of every rank of the job (spcclCommSplit
// of the job's communicator: a full creation, rendezvous to connections
// and fault service), a verified all-reduce on it, spcclCommDestroy.
int runInitCycles(long cycles);

// `cycles` times: a communicator of every rank; one rank (rotating) leaves
// it by spcclCommAbort, the others' all-reduce fails, they revoke, agree
// that it failed, shrink and run a verified all-reduce of `count` floats
// on the shrunk communicator, then destroy both.
int runShrinkCycles(long cycles, size_t count);

}  // namespace spccl::chaos
