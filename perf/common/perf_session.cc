#include "common/perf_session.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/device_memory.h"

namespace spccl::perf {

namespace {

constexpr size_t kDescriptionBytes = 128;

// The rank the launcher gave this process, before the communicator says.
int launcherRank() {
  for (const char* name : {"SPCCL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

}  // namespace

PerfSession::PerfSession(bool deviceBuffers) {
  if (deviceBuffers) device_ = std::make_unique<DeviceMemory>(launcherRank());
  const spcclResult_t result = spcclCommInitFromEnv(&comm_, nullptr);
  if (result != spcclSuccess) {
    std::fprintf(stderr, "spcclCommInitFromEnv failed: %s (%s)\n", spcclGetErrorString(result),
                 spcclGetLastError(nullptr));
    std::exit(kExitError);
  }
  require(spcclCommUserRank(comm_, &rank_), "spcclCommUserRank");
  require(spcclCommCount(comm_, &nranks_), "spcclCommCount");
}

PerfSession::~PerfSession() {
  const spcclResult_t result = spcclCommDestroy(comm_);
  if (result != spcclSuccess) {
    std::fprintf(stderr, "rank %d: spcclCommDestroy failed: %s (%s)\n", rank_,
                 spcclGetErrorString(result), spcclGetLastError(nullptr));
  }
}

void PerfSession::require(spcclResult_t result, const char* what) const {
  if (result == spcclSuccess) return;
  fail(std::string(what) + " failed: " + spcclGetErrorString(result) + " (" +
       spcclGetLastError(comm_) + ")");
}

void PerfSession::fail(const std::string& message) const {
  std::fprintf(stderr, "rank %d: %s\n", rank_, message.c_str());
  std::fflush(stdout);
  spcclCommAbort(comm_);
  std::exit(kExitError);
}

namespace {

void reduceOverRanks(const PerfSession& session, std::vector<double>* values, spcclRedOp_t op) {
  std::vector<double> reduced(values->size());
  session.require(
      spcclAllReduce(values->data(), reduced.data(), values->size(), spcclFloat64, op,
                     session.comm(), nullptr),
      op == spcclMax ? "spcclAllReduce (max over ranks)" : "spcclAllReduce (sum over ranks)");
  *values = std::move(reduced);
}

}  // namespace

void PerfSession::maxOverRanks(std::vector<double>* values) const {
  reduceOverRanks(*this, values, spcclMax);
}

void PerfSession::sumOverRanks(std::vector<double>* values) const {
  reduceOverRanks(*this, values, spcclSum);
}

double PerfSession::maxOverRanks(double value) const {
  std::vector<double> values{value};
  maxOverRanks(&values);
  return values[0];
}

void PerfSession::barrier() const { require(spcclBarrier(comm_, nullptr), "spcclBarrier"); }

spcclCounters_t PerfSession::counters() const {
  spcclCounters_t counters{};
  require(spcclCommGetCounters(comm_, &counters), "spcclCommGetCounters");
  return counters;
}

std::vector<std::string> PerfSession::rankDescriptions() const {
  char hostname[64] = {};
  gethostname(hostname, sizeof(hostname) - 1);
  char mine[kDescriptionBytes] = {};
  std::snprintf(mine, sizeof(mine), "#  Rank %2d Pid %6d on %10s", rank_,
                static_cast<int>(getpid()), hostname);
  std::vector<char> all(kDescriptionBytes * static_cast<size_t>(nranks_));
  require(spcclAllGather(mine, all.data(), kDescriptionBytes, spcclInt8, comm_, nullptr),
          "spcclAllGather (rank descriptions)");
  std::vector<std::string> descriptions;
  for (int r = 0; r < nranks_; ++r) {
    const char* text = all.data() + kDescriptionBytes * static_cast<size_t>(r);
    descriptions.emplace_back(text, strnlen(text, kDescriptionBytes));
  }
  return descriptions;
}

}  // namespace spccl::perf
