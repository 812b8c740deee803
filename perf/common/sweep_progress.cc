#include "common/sweep_progress.h"

#include <unistd.h>

#include <algorithm>
#include <numeric>

namespace spccl::perf {

namespace {

std::string formatSeconds(double seconds) {
  char text[32];
  if (seconds < 90)
    std::snprintf(text, sizeof(text), "%.1f s", seconds);
  else if (seconds < 5400)
    std::snprintf(text, sizeof(text), "%.1f min", seconds / 60);
  else
    std::snprintf(text, sizeof(text), "%.1f h", seconds / 3600);
  return text;
}

}  // namespace

bool progressWanted(const PerfOptions& options) {
  return options.progress > 0 || (options.progress < 0 && isatty(STDERR_FILENO) == 1);
}

double estimateSecondsLeft(std::span<const size_t> doneBytes, std::span<const double> doneSeconds,
                           std::span<const size_t> leftBytes) {
  const size_t n = std::min(doneBytes.size(), doneSeconds.size());
  if (n == 0 || leftBytes.empty()) return 0.0;
  double meanBytes = 0, meanSeconds = 0;
  for (size_t i = 0; i < n; ++i) {
    meanBytes += static_cast<double>(doneBytes[i]);
    meanSeconds += doneSeconds[i];
  }
  meanBytes /= static_cast<double>(n);
  meanSeconds /= static_cast<double>(n);
  double covariance = 0, variance = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(doneBytes[i]) - meanBytes;
    covariance += dx * (doneSeconds[i] - meanSeconds);
    variance += dx * dx;
  }
  double perByte = variance > 0 ? covariance / variance : 0.0;
  double fixed = meanSeconds - perByte * meanBytes;
  if (perByte < 0) {  // larger sizes were not slower: no per-byte term
    perByte = 0;
    fixed = meanSeconds;
  } else if (fixed < 0) {  // through the origin instead
    double xy = 0, xx = 0;
    for (size_t i = 0; i < n; ++i) {
      xy += static_cast<double>(doneBytes[i]) * doneSeconds[i];
      xx += static_cast<double>(doneBytes[i]) * static_cast<double>(doneBytes[i]);
    }
    perByte = xx > 0 ? xy / xx : 0.0;
    fixed = 0;
  }
  double left = 0;
  for (size_t bytes : leftBytes) left += fixed + perByte * static_cast<double>(bytes);
  return left;
}

SweepProgress::SweepProgress(std::vector<size_t> steps, bool enabled, std::FILE* out)
    : steps_(std::move(steps)),
      enabled_(enabled),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void SweepProgress::stepDone(const std::string& label) {
  if (!enabled_ || seconds_.size() >= steps_.size()) return;
  const auto now = std::chrono::steady_clock::now();
  seconds_.push_back(std::chrono::duration<double>(now - last_).count());
  last_ = now;
  const size_t done = seconds_.size();
  const std::span<const size_t> all(steps_);
  const double left = estimateSecondsLeft(all.first(done), seconds_, all.subspan(done));
  std::fprintf(out_, "# progress: %zu/%zu sizes (%s) in %s%s%s\n", done, steps_.size(),
               label.c_str(),
               formatSeconds(std::chrono::duration<double>(now - start_).count()).c_str(),
               done < steps_.size() ? ", about " : "",
               done < steps_.size() ? (formatSeconds(left) + " left").c_str() : "");
  std::fflush(out_);
}

}  // namespace spccl::perf
