// Zen's hierarchical hashing (Algorithm 1, section 3.2) on the CPU.
//
// h0 = partition.owner() picks the partition (the same on every rank);
// inside it, h1..hk try k slots of the partition's parallel memory; after k
// failures the entry goes to the serial memory through an atomic counter
// (technique #1). The memories hold the entry's ordinal in the input, from
// which both its index and its value follow; slot emptiness is a separate
// occupancy mark, so index 0 (and ordinal 0) are ordinary entries.
//
// Claiming a slot: Zen's read-after-write check (technique #4) alone misses
// the interleaving where the first writer reads its value back before a
// second writer, which saw the slot empty, overwrites it. The occupancy
// mark is therefore taken with an atomic exchange, and the read-back stays
// as the paper's check; either failing means "collision, try the next hash".
//
// Serial memory starts at r2 = r1/10 slots. An entry whose counter value
// lands beyond it is remembered with that value; once the writers are done
// the memory doubles until every reserved value fits and the spilled
// entries are written at their values: nothing is dropped, and nothing that
// fit moves.
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "sparse/bucketing_methods.h"
#include "sparse/value_copy.h"

namespace spccl::sparse {

namespace {

struct Spill {
  int part;
  uint64_t slot;     // counter value reserved, beyond the serial memory
  uint64_t ordinal;  // entry in the input
};

struct WriterStats {
  uint64_t rehashed = 0, serialWrites = 0;
  std::vector<Spill> spills;
};

class HashMemory {
 public:
  HashMemory(const IndexPartition& partition, size_t nnz, const HierarchicalHashOptions& options)
      : partition_(partition), seed_(options.secondLevelSeed) {
    const size_t parts = static_cast<size_t>(partition.parts());
    parallelStart_.resize(parts + 1, 0);
    serial_.resize(parts);
    for (size_t p = 0; p < parts; ++p) {
      const uint64_t r1 = parallelSlotsFor(static_cast<int>(p), nnz, options);
      parallelStart_[p + 1] = parallelStart_[p] + r1;
      const uint64_t r2 =
          options.fixedSerialSlots > 0 ? options.fixedSerialSlots : r1 / options.serialDivisor;
      serial_[p].resize(r2 > 0 ? r2 : 1);
    }
    // Value-initialised: every mark starts empty.
    occupied_ = std::make_unique<std::atomic<uint8_t>[]>(parallelStart_[parts]);
    slots_ = std::make_unique<std::atomic<uint64_t>[]>(parallelStart_[parts]);
    serialCount_ = std::make_unique<std::atomic<uint64_t>[]>(parts);
  }

  // Algorithm 1, lines 7-16, for entries [begin, end).
  void insert(const uint64_t* indices, size_t begin, size_t end, WriterStats* stats) {
    for (size_t ordinal = begin; ordinal < end; ++ordinal) {
      const uint64_t idx = indices[ordinal];
      const int p = partition_.owner(idx);
      if (!insertParallel(p, idx, ordinal, stats)) insertSerial(p, ordinal, stats);
    }
  }

  // Grows each overflowed serial memory and writes its spilled entries.
  uint64_t placeSpills(const std::vector<Spill>& spills) {
    uint64_t growths = 0;
    for (size_t p = 0; p < serial_.size(); ++p) {
      const uint64_t needed = serialCount_[p].load(std::memory_order_relaxed);
      size_t capacity = serial_[p].size();
      while (capacity < needed) {
        capacity *= 2;
        ++growths;
      }
      serial_[p].resize(capacity);
    }
    for (const Spill& spill : spills) serial_[spill.part][spill.slot] = spill.ordinal;
    return growths;
  }

  // Algorithm 1, lines 18-22: per partition, the parallel memory in slot
  // order, then the serial memory.
  void extract(const uint64_t* indices, const unsigned char* values, size_t valueBytes,
               Buckets* out) const {
    const size_t parts = serial_.size();
    out->offsets.assign(parts + 1, 0);
    size_t written = 0;
    auto emit = [&](uint64_t ordinal) {
      out->positions[written] = partition_.position(indices[ordinal]);
      copyValue(&out->values[written * valueBytes], values + ordinal * valueBytes, valueBytes);
      ++written;
    };
    for (size_t p = 0; p < parts; ++p) {
      for (uint64_t q = parallelStart_[p]; q < parallelStart_[p + 1]; ++q) {
        if (occupied_[q].load(std::memory_order_relaxed)) {
          emit(slots_[q].load(std::memory_order_relaxed));
        }
      }
      const uint64_t serialUsed = serialCount_[p].load(std::memory_order_relaxed);
      for (uint64_t q = 0; q < serialUsed; ++q) emit(serial_[p][q]);
      out->offsets[p + 1] = written;
    }
  }

 private:
  uint64_t parallelSlotsFor(int p, size_t nnz, const HierarchicalHashOptions& options) const {
    if (options.fixedParallelSlots > 0) return options.fixedParallelSlots;
    // Entries expected in p: nnz * |I_p| / M (partitions may differ in size).
    const uint64_t universe = partition_.universe();
    const double expected = universe == 0 ? 0.0
                                          : static_cast<double>(nnz) *
                                                static_cast<double>(partition_.partSize(p)) /
                                                static_cast<double>(universe);
    const auto slots = static_cast<uint64_t>(std::ceil(options.slotsPerExpectedIndex * expected));
    return slots > options.minParallelSlots ? slots : options.minParallelSlots;
  }

  bool insertParallel(int p, uint64_t idx, uint64_t ordinal, WriterStats* stats) {
    const uint64_t base = parallelStart_[static_cast<size_t>(p)];
    const uint64_t slots = parallelStart_[static_cast<size_t>(p) + 1] - base;
    for (int i = 1; i <= HierarchicalHashOptions::kHashes; ++i) {
      if (i == 2) ++stats->rehashed;
      if (claim(base + secondLevelSlot(i, idx, seed_, slots), ordinal)) return true;
    }
    return false;
  }

  bool claim(uint64_t q, uint64_t ordinal) {
    if (occupied_[q].load(std::memory_order_relaxed)) return false;         // line 17: taken
    if (occupied_[q].exchange(1, std::memory_order_acq_rel)) return false;  // lost a race
    slots_[q].store(ordinal, std::memory_order_relaxed);
    return slots_[q].load(std::memory_order_relaxed) == ordinal;  // technique #4
  }

  void insertSerial(int p, uint64_t ordinal, WriterStats* stats) {
    ++stats->serialWrites;
    const uint64_t q = serialCount_[p].fetch_add(1, std::memory_order_relaxed);
    std::vector<uint64_t>& memory = serial_[static_cast<size_t>(p)];
    if (q < memory.size()) {
      memory[q] = ordinal;
    } else {
      stats->spills.push_back({p, q, ordinal});
    }
  }

  const IndexPartition& partition_;
  uint64_t seed_;
  std::vector<uint64_t> parallelStart_;  // parts + 1: partition p's slots [start[p], start[p+1])
  std::unique_ptr<std::atomic<uint8_t>[]> occupied_;
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;
  std::vector<std::vector<uint64_t>> serial_;
  std::unique_ptr<std::atomic<uint64_t>[]> serialCount_;
};

}  // namespace

void hierarchicalHashBucketing(const IndexPartition& partition, size_t valueBytes,
                               const uint64_t* indices, const void* values, size_t nnz,
                               const HierarchicalHashOptions& options, Buckets* out) {
  HashMemory memory(partition, nnz, options);
  const size_t writers = options.threads > 1 ? static_cast<size_t>(options.threads) : 1;
  std::vector<WriterStats> stats(writers);
  if (writers == 1) {
    memory.insert(indices, 0, nnz, &stats[0]);
  } else {
    // A writer's exception (std::bad_alloc from its spills) is rethrown
    // here, on the calling thread, whose caller reports it: one leaving a
    // thread would end the process.
    std::vector<std::exception_ptr> failures(writers);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < writers; ++t) {
      threads.emplace_back([&, t] {
        try {
          memory.insert(indices, nnz * t / writers, nnz * (t + 1) / writers, &stats[t]);
        } catch (...) {
          failures[t] = std::current_exception();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::exception_ptr& failure : failures)
      if (failure) std::rethrow_exception(failure);
  }

  std::vector<Spill> spills;
  out->rehashed = out->serialWrites = 0;
  for (WriterStats& s : stats) {
    out->rehashed += s.rehashed;
    out->serialWrites += s.serialWrites;
    spills.insert(spills.end(), s.spills.begin(), s.spills.end());
  }
  out->serialGrowths = memory.placeSpills(spills);
  out->positions.resize(nnz);
  out->values.resize(nnz * valueBytes);
  memory.extract(indices, static_cast<const unsigned char*>(values), valueBytes, out);
}

}  // namespace spccl::sparse
