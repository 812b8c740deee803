// The sparse message decoders (src/sparse/encoding.h: COO, bitmap -- also
// Zen's hash bitmap --, packed varints, dense) behind decodeSet, which
// every sparse all-reduce runs on what its peers send; the CUDA codec's
// host-side varint reader (kernels/cuda/varint.h) must agree with the CPU
// one; decoded sets are densified (kernels/sparse_kernels.h) into a buffer
// of exactly the universe.
// Input: [universe u64][mode u8][message]; mode bit 0: take the universe
// from the message's own header instead; bits 1-2: value bytes 1, 2, 4, 8;
// bits 3-6: the allowed encodings.
#include <vector>

#include "fuzz_support.h"
#include "kernels/cuda/varint.h"
#include "kernels/sparse_kernels.h"
#include "sparse/encoding.h"
#include "sparse/encoding_codecs.h"
#include "sparse/sparse_messages.h"

using namespace spccl;
using namespace spccl::sparse;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  uint64_t universe = in.take<uint64_t>();
  const uint8_t mode = in.take<uint8_t>();
  const size_t valueBytes = size_t{1} << ((mode >> 1) & 3);
  const unsigned allowed = ((mode >> 3) & 0xf) << 1;
  const std::vector<unsigned char> message = in.rest();
  if ((mode & 1) && message.size() >= kMessageHeaderBytes)
    std::memcpy(&universe, message.data() + 9, sizeof(universe));

  std::vector<uint64_t> positions;
  std::vector<unsigned char> values;
  if (decode(message.data(), message.size(), universe, valueBytes, &positions, &values) !=
      spcclSuccess) {
    // decodeSet refuses what decode refuses.
    SparseSet set;
    const uint8_t flags = message.empty() ? 0 : message[0];
    SPCCL_FUZZ_CHECK(decodeSet(message.data(), message.size(), flags, universe, valueBytes,
                               kAllEncodings, 1, &set) != spcclSuccess);
    return 0;
  }
  const auto encoding = static_cast<Encoding>(message[0]);
  const size_t nnz = positions.size();
  SPCCL_FUZZ_CHECK(values.size() == nnz * valueBytes);
  for (size_t i = 0; i < nnz; ++i) {
    SPCCL_FUZZ_CHECK(positions[i] < universe);
    SPCCL_FUZZ_CHECK(i == 0 || positions[i] > positions[i - 1]);
  }
  if (encoding != Encoding::Dense) {
    uint64_t claimed = 0;
    std::memcpy(&claimed, message.data() + 1, sizeof(claimed));
    SPCCL_FUZZ_CHECK(claimed == nnz);
  }

  // The frame's flags name the encoding; decodeSet takes it when allowed.
  SparseSet set;
  const bool wanted = (allowed >> message[0]) & 1;
  const spcclResult_t res =
      decodeSet(message.data(), message.size(), message[0], universe, valueBytes, allowed, 1, &set);
  SPCCL_FUZZ_CHECK((res == spcclSuccess) == wanted);
  if (res == spcclSuccess) SPCCL_FUZZ_CHECK(set.positions == positions && set.values == values);

  // Encoding the decoded set again gives the message back (packed: the
  // same set; an over-long varint decodes like the short one).
  std::vector<unsigned char> again;
  const size_t written =
      encode(encoding, positions.data(), values.data(), nnz, universe, valueBytes, &again);
  SPCCL_FUZZ_CHECK(written == again.size());
  if (encoding == Encoding::Coo || encoding == Encoding::Bitmap) {
    SPCCL_FUZZ_CHECK(again == message);
  } else if (encoding == Encoding::Dense) {
    // The header's nnz counts the entries sent, +0 values included; the
    // decoder keeps only non-zero ones, so only the body must match.
    SPCCL_FUZZ_CHECK(again.size() == message.size());
    SPCCL_FUZZ_CHECK(std::memcmp(again.data() + kMessageHeaderBytes,
                                 message.data() + kMessageHeaderBytes,
                                 message.size() - kMessageHeaderBytes) == 0);
  } else {
    std::vector<uint64_t> positions2;
    std::vector<unsigned char> values2;
    SPCCL_FUZZ_CHECK(decode(again.data(), again.size(), universe, valueBytes, &positions2,
                            &values2) == spcclSuccess);
    SPCCL_FUZZ_CHECK(positions2 == positions && values2 == values);
    SPCCL_FUZZ_CHECK(again.size() <= message.size());
    // The CUDA codec's reader walks the same varints to the same positions.
    const unsigned char* at = message.data() + kMessageHeaderBytes;
    size_t left = message.size() - kMessageHeaderBytes - nnz * valueBytes;
    uint64_t previous = 0;
    for (size_t i = 0; i < nnz; ++i) {
      uint64_t gap = 0;
      const size_t used = kernels::cuda::readVarint(at, left, &gap);
      SPCCL_FUZZ_CHECK(used > 0);
      const uint64_t position = i == 0 ? gap : previous + gap + 1;
      SPCCL_FUZZ_CHECK(position == positions[i]);
      previous = position;
      at += used;
      left -= used;
    }
    SPCCL_FUZZ_CHECK(left == 0);
  }

  // Densified into exactly `universe` elements: nothing lands outside.
  if (universe <= (1u << 16)) {
    std::vector<unsigned char> dense(universe * valueBytes);
    kernels::densify(valueBytes, positions.data(), values.data(), nnz, dense.data(), universe);
    for (size_t i = 0; i < nnz; ++i)
      SPCCL_FUZZ_CHECK(std::memcmp(dense.data() + positions[i] * valueBytes,
                                   values.data() + i * valueBytes, valueBytes) == 0);
  }
  return 0;
}
