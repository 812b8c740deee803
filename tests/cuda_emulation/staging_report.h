// The per-collective counts of calls that ran device-resident, as
// SPCCL_STAGING_REPORT=1 prints them on stderr when a communicator ends
// ("spccl staging report, rank 1/2: 3 all-gather calls ran
// device-resident"): the figure the GPU stage scripts check, read here
// per rank, which the emulation's counters cannot tell apart where ranks
// are threads of one process; and such ranks, run.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "emulated_ranks.h"

namespace spccl::testing {

// Per collective ("all-reduce", "reduce-scatter", ...): the calls `rank`
// ran device-resident, from the report's text; absent: none.
inline std::map<std::string, uint64_t> deviceResidentCounts(const std::string& report, int rank) {
  static const std::regex kLine(
      "spccl staging report, rank ([0-9]+)/[0-9]+: ([0-9]+) ([a-z-]+) calls ran device-resident");
  std::map<std::string, uint64_t> counts;
  for (auto it = std::sregex_iterator(report.begin(), report.end(), kLine);
       it != std::sregex_iterator(); ++it)
    if (std::stoi((*it)[1]) == rank) counts[(*it)[3]] += std::stoull((*it)[2]);
  return counts;
}

// Everything this process writes on stderr (fd 2) from construction to
// finish(), into a temporary file: where the staging report goes.
class StderrCapture {
 public:
  StderrCapture() : saved_(dup(2)) {
    fflush(stderr);
    file_ = mkstemp(path_);
    dup2(file_, 2);
  }
  ~StderrCapture() { (void)finish(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  // Stops the capture; what was written meanwhile.
  std::string finish() {
    if (saved_ < 0) return text_;
    fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    close(file_);
    saved_ = -1;
    std::ifstream in(path_);
    text_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::remove(path_);
    return text_;
  }

 private:
  char path_[64] = "/tmp/spccl_staging_report_XXXXXX";
  int saved_ = -1;
  int file_ = -1;
  std::string text_;
};

// Two ranks as threads of one forked process on emulated device 0, each
// with its communicator and a stream of its own: body(rank, comm, stream)
// on each thread; then each rank's staging report (the threads share the
// emulation's counters) must count `deviceResident` calls per collective.
inline void runOnThreadRanks(const std::map<std::string, uint64_t>& deviceResident,
                             const std::function<void(int, spcclComm_t, void*)>& body) {
  setenv("SPCCL_STAGING_REPORT", "1", 1);
  auto outcomes = forkRanks(1, [&](int, const spcclUniqueId&) {
    spcclUniqueId id;
    if (spcclGetUniqueId(&id) != spcclSuccess) return kChildInitFailed;
    StderrCapture capture;
    auto rankThread = [&id, &body](int rank) {
      if (emuCudaSetCurrentDevice(0) != 0) return;
      spcclComm_t comm = initRank(2, id, rank);
      void* stream = emuCudaStreamCreate();
      body(rank, comm, stream);
      emuCudaStreamDestroy(stream);
      spcclCommDestroy(comm);
    };
    std::thread other(rankThread, 1);
    rankThread(0);
    other.join();
    const std::string report = capture.finish();
    for (int rank : {0, 1})
      EXPECT_EQ(deviceResidentCounts(report, rank), deviceResident)
          << "rank " << rank << "'s staging report:\n"
          << report;
    return ::testing::Test::HasFailure() ? kChildWrongResult : kChildOk;
  });
  unsetenv("SPCCL_STAGING_REPORT");
  EXPECT_EQ(outcomes[0].status, kChildOk);
}

}  // namespace spccl::testing
