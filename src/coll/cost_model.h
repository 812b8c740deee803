// Alpha-beta costs of the dense schedules (Hockney model: a message of m
// bytes costs alpha + m*beta) and the cost-based choice among them. Pure
// functions of values every rank agrees on, kept apart from the schedules
// so they can be tested without a communicator.
#pragma once

#include <span>
#include <string>

#include "coll/collective.h"

namespace spccl {

// Ring reduce-scatter + all-gather: 2(n-1) steps of S/n bytes.
double ringAllReduceCost(const CostInput& input);
// log2(p) full-buffer exchanges, plus the fold and unfold when n != p.
double recursiveDoublingAllReduceCost(const CostInput& input);
// One ring half: n-1 steps of S/n bytes (S = the whole n-block buffer).
double ringHalfCost(const CostInput& input);
// ceil(log2 n) full-buffer hops.
double binomialTreeCost(const CostInput& input);
// (n-2+k)(alpha + S/k*beta) with k = chainSliceCount(input).
double pipelinedChainCost(const CostInput& input);
// The k (>= 1) that minimises the chain's cost among those whose slices
// are at most chunkBytes: max(ceil(S / chunkBytes), the integer optimum
// near sqrt((n-2) S beta / alpha)). The chain schedules cut their buffer
// into this many slices, so the model prices what runs.
size_t chainSliceCount(const CostInput& input);
// n-1 exchanges of S/n bytes.
double pairwiseExchangeCost(const CostInput& input);
// ceil(log2 n) zero-byte rounds.
double disseminationCost(const CostInput& input);

// CostInput::bytes for a call: the buffer each algorithm's cost is stated
// in (the whole n-block buffer for AllGather, ReduceScatter and AllToAll).
// Only values every rank passes identically enter it.
size_t denseCostBytes(const CollArgs& args, int nranks);

// The message size (bytes) where `small` stops being cheaper than
// `large`, rounded to the nearest power of two; 0 when the two do not
// swap order between 1 byte and 2^50 bytes.
double roundedCrossoverBytes(double (*costA)(const CostInput&), double (*costB)(const CostInput&),
                             const CostInput& input);

// Whether `name` appears in the comma-separated override list (so one
// SPCCL_ALGO such as "recursive_doubling,pipelined_chain" can steer
// several collectives at once).
bool overrideNames(const std::string& override, const char* name);

// The algorithm for `type` among `table`: the first entry that implements
// `type` and that the override names, else the cheapest for input (ties go to
// the earlier entry). Returns nullptr when nothing implements `type`.
const DenseAlgorithm* chooseDenseAlgorithm(std::span<const DenseAlgorithm> table, CollType type,
                                           const CostInput& input, const std::string& override,
                                           bool* overridden = nullptr);

// Why chooseDenseAlgorithm returned `chosen`, for the COLL log line:
// "forced by SPCCL_ALGO=ring,binomial", else its modelled cost first and
// the other candidates' after it ("cost model: ring 1.21 ms vs
// recursive_doubling 3.05 ms"), or "the only algorithm for AllGather".
std::string explainDenseChoice(std::span<const DenseAlgorithm> table, const DenseAlgorithm& chosen,
                               const CostInput& input, const std::string& override,
                               bool overridden);

}  // namespace spccl
