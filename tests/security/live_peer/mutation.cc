#include "mutation.h"

#include <cstddef>
#include <cstring>
#include <iterator>

#include "runtime/frame.h"

namespace spccl::livefuzz {

namespace {

struct KindName {
  MutationKind kind;
  const char* name;
  Target target;
};

const KindName kKinds[] = {
    {MutationKind::None, "none", Target::Any},
    {MutationKind::HeaderBitFlip, "header_bitflip", Target::Header},
    {MutationKind::HeaderField, "header_field", Target::Header},
    {MutationKind::HugeLength, "huge_length", Target::Header},
    {MutationKind::HeaderTruncate, "header_truncate", Target::Header},
    {MutationKind::PayloadBitFlip, "payload_bitflip", Target::Payload},
    {MutationKind::PayloadTruncate, "payload_truncate", Target::Payload},
    {MutationKind::PayloadExtend, "payload_extend", Target::Payload},
    {MutationKind::ConsistentTruncate, "consistent_truncate", Target::Header},
    {MutationKind::Duplicate, "duplicate", Target::Any},
    {MutationKind::Drop, "drop", Target::Any},
    {MutationKind::CloseMidFrame, "close_mid_frame", Target::Any},
    {MutationKind::RawHugePrefix, "raw_huge_prefix", Target::Any},
    {MutationKind::RawGarbage, "raw_garbage", Target::Any},
};

// SplitMix64: the details of a mutation from its seed alone, so a run
// repeats from the seed the driver prints.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
};

struct Field {
  const char* name;
  size_t offset;
  size_t bytes;
};

const Field kHeaderFields[] = {
    {"magic", offsetof(FrameHeader, magic), 4},
    {"version", offsetof(FrameHeader, version), 2},
    {"kind", offsetof(FrameHeader, kind), 2},
    {"commId", offsetof(FrameHeader, commId), 8},
    {"seq", offsetof(FrameHeader, seq), 8},
    {"step", offsetof(FrameHeader, step), 4},
    {"collType", offsetof(FrameHeader, collType), 1},
    {"datatype", offsetof(FrameHeader, datatype), 1},
    {"op", offsetof(FrameHeader, op), 1},
    {"flags", offsetof(FrameHeader, flags), 1},
    {"root", offsetof(FrameHeader, root), 4},
    {"srcRank", offsetof(FrameHeader, srcRank), 4},
    {"count", offsetof(FrameHeader, count), 8},
    {"length", offsetof(FrameHeader, length), 8},
    {"result", offsetof(FrameHeader, result), 4},
    {"reserved", offsetof(FrameHeader, reserved), 4},
};

const Field& fieldAt(size_t byte) {
  for (const Field& f : kHeaderFields)
    if (byte >= f.offset && byte < f.offset + f.bytes) return f;
  return kHeaderFields[0];
}

uint64_t readField(const unsigned char* at, const Field& f) {
  uint64_t v = 0;
  std::memcpy(&v, at + f.offset, f.bytes);  // little-endian host, as the wire
  return v;
}

void writeField(unsigned char* at, const Field& f, uint64_t v) {
  std::memcpy(at + f.offset, &v, f.bytes);
}

// A value a buggy or hostile rank might plausibly put there: one off, zero,
// all ones, the top bit, or random.
uint64_t nearbyValue(uint64_t old, Rng& rng) {
  switch (rng.below(6)) {
    case 0:
      return old + 1;
    case 1:
      return old - 1;
    case 2:
      return 0;
    case 3:
      return ~0ull;
    case 4:
      return 1ull << 63;
    default:
      return rng.next();
  }
}

std::vector<unsigned char> randomBytes(size_t n, Rng& rng) {
  std::vector<unsigned char> out(n);
  for (unsigned char& b : out) b = static_cast<unsigned char>(rng.next());
  return out;
}

// The tcp transport's framing of one message: [u64 le length][payload].
std::vector<unsigned char> tcpPrefix(uint64_t length) {
  std::vector<unsigned char> out(sizeof(length));
  std::memcpy(out.data(), &length, sizeof(length));
  return out;
}

}  // namespace

MutationKind mutationKindFromName(const std::string& name) {
  for (const KindName& k : kKinds)
    if (name == k.name) return k.kind;
  return MutationKind::None;
}

const char* mutationKindName(MutationKind kind) {
  for (const KindName& k : kKinds)
    if (kind == k.kind) return k.name;
  return "?";
}

Target mutationTarget(MutationKind kind) {
  for (const KindName& k : kKinds)
    if (kind == k.kind) return k.target;
  return Target::Any;
}

Rewrite rewriteMessage(const Mutation& mutation, const unsigned char* message, size_t size,
                       bool isHeader) {
  Rng rng{mutation.seed};
  Rewrite out;
  std::vector<unsigned char> bytes(message, message + size);
  const std::string what = std::string(isHeader ? "header" : "payload") + " #" +
                           std::to_string(mutation.index) + " (" + std::to_string(size) + " B)";
  switch (mutation.kind) {
    case MutationKind::None:
      out.sends.push_back(std::move(bytes));
      out.description = "none";
      break;
    case MutationKind::HeaderBitFlip: {
      const size_t bit = rng.below(size * 8);
      bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      out.description =
          "flip bit " + std::to_string(bit) + " (" + fieldAt(bit / 8).name + ") of " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::HeaderField: {
      const Field& f = kHeaderFields[rng.below(std::size(kHeaderFields))];
      const uint64_t old = readField(bytes.data(), f);
      const uint64_t value = nearbyValue(old, rng);
      writeField(bytes.data(), f, value);
      out.description = std::string("set ") + f.name + " " + std::to_string(old) + " -> " +
                        std::to_string(readField(bytes.data(), f)) + " in " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::HugeLength: {
      const Field& f = fieldAt(offsetof(FrameHeader, length));
      const uint64_t value = ~0ull - rng.below(1 << 20);
      writeField(bytes.data(), f, value);
      out.description = "length " + std::to_string(value) + " in " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::HeaderTruncate: {
      const size_t keep = rng.below(size);
      bytes.resize(keep);
      out.description = "send " + std::to_string(keep) + " bytes of " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::PayloadBitFlip: {
      const size_t bit = rng.below(size * 8);
      if (size > 0) bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      out.description = "flip bit " + std::to_string(bit) + " of " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::PayloadTruncate: {
      const size_t cut = 1 + rng.below(size == 0 ? 1 : size);
      bytes.resize(size > cut ? size - cut : 0);
      out.description = "cut " + std::to_string(size - bytes.size()) + " bytes off " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::PayloadExtend: {
      const size_t extra = 1 + rng.below(rng.below(2) ? 8 : 4096);
      std::vector<unsigned char> tail = randomBytes(extra, rng);
      bytes.insert(bytes.end(), tail.begin(), tail.end());
      out.description = "append " + std::to_string(extra) + " bytes to " + what;
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::ConsistentTruncate: {
      const Field& f = fieldAt(offsetof(FrameHeader, length));
      const uint64_t length = readField(bytes.data(), f);
      const uint64_t cut = length == 0 ? 0 : 1 + rng.below(length);
      writeField(bytes.data(), f, length - cut);
      out.truncateNextPayloadBy = cut;
      out.description = "length " + std::to_string(length) + " -> " + std::to_string(length - cut) +
                        " in " + what + ", body cut to match";
      out.sends.push_back(std::move(bytes));
      break;
    }
    case MutationKind::Duplicate:
      out.sends.push_back(bytes);
      out.sends.push_back(std::move(bytes));
      out.description = "send twice " + what;
      break;
    case MutationKind::Drop:
      out.description = "never send " + what;
      break;
    case MutationKind::CloseMidFrame: {
      // The transport's prefix announces the whole message; part of it follows.
      out.raw = tcpPrefix(size);
      const size_t keep = rng.below(size == 0 ? 1 : size);
      out.raw.insert(out.raw.end(), bytes.begin(), bytes.begin() + static_cast<long>(keep));
      out.exitAfter = true;
      out.description = "exit after " + std::to_string(keep) + " bytes of " + what;
      break;
    }
    case MutationKind::RawHugePrefix: {
      const uint64_t length = ~0ull - rng.below(1 << 20);
      out.raw = tcpPrefix(length);
      out.raw.insert(out.raw.end(), bytes.begin(), bytes.end());
      out.exitAfter = true;
      out.description = "transport prefix " + std::to_string(length) + " for " + what;
      break;
    }
    case MutationKind::RawGarbage: {
      out.raw = randomBytes(1 + rng.below(256), rng);
      out.exitAfter = true;
      out.description = std::to_string(out.raw.size()) + " random bytes on the socket for " + what;
      break;
    }
  }
  return out;
}

}  // namespace spccl::livefuzz
