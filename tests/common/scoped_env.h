// Sets one environment variable for a test's lifetime and restores what
// it was (or unsets it). Used for the ranks a test forks: the children
// read it, the parent never calls spccl.
#pragma once

#include <cstdlib>
#include <string>

namespace spccl::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    hadValue_ = old != nullptr;
    if (hadValue_) previous_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (hadValue_)
      setenv(name_.c_str(), previous_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string previous_;
  bool hadValue_ = false;
};

}  // namespace spccl::testing
