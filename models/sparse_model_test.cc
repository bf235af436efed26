// Model files with sparse emission rows (ModelFile.emission_row_sizes):
// written when most of a row's labels weigh zero, read back exactly, and
// scored as the same weights in full rows are.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "corpora/sentence_testing.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/chain_model.h"
#include "models/model_file.h"
#include "models/model_file_testing.h"
#include "models/second_order.h"
#include "models/sparse_rows.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace {

using chain_testing::AllBuckets;
using chain_testing::kBuckets;
using chain_testing::NormalWeights;
using chain_testing::RandomWeights;
using chain_testing::ReadAll;
using chain_testing::SecondOrderHeader;
using chain_testing::TempPath;
using chain_testing::WordModelHeader;
using chain_testing::WriteAll;
using sentence_testing::WordSentence;

// Enough labels for sparse rows (kSparseRowsFromLabels).
const std::vector<std::string>& Labels() {
  static const std::vector<std::string>* labels = [] {
    auto* names = new std::vector<std::string>;
    for (int y = 0; y < kSparseRowsFromLabels + 10; ++y) {
      names->push_back("L" + std::to_string(y));
    }
    return names;
  }();
  return *labels;
}

// Emission rows as a trained model's: most rows weigh one or two labels,
// every seventh row all of them, every fifth none; the tail random.
void MakeRowsSparse(int num_labels, std::vector<double>* weights) {
  std::mt19937 rng(3);
  for (int r = 0; r < kBuckets; ++r) {
    if (r % 7 == 0) continue;
    double* row = weights->data() + r * num_labels;
    const int keep_a = rng() % num_labels, keep_b = rng() % num_labels;
    for (int y = 0; y < num_labels; ++y) {
      if (r % 5 == 0 || (y != keep_a && y != keep_b)) row[y] = 0;
    }
  }
}

ChainModel SparseModel(WeightPrecision precision) {
  const int L = static_cast<int>(Labels().size());
  std::vector<double> weights =
      NormalWeights(ChainLayout{L, kBuckets}.dim(), 5);
  MakeRowsSparse(L, &weights);
  absl::StatusOr<ChainModel> model = ChainModel::Create(
      WordModelHeader(Labels(), false, precision), AllBuckets(), weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

// The same file with every stored row written out in full (format kind,
// no sizes or labels): the reference the sparse rows must score like.
ModelFile WithFullRows(ModelFile file) {
  const int L = file.labels_size();
  const bool f64 = file.weight_precision() == FLOAT64;
  absl::StatusOr<SparseRows> rows =
      SparseRows::Create(L, file.emission_row_sizes(), file.emission_labels(),
                         f64 ? file.emission_weights_f64_size()
                             : file.emission_weights_f32_size());
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::vector<double> full;
  for (int64_t r = 0; r < rows->num_rows(); ++r) {
    for (int y = 0; y < L; ++y) {
      const int64_t k = rows->Find(file.emission_labels().data(), r, y);
      full.push_back(k < 0 ? 0.0
                     : f64 ? file.emission_weights_f64(k)
                           : file.emission_weights_f32(k));
    }
  }
  file.set_format_version(FormatKind(file));
  file.clear_emission_row_sizes();
  file.clear_emission_labels();
  file.clear_emission_weights_f32();
  file.clear_emission_weights_f64();
  for (double w : full) {
    if (f64) {
      file.add_emission_weights_f64(w);
    } else {
      file.add_emission_weights_f32(static_cast<float>(w));
    }
  }
  file.set_weights_checksum(WeightsChecksum(file));
  return file;
}

ChainModel LoadFile(const ModelFile& file, const std::string& name) {
  const std::string path = TempPath(name);
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> model = ChainModel::Load(path);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

// The same labelings with the same scores, bit for bit, on random
// sentences.
void ExpectSameDecoding(const ChainModel& a, const ChainModel& b) {
  std::mt19937 rng(11);
  std::vector<std::string> words = {"the", "big", "dog", "barks", "a",
                                    "cat", "sat", "on",  "mat",   "."};
  TagScratch scratch;
  DecodeOptions options;
  options.nbest = 4;
  for (int trial = 0; trial < 12; ++trial) {
    std::shuffle(words.begin(), words.end(), rng);
    const Sentence sentence = WordSentence(
        std::vector<std::string>(words.begin(), words.begin() + 1 + trial % 9));
    Decoded from_a, from_b;
    ASSERT_TRUE(a.PredictNBest(sentence, options, &scratch, &from_a).ok());
    ASSERT_TRUE(b.PredictNBest(sentence, options, &scratch, &from_b).ok());
    EXPECT_EQ(from_a.labelings, from_b.labelings);
    EXPECT_EQ(from_a.scores, from_b.scores);
  }
}

TEST(SparseModelTest, StoresTheNonZeroLabelsAndDecodesAsFullRows) {
  for (WeightPrecision precision : {FLOAT32, FLOAT64}) {
    const ChainModel model = SparseModel(precision);
    const ModelFile& file = model.header();
    ASSERT_TRUE(HasSparseRows(file));
    EXPECT_EQ(file.format_version(),
              kModelFormatVersion + kSparseRowsVersionOffset);
    EXPECT_EQ(FormatKind(file), kModelFormatVersion);
    const int64_t stored = precision == FLOAT64
                               ? file.emission_weights_f64_size()
                               : file.emission_weights_f32_size();
    EXPECT_LT(2 * stored, file.emission_buckets_size() * file.labels_size());

    // Saved, loaded and saved again: the same bytes and weights.
    const std::string path = TempPath("sparse.model");
    ASSERT_TRUE(model.Save(path).ok());
    absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->DenseWeights(AllBuckets()),
              model.DenseWeights(AllBuckets()));
    const std::string again = TempPath("sparse2.model");
    ASSERT_TRUE(loaded->Save(again).ok());
    EXPECT_EQ(ReadAll(path), ReadAll(again));

    const ChainModel full = LoadFile(WithFullRows(file), "full.model");
    EXPECT_FALSE(HasSparseRows(full.header()));
    EXPECT_EQ(full.DenseWeights(AllBuckets()),
              model.DenseWeights(AllBuckets()));
    ExpectSameDecoding(*loaded, full);
  }
}

TEST(SparseModelTest, FewLabelsOrMostlyNonZeroRowsStayFull) {
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(WordModelHeader(Labels()), AllBuckets(),
                         RandomWeights(static_cast<int>(Labels().size())));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(HasSparseRows(model->header()));
  EXPECT_EQ(model->header().emission_labels_size(), 0);
  EXPECT_EQ(model->header().format_version(), kModelFormatVersion);

  // Below kSparseRowsFromLabels labels rows stay full, however sparse.
  const std::vector<std::string> few(Labels().begin(), Labels().begin() + 6);
  std::vector<double> weights =
      NormalWeights(ChainLayout{6, kBuckets}.dim(), 5);
  MakeRowsSparse(6, &weights);
  model = ChainModel::Create(WordModelHeader(few), AllBuckets(), weights);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_FALSE(HasSparseRows(model->header()));
  EXPECT_EQ(model->header().emission_weights_f32_size(),
            model->header().emission_buckets_size() * 6);
}

TEST(SparseModelTest, SecondOrderFilesTakeTheirSparseVersion) {
  ModelFile header = SecondOrderHeader();
  header.clear_labels();
  for (const std::string& label : Labels()) header.add_labels(label);
  const int L = header.labels_size();
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(L, TransitionConstraints(Labels(), IOB2),
                                   {{0, 1, 2}, {3, 1, 2}}, {{1, 2}, {0, 1}});
  ASSERT_TRUE(structure.ok()) << structure.status();
  const WeightSpace space{&AllBuckets(), &AllBuckets(), &*structure};
  std::vector<double> weights = NormalWeights(space.Layout(L).dim(), 7);
  MakeRowsSparse(L, &weights);
  absl::StatusOr<ChainModel> model = ChainModel::Create(header, space, weights);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(HasSparseRows(model->header()));
  EXPECT_EQ(model->header().format_version(),
            kSecondOrderFormatVersion + kSparseRowsVersionOffset);
  const ChainModel loaded = LoadFile(model->header(), "second_sparse.model");
  EXPECT_EQ(loaded.DenseWeights(loaded.space()),
            model->DenseWeights(model->space()));
  const ChainModel full =
      LoadFile(WithFullRows(model->header()), "second_full.model");
  EXPECT_EQ(full.header().format_version(), kSecondOrderFormatVersion);
  ExpectSameDecoding(loaded, full);
}

// Writes `file` with its checksum made right, so that only what the test
// broke is wrong, and expects Load to refuse it saying `why`.
void ExpectRejected(ModelFile file, const std::string& why) {
  file.set_weights_checksum(WeightsChecksum(file));
  const std::string path = TempPath("damaged_sparse.model");
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_FALSE(loaded.ok()) << why;
  EXPECT_NE(loaded.status().message().find(why), std::string::npos)
      << loaded.status();
}

TEST(SparseModelTest, RefusesDamagedSparseRows) {
  const ModelFile good = SparseModel(FLOAT32).header();
  int listed_row = -1;  // a row that lists two labels or more
  for (int r = 0, label = 0; r < good.emission_row_sizes_size(); ++r) {
    const uint32_t size = good.emission_row_sizes(r);
    if (size >= 2 && size < static_cast<uint32_t>(good.labels_size())) {
      listed_row = label;
      break;
    }
    if (size < static_cast<uint32_t>(good.labels_size())) label += size;
  }
  ASSERT_GE(listed_row, 0);

  ModelFile file = good;
  file.set_format_version(kModelFormatVersion);
  ExpectRejected(file, "format version 6 with sparse emission rows");
  file = good;
  file.clear_emission_row_sizes();
  ExpectRejected(file, "format version 16 without sparse emission rows");
  file = good;
  file.mutable_emission_row_sizes()->RemoveLast();
  ExpectRejected(file, "emission row sizes for");
  file = good;
  std::swap(*file.mutable_emission_labels()->Mutable(listed_row),
            *file.mutable_emission_labels()->Mutable(listed_row + 1));
  ExpectRejected(file, "labels are not ascending");
  file = good;
  file.set_emission_labels(file.emission_labels_size() - 1, file.labels_size());
  ExpectRejected(file, "label ids below " + std::to_string(good.labels_size()));
  file = good;
  file.add_emission_weights_f32(1.0f);
  ExpectRejected(file, "hold");
  file = WithFullRows(good);
  file.add_emission_labels(0);
  ExpectRejected(file, "emission labels without emission row sizes");

  // A one-label row's label moved to another id keeps the rows valid but
  // changes the weights: the checksum catches it.
  file = good;
  for (int r = 0, label = 0; r < file.emission_row_sizes_size(); ++r) {
    const uint32_t size = file.emission_row_sizes(r);
    if (size == 1) {
      file.set_emission_labels(
          label, (file.emission_labels(label) + 1) % file.labels_size());
      break;
    }
    if (size < static_cast<uint32_t>(file.labels_size())) label += size;
  }
  const std::string path = TempPath("relabelled.model");
  WriteAll(path, file.SerializeAsString());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("checksum"), std::string::npos)
      << loaded.status();
}

}  // namespace
}  // namespace chaintag
