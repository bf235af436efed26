#include "models/model_encoding.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "features/bucket_rows.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/model_file.h"
#include "models/model_file_testing.h"
#include "models/second_order.h"
#include "models/sparse_rows.h"

namespace chaintag {
namespace {

using chain_testing::kBuckets;
using chain_testing::SecondOrderHeader;
using chain_testing::SecondOrderTestStructure;
using chain_testing::WordModelHeader;

TEST(ModelEncodingTest, ChecksSizes) {
  ModelFile header;
  header.add_labels("O");
  header.mutable_features()->set_num_buckets(8);
  const BucketRows rows = BucketRows::Identity(8);
  const ChainLayout one_label{1, 8};
  auto encode = [&](const ModelFile& base, const ChainLayout& layout,
                    const BucketRows& rows, const std::vector<double>& w) {
    ModelFile file = base;
    return EncodeModelWeights(layout, rows, nullptr, nullptr, nullptr, nullptr,
                              w, &file);
  };
  EXPECT_FALSE(encode(header, one_label, rows, std::vector<double>(3)).ok());
  // 8 rows · 1 label + 1 + 2 = 11 is right; rows over other buckets are not.
  EXPECT_TRUE(encode(header, one_label, rows, std::vector<double>(11)).ok());
  EXPECT_FALSE(encode(header, ChainLayout{1, 9}, BucketRows::Identity(9),
                      std::vector<double>(12))
                   .ok());
  header.add_labels("O");
  EXPECT_FALSE(
      encode(header, ChainLayout{2, 8}, rows, std::vector<double>(20)).ok());
  // Beyond float32's range: refused for FLOAT32, kept by FLOAT64.
  ModelFile one;
  one.add_labels("O");
  one.mutable_features()->set_num_buckets(8);
  std::vector<double> huge(11, 0.0);
  huge[2] = 1e300;
  EXPECT_FALSE(encode(one, one_label, rows, huge).ok());
  one.set_weight_precision(FLOAT64);
  EXPECT_TRUE(encode(one, one_label, rows, huge).ok());
  huge[2] = std::nan("");
  EXPECT_FALSE(encode(one, one_label, rows, huge).ok());
}

// A restricted solver's w (FreeEmissions: each row's free labels, then
// every coordinate from the pair rows on) and the same w in every
// coordinate encode to the same file: full and sparse emission rows
// (below and from kSparseRowsFromLabels labels), rows with no free label,
// one with every label free, exact zeros of either sign, and second order
// with pair rows. A w of another size is refused.
TEST(ModelEncodingTest,
     FreeCoordinatesEncodeAsTheSameWeightsInEveryCoordinate) {
  struct Case {
    int num_labels;
    bool second_order;
  };
  for (const Case c : {Case{4, false}, Case{kSparseRowsFromLabels + 7, false},
                       Case{0, true}}) {
    SCOPED_TRACE(testing::Message() << "labels " << c.num_labels << " order "
                                    << (c.second_order ? 2 : 1));
    const SecondOrderStructure structure = SecondOrderTestStructure();
    ModelFile header =
        c.second_order
            ? SecondOrderHeader()
            : WordModelHeader(std::vector<std::string>(c.num_labels, "O"));
    if (!c.second_order) {
      for (int y = 0; y < c.num_labels; ++y) {
        header.set_labels(y, absl::StrCat("L", y));
      }
    }
    const int L = header.labels_size();
    ChainLayout layout{L, kBuckets};
    const BucketRows rows = BucketRows::Identity(kBuckets);
    if (c.second_order) {
      layout.order = 2;
      layout.num_trigrams = structure.num_trigrams();
      layout.num_pair_rows = kBuckets;
      layout.num_pairs = structure.num_pairs();
    }
    // Row r's free labels: none for every seventh row, all for row 1, else
    // about a third; their values normal, every fifth an exact zero.
    std::mt19937 rng(5);
    std::vector<int64_t> row_begin = {0};
    std::vector<int32_t> labels;
    std::vector<double> at_free;
    std::vector<double> dense(layout.dim(), 0.0);
    std::normal_distribution<double> normal;
    for (int r = 0; r < kBuckets; ++r) {
      for (int y = 0; y < L; ++y) {
        const bool free =
            r % 7 != 0 &&
            (r == 1 || std::uniform_int_distribution<>(0, 2)(rng) == 0);
        if (!free) continue;
        labels.push_back(y);
        const int64_t k = static_cast<int64_t>(at_free.size());
        const double value =
            k % 5 == 0 ? (k % 10 == 0 ? 0.0 : -0.0) : normal(rng);
        at_free.push_back(value);
        dense[static_cast<int64_t>(r) * L + y] = value;
      }
      row_begin.push_back(static_cast<int64_t>(labels.size()));
    }
    for (int64_t k = layout.pair_emission_offset(); k < layout.dim(); ++k) {
      dense[k] = normal(rng);
      at_free.push_back(dense[k]);
    }
    std::vector<uint32_t> listed;
    absl::StatusOr<SparseRows> sparse =
        SparseRows::FromFreeCoordinates(L, row_begin, labels, &listed);
    ASSERT_TRUE(sparse.ok()) << sparse.status();
    const FreeEmissions free{&*sparse, listed.data()};
    const BucketRows* pair_rows = c.second_order ? &rows : nullptr;
    const SecondOrderStructure* order2 = c.second_order ? &structure : nullptr;
    ModelFile expected = header;
    ASSERT_TRUE(EncodeModelWeights(layout, rows, nullptr, order2, pair_rows,
                                   nullptr, dense, &expected)
                    .ok());
    ModelFile file = header;
    const absl::Status encoded = EncodeModelWeights(
        layout, rows, nullptr, order2, pair_rows, &free, at_free, &file);
    ASSERT_TRUE(encoded.ok()) << encoded;
    EXPECT_EQ(file.SerializeAsString(), expected.SerializeAsString());
    EXPECT_EQ(HasSparseRows(file), L >= kSparseRowsFromLabels);
    at_free.pop_back();
    EXPECT_FALSE(EncodeModelWeights(layout, rows, nullptr, order2, pair_rows,
                                    &free, at_free, &file)
                     .ok());
  }
}

}  // namespace
}  // namespace chaintag
