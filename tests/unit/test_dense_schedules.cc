// The index arithmetic of the dense schedules, and the ring and chain
// relay plans of all ranks played against each other in one process
// (message order, sizes, reduction order), without a communicator.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "coll/chain_plans.h"
#include "coll/partition.h"
#include "coll/relay_plan.h"
#include "coll/ring_plan.h"

namespace spccl {
namespace {

// ---- partitions ----

TEST(Partition, EvenBlocksCoverEveryElementOnce) {
  std::vector<size_t> counts = {0, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 4097, 65537};
  for (size_t count : counts) {
    for (int parts = 1; parts <= 33; ++parts) {
      size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        ElementRange block = evenBlock(count, parts, i);
        EXPECT_EQ(block.offset, next) << count << "/" << parts << " block " << i;
        EXPECT_LE(block.count, count / parts + 1);
        EXPECT_GE(block.count, count / parts);
        next = block.end();
      }
      EXPECT_EQ(next, count) << count << "/" << parts;
      // The largest block comes first (the ring sizes its slices by it).
      EXPECT_EQ(evenBlock(count, parts, 0).count, (count + parts - 1) / parts);
    }
  }
}

TEST(Partition, SlicesCoverARangeInOrder) {
  for (size_t count : {0, 1, 5, 64, 65, 1000}) {
    for (size_t sliceElems : {1, 3, 64, 5000}) {
      SliceCursor cursor{{17, count}, sliceElems};
      size_t next = 17, slices = 0;
      ElementRange slice;
      while (cursor.advance(&slice)) {
        EXPECT_EQ(slice.offset, next);
        EXPECT_GT(slice.count, size_t{0});
        EXPECT_LE(slice.count, sliceElems);
        next = slice.end();
        ++slices;
      }
      EXPECT_EQ(next, 17 + count);
      EXPECT_EQ(slices, sliceCount(count, sliceElems));
    }
  }
}

TEST(Partition, SliceElementsAreWholeElementsAndAtLeastOne) {
  EXPECT_EQ(sliceElements(1 << 20, 4), size_t{1} << 18);
  EXPECT_EQ(sliceElements(6, 4), size_t{1});
  EXPECT_EQ(sliceElements(1, 8), size_t{1});
  EXPECT_EQ(ringSliceElements(1 << 20, 10, 4, 4), size_t{3});  // the largest of 3,3,2,2
  EXPECT_EQ(ringSliceElements(1 << 20, 0, 4, 4), size_t{1});
  EXPECT_EQ(ringSliceElements(64, 1 << 20, 4, 4), size_t{16});
}

TEST(Partition, PowersOfTwo) {
  EXPECT_EQ(largestPowerOfTwoAtMost(1), 1);
  EXPECT_EQ(largestPowerOfTwoAtMost(7), 4);
  EXPECT_EQ(largestPowerOfTwoAtMost(8), 8);
  EXPECT_EQ(ceilLog2(1), 0);
  EXPECT_EQ(ceilLog2(2), 1);
  EXPECT_EQ(ceilLog2(5), 3);
  EXPECT_EQ(ceilLog2(8), 3);
  EXPECT_EQ(positiveMod(-1, 5), 4);
  EXPECT_EQ(positiveMod(-7, 5), 3);
}

// ---- binomial tree ----

TEST(BinomialTree, EveryRankHasOneParentAndTheTreeIsShallow) {
  for (int n = 1; n <= 40; ++n) {
    std::vector<int> parentSeen(n, 0);
    for (int v = 0; v < n; ++v) {
      for (int i = 0; i < binomialChildCount(v, n); ++i) {
        int child = binomialChild(v, i);
        ASSERT_LT(child, n);
        EXPECT_EQ(binomialParent(child), v) << "n=" << n;
        ++parentSeen[child];
      }
    }
    EXPECT_EQ(parentSeen[0], 0);
    int depthLimit = ceilLog2(n);
    for (int v = 1; v < n; ++v) {
      EXPECT_EQ(parentSeen[v], 1) << "n=" << n << " v=" << v;
      int depth = 0;
      for (int u = v; u != 0; u = binomialParent(u)) ++depth;
      EXPECT_LE(depth, depthLimit);
    }
  }
}

// Child i's subtree is [v + 2^i, v + 2^(i+1)) within n: the reduce folds
// lower relative ranks before higher ones.
TEST(BinomialTree, ChildSubtreesAreConsecutiveRanges) {
  for (int n = 1; n <= 40; ++n) {
    for (int v = 0; v < n; ++v) {
      for (int i = 0; i < binomialChildCount(v, n); ++i) {
        int child = binomialChild(v, i);
        std::set<int> subtree;
        std::vector<int> stack = {child};
        while (!stack.empty()) {
          int u = stack.back();
          stack.pop_back();
          subtree.insert(u);
          for (int j = 0; j < binomialChildCount(u, n); ++j) stack.push_back(binomialChild(u, j));
        }
        int end = std::min(n, v + (2 << i));
        EXPECT_EQ(*subtree.begin(), child);
        EXPECT_EQ(*subtree.rbegin(), end - 1);
        EXPECT_EQ(subtree.size(), size_t(end - child));
      }
    }
  }
}

TEST(BinomialTree, RelativeRanksRoundTrip) {
  for (int n = 1; n <= 9; ++n)
    for (int root = 0; root < n; ++root)
      for (int r = 0; r < n; ++r) EXPECT_EQ(absoluteRank(relativeRank(r, root, n), root, n), r);
  EXPECT_EQ(relativeRank(2, 3, 5), 4);
}

// ---- recursive doubling fold ----

TEST(FoldMap, ExtraRanksPairWithLowRanks) {
  for (int n = 1; n <= 40; ++n) {
    int p = largestPowerOfTwoAtMost(n);
    EXPECT_LE(p, n);
    EXPECT_GT(2 * p, n);
    for (int r = 0; r < n; ++r) {
      FoldRole role = foldRole(r, n);
      EXPECT_EQ(role.powerOfTwo, p);
      EXPECT_EQ(role.folded, r >= p);
      if (role.foldPartner >= 0) {
        ASSERT_LT(role.foldPartner, n);
        FoldRole partner = foldRole(role.foldPartner, n);
        EXPECT_EQ(partner.foldPartner, r) << "n=" << n;
        EXPECT_NE(partner.folded, role.folded);
      } else {
        EXPECT_FALSE(role.folded);
        EXPECT_GE(r + p, n);
      }
    }
  }
}

// ---- relay plans, all ranks in one process ----

// A deliberately non-commutative, non-associative combine, so the test sees
// the exact bracketing each schedule promises.
uint64_t combine(uint64_t a, uint64_t b) { return a * 1000003u + b + 1; }
void combineArrays(void* dst, const void* a, const void* b, size_t count) {
  const uint64_t* x = static_cast<const uint64_t*>(a);
  const uint64_t* y = static_cast<const uint64_t*>(b);
  uint64_t* out = static_cast<uint64_t*>(dst);
  for (size_t i = 0; i < count; ++i) out[i] = combine(x[i], y[i]);
}
uint64_t inputValue(int rank, size_t index) { return uint64_t(rank) * 7919 + index + 1; }

struct SimulatedRank {
  RelayPlan* plan;
  int upstream;
  int downstream;
};

// Drives every rank's plan the way runRelay does (initial sends, then one
// arrival at a time with the next one already known), delivering messages
// over per-link FIFOs; messages are copied when sent. Returns how often
// the next receive could not be posted early (arrivalsConflict).
int simulate(std::vector<SimulatedRank>& ranks) {
  int conflicts = 0;
  const size_t es = sizeof(uint64_t);
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> links;
  auto send = [&](int from, int to, const void* data, size_t count) {
    EXPECT_GE(to, 0) << "rank " << from << " sends without a downstream peer";
    const char* bytes = static_cast<const char*>(data);
    links[{from, to}].emplace_back(bytes, bytes + count * es);
  };
  const int n = static_cast<int>(ranks.size());
  std::vector<RelayArrival> current(n), next(n);
  std::vector<bool> haveCurrent(n), haveNext(n);
  for (int r = 0; r < n; ++r) {
    haveCurrent[r] = ranks[r].plan->nextArrival(&current[r]);
    const void* data;
    size_t count;
    while (ranks[r].plan->nextInitialSend(&data, &count)) send(r, ranks[r].downstream, data, count);
    if (haveCurrent[r]) haveNext[r] = ranks[r].plan->nextArrival(&next[r]);
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      while (haveCurrent[r]) {
        auto& queue = links[{ranks[r].upstream, r}];
        if (queue.empty()) break;
        const RelayArrival a = current[r];
        const size_t bytes = a.count * es;
        EXPECT_GT(a.count, size_t{0}) << "empty messages are skipped on both sides";
        if (queue.front().size() != bytes) {
          ADD_FAILURE() << "rank " << r << " got " << queue.front().size() << " bytes from "
                        << ranks[r].upstream << ", expects " << bytes;
          return conflicts;
        }
        if (haveNext[r] && arrivalsConflict(next[r], a, es)) ++conflicts;
        std::memcpy(a.landing, queue.front().data(), bytes);
        queue.pop_front();
        if (a.reduceInto != nullptr) combineArrays(a.reduceInto, a.first, a.second, a.count);
        if (a.forward != nullptr) send(r, ranks[r].downstream, a.forward, a.count);
        current[r] = next[r];
        haveCurrent[r] = haveNext[r];
        if (haveCurrent[r]) haveNext[r] = ranks[r].plan->nextArrival(&next[r]);
        progress = true;
      }
    }
  }
  for (int r = 0; r < n; ++r) EXPECT_FALSE(haveCurrent[r]) << "rank " << r << " starved";
  for (auto& [link, queue] : links)
    EXPECT_TRUE(queue.empty()) << "unreceived messages on " << link.first << "->" << link.second;
  return conflicts;
}

struct RingCase {
  int nranks;
  size_t count;  // AllReduce: all elements; ReduceScatter / AllGather: per rank
  size_t chunkElems;
  bool inPlace;
};

std::vector<RingCase> ringCases() {
  std::vector<RingCase> cases;
  for (int n : {2, 3, 4, 5, 8})
    for (size_t count : {1, 2, 3, 7, 13, 100})
      for (size_t chunk : {1, 3, 1000})
        for (bool inPlace : {false, true}) cases.push_back({n, count, chunk, inPlace});
  return cases;
}

// Block b's reduction starts at rank b+1 and goes once round the ring.
uint64_t ringReduced(int nranks, int block, size_t index) {
  uint64_t acc = inputValue((block + 1) % nranks, index);
  for (int j = 2; j <= nranks; ++j) acc = combine(acc, inputValue((block + j) % nranks, index));
  return acc;
}

TEST(RingPlan, AllReduceGivesEveryRankTheSameFixedOrderResult) {
  for (const RingCase& c : ringCases()) {
    SCOPED_TRACE(testing::Message() << "n=" << c.nranks << " count=" << c.count
                                    << " chunk=" << c.chunkElems << " inPlace=" << c.inPlace);
    const int n = c.nranks;
    size_t slice = ringSliceElements(c.chunkElems * 8, c.count, n, 8);
    std::vector<std::vector<uint64_t>> send(n), recv(n), landing(n);
    std::vector<std::unique_ptr<RingPlan>> plans;
    std::vector<SimulatedRank> ranks;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < c.count; ++i) send[r].push_back(inputValue(r, i));
      recv[r].assign(c.count, 0);
      landing[r].assign(2 * slice, 0);
      RingBuffers buffers;
      buffers.input = reinterpret_cast<const char*>(send[r].data());
      buffers.output = reinterpret_cast<char*>(c.inPlace ? send[r].data() : recv[r].data());
      buffers.landing = reinterpret_cast<char*>(landing[r].data());
      plans.push_back(std::make_unique<RingPlan>(r, n, c.count, slice, 8, true, true, buffers));
      ranks.push_back({plans.back().get(), (r + n - 1) % n, (r + 1) % n});
    }
    // Double buffering keeps the next receive posted early, except when a
    // single block carries all the data (count 1).
    int conflicts = simulate(ranks);
    if (c.count > 1) {
      EXPECT_EQ(conflicts, 0);
    }
    for (int r = 0; r < n; ++r) {
      const std::vector<uint64_t>& out = c.inPlace ? send[r] : recv[r];
      for (int b = 0; b < n; ++b) {
        ElementRange block = evenBlock(c.count, n, b);
        for (size_t i = block.offset; i < block.end(); ++i)
          ASSERT_EQ(out[i], ringReduced(n, b, i)) << "rank " << r << " element " << i;
      }
    }
  }
}

TEST(RingPlan, ReduceScatterLeavesBlockROnRankR) {
  for (const RingCase& c : ringCases()) {
    SCOPED_TRACE(testing::Message() << "n=" << c.nranks << " count=" << c.count
                                    << " chunk=" << c.chunkElems << " inPlace=" << c.inPlace);
    const int n = c.nranks;
    const size_t total = c.count * n;
    size_t slice = ringSliceElements(c.chunkElems * 8, total, n, 8);
    std::vector<std::vector<uint64_t>> send(n), recv(n), landing(n), staging(n);
    std::vector<std::unique_ptr<RingPlan>> plans;
    std::vector<SimulatedRank> ranks;
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < total; ++i) send[r].push_back(inputValue(r, i));
      recv[r].assign(c.count, 0);
      landing[r].assign(2 * slice, 0);
      staging[r].assign(kRelayStagingSlices * slice, 0);
      RingBuffers buffers;
      buffers.input = reinterpret_cast<const char*>(send[r].data());
      buffers.ownBlockOutput =
          reinterpret_cast<char*>(c.inPlace ? send[r].data() + r * c.count : recv[r].data());
      buffers.landing = reinterpret_cast<char*>(landing[r].data());
      buffers.staging = reinterpret_cast<char*>(staging[r].data());
      plans.push_back(std::make_unique<RingPlan>(r, n, total, slice, 8, true, false, buffers));
      ranks.push_back({plans.back().get(), (r + n - 1) % n, (r + 1) % n});
    }
    EXPECT_EQ(simulate(ranks), 0);
    for (int r = 0; r < n; ++r) {
      const uint64_t* out = c.inPlace ? send[r].data() + r * c.count : recv[r].data();
      for (size_t i = 0; i < c.count; ++i)
        ASSERT_EQ(out[i], ringReduced(n, r, r * c.count + i)) << "rank " << r << " element " << i;
    }
  }
}

TEST(RingPlan, AllGatherCollectsEveryBlock) {
  for (const RingCase& c : ringCases()) {
    const int n = c.nranks;
    const size_t total = c.count * n;
    size_t slice = ringSliceElements(c.chunkElems * 8, total, n, 8);
    std::vector<std::vector<uint64_t>> recv(n);
    std::vector<std::unique_ptr<RingPlan>> plans;
    std::vector<SimulatedRank> ranks;
    for (int r = 0; r < n; ++r) {
      recv[r].assign(total, 0);
      for (size_t i = 0; i < c.count; ++i) recv[r][r * c.count + i] = inputValue(r, i);
      RingBuffers buffers;
      buffers.output = reinterpret_cast<char*>(recv[r].data());
      plans.push_back(std::make_unique<RingPlan>(r, n, total, slice, 8, false, true, buffers));
      ranks.push_back({plans.back().get(), (r + n - 1) % n, (r + 1) % n});
    }
    EXPECT_EQ(simulate(ranks), 0);
    for (int r = 0; r < n; ++r)
      for (int b = 0; b < n; ++b)
        for (size_t i = 0; i < c.count; ++i)
          ASSERT_EQ(recv[r][b * c.count + i], inputValue(b, i))
              << "n=" << n << " count=" << c.count << " rank " << r << " block " << b;
  }
}

TEST(ChainPlans, BroadcastAndReduceFromEveryRoot) {
  for (int n : {2, 3, 5, 8}) {
    for (int root = 0; root < n; ++root) {
      for (size_t count : {1, 6, 31}) {
        for (size_t slice : {1, 4, 100}) {
          SCOPED_TRACE(testing::Message() << "n=" << n << " root=" << root << " count=" << count
                                          << " slice=" << slice);
          std::vector<std::vector<uint64_t>> bcast(n), input(n), output(n), landing(n), staging(n);
          std::vector<std::unique_ptr<RelayPlan>> plans;
          std::vector<SimulatedRank> broadcastRanks, reduceRanks;
          for (int r = 0; r < n; ++r) {
            bcast[r].assign(count, 0);
            for (size_t i = 0; i < count; ++i) {
              input[r].push_back(inputValue(r, i));
              if (r == root) bcast[r][i] = inputValue(r, i);
            }
            output[r].assign(count, 0);
            landing[r].assign(2 * slice, 0);
            staging[r].assign(kRelayStagingSlices * slice, 0);
            ChainPosition position = chainPosition(r, root, n);
            plans.push_back(std::make_unique<BroadcastChainPlan>(
                position, reinterpret_cast<char*>(bcast[r].data()), count, slice, 8));
            broadcastRanks.push_back(
                {plans.back().get(), position.towardsRoot, position.awayFromRoot});
            plans.push_back(std::make_unique<ReduceChainPlan>(
                position, reinterpret_cast<const char*>(input[r].data()),
                reinterpret_cast<char*>(output[r].data()),
                reinterpret_cast<char*>(landing[r].data()),
                reinterpret_cast<char*>(staging[r].data()), count, slice, 8));
            reduceRanks.push_back(
                {plans.back().get(), position.awayFromRoot, position.towardsRoot});
          }
          EXPECT_EQ(simulate(broadcastRanks), 0);
          EXPECT_EQ(simulate(reduceRanks), 0);
          for (size_t i = 0; i < count; ++i) {
            for (int r = 0; r < n; ++r) ASSERT_EQ(bcast[r][i], inputValue(root, i)) << r;
            // x0 op (x1 op (... op x(n-1))) over relative ranks.
            uint64_t expected = inputValue(absoluteRank(n - 1, root, n), i);
            for (int v = n - 2; v >= 0; --v)
              expected = combine(inputValue(absoluteRank(v, root, n), i), expected);
            ASSERT_EQ(output[root][i], expected) << "element " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace spccl
