#include "common/sparse_replay.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "common/element_codec.h"
#include "common/npy_file.h"

namespace spccl::perf {

namespace {

bool exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

bool isInteger(spcclDataType_t type) {
  return type != spcclFloat16 && type != spcclFloat32 && type != spcclFloat64 &&
         type != spcclBfloat16;
}

}  // namespace

bool ReplayedInput::load(const std::string& directory, int rank, std::string* error) {
  const std::string stem = directory + "/rank" + std::to_string(rank);
  const std::string densePath = stem + ".npy";
  const std::string indicesPath = stem + "_indices.npy";
  const std::string valuesPath = stem + "_values.npy";
  if (exists(densePath)) {
    NpyArray array;
    if (!readNpyFile(densePath, &array, error)) return false;
    type_ = array.type;
    localCount_ = array.elements;
    values_ = std::move(array.data);
    return true;
  }
  if (!exists(indicesPath) || !exists(valuesPath)) {
    *error = "rank " + std::to_string(rank) + ": neither " + densePath + " nor " + indicesPath +
             " and " + valuesPath + " exist";
    return false;
  }
  NpyArray indices, values;
  if (!readNpyFile(indicesPath, &indices, error) || !readNpyFile(valuesPath, &values, error)) {
    return false;
  }
  if (!isInteger(indices.type)) {
    *error = indicesPath + ": indices must be integers, not " + indices.descr;
    return false;
  }
  if (indices.shape.size() != 1 || values.shape.size() != 1 ||
      indices.elements != values.elements) {
    *error = indicesPath + " and " + valuesPath + " must be 1-D arrays of the same length";
    return false;
  }
  const ElementCodec& indexCodec = *elementCodecFor(indices.type);
  coo_ = true;
  type_ = values.type;
  indices_.resize(indices.elements);
  localCount_ = 0;
  for (size_t i = 0; i < indices.elements; ++i) {
    const double index = indexCodec.load(indices.data.data(), i);
    if (index < 0) {
      *error = indicesPath + ": index " + std::to_string(i) + " is negative";
      return false;
    }
    // uint64 indices above 2^53 do not survive the double; no tensor is that large.
    indices_[i] = static_cast<uint64_t>(index);
    localCount_ = std::max<size_t>(localCount_, indices_[i] + 1);
  }
  values_ = std::move(values.data);
  return true;
}

std::vector<unsigned char> ReplayedInput::denseInput(size_t count) const {
  const size_t elementBytes = spcclTypeSize(type_);
  std::vector<unsigned char> dense(count * elementBytes, 0);
  if (!coo_) {
    std::memcpy(dense.data(), values_.data(), std::min(dense.size(), values_.size()));
    return dense;
  }
  // Duplicates are summed, as the library's COO entry point does; one at a
  // time, rounded to the type after each.
  const ElementCodec& codec = *elementCodecFor(type_);
  for (size_t i = 0; i < indices_.size(); ++i) {
    const size_t index = indices_[i];
    codec.store(dense.data(), index,
                codec.load(dense.data(), index) + codec.load(values_.data(), i));
  }
  return dense;
}

bool ReplayedInput::exact() const { return isInteger(type_); }

}  // namespace spccl::perf
