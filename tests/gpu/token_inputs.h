// Scores for the token top-k tests (test_gpu_tokens, test_cuda_logic_on_host).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace spccl::gpu_test {

// Scores with many exact ties and every special value.
inline std::vector<float> adversarialScores(size_t count, std::mt19937_64& rng) {
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -1.0f,
                            1.0f,
                            1e-40f};
  std::vector<float> scores(count);
  for (auto& s : scores) {
    const uint64_t pick = rng() % 10;
    s = pick < 8 ? specials[pick] : static_cast<float>(static_cast<int>(rng() % 50) - 25) / 4;
  }
  return scores;
}

}  // namespace spccl::gpu_test
