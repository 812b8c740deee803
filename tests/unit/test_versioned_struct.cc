// The reader of the C API's versioned structs: an older, smaller struct
// keeps the defaults of the fields it does not reach, and the size and
// magic failures name the call, the field and the initializer.
#include <gtest/gtest.h>

#include <string>

#include "base/check.h"
#include "base/versioned_struct.h"
#include "spccl.h"

namespace spccl {
namespace {

const VersionedStructNames kOptionsNames{"spcclSparseAllReduce", "options->size", "options magic",
                                         "the options", "SPCCL_SPARSE_OPTIONS_INITIALIZER"};

TEST(VersionedStruct, FieldsPastTheCallersSizeAreAbsent) {
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.size = offsetof(spcclSparseOptions_t, encoding);
  const VersionedStruct<spcclSparseOptions_t> in(options, kOptionsNames);
  EXPECT_EQ(in.checkHeader(SPCCL_SPARSE_OPTIONS_MAGIC), spcclSuccess);
  EXPECT_TRUE(in.has(&spcclSparseOptions_t::algorithm));
  EXPECT_TRUE(in.has(&spcclSparseOptions_t::tag));
  EXPECT_FALSE(in.has(&spcclSparseOptions_t::encoding));
  EXPECT_FALSE(in.has(&spcclSparseOptions_t::partitioner));
}

TEST(VersionedStruct, ALargerStructHasEveryField) {
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.size = sizeof(options) + 64;
  const VersionedStruct<spcclSparseOptions_t> in(options, kOptionsNames);
  EXPECT_EQ(in.checkHeader(SPCCL_SPARSE_OPTIONS_MAGIC), spcclSuccess);
  EXPECT_TRUE(in.has(&spcclSparseOptions_t::partitioner));
}

// The message of a header check that must fail.
std::string headerFailure(size_t size, unsigned int magic) {
  spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  options.size = size;
  options.magic = magic;
  const VersionedStruct<spcclSparseOptions_t> in(options, kOptionsNames);
  EXPECT_EQ(in.checkHeader(SPCCL_SPARSE_OPTIONS_MAGIC), spcclInvalidArgument);
  return threadLastError();
}

TEST(VersionedStruct, HeaderFailuresNameTheFieldAndTheInitializer) {
  EXPECT_EQ(headerFailure(15, SPCCL_SPARSE_OPTIONS_MAGIC),
            "spcclSparseAllReduce: options->size 15 is too small; initialise the options with "
            "SPCCL_SPARSE_OPTIONS_INITIALIZER");
  EXPECT_EQ(headerFailure(sizeof(spcclSparseOptions_t), 0x1234),
            "spcclSparseAllReduce: options magic 0x00001234 is wrong; initialise the options "
            "with SPCCL_SPARSE_OPTIONS_INITIALIZER");
}

TEST(VersionedStruct, AStructReadWholeNamesTheSizeItNeeds) {
  spcclBalanceCostModel_t model = SPCCL_BALANCE_COST_MODEL_INITIALIZER;
  model.size = sizeof(model) - 8;
  const VersionedStruct<spcclBalanceCostModel_t> in(
      model, {"spcclBalancePlan", "costModel->size", "costModel magic", "it",
              "SPCCL_BALANCE_COST_MODEL_INITIALIZER"});
  EXPECT_EQ(in.checkWhole(SPCCL_BALANCE_COST_MODEL_MAGIC), spcclInvalidArgument);
  EXPECT_EQ(threadLastError(), "spcclBalancePlan: costModel->size " +
                                   std::to_string(sizeof(model) - 8) + " is too small (" +
                                   std::to_string(sizeof(model)) +
                                   "); initialise it with SPCCL_BALANCE_COST_MODEL_INITIALIZER");
}

}  // namespace
}  // namespace spccl
