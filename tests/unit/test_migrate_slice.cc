// The helpers' slices of the migrated columns (SEMI-migration section IV-B
// renumbering): every column computed exactly once, for every rank count
// up to 16, every straggler and column counts below, at and above the
// number of helpers.
#include <gtest/gtest.h>

#include <vector>

#include "migrate/migration_slice.h"

namespace spccl::migrate {
namespace {

TEST(MigrationSlice, EveryColumnExactlyOnce) {
  for (int e = 1; e <= 16; ++e) {
    for (int straggler = 0; straggler < e; ++straggler) {
      for (size_t total : {0, 1, 2, 3, 5, 7, 14, 15, 16, 17, 100, 1001}) {
        std::vector<int> computedBy(total, -1);
        for (int rank = 0; rank < e; ++rank) {
          const ElementRange slice = migrationSlice(rank, straggler, e, total);
          if (rank == straggler || e == 1) {
            EXPECT_EQ(slice.count, 0u);
          }
          // Nearly equal shares: no helper more than one column above another.
          if (rank != straggler && e > 1) {
            EXPECT_LE(slice.count, total / (e - 1) + 1);
            EXPECT_GE(slice.count, total / (e - 1));
          }
          for (size_t c = slice.offset; c < slice.end(); ++c) {
            ASSERT_LT(c, total);
            EXPECT_EQ(computedBy[c], -1) << "column " << c << " twice (e=" << e << ")";
            computedBy[c] = rank;
          }
        }
        for (size_t c = 0; c < total && e > 1; ++c) {
          EXPECT_NE(computedBy[c], -1)
              << "column " << c << " of " << total << ", e=" << e << ", straggler " << straggler;
        }
      }
    }
  }
}

// The paper's Fig. 4 example: three tasks numbered 1..3, task 1 the
// straggler, two migrated columns; task 2 is renumbered (2 + 3 - 1) % 3 = 1
// and takes the first column, task 3 the second. In 0-based ranks:
// straggler 0, rank 1 -> column 0, rank 2 -> column 1.
TEST(MigrationSlice, PaperFigure4) {
  EXPECT_EQ(migrationSlice(1, 0, 3, 2).offset, 0u);
  EXPECT_EQ(migrationSlice(1, 0, 3, 2).count, 1u);
  EXPECT_EQ(migrationSlice(2, 0, 3, 2).offset, 1u);
  EXPECT_EQ(migrationSlice(2, 0, 3, 2).count, 1u);
  // m = L_mig / (e - 1) with e = 4, straggler 2, 9 columns: r' of rank 3 is
  // 1 -> [0, 3), rank 0 is 2 -> [3, 6), rank 1 is 3 -> [6, 9).
  EXPECT_EQ(migrationSlice(3, 2, 4, 9).offset, 0u);
  EXPECT_EQ(migrationSlice(0, 2, 4, 9).offset, 3u);
  EXPECT_EQ(migrationSlice(1, 2, 4, 9).offset, 6u);
  // Remainder spread: 10 columns over 3 helpers -> 4, 3, 3.
  EXPECT_EQ(migrationSlice(3, 2, 4, 10).count, 4u);
  EXPECT_EQ(migrationSlice(0, 2, 4, 10).count, 3u);
  EXPECT_EQ(migrationSlice(1, 2, 4, 10).count, 3u);
}

// With every other rank a helper, the explicit helper set reproduces the
// renumbering; with fewer helpers it still covers every column once.
TEST(MigrationSlice, HelperSetsMatchAndCover) {
  for (int e = 2; e <= 16; ++e) {
    for (int migrator = 0; migrator < e; ++migrator) {
      std::vector<int> helpers;
      for (int r = 0; r < e; ++r)
        if (r != migrator) helpers.push_back(r);
      for (size_t total : {0, 1, 5, 16, 33}) {
        for (int r = 0; r < e; ++r) {
          const ElementRange a = migrationSlice(r, migrator, e, total);
          const ElementRange b = helperSlice(r, migrator, helpers, total);
          EXPECT_EQ(a.offset, b.offset);
          EXPECT_EQ(a.count, b.count);
        }
      }
      // Drop every other helper.
      std::vector<int> fewer;
      for (size_t i = 0; i < helpers.size(); i += 2) fewer.push_back(helpers[i]);
      for (size_t total : {0, 1, 3, 17}) {
        std::vector<int> hits(total, 0);
        for (int r = 0; r < e; ++r) {
          const ElementRange s = helperSlice(r, migrator, fewer, total);
          for (size_t c = s.offset; c < s.end(); ++c) ++hits[c];
        }
        for (size_t c = 0; c < total; ++c) EXPECT_EQ(hits[c], 1);
      }
    }
  }
}

}  // namespace
}  // namespace spccl::migrate
