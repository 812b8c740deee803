// The per-collective counts of calls that ran device-resident, as
// SPCCL_STAGING_REPORT=1 prints them on stderr when a communicator ends
// ("spccl staging report, rank 1/2: 3 all-gather calls ran
// device-resident"): the figure the GPU stage scripts check, read here
// per rank, which the emulation's counters cannot tell apart where ranks
// are threads of one process.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>

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

}  // namespace spccl::testing
