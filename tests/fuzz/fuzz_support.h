// What the libFuzzer harnesses share: reading typed fields off the front
// of the input (short inputs read as zeros), quiet logs (a decoder that
// refuses its input logs a WARN, and printing one per execution would cost
// more than the decoding), and a check that aborts, so that a broken
// invariant is a crash libFuzzer keeps.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace spccl::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T take() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    const size_t n = std::min(sizeof(T), size_);
    if (n > 0) std::memcpy(&value, data_, n);
    data_ += n;
    size_ -= n;
    return value;
  }
  // At most n bytes.
  std::vector<unsigned char> bytes(size_t n) {
    n = std::min(n, size_);
    std::vector<unsigned char> out(data_, data_ + n);
    data_ += n;
    size_ -= n;
    return out;
  }
  std::vector<unsigned char> rest() { return bytes(size_); }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

// Before the library reads its first knob (LLVMFuzzerInitialize).
// SPCCL_DEBUG set by the caller wins.
inline void quietLogs() { setenv("SPCCL_DEBUG", "NONE", 0); }

[[noreturn]] inline void invariantFailed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace spccl::fuzz

#define SPCCL_FUZZ_CHECK(cond) \
  ((cond) ? (void)0 : ::spccl::fuzz::invariantFailed(#cond, __FILE__, __LINE__))
