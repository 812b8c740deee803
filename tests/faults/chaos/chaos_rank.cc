// chaos_rank: one rank of a job that runs verified dense, sparse and
// compressed all-reduces in a loop and survives failures the way
// docs/fault-tolerance.md says an application should: on a failed call it
// revokes, agrees, shrinks to the survivors, agrees on the step to redo
// and goes on. Used by the chaos matrix (tests/faults/chaos/*.sh, faults
// injected by --fault or from outside) and the soak (tests/netns/soak.sh).
//
//   chaos_rank [--steps N] [--seconds S] [--count C] [--min-ranks M]
//              [--on-error shrink|exit] [--stats-every K] [--seed X] [--gap-ms G]
//              [--fault SPEC]... [--cycles-init N | --cycles-shrink N]
//
// Rank, size and rendezvous from the launcher (spcclCommInitFromEnv); the
// deadline is SPCCL_TIMEOUT_MS. Every line it prints starts with "chaos:"
// and carries t=<ms since the epoch> where a time matters, so that a
// script can line its events up with faults injected from outside.
//
// Exit status: 0 finished with every result right; 1 a call succeeded
// with a wrong result; 2 usage; 3 this rank was agreed failed (stopped or
// cut off, then resumed): it left; 4 too few ranks left (--min-ranks);
// 5 an error it could not recover from (--on-error exit: the first error);
// 7 the communicator's creation failed.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chaos_cycles.h"
#include "chaos_inputs.h"
#include "faults.h"
#include "proc_stats.h"
#include "spccl.h"

using namespace spccl::chaos;

namespace {

constexpr int kExitWrong = 1, kExitUsage = 2, kExitExcluded = 3, kExitAlone = 4,
              kExitUnrecovered = 5, kExitInitFailed = 7;
constexpr int kMaxRecoveries = 4;  // agreements per failure before giving up (a second
                                   // failure during shrink costs one more)

struct Options {
  long steps = 0;      // 0: until --seconds
  double seconds = 0;  // 0: until --steps
  size_t count = 65536;
  size_t minRanks = 2;
  bool shrinkOnError = true;
  long statsEvery = 50;
  uint64_t seed = 1;
  long gapMs = 0;  // a pause between steps: a soak that leaves the machine's cores to others
  std::vector<FaultSpec> faults;
  long cyclesInit = 0;
  long cyclesShrink = 0;
};

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The job as this rank sees it: its communicator, and the job ranks of its
// members in the communicator's order (shrink keeps the old order).
struct Job {
  spcclComm_t comm = nullptr;
  std::vector<int> members;
  int jobRank = -1;
  int rank() const {
    return static_cast<int>(std::find(members.begin(), members.end(), jobRank) - members.begin());
  }
};

class ChaosRank {
 public:
  ChaosRank(const Options& o, int jobRank) : opt_(o), rng_(o.seed * 1000003 + jobRank) {
    job_.jobRank = jobRank;
  }

  int run();

 private:
  const FaultSpec* fault(Phase phase, long step = -1) const {
    for (const FaultSpec& f : opt_.faults)
      if (f.phase == phase && f.rank == job_.jobRank && (step < 0 || f.step == step)) return &f;
    return nullptr;
  }
  long drawUs(double maxUs) {
    return static_cast<long>(std::uniform_real_distribution<double>(0.0, maxUs)(rng_));
  }
  spcclResult_t step(long s, size_t* wrong);
  spcclResult_t syncControl(long* stepOrStop, spcclRedOp_t op);
  int recover(spcclResult_t cause);
  void printStats(const char* when, long s) const;

  Options opt_;
  std::mt19937_64 rng_;
  Job job_;
  std::vector<double> callMs_;  // durations of the successful collectives, for kill:R:mid
  bool agreeKillArmed_ = false, shrinkKillArmed_ = false;
  long wrongCalls_ = 0;
};

void ChaosRank::printStats(const char* when, long s) const {
  const ProcStats p = readProcStats();
  std::printf(
      "chaos: stat t=%.3f when=%s step=%ld size=%zu fds=%ld rss_kb=%ld threads=%ld "
      "shm_maps=%ld\n",
      nowMs(), when, s, job_.members.size(), p.fds, p.rssKb, p.threads, p.shmMaps);
  std::fflush(stdout);
}

spcclResult_t ChaosRank::step(long s, size_t* wrong) {
  const Kind kind = static_cast<Kind>(s % kNumKinds);
  std::vector<float> data = input(kind, s, job_.jobRank, opt_.count);
  if (const FaultSpec* f = fault(Phase::Mid, s)) {
    // A random point inside the call: the call's length is taken from the
    // earlier calls (their median), or 5 ms before any.
    std::vector<double> d = callMs_;
    double typical = 5.0;
    if (!d.empty()) {
      std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
      typical = d[d.size() / 2];
    }
    (void)f;
    killSelfAfter(drawUs(typical * 1000.0), "collective");
  }
  const double t0 = nowMs();
  spcclResult_t res;
  if (kind == Kind::Dense) {
    res = spcclAllReduce(data.data(), data.data(), opt_.count, spcclFloat32, spcclSum, job_.comm,
                         nullptr);
  } else if (kind == Kind::Sparse) {
    res = spcclSparseAllReduce(data.data(), data.data(), opt_.count, spcclFloat32, spcclSum,
                               job_.comm, nullptr);
  } else {
    const spcclCompression cfg = compression();
    res = spcclCompressedAllReduce(data.data(), data.data(), opt_.count, spcclFloat32, spcclSum,
                                   &cfg, job_.comm, nullptr);
  }
  const double t1 = nowMs();
  if (res != spcclSuccess) {
    std::printf("chaos: fail t=%.3f step=%ld kind=%s size=%zu rc=%d elapsed_ms=%.1f err=\"%s\"\n",
                t1, s, kindName(kind), job_.members.size(), static_cast<int>(res), t1 - t0,
                spcclGetLastError(job_.comm));
    std::fflush(stdout);
    return res;
  }
  callMs_.push_back(t1 - t0);
  *wrong = countWrong(kind, s, job_.members, data);
  if (*wrong > 0) {
    std::printf("chaos: WRONG t=%.3f step=%ld kind=%s size=%zu wrong_elements=%zu\n", t1, s,
                kindName(kind), job_.members.size(), *wrong);
    std::fflush(stdout);
  }
  return spcclSuccess;
}

// An all-reduce of one int64 among the members: the step to redo after a
// shrink (min), or whether any rank's time is up (max).
spcclResult_t ChaosRank::syncControl(long* value, spcclRedOp_t op) {
  int64_t v = *value;
  spcclResult_t res = spcclAllReduce(&v, &v, 1, spcclInt64, op, job_.comm, nullptr);
  if (res == spcclSuccess) {
    *value = static_cast<long>(v);
  } else {
    std::printf(
        "chaos: fail t=%.3f step=sync kind=control size=%zu rc=%d elapsed_ms=0 err=\"%s\"\n",
        nowMs(), job_.members.size(), static_cast<int>(res), spcclGetLastError(job_.comm));
    std::fflush(stdout);
  }
  return res;
}

// Revoke, agree, shrink (again if a second failure breaks the shrink).
// Returns 0 with job_ on the shrunk communicator, or the exit status.
int ChaosRank::recover(spcclResult_t cause) {
  const double t0 = nowMs();
  spcclCommRevoke(job_.comm);
  for (int attempt = 0; attempt < kMaxRecoveries; ++attempt) {
    if (!agreeKillArmed_ && fault(Phase::Agree)) {
      agreeKillArmed_ = true;
      killSelfAfter(drawUs(5000.0), "agree");
    }
    const double tAgree = nowMs();
    int flag = 1;
    spcclResult_t res = spcclCommAgree(job_.comm, &flag);
    if (res != spcclSuccess) {
      std::printf("chaos: agree-failed t=%.3f rc=%d err=\"%s\"\n", nowMs(), static_cast<int>(res),
                  spcclGetLastError(job_.comm));
      std::fflush(stdout);
      spcclCommDestroy(job_.comm);
      return res == spcclRemoteError ? kExitExcluded : kExitUnrecovered;
    }
    int nFailed = 0;
    spcclCommGetFailedRanks(job_.comm, nullptr, 0, &nFailed);
    std::vector<int> failed(static_cast<size_t>(nFailed));
    spcclCommGetFailedRanks(job_.comm, failed.data(), nFailed, &nFailed);
    const double tShrink = nowMs();
    std::vector<int> survivors;
    std::string failedJobRanks;
    for (size_t r = 0; r < job_.members.size(); ++r) {
      if (std::find(failed.begin(), failed.end(), static_cast<int>(r)) == failed.end()) {
        survivors.push_back(job_.members[r]);
      } else {
        failedJobRanks += (failedJobRanks.empty() ? "" : ",") + std::to_string(job_.members[r]);
      }
    }
    if (std::find(survivors.begin(), survivors.end(), job_.jobRank) == survivors.end()) {
      std::printf("chaos: excluded t=%.3f failed=%s\n", nowMs(), failedJobRanks.c_str());
      spcclCommDestroy(job_.comm);
      return kExitExcluded;
    }
    if (survivors.size() < opt_.minRanks) {
      std::printf("chaos: alone t=%.3f size=%zu failed=%s\n", nowMs(), survivors.size(),
                  failedJobRanks.c_str());
      spcclCommDestroy(job_.comm);
      return kExitAlone;
    }
    if (!shrinkKillArmed_ && fault(Phase::Shrink)) {
      shrinkKillArmed_ = true;
      killSelfAfter(drawUs(5000.0), "shrink");
    }
    spcclComm_t shrunk = nullptr;
    res = spcclCommShrink(job_.comm, failed.data(), nFailed, nullptr, &shrunk);
    const double t1 = nowMs();
    if (res != spcclSuccess) {
      std::printf("chaos: shrink-failed t=%.3f attempt=%d rc=%d err=\"%s\"\n", t1, attempt,
                  static_cast<int>(res), spcclGetLastError(job_.comm));
      std::fflush(stdout);
      continue;  // a second failure during the shrink: agree again, it finds it
    }
    spcclCommDestroy(job_.comm);
    job_.comm = shrunk;
    job_.members = survivors;
    std::printf(
        "chaos: shrunk t=%.3f size=%zu failed=%s cause_rc=%d recover_ms=%.1f "
        "agree_ms=%.1f shrink_ms=%.1f\n",
        t1, survivors.size(), failedJobRanks.c_str(), static_cast<int>(cause), t1 - t0,
        tShrink - tAgree, t1 - tShrink);
    std::fflush(stdout);
    return 0;
  }
  std::printf("chaos: gave-up t=%.3f after %d agreements\n", nowMs(), kMaxRecoveries);
  spcclCommDestroy(job_.comm);
  return kExitUnrecovered;
}

int ChaosRank::run() {
  // Creation takes 50 to 200 ms here: most draws land inside it, the rest
  // just after (the matrix reports which).
  if (fault(Phase::Init)) killSelfAfter(drawUs(100000.0), "init");
  const double tInit = nowMs();
  spcclResult_t res = spcclCommInitFromEnv(&job_.comm, nullptr);
  if (res != spcclSuccess) {
    std::printf("chaos: init-failed t=%.3f rc=%d elapsed_ms=%.1f err=\"%s\"\n", nowMs(),
                static_cast<int>(res), nowMs() - tInit, spcclGetLastError(nullptr));
    return kExitInitFailed;
  }
  int n = 0;
  spcclCommCount(job_.comm, &n);
  for (int r = 0; r < n; ++r) job_.members.push_back(r);
  std::printf("chaos: ready t=%.3f rank=%d size=%d pid=%d init_ms=%.1f\n", nowMs(), job_.jobRank, n,
              static_cast<int>(getpid()), nowMs() - tInit);
  std::fflush(stdout);

  const double end = opt_.seconds > 0 ? nowMs() + opt_.seconds * 1000.0 : 0.0;
  long s = 0;
  bool statsTaken = false;
  for (;;) {
    if (opt_.steps > 0 && s >= opt_.steps) break;
    if (end > 0 && s % 20 == 0) {  // stop together: any rank's time up stops all
      long up = nowMs() >= end ? 1 : 0;
      res = syncControl(&up, spcclMax);
      if (res == spcclSuccess && up) break;
    }
    if (res == spcclSuccess) {
      if (const FaultSpec* f = fault(Phase::Stop, s)) stopSelfFor(f->stopMs);
      if (fault(Phase::Leave, s) || fault(Phase::Abort, s)) {
        if (fault(Phase::Abort, s)) killSelfAfter(drawUs(2000.0), "abort");
        std::printf("chaos: leaving t=%.3f step=%ld\n", nowMs(), s);
        std::fflush(stdout);
        spcclCommAbort(job_.comm);
        std::printf("chaos: left t=%.3f\n", nowMs());  // abort returned before any kill
        return 0;
      }
      size_t wrong = 0;
      res = step(s, &wrong);
      if (res == spcclSuccess) {
        if (wrong > 0) ++wrongCalls_;
        if (!statsTaken || (opt_.statsEvery > 0 && s % opt_.statsEvery == 0)) {
          printStats(statsTaken ? "step" : "first", s);
          statsTaken = true;
        }
        ++s;
        if (opt_.gapMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt_.gapMs));
        continue;
      }
    }
    if (!opt_.shrinkOnError) {
      spcclCommDestroy(job_.comm);
      return kExitUnrecovered;
    }
    // Recover, then redo the earliest step any survivor has not finished.
    const spcclResult_t cause = res;
    for (;;) {
      if (int status = recover(cause); status != 0) {
        printStats("last", s);  // its communicators destroyed: what the process still holds
        return status;
      }
      long redo = s;
      if (syncControl(&redo, spcclMin) == spcclSuccess) {
        s = redo;
        break;
      }
    }
    res = spcclSuccess;
  }
  printStats("last", s);
  spcclCommDestroy(job_.comm);
  const double longest = callMs_.empty() ? 0.0 : *std::max_element(callMs_.begin(), callMs_.end());
  std::printf("chaos: done t=%.3f steps=%ld size=%zu wrong_calls=%ld longest_call_ms=%.1f\n",
              nowMs(), s, job_.members.size(), wrongCalls_, longest);
  return wrongCalls_ == 0 ? 0 : kExitWrong;
}

bool parseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&]() {
      if (v == nullptr) std::fprintf(stderr, "chaos_rank: %s needs a value\n", a.c_str());
      ++i;
      return v != nullptr;
    };
    if (a == "--steps") {
      if (!need()) return false;
      o->steps = std::atol(v);
    } else if (a == "--seconds") {
      if (!need()) return false;
      o->seconds = std::atof(v);
    } else if (a == "--count") {
      if (!need()) return false;
      o->count = std::strtoul(v, nullptr, 10);
    } else if (a == "--min-ranks") {
      if (!need()) return false;
      o->minRanks = std::strtoul(v, nullptr, 10);
    } else if (a == "--on-error") {
      if (!need()) return false;
      o->shrinkOnError = std::strcmp(v, "exit") != 0;
    } else if (a == "--stats-every") {
      if (!need()) return false;
      o->statsEvery = std::atol(v);
    } else if (a == "--seed") {
      if (!need()) return false;
      o->seed = std::strtoull(v, nullptr, 10);
    } else if (a == "--gap-ms") {
      if (!need()) return false;
      o->gapMs = std::atol(v);
    } else if (a == "--cycles-init") {
      if (!need()) return false;
      o->cyclesInit = std::atol(v);
    } else if (a == "--cycles-shrink") {
      if (!need()) return false;
      o->cyclesShrink = std::atol(v);
    } else if (a == "--fault") {
      if (!need()) return false;
      FaultSpec f{};
      std::string why;
      if (!parseFault(v, &f, &why)) {
        std::fprintf(stderr, "chaos_rank: %s\n", why.c_str());
        return false;
      }
      o->faults.push_back(f);
    } else {
      std::fprintf(stderr, "chaos_rank: unknown argument '%s' (see the file's header)\n",
                   a.c_str());
      return false;
    }
  }
  if (o->count == 0) {
    std::fprintf(stderr, "chaos_rank: --count must be positive\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parseOptions(argc, argv, &opt)) return kExitUsage;
  const char* rankEnv = std::getenv("SPCCL_RANK");
  const int jobRank = rankEnv != nullptr ? std::atoi(rankEnv) : 0;
  if (opt.cyclesInit > 0) return runInitCycles(opt.cyclesInit);
  if (opt.cyclesShrink > 0) return runShrinkCycles(opt.cyclesShrink, opt.count);
  return ChaosRank(opt, jobRank).run();
}
