// --input DIR: a rank's input replayed from .npy files instead of
// generated, so real tensors (gradients, embedding updates) can be timed.
//   DIR/rank<R>.npy                          a dense array, any shape (C order)
//   DIR/rank<R>_indices.npy + _values.npy    COO: 1-D, same length; indices
//                                            any integer type, duplicates summed
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spccl.h"

namespace spccl::perf {

class ReplayedInput {
 public:
  // False with *error saying which file and what is wrong.
  bool load(const std::string& directory, int rank, std::string* error);

  spcclDataType_t type() const { return type_; }
  // Elements this rank's files need: the dense array's size, or the
  // largest COO index + 1. Every rank must use the same count: take the
  // maximum over ranks and pass it to denseInput.
  size_t localCount() const { return localCount_; }
  bool isCoo() const { return coo_; }
  // The dense buffer (count elements) with COO duplicates summed.
  std::vector<unsigned char> denseInput(size_t count) const;
  // Integer types sum exactly in any order, so the check can demand
  // bitwise equality; replayed floats may differ by reassociation.
  bool exact() const;

 private:
  spcclDataType_t type_ = spcclFloat32;
  size_t localCount_ = 0;
  bool coo_ = false;
  std::vector<uint64_t> indices_;
  std::vector<unsigned char> values_;  // dense array, or the COO values
};

}  // namespace spccl::perf
