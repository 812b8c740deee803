// migrate_perf: a column-parallel tensor-parallel linear layer on the CPU
// (GEMMs through OpenBLAS, host_gemm.h) across the ranks of the communicator, one rank
// slowed by a factor chi, timed per training iteration with
//   (a) no balancing,
//   (b) broadcast-reduce migration, the grad-input reduce merged into the
//       layer's all-reduce (spcclMigrateBroadcast / MigrateReduce /
//       MigrateAllReduce; paper 000 section IV-A),
//   (c) scatter-gather migration (spcclScatter / spcclGather, grad-input
//       merged the same way, so only the primitives differ),
//   (d) the planner's mix of migration and resizing (spcclBalancePlan,
//       Eq. (1)-(3), with Phi_1 / Omega_2 fitted from a pre-test).
// The straggler's slowdown is injected the way the paper does (section V-A):
// after each of its GEMMs it sleeps (chi - 1) times the GEMM's duration.
//
// --compute sleep models a device instead (issue 18): on ranks that share
// a few cores, GEMMs compete for the same CPU, so no balancing can gain
// anything. There a GEMM of m x n x k costs a sleep of 2 m n k / F seconds
// (F: --flops, per rank) and chi times that on the straggler, and does no
// arithmetic; the check's untimed iterations still compute for real.
// Built without OpenBLAS, only --compute sleep runs (its check computes with
// plain loops); --compute gemm, the default, is refused.
//
// --overlap 1 runs (b)'s broadcasts of shed data as non-blocking calls
// (spcclImigrateBroadcast) during each rank's own GEMMs (broadcastDuring).
//
// --device puts every call's buffers in CUDA device memory, on one stream
// (migration_calls.h): the operands are copied in before each call and the
// results out after it, inside the timed iteration; the GEMMs stay on the
// host. Against the emulated driver (tests/cuda_emulation) the copies are
// host memcpys: the logic, not a GPU.
//
//   spcclrun -n 4 ./migrate_perf [-x 1,1.5,2,4,8] [-b 256] [-H 1024] [-C 256]
//                                [-s straggler] [-n iters] [-w warmup] [-r rounds]
//                                [-t tolerance] [-c 0|1] [-J FILE]
//                                [--compute gemm|sleep] [--flops F] [--overlap 0|1]
//                                [--device]
// Rank 0 prints one row per (chi, mode): the median over rounds of ms per
// iteration, its ratio to the first chi's (a) (chi = 1: no straggler), the straggler's MB sent per
// iteration and the MB of migrated inputs it had to ship. As nccl-tests' -c, the check is on
// by default: (b), (c) and (d without resizing) against (a) on a first, untimed iteration per
// chi; exit status 1 if one differs. -c 0 turns it off (a bare -c means -c 1). -J FILE writes
// the rows, every round's time and the check's verdict as JSON (rank 0), for docs/perf/raw.
#include <spccl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/perf_session.h"
#include "host_gemm.h"
#include "migration_calls.h"

namespace {

using spccl::perf::MigrationCalls;

#define CHECK(call)                                                            \
  do {                                                                         \
    spcclResult_t res_ = (call);                                               \
    if (res_ != spcclSuccess) {                                                \
      std::fprintf(stderr, "%s:%d %s failed: %s\n", __FILE__, __LINE__, #call, \
                   spcclGetLastError(nullptr));                                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Options {
  std::vector<double> chis = {1, 1.5, 2, 4, 8};
  int batch = 256, hidden = 1024, columns = 256;  // columns per rank
  int straggler = 0, iters = 5, warmup = 2, rounds = 3;
  // The planner's straggler criterion: ranks sharing a few cores see
  // compute times that vary by more than the default 5%.
  double tolerance = 0.15;
  bool check = true;
  std::string jsonPath;       // -J: empty = none
  bool sleepCompute = false;  // --compute sleep: GEMMs are timed sleeps
  double flops = 2e10;        // --flops: the modelled device's FLOP/s per rank
  bool overlap = false;       // --overlap 1: (b)'s broadcasts run during the own GEMMs
  bool device = false;        // --device: the calls' buffers in device memory
};

enum class Mode { None, BroadcastReduce, ScatterGather, Plan };
const char* modeName(Mode m) {
  switch (m) {
    case Mode::None:
      return "(a) none";
    case Mode::BroadcastReduce:
      return "(b) bcast-reduce";
    case Mode::ScatterGather:
      return "(c) scatter-gather";
    case Mode::Plan:
      return "(d) plan";
  }
  return "?";
}

// What this rank does with its columns in one configuration.
struct Assignment {
  int migrated = 0;  // the straggler's last `migrated` columns go to the helpers
  int resized = 0;   // pruned (ZERO-resizing: computed as zero) before them
};

struct Rank {
  spcclComm_t comm = nullptr;
  MigrationCalls* calls = nullptr;  // main's; copies of a Rank share it
  int rank = 0, nranks = 1;
  Options opt;
  double chi = 1;
  // Row-major: X [B x H] (replicated input), W [H x C], Y and gY [B x C],
  // gX [B x H] (all-reduced), gW [H x C].
  std::vector<float> X, W, Y, gY, gX, gXsum, gW;
  // Migration buffers.
  std::vector<float> Wm, gYm, Ym, gWm, gXm, blocksIn, blocksOut;
  double matmulSeconds = 0;   // this iteration, slowdown included
  double computeSeconds = 0;  // until the layer's all-reduce
  bool arithmetic = true;     // false: --compute sleep outside the check

  bool isStraggler() const { return rank == opt.straggler; }

  // C = A * B with optional transposes, timed; the straggler sleeps
  // (chi - 1) times as long afterwards. Under --compute sleep, a sleep of
  // the modelled device's time (chi times longer on the straggler).
  void gemm(bool transA, bool transB, int m, int n, int k, const float* a, int lda, const float* b,
            int ldb, float* c, int ldc) {
    if (m == 0 || n == 0 || k == 0) return;
    if (opt.sleepCompute && !arithmetic) {
      const double took = 2.0 * m * n * k / opt.flops * (isStraggler() ? chi : 1.0);
      std::this_thread::sleep_for(std::chrono::duration<double>(took));
      matmulSeconds += took;
      return;
    }
    auto start = Clock::now();
    spccl::perf::hostSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
    double took = seconds(start, Clock::now());
    if (isStraggler() && chi > 1) {
      std::this_thread::sleep_for(std::chrono::duration<double>((chi - 1) * took));
      took *= chi;
    }
    matmulSeconds += took;
  }
};

void fill(std::vector<float>& v, size_t n, unsigned seed) {
  v.resize(n);
  unsigned x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>((x >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

// Columns [c0, c0 + n) of a row-major rows x ld matrix into a packed rows x n one.
void packColumns(const float* from, int rows, int ld, int c0, int n, float* to) {
  for (int r = 0; r < rows; ++r)
    std::memcpy(to + size_t(r) * n, from + size_t(r) * ld + c0, n * sizeof(float));
}
void unpackColumns(const float* from, int rows, int n, float* to, int ld, int c0) {
  for (int r = 0; r < rows; ++r)
    std::memcpy(to + size_t(r) * ld + c0, from + size_t(r) * n, n * sizeof(float));
}

// The straggler's own part of the layer: columns [0, keep) computed,
// [keep, keep + resized) pruned to zero, the rest migrated.
void ownForward(Rank& r, int keep) {
  const int B = r.opt.batch, H = r.opt.hidden, C = r.opt.columns;
  r.gemm(false, false, B, keep, H, r.X.data(), H, r.W.data(), C, r.Y.data(), C);
}
void ownBackward(Rank& r, int keep) {
  const int B = r.opt.batch, H = r.opt.hidden, C = r.opt.columns;
  // gX = gY[:, :keep] W[:, :keep]^T ; gW[:, :keep] = X^T gY[:, :keep]
  if (keep == 0) std::fill(r.gX.begin(), r.gX.end(), 0.0f);
  r.gemm(false, true, B, H, keep, r.gY.data(), C, r.W.data(), C, r.gX.data(), H);
  r.gemm(true, false, H, keep, B, r.X.data(), H, r.gY.data(), C, r.gW.data(), C);
}

// The straggler's broadcast of shed data (Wm, gYm), and this rank's own
// GEMMs, which do not need it. With --overlap the broadcast is queued
// (spcclImigrateBroadcast) and runs on the communicator's worker while the
// GEMMs run, so the straggler's send and the helpers' receive hide behind
// their own columns; without, it completes first (the paper's order).
template <typename OwnWork>
void broadcastDuring(Rank& r, std::vector<float>& shed, OwnWork&& ownWork) {
  if (!r.opt.overlap) {
    CHECK(r.calls->broadcast(shed, r.opt.straggler));
    ownWork();
    return;
  }
  spcclRequest_t request = nullptr;
  CHECK(r.calls->startBroadcast(shed, r.opt.straggler, &request));
  ownWork();
  CHECK(r.calls->finishBroadcast(shed, r.opt.straggler, request));
}

struct Slice {
  size_t begin = 0, length = 0;
};

// One iteration; returns nothing, leaves Y, gX (reduced), gW on each rank.
void iteration(Rank& r, Mode mode, const Assignment& a) {
  const int B = r.opt.batch, H = r.opt.hidden, C = r.opt.columns, s = r.opt.straggler;
  const int L = a.migrated;
  const bool straggler = r.isStraggler();
  const int keep = straggler ? C - L - a.resized : C;
  r.matmulSeconds = 0;
  auto start = Clock::now();
  if (straggler && a.resized > 0) {
    for (int row = 0; row < B; ++row)
      std::fill_n(r.Y.data() + size_t(row) * C + keep, a.resized, 0.0f);
  }
  const bool migrating = mode != Mode::None && L > 0;
  Slice mine;
  if (migrating) CHECK(spcclMigrateSlice(r.comm, s, L, &mine.begin, &mine.length));
  const int m = static_cast<int>(mine.length), c0 = static_cast<int>(mine.begin);

  // ---- forward: Y = X W ----
  if (migrating && mode != Mode::ScatterGather) {
    r.Wm.resize(size_t(H) * L);
    if (straggler) packColumns(r.W.data(), H, C, C - L, L, r.Wm.data());
    broadcastDuring(r, r.Wm, [&] { ownForward(r, keep); });
    r.Ym.assign(size_t(B) * L, 0.0f);
    r.gemm(false, false, B, m, H, r.X.data(), H, r.Wm.data() + c0, L, r.Ym.data() + c0, L);
    CHECK(r.calls->reduce(r.Ym, s));
    if (straggler) unpackColumns(r.Ym.data(), B, L, r.Y.data(), C, C - L);
  } else if (migrating) {
    const int mb = L / (r.nranks - 1);  // scatter-gather runs with L divisible by e - 1
    r.blocksOut.assign(size_t(H) * mb * r.nranks, 0.0f);
    if (straggler)
      for (int h = 0; h < r.nranks; ++h) {
        if (h == s) continue;
        int hr = (h - s + r.nranks) % r.nranks;  // renumbered helper, slice hr - 1
        packColumns(r.W.data(), H, C, C - L + (hr - 1) * mb, mb,
                    r.blocksOut.data() + size_t(h) * H * mb);
      }
    r.Wm.resize(size_t(H) * mb);
    CHECK(r.calls->scatter(r.blocksOut, r.Wm, size_t(H) * mb, s));
    ownForward(r, keep);
    r.Ym.assign(size_t(B) * mb, 0.0f);
    if (!straggler) r.gemm(false, false, B, mb, H, r.X.data(), H, r.Wm.data(), mb, r.Ym.data(), mb);
    r.blocksIn.resize(size_t(B) * mb * r.nranks);
    CHECK(r.calls->gather(r.Ym, r.blocksIn, size_t(B) * mb, s));
    if (straggler)
      for (int h = 0; h < r.nranks; ++h) {
        if (h == s) continue;
        int hr = (h - s + r.nranks) % r.nranks;
        unpackColumns(r.blocksIn.data() + size_t(h) * B * mb, B, mb, r.Y.data(), C,
                      C - L + (hr - 1) * mb);
      }
  } else {
    ownForward(r, keep);
  }

  // ---- backward: gY given (here: Y itself, deterministic); gX all-reduced ----
  std::memcpy(r.gY.data(), r.Y.data(), r.Y.size() * sizeof(float));
  if (migrating && mode != Mode::ScatterGather) {
    r.gYm.resize(size_t(B) * L);
    if (straggler) packColumns(r.gY.data(), B, C, C - L, L, r.gYm.data());
    broadcastDuring(r, r.gYm, [&] { ownBackward(r, keep); });
    r.gXm.assign(size_t(B) * H, 0.0f);
    r.gemm(false, true, B, H, m, r.gYm.data() + c0, L, r.Wm.data() + c0, L, r.gXm.data(), H);
    r.gWm.assign(size_t(H) * L, 0.0f);
    r.gemm(true, false, H, m, B, r.X.data(), H, r.gYm.data() + c0, L, r.gWm.data() + c0, L);
    r.computeSeconds = seconds(start, Clock::now());
    CHECK(r.calls->mergedAllReduce(r.gX, r.gXsum, r.gXm, straggler ? 0 : r.gXm.size()));
    CHECK(r.calls->reduce(r.gWm, s));
    if (straggler) unpackColumns(r.gWm.data(), H, L, r.gW.data(), C, C - L);
  } else if (migrating) {
    const int mb = L / (r.nranks - 1);
    r.blocksOut.assign(size_t(B) * mb * r.nranks, 0.0f);
    if (straggler)
      for (int h = 0; h < r.nranks; ++h) {
        if (h == s) continue;
        int hr = (h - s + r.nranks) % r.nranks;
        packColumns(r.gY.data(), B, C, C - L + (hr - 1) * mb, mb,
                    r.blocksOut.data() + size_t(h) * B * mb);
      }
    r.gYm.resize(size_t(B) * mb);
    CHECK(r.calls->scatter(r.blocksOut, r.gYm, size_t(B) * mb, s));
    ownBackward(r, keep);
    r.gXm.assign(size_t(B) * H, 0.0f);
    r.gWm.assign(size_t(H) * mb, 0.0f);
    if (!straggler) {
      r.gemm(false, true, B, H, mb, r.gYm.data(), mb, r.Wm.data(), mb, r.gXm.data(), H);
      r.gemm(true, false, H, mb, B, r.X.data(), H, r.gYm.data(), mb, r.gWm.data(), mb);
    }
    r.computeSeconds = seconds(start, Clock::now());
    CHECK(r.calls->mergedAllReduce(r.gX, r.gXsum, r.gXm, straggler ? 0 : r.gXm.size()));
    r.blocksIn.resize(size_t(H) * mb * r.nranks);
    CHECK(r.calls->gather(r.gWm, r.blocksIn, size_t(H) * mb, s));
    if (straggler)
      for (int h = 0; h < r.nranks; ++h) {
        if (h == s) continue;
        int hr = (h - s + r.nranks) % r.nranks;
        unpackColumns(r.blocksIn.data() + size_t(h) * H * mb, H, mb, r.gW.data(), C,
                      C - L + (hr - 1) * mb);
      }
  } else {
    ownBackward(r, keep);
    r.computeSeconds = seconds(start, Clock::now());
    CHECK(r.calls->allReduce(r.gX, r.gXsum));
  }
}

struct Timing {
  double secondsPerIter = 0;
  double stragglerBytesPerIter = 0;
  double computeSeconds = 0, matmulSeconds = 0;  // this rank, mean per iteration
};

Timing timeMode(Rank& r, Mode mode, const Assignment& a) {
  for (int i = 0; i < r.opt.warmup; ++i) iteration(r, mode, a);
  spcclCounters_t before{}, after{};
  CHECK(spcclBarrier(r.comm, nullptr));
  CHECK(spcclCommGetCounters(r.comm, &before));
  auto start = Clock::now();
  Timing t;
  for (int i = 0; i < r.opt.iters; ++i) {
    iteration(r, mode, a);
    t.computeSeconds += r.computeSeconds / r.opt.iters;
    t.matmulSeconds += r.matmulSeconds / r.opt.iters;
  }
  CHECK(spcclBarrier(r.comm, nullptr));
  t.secondsPerIter = seconds(start, Clock::now()) / r.opt.iters;
  CHECK(spcclCommGetCounters(r.comm, &after));
  double sent = r.isStraggler() ? double(after.bytesSent - before.bytesSent) / r.opt.iters : 0.0;
  CHECK(
      spcclAllReduce(&sent, &t.stragglerBytesPerIter, 1, spcclFloat64, spcclMax, r.comm, nullptr));
  CHECK(spcclAllReduce(&t.secondsPerIter, &t.secondsPerIter, 1, spcclFloat64, spcclMax, r.comm,
                       nullptr));
  return t;
}

// Columns that balance the straggler against the helpers when shed by
// migration alone (the comm-free version of Eq. (1)): chi (C - L) = C + L / (e - 1).
int balancingColumns(const Rank& r) {
  const double C = r.opt.columns, e = r.nranks;
  return static_cast<int>(std::lround(C * (r.chi - 1) / (r.chi + 1 / (e - 1))));
}

// Pre-test (Algorithm 2 line 1): Phi_1 from timing the migration
// collectives at a few column counts, Omega_2 from timing the column
// extraction; every rank takes the slowest fit, so all hold one model.
spcclBalanceCostModel_t fitCostModel(Rank& r) {
  const int B = r.opt.batch, H = r.opt.hidden, C = r.opt.columns;
  std::vector<double> xs, phi, omega;
  std::vector<float> buffer, packed(size_t(H) * C);
  for (int c : {C / 8, C / 4, C / 2}) {
    buffer.assign(size_t(H + B) * c, 1.0f);
    CHECK(spcclBarrier(r.comm, nullptr));
    auto start = Clock::now();
    for (int rep = 0; rep < 2; ++rep) {
      CHECK(r.calls->broadcast(buffer, r.opt.straggler));
      CHECK(r.calls->reduce(buffer, r.opt.straggler));
    }
    phi.push_back(seconds(start, Clock::now()) / 2 * 2);  // forward + backward each move (H + B) c
    start = Clock::now();
    packColumns(r.W.data(), H, C, 0, c, packed.data());
    packColumns(r.gY.data(), B, C, 0, c, packed.data());
    omega.push_back(seconds(start, Clock::now()) * r.chi);
    xs.push_back(c);
  }
  spcclBalanceCostModel_t model = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
  model.stragglerTolerance = r.opt.tolerance;
  CHECK(spcclFitLinearCost(xs.data(), phi.data(), static_cast<int>(xs.size()), model.phi1));
  CHECK(spcclFitLinearCost(xs.data(), omega.data(), static_cast<int>(xs.size()), model.omega2));
  double values[4] = {std::max(0.0, model.phi1[0]), std::max(0.0, model.phi1[1]),
                      std::max(0.0, model.omega2[0]), std::max(0.0, model.omega2[1])};
  CHECK(spcclAllReduce(values, values, 4, spcclFloat64, spcclMax, r.comm, nullptr));
  model.phi1[0] = values[0];
  model.phi1[1] = values[1];
  model.omega2[0] = values[2];
  model.omega2[1] = values[3];
  return model;
}

bool close(const std::vector<float>& a, const std::vector<float>& b, size_t n, const char* what,
           int rank) {
  for (size_t i = 0; i < n; ++i) {
    const float tol = 1e-3f * std::max(1.0f, std::fabs(a[i]));
    if (std::fabs(a[i] - b[i]) > tol) {
      std::fprintf(stderr, "rank %d: %s[%zu] = %g, expected %g\n", rank, what, i, b[i], a[i]);
      return false;
    }
  }
  return true;
}

// (a)'s first-iteration results against `mode`'s.
bool checkMode(Rank& r, Mode mode, const Assignment& a) {
  r.arithmetic = true;
  Rank reference = r;
  iteration(reference, Mode::None, Assignment{});
  iteration(r, mode, a);
  r.arithmetic = !r.opt.sleepCompute;
  bool ok = close(reference.gXsum, r.gXsum, r.gXsum.size(), "gX", r.rank);
  if (r.isStraggler()) {
    ok &= close(reference.Y, r.Y, r.Y.size(), "Y", r.rank);
    ok &= close(reference.gW, r.gW, r.gW.size(), "gW", r.rank);
  }
  int good = ok ? 1 : 0, all = 0;
  CHECK(spcclAllReduce(&good, &all, 1, spcclInt32, spcclMin, r.comm, nullptr));
  return all == 1;
}

// One printed row, kept for -J.
struct Row {
  double chi = 1;
  Mode mode = Mode::None;
  std::vector<double> roundSeconds;  // per round, slowest rank
  double medianSeconds = 0, vsBase = 0, stragglerBytesPerIter = 0;
  Assignment assignment;
  int planStragglers = -1;  // (d) only: the plan's z and beta
  double planBeta = 0;
};

// Numbers only, plus the fixed mode names: no string needs escaping.
void printJsonNumber(FILE* f, double v) {
  if (std::isfinite(v))
    std::fprintf(f, "%.9g", v);
  else
    std::fputs("null", f);
}

bool writeJson(const Options& o, int nranks, const std::vector<Row>& rows, bool checked) {
  FILE* f = std::fopen(o.jsonPath.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "migrate_perf: cannot write %s: %s\n", o.jsonPath.c_str(),
                 std::strerror(errno));
    return false;
  }
  int version = 0;
  spcclGetVersion(&version);
  std::fprintf(f, "{\"benchmark\": \"migrate_perf\", \"spccl_version\": %d, \"nranks\": %d,\n",
               version, nranks);
  std::fprintf(f, " \"options\": {\"chis\": [");
  for (size_t i = 0; i < o.chis.size(); ++i) {
    if (i > 0) std::fputs(", ", f);
    printJsonNumber(f, o.chis[i]);
  }
  std::fprintf(f,
               "], \"batch\": %d, \"hidden\": %d, \"columns\": %d, \"straggler\": %d, "
               "\"iters\": %d, \"warmup_iters\": %d, \"rounds\": %d, \"compute\": \"%s\", "
               "\"flops\": %g, \"overlap\": %s, \"device\": %s, \"tolerance\": ",
               o.batch, o.hidden, o.columns, o.straggler, o.iters, o.warmup, o.rounds,
               o.sleepCompute ? "sleep" : "gemm", o.flops, o.overlap ? "true" : "false",
               o.device ? "true" : "false");
  printJsonNumber(f, o.tolerance);
  std::fprintf(f, ", \"check\": %s},\n \"check_result\": %s,\n \"results\": [",
               o.check ? "true" : "false", o.check ? (checked ? "\"OK\"" : "\"FAILED\"") : "null");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::fprintf(f, "%s\n  {\"chi\": ", i > 0 ? "," : "");
    printJsonNumber(f, row.chi);
    std::fprintf(f, ", \"mode\": \"%s\", \"median_ms\": ", modeName(row.mode));
    printJsonNumber(f, row.medianSeconds * 1e3);
    std::fputs(", \"round_ms\": [", f);
    for (size_t k = 0; k < row.roundSeconds.size(); ++k) {
      if (k > 0) std::fputs(", ", f);
      printJsonNumber(f, row.roundSeconds[k] * 1e3);
    }
    std::fputs("], \"vs_base\": ", f);
    printJsonNumber(f, row.vsBase);
    std::fputs(", \"straggler_bytes_sent_per_iter\": ", f);
    printJsonNumber(f, row.stragglerBytesPerIter);
    std::fprintf(f, ", \"migrated_columns\": %d, \"resized_columns\": %d, \"migrated_bytes\": ",
                 row.assignment.migrated, row.assignment.resized);
    printJsonNumber(f, double(row.assignment.migrated) * (o.hidden + o.batch) * sizeof(float));
    if (row.planStragglers >= 0) {
      std::fprintf(f, ", \"plan_stragglers\": %d, \"plan_beta\": ", row.planStragglers);
      printJsonNumber(f, row.planBeta);
    }
    std::fputs("}", f);
  }
  std::fputs("\n ]\n}\n", f);
  const bool ok = std::fclose(f) == 0;
  if (!ok) std::fprintf(stderr, "migrate_perf: cannot write %s\n", o.jsonPath.c_str());
  return ok;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-x") {
      o.chis.clear();
      std::string list = next();
      for (size_t p = 0; p < list.size();) {
        size_t q = list.find(',', p);
        o.chis.push_back(std::atof(list.substr(p, q - p).c_str()));
        p = q == std::string::npos ? list.size() : q + 1;
      }
    } else if (a == "-b")
      o.batch = std::atoi(next());
    else if (a == "-H")
      o.hidden = std::atoi(next());
    else if (a == "-C")
      o.columns = std::atoi(next());
    else if (a == "-s")
      o.straggler = std::atoi(next());
    else if (a == "-n")
      o.iters = std::atoi(next());
    else if (a == "-w")
      o.warmup = std::atoi(next());
    else if (a == "-r")
      o.rounds = std::max(1, std::atoi(next()));
    else if (a == "-c") {
      // nccl-tests' -c takes 0 or 1; a bare -c (older command lines) means 1.
      if (i + 1 < argc &&
          (std::strcmp(argv[i + 1], "0") == 0 || std::strcmp(argv[i + 1], "1") == 0))
        o.check = std::strcmp(argv[++i], "1") == 0;
      else
        o.check = true;
    } else if (a == "-J")
      o.jsonPath = next();
    else if (a == "-t")
      o.tolerance = std::atof(next());
    else if (a == "--compute") {
      const std::string model = next();
      if (model != "gemm" && model != "sleep") {
        std::fprintf(stderr, "--compute %s: expected gemm or sleep\n", model.c_str());
        std::exit(2);
      }
      o.sleepCompute = model == "sleep";
    } else if (a == "--overlap") {
      const std::string value = next();
      if (value != "0" && value != "1") {
        std::fprintf(stderr, "--overlap %s: expected 0 or 1\n", value.c_str());
        std::exit(2);
      }
      o.overlap = value == "1";
    } else if (a == "--device") {
      o.device = true;
    } else if (a == "--flops") {
      o.flops = std::atof(next());
      if (!(o.flops > 0)) {
        std::fprintf(stderr, "--flops must be a positive rate in FLOP/s\n");
        std::exit(2);
      }
    } else {
      std::fprintf(stderr, "unknown option %s (see the header of migrate_perf.cc)\n", a.c_str());
      std::exit(2);
    }
  }
  if (!o.sleepCompute && !spccl::perf::hostGemmIsOpenBlas()) {
    std::fprintf(stderr,
                 "migrate_perf: --compute gemm needs OpenBLAS; this build has none, use "
                 "--compute sleep\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  spccl::perf::hostGemmUseOneThread();
  Rank r;
  r.opt = parse(argc, argv);
  r.arithmetic = !r.opt.sleepCompute;
  // --device: the launcher's rank's device current before the communicator.
  spccl::perf::PerfSession session(r.opt.device);
  r.comm = session.comm();
  r.rank = session.rank();
  r.nranks = session.nranks();
  if (r.nranks < 2 || r.opt.straggler < 0 || r.opt.straggler >= r.nranks) {
    std::fprintf(stderr, "migrate_perf: needs >= 2 ranks and a straggler rank (-s) below them\n");
    return 2;
  }
  MigrationCalls calls(r.comm, r.rank, session.device());
  r.calls = &calls;
  const int B = r.opt.batch, H = r.opt.hidden, C = r.opt.columns;
  fill(r.X, size_t(B) * H, 1);  // the same input on every rank
  fill(r.W, size_t(H) * C, 100 + r.rank);
  r.Y.assign(size_t(B) * C, 0);
  r.gY.assign(size_t(B) * C, 0);
  r.gX.assign(size_t(B) * H, 0);
  r.gXsum.assign(size_t(B) * H, 0);
  r.gW.assign(size_t(H) * C, 0);
  if (r.rank == 0)
    std::printf(
        "# migrate_perf: %d ranks, straggler %d, B=%d H=%d C=%d per rank, %d iters, compute %s, "
        "buffers %s\n"
        "# %5s %-20s %10s %8s %14s %14s %s\n",
        r.nranks, r.opt.straggler, B, H, C, r.opt.iters,
        r.opt.sleepCompute ? ("sleep at " + std::to_string(r.opt.flops / 1e9) + " GFLOP/s").c_str()
                           : "gemm (OpenBLAS)",
        r.opt.device ? "on the device (--device)" : "host", "chi", "mode", "ms/iter", "vs_base",
        "strag_MB_sent", "migrated_MB", "detail");
  double base = 0;
  bool allChecked = true;
  std::vector<Row> rows;
  for (double chi : r.opt.chis) {
    r.chi = chi;
    // (b), (c): all the balancing columns migrate, rounded to a multiple of
    // e - 1 so that scatter's blocks are equal.
    Assignment migrate;
    migrate.migrated = balancingColumns(r) / (r.nranks - 1) * (r.nranks - 1);
    // (d): planned from (a)'s measured compute and matmul times.
    const Timing probe = timeMode(r, Mode::None, Assignment{});
    spcclBalanceCostModel_t model = fitCostModel(r);
    std::vector<spcclBalanceRank_t> ranks(r.nranks);
    spcclBalancePlan_t plan{};
    plan.size = sizeof(plan);
    plan.ranks = ranks.data();
    plan.capacity = r.nranks;
    CHECK(spcclBalancePlan(r.comm, probe.computeSeconds,
                           std::min(probe.matmulSeconds, probe.computeSeconds), C, &model, &plan));
    Assignment mix;
    mix.migrated = static_cast<int>(ranks[r.opt.straggler].migrateColumns);
    mix.resized = static_cast<int>(ranks[r.opt.straggler].resizeColumns);
    char planDetail[160];
    std::snprintf(planDetail, sizeof(planDetail), "z=%d beta=%.2f L_mig=%d L_resize=%d",
                  plan.stragglers, plan.beta, mix.migrated, mix.resized);

    const Mode modes[] = {Mode::None, Mode::BroadcastReduce, Mode::ScatterGather, Mode::Plan};
    const Assignment assignments[] = {Assignment{}, migrate, migrate, mix};
    const std::string details[] = {"", "L_mig=" + std::to_string(migrate.migrated),
                                   "L_mig=" + std::to_string(migrate.migrated), planDetail};
    if (r.opt.check)
      for (int k = 1; k < 4; ++k)
        if (assignments[k].migrated > 0 && assignments[k].resized == 0 &&
            !checkMode(r, modes[k], assignments[k]))
          allChecked = false;
    // Rounds interleave the modes, so drift on a shared machine hits all alike.
    std::vector<double> roundSeconds[4];
    Timing last[4];
    for (int round = 0; round < r.opt.rounds; ++round)
      for (int k = 0; k < 4; ++k) {
        last[k] = timeMode(r, modes[k], assignments[k]);
        roundSeconds[k].push_back(last[k].secondsPerIter);
      }
    for (int k = 0; k < 4; ++k) {
      std::vector<double> perIter = roundSeconds[k];
      std::sort(perIter.begin(), perIter.end());
      const double median = perIter[perIter.size() / 2];
      if (base == 0) base = median;
      const double migratedMB = double(assignments[k].migrated) * (H + B) * sizeof(float) / 1e6;
      if (r.rank == 0)
        std::printf("  %5.2f %-20s %10.2f %8.2f %14.3f %14.3f %s\n", chi, modeName(modes[k]),
                    median * 1e3, median / base, last[k].stragglerBytesPerIter / 1e6, migratedMB,
                    details[k].c_str());
      Row row;
      row.chi = chi;
      row.mode = modes[k];
      row.roundSeconds = roundSeconds[k];
      row.medianSeconds = median;
      row.vsBase = median / base;
      row.stragglerBytesPerIter = last[k].stragglerBytesPerIter;
      row.assignment = assignments[k];
      if (modes[k] == Mode::Plan) {
        row.planStragglers = plan.stragglers;
        row.planBeta = plan.beta;
      }
      rows.push_back(std::move(row));
    }
    std::fflush(stdout);
  }
  if (r.opt.check && r.rank == 0) std::printf("# check: %s\n", allChecked ? "OK" : "FAILED");
  const bool written =
      r.rank != 0 || r.opt.jsonPath.empty() || writeJson(r.opt, r.nranks, rows, allChecked);
  if (!written) return 2;
  return r.opt.check && !allChecked ? 1 : 0;
}
