// The sparse all-reduce planner (docs/algorithms.md 2.7, Zen section 3
// first paragraph): price every candidate with the measured alpha and beta
// of the links and the real encoded size of every message it would send,
// from the agreed density d and densification gamma, and run the cheapest.
// Every input is a value all ranks agree on (exchanged counts, the output
// size, the agreed link model), so every rank makes the same choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include "runtime/coll_context.h"
#include "sparse/encoding.h"
#include "sparse/sparse_algorithm_table.h"
#include "sparse/sparse_algorithms.h"
#include "sparse/sparse_stats.h"
#include "spccl.h"

namespace spccl::sparse {

struct SparseCostInput {
  int nranks = 1;
  uint64_t universe = 0;  // M
  size_t valueBytes = 4;
  double density = 0;  // d: mean local density over ranks
  double gamma = 1;    // gamma_n = density after aggregation / d, in [1, n]
  // gamma(2^i) of the set HC's stage i sends, learned from the previous
  // call (empty: interpolated by densificationAt).
  std::span<const double> stageGamma;
  // Measured seconds of a whole call per algorithm (indexed by
  // spcclSparseAlgorithm_t; <= 0: never measured), from earlier calls of
  // the tag: an algorithm costs at least what it measured, which brings in
  // what the model leaves out (CPU time: extraction, merges, encoding,
  // cores shared between ranks).
  std::span<const double> measuredSeconds;
  LinkModel link;
  // Wall seconds per pair of merge work on the most crowded machine's
  // cores (cpu_calibration.h): prices each schedule's CPU work, which
  // on slow or shared cores costs more than the bytes it saves. 0: the
  // alpha-beta model alone (the paper's).
  double pairSeconds = 0;
  unsigned allowedEncodings = kAllEncodings;
  size_t chunkBytes = 1 << 20;
};

// Predicted time of one call on the busiest rank, and what that rank sends.
struct SparseCost {
  double seconds = 0;  // on the wire, plus the CPU work's (sparse schedules)
  double bytesSent = 0;
  double cpuSeconds = 0;  // the CPU work's share of `seconds`
};

// gamma(k): densification after merging k ranks' sets, interpolated between
// full overlap (1) and none (k) through the measured gamma_n, and capped so
// the merged set never exceeds M.
double densificationAt(const SparseCostInput& input, double k);

// The link model the planner prices with: alpha (us) and beta (ns/B)
// snapped to the nearest power of 2^(1/4) (at most 9 % off). Both are
// measured anew by every communicator; snapped, a re-measurement a few %
// off gives the same figures (unless the value sits near a bin's edge), so
// a near tie does not flip the choice, hence the float rounding, between
// runs of the same job. 1 Gbit/s, 8 ns/B = 2^3, sits at a bin's centre.
LinkModel stableLinkModel(const LinkModel& measured);
// Size of the cheapest allowed encoding of nnz positions over `universe`;
// Packed's size is estimated from the mean gap (its exact size needs the
// positions).
double cheapestMessageBytes(double nnz, uint64_t universe, size_t valueBytes, unsigned allowed);

// Eq. (1) with real message sizes: (n-1) pushes of d M/n and (n-1) pulls of
// gamma d M/n non-zeros, each over |I_p| = M/n positions. Every cost below
// adds its CPU work (planner.cc, "CPU work") at input.pairSeconds.
SparseCost balancedParallelismCost(const SparseCostInput& input);
// Eq. (2): log2 p stages, stage i sending the merged set of 2^i (n/p)
// ranks over M positions; plus the fold and unfold when n is not a power
// of two.
SparseCost hierarchicalCentralizationCost(const SparseCostInput& input);
// (n-1) messages of d M non-zeros over M.
SparseCost allGatherSparseCost(const SparseCostInput& input);
// 256-element blocks: a block is sent if any of its elements is non-zero
// (1 - (1-d)^256 of them for scattered non-zeros), push and pull to and
// from even owners.
SparseCost blockSparseCost(const SparseCostInput& input);
// The cheapest dense all-reduce schedule on M values; its reductions
// overlap its transfers (pipelined), so it costs the larger of the two.
SparseCost denseAllReduceCost(const SparseCostInput& input);

struct SparseDecision {
  spcclSparseAlgorithm_t algorithm = spcclSparseDense;
  double predictedSeconds[spcclSparseNumAlgorithms] = {-1, -1, -1, -1, -1, -1};
  double predictedBytesSent = 0;   // of the chosen one
  bool measuredMatters = false;    // a measured time exceeded the model's
  bool denseWithinMargin = false;  // a sparse schedule was cheapest, but not by kSparseMargin
};
// With the CPU term on, a sparse schedule is taken over dense only when it
// is predicted at least this much faster: the CPU fit's error (measured /
// fit 0.75-1.25, docs/perf/sparse.md "The CPU term"). Near a tie dense is
// the safer bet: its time is the links', steady from call to call.
constexpr double kSparseMargin = 0.2;
// Prices every row of sparseAlgorithms(); `forced` (not Auto) is taken as
// is, else the cheapest wins (ties go to the earlier row; dense within
// kSparseMargin of a sparse schedule, when input.pairSeconds > 0).
SparseDecision decideSparseAlgorithm(const SparseCostInput& input, spcclSparseAlgorithm_t forced);

// Where the gamma a call plans with comes from.
struct GammaEstimate {
  double gamma = 1;
  const char* source = "prior";  // "learned", "sketch", "prior"
};

// One tag's profile (tag 0: keyed by count).
struct TagProfile {
  double learnedGamma = 0;  // 0: none yet
  double learnedAtDensity = 0;
  // gamma(2^i) of HC's stages, agreed by all ranks (learnStageGammas), and
  // this rank's own from its last HC call, to be sent with the next call.
  int learnedStages = 0;
  double learnedStageGamma[kMaxMergeStages] = {};
  int localStages = 0;
  double localStageGamma[kMaxMergeStages] = {};
  // Whole-call seconds per algorithm, the slowest rank's, agreed
  // (learnMeasuredSeconds); and this rank's last call, sent with the next.
  double measuredSeconds[spcclSparseNumAlgorithms] = {};
  int32_t localAlgorithm = -1;
  double localSeconds = 0;
  SparseCallStats stats;
};

// The gamma to plan with: the last call's (each call's output size gives
// it exactly, so the profile follows drifting density by itself), else the
// overlap sketch's estimate (first call), else a prior halfway between full
// and no overlap. Clamped to [1, n] and to d*gamma <= 1.
GammaEstimate planningGamma(const TagProfile& profile, double density, int nranks,
                            double sketchGamma);
// Records gamma_n = outputNnz / mean nnz after a call.
void learnGamma(TagProfile* profile, double density, double meanNnz, uint64_t outputNnz);
// After an HC call: this rank's stage sets over the agreed mean nnz (to be
// sent with the next call); after any other algorithm: nothing to send.
void recordLocalStages(TagProfile* profile, spcclSparseAlgorithm_t ran,
                       const SparseRunReport& report, double meanNnz);
// After a call: what this rank measured, sent with the tag's next call.
// The tag's first call is not kept (it pays one-time costs: buffers
// growing, the overlap sketch).
void recordLocalSeconds(TagProfile* profile, spcclSparseAlgorithm_t ran, double seconds,
                        bool firstCallOfTag);
// The slowest rank's time of the tag's previous call, when every rank ran
// the same algorithm in it, becomes that algorithm's measured time.
void learnMeasuredSeconds(TagProfile* profile, std::span<const int32_t> algorithmOfRank,
                          std::span<const double> secondsOfRank);
// Density moved (re-profiling): the measured times and HC's stage gammas
// no longer apply (gamma_n itself is re-learned from every call).
void forgetDensityDependent(TagProfile* profile);
// gamma(2^i) = the mean over the ranks that ran stage i of their reported
// gamma, in rank order: every rank computes the same values from the same
// agreed headers. Keeps the previous values when no rank reported any.
void learnStageGammas(TagProfile* profile, std::span<const int32_t> stagesOfRank,
                      std::span<const double* const> gammasOfRank);

// The planner state of one communicator. Calls on a communicator run one
// at a time; spcclSparseGetStats may read from another thread, hence the
// copies in and out under a lock.
class PlannerState {
 public:
  // A call's profile (empty the first time).
  TagProfile load(uint64_t tag, uint64_t count) const;
  void store(uint64_t tag, uint64_t count, const TagProfile& profile);
  // What spcclSparseGetStats reports for `tag` (0: the last call keyed by
  // count); false when no call used it.
  bool statsFor(uint64_t tag, SparseCallStats* out) const;
  // The agreed CPU term (cpu_calibration.h): the same for every tag, so
  // agreed once per communicator.
  bool pairSecondsKnown() const;
  double pairSeconds() const;
  void setPairSeconds(double seconds);

 private:
  struct Key {
    bool byCount;
    uint64_t value;
    auto operator<=>(const Key&) const = default;
  };
  static Key keyOf(uint64_t tag, uint64_t count) {
    return tag != 0 ? Key{false, tag} : Key{true, count};
  }
  std::map<Key, TagProfile> profiles_;
  Key lastCountKey_{true, 0};
  bool anyCountKey_ = false;
  double pairSeconds_ = -1;  // < 0: not agreed yet
  mutable std::mutex mutex_;
};

}  // namespace spccl::sparse
