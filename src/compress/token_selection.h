// The token choice of the top-k all-reduce (AccTFM section 4.3.1): every
// rank sums all ranks' scores in the same order and ranks the tokens by a
// strict total order, so every rank derives the same mask without any
// index on the wire.
#pragma once

#include <cstddef>

namespace spccl::compress {

// out[t] = all[0][t] + all[1][t] + ... (rank order, f32): the same bits on
// every rank whatever order the scores arrived in.
void sumScoresInRankOrder(const float* all, int nranks, size_t tokens, float* out);

// mask[t] = 1 for the keep tokens with the highest scores, 0 otherwise.
// Order: higher score first; equal scores (+0 and -0 included) by lower
// token index; NaN below every number (then by index). O(tokens) average.
void selectTopTokens(const float* scores, size_t tokens, size_t keep, unsigned char* mask);

}  // namespace spccl::compress
