// The sparse benchmark's pieces that need no communicator: the input
// generator's promises (determinism, density, overlap, Zipf skew, rows),
// the .npy reader, the check's rules and the sparse flags.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/npy_file.h"
#include "common/perf_options.h"
#include "common/sparse_check.h"
#include "common/sparse_options.h"
#include "common/sparse_replay.h"
#include "common/sparse_workload.h"

namespace spccl::perf {
namespace {

size_t sharedCount(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both.size();
}

TEST(SparseWorkload, DeterministicSortedDistinctAndAtTheDensity) {
  SparseWorkloadSpec spec;
  spec.density = 0.05;
  const size_t count = 100000;
  const std::vector<uint64_t> first = sparseNonZeroIndices(spec, count, 3);
  EXPECT_EQ(first, sparseNonZeroIndices(spec, count, 3));
  EXPECT_TRUE(std::is_sorted(first.begin(), first.end()));
  EXPECT_EQ(std::adjacent_find(first.begin(), first.end()), first.end());
  EXPECT_EQ(first.size(), 5000u);
  EXPECT_LT(first.back(), count);
  spec.seed = 2;
  EXPECT_NE(first, sparseNonZeroIndices(spec, count, 3));
}

TEST(SparseWorkload, OverlapControlsHowMuchRanksShare) {
  SparseWorkloadSpec spec;
  spec.density = 0.01;
  const size_t count = 1 << 20;
  const size_t nnz = 10486;  // round(0.01 * 2^20)
  spec.overlap = 0.0;
  // Independent uniform draws: about d^2 * count in common.
  EXPECT_LT(sharedCount(sparseNonZeroIndices(spec, count, 0), sparseNonZeroIndices(spec, count, 1)),
            nnz / 50);
  // Half from a pool of twice that size: two ranks share about a quarter.
  spec.overlap = 0.5;
  const size_t half =
      sharedCount(sparseNonZeroIndices(spec, count, 0), sparseNonZeroIndices(spec, count, 1));
  EXPECT_GT(half, nnz / 5);
  EXPECT_LT(half, nnz * 3 / 10);
  spec.overlap = 1.0;
  const size_t all =
      sharedCount(sparseNonZeroIndices(spec, count, 0), sparseNonZeroIndices(spec, count, 1));
  EXPECT_GT(all, nnz * 4 / 10);
  EXPECT_LT(all, nnz * 6 / 10);
}

TEST(SparseWorkload, RowsAreWholeAndZipfRowsAreHot) {
  SparseWorkloadSpec spec;
  spec.density = 0.02;
  spec.rowWidth = 64;
  spec.zipfExponent = 1.1;
  const size_t count = 64 * 10000 + 7;  // a partial row at the end is never used
  const std::vector<uint64_t> indices = sparseNonZeroIndices(spec, count, 0);
  ASSERT_EQ(indices.size(), 200u * 64);
  for (size_t i = 0; i < indices.size(); i += 64) {
    EXPECT_EQ(indices[i] % 64, 0u);
    EXPECT_EQ(indices[i + 63], indices[i] + 63);
  }
  EXPECT_LT(indices.back(), 64u * 10000);
  // Skewed: far more of the first 1 % of rows than a uniform draw's 1 %.
  const size_t hot = static_cast<size_t>(std::count_if(
      indices.begin(), indices.end(), [](uint64_t i) { return i < uint64_t{64} * 100; }));
  EXPECT_GT(hot, indices.size() / 5);
  // Uniform rows for comparison.
  spec.zipfExponent = 0.0;
  const std::vector<uint64_t> uniform = sparseNonZeroIndices(spec, count, 0);
  const size_t uniformHot = static_cast<size_t>(std::count_if(
      uniform.begin(), uniform.end(), [](uint64_t i) { return i < uint64_t{64} * 100; }));
  EXPECT_LT(uniformHot, uniform.size() / 20);
}

TEST(SparseWorkload, FullDensityAndTinySizes) {
  SparseWorkloadSpec spec;
  spec.density = 1.0;
  EXPECT_EQ(sparseNonZeroIndices(spec, 1000, 1).size(), 1000u);
  spec.density = 0.9;  // the pool (2 x 0.45) leaves 10 % outside it for 45 % private
  EXPECT_EQ(sparseNonZeroIndices(spec, 1000, 1).size(), 900u);
  spec.density = 0.01;
  EXPECT_TRUE(sparseNonZeroIndices(spec, 0, 0).empty());
  EXPECT_TRUE(sparseNonZeroIndices(spec, 10, 0).empty());  // 0.1 rounds to no element
  spec.rowWidth = 100;
  EXPECT_TRUE(sparseNonZeroIndices(spec, 50, 0).empty());  // no whole row
}

TEST(SparseWorkload, FilledValuesAreSmallNonZeroIntegersAtTheIndices) {
  SparseWorkloadSpec spec;
  spec.density = 0.1;
  const size_t count = 5000;
  for (const spcclDataType_t type :
       {spcclInt8, spcclFloat16, spcclBfloat16, spcclFloat32, spcclUint64, spcclFloat64}) {
    std::vector<unsigned char> buffer(count * spcclTypeSize(type), 0xAB);
    const size_t nonZeros = fillSparseInput(spec, count, 2, type, buffer.data());
    EXPECT_EQ(nonZeros, 500u);
    EXPECT_EQ(countNonZeros(type, count, buffer.data()), 500u) << spcclTypeName(type);
  }
  std::vector<float> values(count);
  fillSparseInput(spec, count, 2, spcclFloat32, values.data());
  for (const uint64_t index : sparseNonZeroIndices(spec, count, 2)) {
    EXPECT_EQ(values[index], static_cast<float>(sparseInputValue(spec.seed, 2, index)));
    EXPECT_GE(values[index], 1.0f);
    EXPECT_LE(values[index], static_cast<float>(kMaxInputValue));
  }
}

// ---- .npy ----

std::vector<unsigned char> npyBytes(const std::string& header, const void* body, size_t bodyBytes,
                                    int version = 1) {
  std::vector<unsigned char> bytes = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(version), 0};
  const size_t length = header.size();
  bytes.push_back(static_cast<unsigned char>(length & 0xff));
  bytes.push_back(static_cast<unsigned char>(length >> 8));
  if (version > 1) {
    bytes.push_back(0);
    bytes.push_back(0);
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  const auto* data = static_cast<const unsigned char*>(body);
  bytes.insert(bytes.end(), data, data + bodyBytes);
  return bytes;
}

TEST(Npy, ReadsWhatNumpySaveWrites) {
  // numpy.save(np.arange(3, dtype=np.float32).reshape(1, 3)), header padded as numpy pads it.
  const float values[] = {0.0f, 1.0f, 2.0f};
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parseNpy(npyBytes(header, values, sizeof(values)), "x.npy", &array, &error)) << error;
  EXPECT_EQ(array.type, spcclFloat32);
  EXPECT_EQ(array.shape, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(array.elements, 3u);
  ASSERT_EQ(array.data.size(), sizeof(values));
  EXPECT_EQ(std::memcmp(array.data.data(), values, sizeof(values)), 0);

  const int64_t indices[] = {7, 1};
  ASSERT_TRUE(parseNpy(npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n",
                                indices, sizeof(indices), 2),
                       "i.npy", &array, &error))
      << error;
  EXPECT_EQ(array.type, spcclInt64);
  EXPECT_EQ(array.elements, 2u);
  ASSERT_TRUE(
      parseNpy(npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (), }\n", "\x05", 1),
               "scalar.npy", &array, &error))
      << error;
  EXPECT_EQ(array.elements, 1u);
}

TEST(Npy, RejectsWhatItCannotReadWithTheReason) {
  const float values[] = {1.0f, 2.0f};
  NpyArray array;
  std::string error;
  const auto rejects = [&](const std::vector<unsigned char>& bytes, const char* why) {
    EXPECT_FALSE(parseNpy(bytes, "bad.npy", &array, &error));
    EXPECT_NE(error.find(why), std::string::npos) << error;
    EXPECT_EQ(error.rfind("bad.npy", 0), 0u) << error;
  };
  rejects({'n', 'o', 't', ' ', 'n', 'p', 'y', '!', '!', '!', '!'}, "magic");
  rejects(npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", values, 8),
          "big-endian");
  rejects(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", values, 8),
          "Fortran");
  rejects(npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", values, 8),
          "not supported");
  rejects(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", values, 8),
          "need 12");
  rejects(npyBytes("{'descr': '<f4', 'shape': (2,), }", values, 8), "lacks");
}

TEST(Npy, ReplaysCooFilesWithDuplicatesSummed) {
  const std::string directory = ::testing::TempDir() + "/spccl_replay_test";
  ASSERT_TRUE(::mkdir(directory.c_str(), 0700) == 0 || errno == EEXIST);
  const int32_t indices[] = {5, 2, 5};
  const double values[] = {1.5, 2.0, 0.25};
  const auto write = [&](const std::string& name, const std::vector<unsigned char>& bytes) {
    std::ofstream file(directory + "/" + name, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  };
  write("rank1_indices.npy",
        npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", indices, 12));
  write("rank1_values.npy",
        npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n", values, 24));
  ReplayedInput input;
  std::string error;
  ASSERT_TRUE(input.load(directory, 1, &error)) << error;
  EXPECT_TRUE(input.isCoo());
  EXPECT_EQ(input.type(), spcclFloat64);
  EXPECT_EQ(input.localCount(), 6u);
  EXPECT_FALSE(input.exact());
  const std::vector<unsigned char> dense = input.denseInput(8);
  ASSERT_EQ(dense.size(), 64u);
  std::vector<double> got(8);
  std::memcpy(got.data(), dense.data(), 64);
  EXPECT_EQ(got, (std::vector<double>{0, 0, 2.0, 0, 0, 1.75, 0, 0}));

  ReplayedInput missing;
  EXPECT_FALSE(missing.load(directory, 0, &error));
  EXPECT_NE(error.find("rank0.npy"), std::string::npos) << error;
}

// ---- the check ----

TEST(SparseCheck, SumsOfExactInputsAreComparedBitwise) {
  const MismatchRule rule = mismatchRuleFor(spcclFloat32, spcclSum, 4, true, nullptr);
  EXPECT_TRUE(rule.bitwise);
  const float want[] = {1.0f, 0.0f, 3.0f};
  const float got[] = {1.0f, -0.0f, std::nextafter(3.0f, 4.0f)};
  EXPECT_EQ(countMismatches(spcclFloat32, 3, got, want, rule), 2);
  EXPECT_EQ(countMismatches(spcclFloat32, 3, want, want, rule), 0);
  EXPECT_TRUE(mismatchRuleFor(spcclInt32, spcclAvg, 4, false, nullptr).bitwise);
}

TEST(SparseCheck, ReplayedFloatsMayDifferByReassociationOnly) {
  const double absoluteSums[] = {1.0e6, 2.0};
  const MismatchRule rule = mismatchRuleFor(spcclFloat32, spcclSum, 4, false, absoluteSums);
  EXPECT_FALSE(rule.bitwise);
  const float want[] = {1.0f, 2.0f};
  // 0.25 off is within 5 roundings of a 1e6 magnitude; 0.25 off on 2 is not.
  const float nearby[] = {1.25f, 2.0f};
  const float wrong[] = {1.0f, 2.25f};
  EXPECT_EQ(countMismatches(spcclFloat32, 2, nearby, want, rule), 0);
  EXPECT_EQ(countMismatches(spcclFloat32, 2, wrong, want, rule), 1);
  const float poisoned[] = {NAN, 2.0f};
  EXPECT_EQ(countMismatches(spcclFloat32, 2, poisoned, want, rule), 1);
}

TEST(SparseCheck, HashesTellBuffersApart) {
  const unsigned char a[] = {1, 2, 3};
  const unsigned char b[] = {1, 2, 4};
  EXPECT_EQ(contentHash(a, 3), contentHash(a, 3));
  EXPECT_NE(contentHash(a, 3), contentHash(b, 3));
}

// ---- flags ----

ParseOutcome parse(std::vector<const char*> args, PerfOptions* options, SparseOptions* sparse) {
  args.insert(args.begin(), "sparse_all_reduce_perf");
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (const char* arg : args) argv.push_back(const_cast<char*>(arg));
  const OptionExtension extension = sparseOptionExtension(sparse);
  return parsePerfOptions(static_cast<int>(argv.size()), argv.data(), options, &extension);
}

TEST(SparseOptions, ParsesTheSparseFlagsBesideNcclTestsOnes) {
  PerfOptions options;
  SparseOptions sparse;
  ASSERT_EQ(
      parse({"-b",  "1M", "-d",     "int32", "--density", "0.05",   "-O",     "0.25", "-Z",
             "1.2", "-H", "128",    "-a",    "bp",        "-E",     "bitmap", "-P",   "two-pass",
             "-t",  "42", "--seed", "9",     "--input",   "/tmp/x", "-o",     "avg"},
            &options, &sparse),
      ParseOutcome::kRun);
  EXPECT_EQ(options.minBytes, 1u << 20);
  EXPECT_EQ(options.types, std::vector<spcclDataType_t>{spcclInt32});
  EXPECT_EQ(options.ops, std::vector<spcclRedOp_t>{spcclAvg});
  EXPECT_DOUBLE_EQ(sparse.workload.density, 0.05);
  EXPECT_DOUBLE_EQ(sparse.workload.overlap, 0.25);
  EXPECT_DOUBLE_EQ(sparse.workload.zipfExponent, 1.2);
  EXPECT_EQ(sparse.workload.rowWidth, 128u);
  EXPECT_EQ(sparse.workload.seed, 9u);
  EXPECT_EQ(sparse.algorithm, spcclSparseBalancedParallelism);
  EXPECT_EQ(sparse.encoding, spcclEncodingBitmap);
  EXPECT_EQ(sparse.partitioner, spcclPartitionTwoPass);
  EXPECT_EQ(sparse.tag, 42u);
  EXPECT_EQ(sparse.inputDir, "/tmp/x");
  EXPECT_EQ(sparseTagFor(sparse, 10, spcclFloat32, spcclSum), 42u);
  sparse.tag = 0;
  EXPECT_NE(sparseTagFor(sparse, 10, spcclFloat32, spcclSum), 0u);
  EXPECT_NE(sparseTagFor(sparse, 10, spcclFloat32, spcclSum),
            sparseTagFor(sparse, 11, spcclFloat32, spcclSum));

  SparseOptions shortDensity;
  ASSERT_EQ(parse({"-D", "0.5", "-a", "hc"}, &options, &shortDensity), ParseOutcome::kRun);
  EXPECT_DOUBLE_EQ(shortDensity.workload.density, 0.5);
  EXPECT_STREQ(spcclSparseAlgorithmName(shortDensity.algorithm), "hc");
}

TEST(SparseOptions, RejectsBadValuesAndOpsTheSparsePathLacks) {
  for (const std::vector<const char*>& args : {std::vector<const char*>{"-D", "0"},
                                               {"-D", "1.5"},
                                               {"-O", "-0.1"},
                                               {"-Z", "-1"},
                                               {"-H", "0"},
                                               {"-a", "ring"},
                                               {"-E", "zip"},
                                               {"-P", "hash"},
                                               {"-t", "x"},
                                               {"-o", "max"},
                                               {"-o", "prod"}}) {
    PerfOptions options;
    SparseOptions sparse;
    EXPECT_EQ(parse(args, &options, &sparse), ParseOutcome::kExitFailure) << args[0] << args[1];
  }
}

}  // namespace
}  // namespace spccl::perf
