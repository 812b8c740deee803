// What every rank of a call that failed on one rank must see (the
// emulated-driver tests that make a launch fail there): the failing rank
// the driver's error naming what failed, the others an error naming that
// rank, all at once rather than at the communicator's deadline.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "spccl.h"

namespace spccl::testing {

struct TimedResult {
  spcclResult_t result = spcclSuccess;
  std::string error;  // spcclGetLastError after the call
  double seconds = 0;
};

// call() (a blocking spccl call on comm), timed.
template <class Call>
TimedResult timedCall(spcclComm_t comm, const Call& call) {
  const auto start = std::chrono::steady_clock::now();
  TimedResult out;
  out.result = call();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.error = spcclGetLastError(comm);
  return out;
}

// The call failed on every rank: on `failingRank` with spcclSystemError
// and an error containing `failure`, elsewhere naming "rank <failingRank>";
// within 10 s (initRank's deadline is 20 s).
inline void expectFailedOnEveryRank(int rank, int failingRank, const TimedResult& got,
                                    const std::string& failure) {
  EXPECT_NE(got.result, spcclSuccess) << "rank " << rank;
  if (rank == failingRank) {
    EXPECT_EQ(got.result, spcclSystemError);
    EXPECT_NE(got.error.find(failure), std::string::npos) << got.error;
  } else {
    EXPECT_NE(got.error.find("rank " + std::to_string(failingRank)), std::string::npos)
        << got.error;
  }
  EXPECT_LT(got.seconds, 10.0) << "rank " << rank << ": " << got.error;
}

// A call enqueued on `stream` failed on every rank: after the stream's
// work, comm's async error is set, spcclSystemError on `failingRank`.
inline void expectAsyncErrorOnEveryRank(spcclComm_t comm, int rank, int failingRank, void* stream) {
  cuStreamSynchronize(stream);
  spcclResult_t async = spcclSuccess;
  EXPECT_EQ(spcclCommGetAsyncError(comm, &async), spcclSuccess);
  EXPECT_NE(async, spcclSuccess) << "rank " << rank;
  if (rank == failingRank) {
    EXPECT_EQ(async, spcclSystemError);
  }
}

}  // namespace spccl::testing
