// A minimal reader of NumPy's .npy format (numpy.lib.format, versions 1-3):
// little-endian (or single-byte) numeric arrays in C order, enough to
// replay real tensors (saved with numpy.save) through the sparse benchmark.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

struct NpyArray {
  std::string descr;                // the header's dtype, e.g. "<f4"
  spcclDataType_t type;             // its spccl twin
  std::vector<size_t> shape;        // () for a scalar
  size_t elements = 0;              // product of shape
  std::vector<unsigned char> data;  // elements * spcclTypeSize(type) bytes, C order
};

// False with *error naming the file and what is wrong (not .npy, big-endian,
// Fortran order, an unsupported dtype, a truncated body, ...).
bool readNpyFile(const std::string& path, NpyArray* array, std::string* error);

// The same on bytes already in memory; `name` is used in messages.
bool parseNpy(const std::vector<unsigned char>& bytes, const std::string& name, NpyArray* array,
              std::string* error);

}  // namespace spccl::perf
