#include "settings.h"

#include <cstdlib>
#include <mutex>

#include "base/knobs.h"
#include "base/log.h"
#include "real_nccl.h"

namespace spccl::nccl {

const char* modeName(Mode mode) { return mode == Mode::Forward ? "forward" : "replace"; }

namespace {

bool parseUnsigned(const std::string& text, size_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = static_cast<size_t>(std::strtoull(text.c_str(), nullptr, 10));
  return true;
}

}  // namespace

bool parseCompressSetting(const std::string& text, CompressSetting* out, std::string* error) {
  *out = CompressSetting{};
  if (text.empty() || text == "off" || text == "0") return true;
  std::string parts[4];
  int n = 0;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    if (n == 4) {
      *error = "too many ':' fields";
      return false;
    }
    parts[n++] = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  CompressSetting s;
  s.enabled = true;
  if (parts[0] == "piecewise") {
    s.codec = spcclCodecPiecewise;
  } else if (parts[0] == "linear") {
    s.codec = spcclCodecLinear;
  } else {
    *error = "codec '" + parts[0] + "' is not piecewise or linear";
    return false;
  }
  size_t bits = 0;
  if (n < 2 || !parseUnsigned(parts[1], &bits) || bits < 2 || bits > 8) {
    *error = "BITS must be 2..8";
    return false;
  }
  s.bits = static_cast<int>(bits);
  if (n >= 3) {
    if (parts[2] == "twoshot") {
      s.schedule = spcclCompressTwoShot;
    } else if (parts[2] == "ring") {
      s.schedule = spcclCompressRing;
    } else {
      *error = "schedule '" + parts[2] + "' is not twoshot or ring";
      return false;
    }
  }
  if (n == 4 && !parseUnsigned(parts[3], &s.blockSize)) {
    *error = "BLOCK '" + parts[3] + "' is not a number";
    return false;
  }
  *out = s;
  return true;
}

std::string describe(const CompressSetting& s) {
  if (!s.enabled) return "off";
  return std::string(s.codec == spcclCodecPiecewise ? "piecewise" : "linear") + ":" +
         std::to_string(s.bits) + ":" + (s.schedule == spcclCompressRing ? "ring" : "twoshot") +
         ":" + std::to_string(s.blockSize);
}

bool parseDensity(const std::string& text, double* out) {
  *out = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(value >= 0 && value <= 1)) return false;
  *out = value;
  return true;
}

const Settings& settings() {
  static std::once_flag once;
  static Settings s;
  std::call_once(once, [] {
    knobsEchoOnce();
    const std::string mode = knobString("SPCCL_NCCL_MODE");
    if (mode == "replace") {
      s.mode = Mode::Replace;
    } else {
      if (mode != "forward")
        SPCCL_WARN("NCCL interposer: SPCCL_NCCL_MODE=%s is not forward or replace; using forward",
                   mode.c_str());
      s.mode = Mode::Forward;
      if (realNccl() == nullptr) {
        SPCCL_WARN(
            "NCCL interposer: forward mode without a real NCCL (above): spccl serves every call, "
            "as SPCCL_NCCL_MODE=replace");
        s.mode = Mode::Replace;
      }
    }
    const int64_t minBytes = knobInt("SPCCL_INTERPOSE_MIN_BYTES");
    s.minBytes = minBytes > 0 ? static_cast<size_t>(minBytes) : 0;
    s.sparse = knobInt("SPCCL_NCCL_SPARSE") != 0;
    s.report = knobInt("SPCCL_INTERPOSE_REPORT") != 0;
    const std::string density = knobString("SPCCL_NCCL_DEVICE_DENSITY");
    if (!parseDensity(density, &s.deviceDensity))
      SPCCL_WARN(
          "NCCL interposer: SPCCL_NCCL_DEVICE_DENSITY=%s is not a number in [0, 1]; device "
          "all-reduces stay on the real NCCL",
          density.c_str());
    const std::string compress = knobString("SPCCL_NCCL_COMPRESS");
    std::string error;
    if (!parseCompressSetting(compress, &s.compress, &error))
      SPCCL_WARN("NCCL interposer: SPCCL_NCCL_COMPRESS=%s: %s; compression stays off",
                 compress.c_str(), error.c_str());
    SPCCL_INFO(kLogInit,
               "NCCL interposer: %s mode, sparse all-reduce %s, compression %s, min bytes %zu, "
               "device density %g",
               modeName(s.mode), s.sparse ? "on" : "off", describe(s.compress).c_str(), s.minBytes,
               s.deviceDensity);
  });
  return s;
}

}  // namespace spccl::nccl
