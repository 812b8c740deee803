// compressed_all_reduce_perf's own flags (-m -q -B -S, and the token top-k
// mode's -k/--topk and -H/--hidden), the documented error bound's half
// step, and the bytes-on-the-wire formulas of docs/compressed.md.
#pragma once

#include <cstddef>

#include "common/perf_options.h"
#include "spccl.h"

namespace spccl::perf {

struct CompressedFlags {
  spcclCodec_t codec = spcclCodecPiecewise;
  int bits = 4;
  size_t block = SPCCL_COMPRESSION_DEFAULT_BLOCK;
  spcclCompressSchedule_t schedule = spcclCompressTwoShot;
  double topkFraction = -1;  // < 0: the plain compressed all-reduce
  size_t hidden = 1024;      // row length in the top-k mode

  bool topk() const { return topkFraction >= 0; }
  spcclCompression cfg() const;
};

OptionExtension compressedExtension(CompressedFlags* flags);

// Half the widest quantization step as a fraction of the block scale.
double halfStep(const CompressedFlags& f);

// Size of one encoding of `count` elements: scales plus packed codes.
double encodedBytes(const CompressedFlags& f, size_t count);

// Bytes one rank sends in a compressed all-reduce of `count` elements:
// 2 (n-1) chunk encodings on average over ranks, plus the cfg agreement's
// (n-1) 24-byte headers. Chunks are whole blocks, so per-rank figures vary
// by at most one block's encoding.
double compressedFormulaBytes(const CompressedFlags& f, size_t count, int n);

// The token top-k call: the scores' all-gather ((n-1) tokens f32), the
// kept rows' compressed all-reduce, and (n-1) 64-byte token headers in
// place of the 24-byte ones.
double topkFormulaBytes(const CompressedFlags& f, size_t tokens, size_t keep, int n);

}  // namespace spccl::perf
