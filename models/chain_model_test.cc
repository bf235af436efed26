#include "models/chain_model.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A small IOBES model over word identity features with random weights.
ChainModel MakeModel() {
  ModelFile header;
  for (const char* label : {"O", "B-NP", "E-NP", "S-NP"}) {
    header.add_labels(label);
  }
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(64);
  FeatureTemplate* word = features->add_templates();
  word->set_name("w[0]");
  word->add_parts()->set_attribute(0);
  header.set_train_scheme(IOBES);
  header.set_output_scheme(IOB2);
  const ChainLayout layout{4, 64};
  std::vector<double> weights(layout.dim());
  std::mt19937 rng(1);
  std::normal_distribution<double> normal(0, 1);
  for (double& w : weights) w = normal(rng);
  // Leave some emission rows zero so the sparse storage is exercised.
  for (int b = 0; b < 64; b += 3) {
    for (int y = 0; y < 4; ++y) weights[b * 4 + y] = 0;
  }
  absl::StatusOr<ChainModel> model = ChainModel::Create(header, weights);
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(*model);
}

TEST(ChainModelTest, RoundTripsBitExactly) {
  ChainModel model = MakeModel();
  const std::string path = TempPath("roundtrip.model");
  ASSERT_TRUE(model.Save(path).ok());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->weights(), model.weights());  // exact, not near
  EXPECT_EQ(loaded->labels().names(), model.labels().names());
  EXPECT_EQ(loaded->header().features().SerializeAsString(),
            model.header().features().SerializeAsString());
  // Saving the loaded model gives the same bytes.
  const std::string again = TempPath("roundtrip2.model");
  ASSERT_TRUE(loaded->Save(again).ok());
  EXPECT_EQ(ReadAll(path), ReadAll(again));
}

TEST(ChainModelTest, RejectsDamagedAndForeignFiles) {
  ChainModel model = MakeModel();
  const std::string path = TempPath("good.model");
  ASSERT_TRUE(model.Save(path).ok());
  const std::string bytes = ReadAll(path);

  const std::string truncated = TempPath("truncated.model");
  for (size_t keep : {bytes.size() / 2, bytes.size() - 3, size_t{10}}) {
    WriteAll(truncated, bytes.substr(0, keep));
    absl::StatusOr<ChainModel> loaded = ChainModel::Load(truncated);
    EXPECT_FALSE(loaded.ok()) << "kept " << keep << " bytes";
  }

  // One weight changed in a way that still parses: the checksum catches it.
  ModelFile file = model.ToProto();
  file.set_transitions(0, file.transitions(0) + 1e-9);
  const std::string flipped = TempPath("flipped.model");
  WriteAll(flipped, file.SerializeAsString());
  absl::StatusOr<ChainModel> loaded = ChainModel::Load(flipped);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("checksum"), std::string::npos);

  const std::string foreign = TempPath("foreign.model");
  WriteAll(foreign, "O B-NP I-NP\nthis is not a model\n");
  loaded = ChainModel::Load(foreign);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(foreign), std::string::npos);

  file = model.ToProto();
  file.set_format_version(99);
  WriteAll(foreign, file.SerializeAsString());
  loaded = ChainModel::Load(foreign);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("version"), std::string::npos);

  file = model.ToProto();
  file.set_start(0, std::nan(""));
  file.set_weights_checksum(0);
  WriteAll(foreign, file.SerializeAsString());
  EXPECT_FALSE(ChainModel::Load(foreign).ok());

  EXPECT_FALSE(ChainModel::Load(TempPath("missing.model")).ok());
}

TEST(ChainModelTest, TagsInTheOutputScheme) {
  ChainModel model = MakeModel();
  Sentence sentence;
  sentence.num_attributes = 1;
  sentence.attributes = {"the", "big", "dog", "barks"};
  TagScratch scratch;
  std::vector<int32_t> ids;
  ASSERT_TRUE(model.Predict(sentence, &scratch, &ids).ok());
  ASSERT_EQ(ids.size(), 4u);
  std::vector<std::string> tags;
  ASSERT_TRUE(model.Tag(sentence, &scratch, &tags).ok());
  ASSERT_EQ(tags.size(), 4u);
  for (const std::string& tag : tags) {
    EXPECT_TRUE(tag == "O" || tag == "B-NP" || tag == "I-NP") << tag;
  }
  // S-NP/B-NP predictions start an IOB2 chunk; E-NP never appears.
  for (size_t t = 0; t < ids.size(); ++t) {
    const std::string& name = model.labels().Name(ids[t]);
    if (name == "S-NP") {
      EXPECT_EQ(tags[t], "B-NP");
    }
  }
}

TEST(ChainModelTest, CreateChecksSizes) {
  ModelFile header;
  header.add_labels("O");
  header.mutable_features()->set_num_buckets(8);
  EXPECT_FALSE(ChainModel::Create(header, std::vector<double>(3)).ok());
  header.add_labels("O");
  EXPECT_FALSE(ChainModel::Create(header, std::vector<double>(20)).ok());
}

}  // namespace
}  // namespace chaintag
