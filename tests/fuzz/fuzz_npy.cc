// The .npy reader (perf/common/npy_file.h): sparse_all_reduce_perf replays
// tensors from files a user hands it. Input: the file's bytes.
#include <string>
#include <vector>

#include "common/npy_file.h"
#include "fuzz_support.h"

using namespace spccl;

namespace {

// numpy.save's layout for what parseNpy accepted (version 1).
std::vector<unsigned char> writeNpy(const perf::NpyArray& array) {
  std::string shape = "(";
  for (size_t extent : array.shape) shape += std::to_string(extent) + ", ";
  shape += ")";
  std::string header =
      "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<unsigned char> out = {0x93,
                                    'N',
                                    'U',
                                    'M',
                                    'P',
                                    'Y',
                                    1,
                                    0,
                                    static_cast<unsigned char>(header.size() & 0xff),
                                    static_cast<unsigned char>(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> bytes(data, data + size);
  perf::NpyArray array;
  std::string error;
  if (!perf::parseNpy(bytes, "fuzz.npy", &array, &error)) {
    SPCCL_FUZZ_CHECK(!error.empty());
    return 0;
  }
  size_t product = 1;
  for (size_t extent : array.shape) product *= extent;
  SPCCL_FUZZ_CHECK(product == array.elements);
  SPCCL_FUZZ_CHECK(array.data.size() == array.elements * spcclTypeSize(array.type));
  // What parseNpy accepted, written back as numpy would, reads the same.
  if (array.descr.size() < 40) {
    perf::NpyArray again;
    SPCCL_FUZZ_CHECK(perf::parseNpy(writeNpy(array), "again.npy", &again, &error));
    SPCCL_FUZZ_CHECK(again.type == array.type && again.shape == array.shape &&
                     again.data == array.data);
  }
  return 0;
}
