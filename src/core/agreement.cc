#include "core/agreement.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <thread>

#include "base/check.h"
#include "base/log.h"

namespace spccl {

namespace {

// How often a waiting rank asks its coordinator, and a coordinator asks a
// rank that has not reached the agreement yet.
constexpr int64_t kFollowPeriodMs = 50;
constexpr int64_t kNotYetRetryMs = 20;

enum class Outcome { Decided, Preempted, CoordinatorFailed };

class Agreement {
 public:
  Agreement(FaultService& service, uint64_t instance, int flag)
      : fs_(service),
        k_(instance),
        n_(service.nranks()),
        me_(service.keys().rank),
        timeoutMs_(service.timeoutMs()),
        flag_(flag) {}

  spcclResult_t run(AgreementResult* out) {
    {
      std::lock_guard<std::mutex> lock(fs_.mutex);
      failed_ = fs_.knownFailed;
      // After a failed shrink the survivors come up to one shrink's wait
      // (core/shrink.h: 2 T + 1 s) apart: a rank counts as failed only if
      // it is later than that, not merely later than T.
      lateMs_ = fs_.shrinkFailed ? 2 * static_cast<int64_t>(timeoutMs_) + 1000 : 0;
      AgreementRecord& record = fs_.agreements[k_];
      if (record.stage == AgreeStage::NotYet) {
        record.stage = AgreeStage::Proposed;
        record.flag = flag_;
        record.failed = failed_;
      }
    }
    for (int c = 0; c < n_ && !decided(); ++c) {
      if (failed_[c] != 0) continue;
      Outcome outcome = c == me_ ? coordinate() : follow(c);
      if (outcome == Outcome::CoordinatorFailed) {
        SPCCL_INFO(kLogInit, "rank %d: agreement #%" PRIu64 ": coordinator rank %d failed: %s", me_,
                   k_, c, threadLastError().c_str());
        failed_[c] = 1;
      }
    }
    std::lock_guard<std::mutex> lock(fs_.mutex);
    const AgreementRecord& record = fs_.agreements[k_];
    if (record.stage != AgreeStage::Decided)
      return SPCCL_FAIL(spcclTimeout,
                        "spcclCommAgree on rank %d: agreement #%" PRIu64
                        " reached no decision: every coordinator failed or was overtaken",
                        me_, k_);
    if (record.failed[me_] != 0)
      return SPCCL_FAIL(spcclRemoteError,
                        "spcclCommAgree on rank %d: the other ranks counted this rank as failed "
                        "(coordinator rank %d did not hear from it in time): it must leave the "
                        "communicator",
                        me_, record.ballot);
    out->flag = record.flag;
    out->failedRanks.clear();
    for (int r = 0; r < n_; ++r) {
      if (record.failed[r] == 0) continue;
      out->failedRanks.push_back(r);
      fs_.knownFailed[r] = 1;
    }
    return spcclSuccess;
  }

 private:
  bool decided() {
    std::lock_guard<std::mutex> lock(fs_.mutex);
    return fs_.agreements[k_].stage == AgreeStage::Decided;
  }

  FaultMessage request(FaultKind kind, int ballot) const {
    FaultMessage message;
    message.header.kind = static_cast<uint16_t>(kind);
    message.header.instance = k_;
    message.header.ballot = ballot;
    return message;
  }

  // Holds a decision: final, so a record that has one keeps it.
  void decide(int ballot, int flag, const std::vector<unsigned char>& failed) {
    std::lock_guard<std::mutex> lock(fs_.mutex);
    AgreementRecord& record = fs_.agreements[k_];
    if (record.stage == AgreeStage::Decided) return;
    record.stage = AgreeStage::Decided;
    record.ballot = ballot;
    record.flag = flag;
    record.failed = failed;
    fs_.changed.notify_all();
  }

  // Follows coordinator c until a decision reaches this rank (pushed by c,
  // or read from c), c fails, or c takes longer than two timeouts (it may
  // wait one timeout for a silent rank, then announce).
  Outcome follow(int c) {
    Deadline patience(2 * static_cast<int64_t>(timeoutMs_) + 1000 + lateMs_);
    while (!patience.expired()) {
      {
        std::unique_lock<std::mutex> lock(fs_.mutex);
        if (fs_.changed.wait_for(lock, std::chrono::milliseconds(kFollowPeriodMs),
                                 [&] { return fs_.agreements[k_].stage == AgreeStage::Decided; }))
          return Outcome::Decided;
      }
      FaultMessage reply;
      if (fs_.send(c, request(FaultKind::Query, -1), Deadline(timeoutMs_), &reply) != spcclSuccess)
        return Outcome::CoordinatorFailed;
      if (static_cast<AgreeStage>(reply.header.stage) == AgreeStage::Decided &&
          reply.payload.size() == static_cast<size_t>(n_)) {
        decide(reply.header.ballot, reply.header.flag, reply.payload);
        return Outcome::Decided;
      }
      // c itself follows a higher coordinator: so does this rank.
      if (reply.header.promised > c) return Outcome::Preempted;
    }
    SPCCL_FAIL(spcclTimeout, "rank %d decided nothing within %lld ms", c,
               static_cast<long long>(patience.timeoutMs()));
    return Outcome::CoordinatorFailed;
  }

  Outcome coordinate() {
    Deadline collect(timeoutMs_ + lateMs_);
    std::vector<int> flags(n_, ~0);
    std::vector<unsigned char> failedUnion = failed_;
    int adoptedBallot = -2;  // the highest accepted value seen, by coordinator
    int adoptedFlag = 0;
    std::vector<unsigned char> adoptedFailed;
    auto consider = [&](AgreeStage stage, int ballot, int flag,
                        const std::vector<unsigned char>& failed) {
      if (stage == AgreeStage::Decided) ballot = n_;  // final: beats any accepted value
      if ((stage == AgreeStage::Accepted || stage == AgreeStage::Decided) &&
          ballot > adoptedBallot) {
        adoptedBallot = ballot;
        adoptedFlag = flag;
        adoptedFailed = failed;
      }
    };
    {
      std::lock_guard<std::mutex> lock(fs_.mutex);
      AgreementRecord& mine = fs_.agreements[k_];
      if (mine.promised > me_) return Outcome::Preempted;
      mine.promised = me_;
      flags[me_] = flag_;
      consider(mine.stage, mine.ballot, mine.flag, mine.failed);
    }
    // Phase 1: every rank believed alive answers, or is failed.
    for (int r = 0; r < n_; ++r) {
      if (r == me_ || failed_[r] != 0) continue;
      for (;;) {
        FaultMessage reply;
        // A silent rank costs one timeout; a dead one a refused connection.
        if (fs_.send(r, request(FaultKind::Query, me_), Deadline(timeoutMs_), &reply) !=
            spcclSuccess) {
          SPCCL_INFO(kLogInit, "rank %d: agreement #%" PRIu64 ": rank %d counts as failed: %s", me_,
                     k_, r, threadLastError().c_str());
          failed_[r] = failedUnion[r] = 1;
          break;
        }
        if (reply.header.promised > me_) return Outcome::Preempted;
        auto stage = static_cast<AgreeStage>(reply.header.stage);
        if (stage == AgreeStage::NotYet) {
          if (collect.expired()) {
            SPCCL_INFO(kLogInit,
                       "rank %d: agreement #%" PRIu64
                       ": rank %d did not reach spcclCommAgree within %lld ms: counts as failed",
                       me_, k_, r, static_cast<long long>(timeoutMs_ + lateMs_));
            failed_[r] = failedUnion[r] = 1;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(kNotYetRetryMs));
          continue;
        }
        if (reply.payload.size() != static_cast<size_t>(n_)) {
          failed_[r] = failedUnion[r] = 1;  // a malformed answer: treat it as a lost rank
          break;
        }
        consider(stage, reply.header.ballot, reply.header.flag, reply.payload);
        flags[r] = reply.header.flag;
        for (int f = 0; f < n_; ++f) failedUnion[f] |= reply.payload[f];
        break;
      }
    }
    int flag = ~0;
    std::vector<unsigned char> failed = failedUnion;
    if (adoptedBallot > -2) {
      flag = adoptedFlag;
      failed = adoptedFailed;
    } else {
      for (int r = 0; r < n_; ++r)
        if (failed[r] == 0) flag &= flags[r];
    }
    // Phase 2: every rank believed alive accepts the value. One that
    // fails now stays in the value as alive: a later agreement finds it.
    {
      std::lock_guard<std::mutex> lock(fs_.mutex);
      AgreementRecord& mine = fs_.agreements[k_];
      if (mine.promised > me_) return Outcome::Preempted;
      if (mine.stage != AgreeStage::Decided) {
        mine.stage = AgreeStage::Accepted;
        mine.ballot = me_;
        mine.flag = flag;
        mine.failed = failed;
      }
    }
    for (int r = 0; r < n_; ++r) {
      if (r == me_ || failed_[r] != 0) continue;
      FaultMessage message = request(FaultKind::Accept, me_);
      message.header.flag = flag;
      message.payload = failed;
      FaultMessage reply;
      if (fs_.send(r, std::move(message), Deadline(timeoutMs_), &reply) != spcclSuccess) {
        failed_[r] = 1;
        continue;
      }
      if (reply.header.promised > me_) return Outcome::Preempted;
    }
    decide(me_, flag, failed);
    // Phase 3: the decision, pushed; a rank that misses it reads it here.
    QuietFailures quiet;
    for (int r = 0; r < n_; ++r) {
      if (r == me_ || failed_[r] != 0) continue;
      FaultMessage message = request(FaultKind::Decide, me_);
      message.header.flag = flag;
      message.payload = failed;
      (void)fs_.send(r, std::move(message), Deadline(std::min(timeoutMs_, 1000)), nullptr);
    }
    return Outcome::Decided;
  }

  FaultService& fs_;
  const uint64_t k_;
  const int n_;
  const int me_;
  const int timeoutMs_;
  int64_t lateMs_ = 0;  // extra wait for ranks that have not reached the agreement
  const int flag_;
  std::vector<unsigned char> failed_;  // ranks this rank no longer waits for
};

}  // namespace

spcclResult_t runAgreement(FaultService& service, int flag, AgreementResult* out) {
  uint64_t instance = 0;
  {
    std::lock_guard<std::mutex> lock(service.mutex);
    instance = ++service.agreementCount;
  }
  return Agreement(service, instance, flag).run(out);
}

}  // namespace spccl
