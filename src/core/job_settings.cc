#include "core/job_settings.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/knobs.h"
#include "core/bootstrap.h"
#include "core/comm.h"

namespace spccl {

namespace {

constexpr int64_t kMinChunkBytes = 4096;

template <size_t N>
void copyText(char (&field)[N], const std::string& text) {
  std::snprintf(field, N, "%s", text.c_str());
}

// A text field of another rank's settings: the table arrives as bytes, so
// its NUL is not to be relied on.
template <size_t N>
std::string textOf(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

// One setting, shown as text for the comparison and the message.
struct SettingView {
  const char* knob;
  std::string (*show)(const JobSettings&);
};

const SettingView kSettings[] = {
    {"SPCCL_TRANSPORT", [](const JobSettings& s) { return textOf(s.transport); }},
    {"SPCCL_ALGO",
     [](const JobSettings& s) { return s.algorithm[0] ? textOf(s.algorithm) : "(model)"; }},
    {"SPCCL_CHUNK_BYTES", [](const JobSettings& s) { return std::to_string(s.chunkBytes); }},
    {"SPCCL_STAGING_CHUNK_BYTES",
     [](const JobSettings& s) { return std::to_string(s.stagingChunkBytes); }},
    {"SPCCL_SPARSE_PIECE_BYTES",
     [](const JobSettings& s) { return std::to_string(s.sparsePieceBytes); }},
    {"SPCCL_COMPRESS_PIECE_BYTES",
     [](const JobSettings& s) { return std::to_string(s.compressPieceBytes); }},
    {"SPCCL_NET_STRIPE_MIN_BYTES",
     [](const JobSettings& s) { return std::to_string(s.stripeMinBytes); }},
    {"SPCCL_DEVICE_ALLREDUCE",
     [](const JobSettings& s) { return std::to_string(s.deviceAllReduce); }},
    {"SPCCL_CHECK_ROOTS", [](const JobSettings& s) { return std::to_string(s.checkRoots); }},
    {"SPCCL_PROFILE_LINKS", [](const JobSettings& s) { return std::to_string(s.profileLinks); }},
    {"SPCCL_TLS", [](const JobSettings& s) { return textOf(s.tls); }},
    {"SPCCL_WIRE_CHECKSUM", [](const JobSettings& s) { return textOf(s.wireChecksum); }},
};

}  // namespace

JobSettings localJobSettings(const CommOptions& options) {
  JobSettings s;
  copyText(s.transport, options.transport);
  copyText(s.algorithm, options.algorithmOverride);
  s.chunkBytes = static_cast<uint64_t>(std::max(knobInt("SPCCL_CHUNK_BYTES"), kMinChunkBytes));
  // 0 turns the cut off; a piece is at least a page.
  const int64_t staging = knobInt("SPCCL_STAGING_CHUNK_BYTES");
  s.stagingChunkBytes = staging <= 0 ? 0 : static_cast<uint64_t>(std::max(staging, kMinChunkBytes));
  const int64_t sparsePieces = knobInt("SPCCL_SPARSE_PIECE_BYTES");
  s.sparsePieceBytes =
      sparsePieces <= 0 ? 0 : static_cast<uint64_t>(std::max(sparsePieces, kMinChunkBytes));
  const int64_t compressPieces = knobInt("SPCCL_COMPRESS_PIECE_BYTES");
  s.compressPieceBytes =
      compressPieces <= 0 ? 0 : static_cast<uint64_t>(std::max(compressPieces, kMinChunkBytes));
  s.stripeMinBytes =
      static_cast<uint64_t>(std::max<int64_t>(knobInt("SPCCL_NET_STRIPE_MIN_BYTES"), 0));
  s.checkRoots = knobInt("SPCCL_CHECK_ROOTS") != 0 ? 1 : 0;
  s.deviceAllReduce = knobInt("SPCCL_DEVICE_ALLREDUCE") != 0 ? 1 : 0;
  s.profileLinks = options.profileLinks ? 1 : 0;
  copyText(s.tls, knobString("SPCCL_TLS"));
  copyText(s.wireChecksum, knobString("SPCCL_WIRE_CHECKSUM"));
  return s;
}

spcclResult_t checkJobSettingsAgree(const std::vector<RankInfo>& ranks, int me) {
  const JobSettings& mine = ranks[me].job;
  for (const SettingView& setting : kSettings) {
    const std::string ours = setting.show(mine);
    for (size_t r = 0; r < ranks.size(); ++r) {
      const std::string theirs = setting.show(ranks[r].job);
      if (theirs != ours)
        return SPCCL_FAIL(spcclInvalidUsage,
                          "%s is %s on rank %zu but %s on rank %d: every rank of a communicator "
                          "must use the same value",
                          setting.knob, theirs.c_str(), r, ours.c_str(), me);
    }
  }
  return spcclSuccess;
}

}  // namespace spccl
