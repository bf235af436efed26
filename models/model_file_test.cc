#include "models/model_file.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "features/bucket_rows.h"
#include "gtest/gtest.h"
#include "models/chain_layout.h"
#include "models/model_encoding.h"
#include "models/model_file_testing.h"
#include "models/second_order.h"

namespace chaintag {
namespace {

using chain_testing::kBuckets;
using chain_testing::NormalWeights;
using chain_testing::RandomWeights;
using chain_testing::ReadAll;
using chain_testing::SecondOrderHeader;
using chain_testing::SecondOrderLabels;
using chain_testing::SecondOrderTestStructure;
using chain_testing::TempPath;
using chain_testing::WordModelHeader;
using chain_testing::WriteAll;

const std::vector<std::string>& Labels() {
  static const auto* labels =
      new std::vector<std::string>{"O", "B-NP", "E-NP", "S-NP"};
  return *labels;
}

// A first-order file: every bucket its own row, every third row all zero
// (not stored).
ModelFile EncodedFile(bool constrained_decoding = false) {
  ModelFile file = WordModelHeader(Labels(), constrained_decoding);
  const int L = static_cast<int>(Labels().size());
  const absl::Status status = EncodeModelWeights(
      ChainLayout{L, kBuckets}, BucketRows::Identity(kBuckets), nullptr,
      nullptr, nullptr, nullptr, RandomWeights(L), &file);
  EXPECT_TRUE(status.ok()) << status;
  return file;
}

// A second-order file: every bucket a row of emissions and of pair weights.
ModelFile EncodedSecondOrderFile() {
  ModelFile file = SecondOrderHeader();
  const SecondOrderStructure structure = SecondOrderTestStructure();
  ChainLayout layout{file.labels_size(), kBuckets};
  layout.order = 2;
  layout.num_trigrams = structure.num_trigrams();
  layout.num_pair_rows = kBuckets;
  layout.num_pairs = structure.num_pairs();
  const BucketRows rows = BucketRows::Identity(kBuckets);
  const absl::Status status =
      EncodeModelWeights(layout, rows, nullptr, &structure, &rows, nullptr,
                         NormalWeights(layout.dim(), 7), &file);
  EXPECT_TRUE(status.ok()) << status;
  return file;
}

TEST(ModelFileTest, WritesAndReadsBackByteForByte) {
  for (const ModelFile& file : {EncodedFile(), EncodedSecondOrderFile()}) {
    const std::string path = TempPath("roundtrip.model");
    ASSERT_TRUE(WriteModelFile(file, path).ok());
    absl::StatusOr<ModelFile> read = ReadModelFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->SerializeAsString(), file.SerializeAsString());
    const std::string again = TempPath("roundtrip2.model");
    ASSERT_TRUE(WriteModelFile(*read, again).ok());
    EXPECT_EQ(ReadAll(path), ReadAll(again));
  }
}

TEST(ModelFileTest, EncodesTheFormatOfTheOrder) {
  const ModelFile first = EncodedFile();
  EXPECT_EQ(first.magic(), kModelMagic);
  EXPECT_EQ(first.format_version(), kModelFormatVersion);
  EXPECT_EQ(first.weight_precision(), FLOAT32);
  EXPECT_EQ(first.emission_buckets_size(), kBuckets - (kBuckets + 2) / 3);
  EXPECT_EQ(first.weights_checksum(), WeightsChecksum(first));
  EXPECT_TRUE(CheckModelFile(first).ok());
  const ModelFile second = EncodedSecondOrderFile();
  EXPECT_EQ(second.format_version(), kSecondOrderFormatVersion);
  EXPECT_EQ(second.order(), 2u);
  EXPECT_TRUE(CheckModelFile(second).ok());
  absl::StatusOr<std::shared_ptr<const SecondOrderStructure>> structure =
      ReadSecondOrderStructure(second, SecondOrderLabels());
  ASSERT_TRUE(structure.ok()) << structure.status();
  ASSERT_NE(*structure, nullptr);
  EXPECT_EQ((*structure)->num_trigrams(), 64);
  EXPECT_EQ((*structure)->pairs(),
            (std::vector<LabelPair>{{1, 2}, {0, 1}, {2, 2}}));
  structure = ReadSecondOrderStructure(first, Labels());
  ASSERT_TRUE(structure.ok()) << structure.status();
  EXPECT_EQ(*structure, nullptr);
}

TEST(ModelFileTest, KeepsTheNamesOfStoredRowsUnderTheChecksum) {
  ModelFile file = WordModelHeader(Labels(), false);
  const int L = static_cast<int>(Labels().size());
  // Every third row is all zero and not stored (EncodedFile): bucket 0 is
  // such a row, 1 and 2 are stored.
  for (uint32_t bucket : {0u, 1u, 2u}) {
    file.add_name_buckets(bucket);
    file.add_names("name " + std::to_string(bucket));
  }
  ASSERT_TRUE(EncodeModelWeights(
                  ChainLayout{L, kBuckets}, BucketRows::Identity(kBuckets),
                  nullptr, nullptr, nullptr, nullptr, RandomWeights(L), &file)
                  .ok());
  ASSERT_EQ(file.emission_buckets(0), 1u);
  ASSERT_EQ(file.name_buckets_size(), 2);
  EXPECT_EQ(file.name_buckets(0), 1u);
  EXPECT_EQ(file.names(0), "name 1");
  EXPECT_EQ(file.names(1), "name 2");
  EXPECT_TRUE(CheckModelFile(file).ok());
  // Names change the checksum; a file without them keeps its old one.
  EXPECT_NE(file.weights_checksum(), EncodedFile().weights_checksum());
  ModelFile damaged = file;
  damaged.set_names(1, "name 3");
  EXPECT_FALSE(CheckModelFile(damaged).ok());
  damaged = file;
  damaged.set_names(0, "name 12");  // bytes moved between names
  damaged.set_names(1, "");
  EXPECT_FALSE(CheckModelFile(damaged).ok());
  damaged = file;
  damaged.add_names("one too many");
  damaged.set_weights_checksum(WeightsChecksum(damaged));
  EXPECT_FALSE(CheckModelFile(damaged).ok());
  damaged = file;
  damaged.set_name_buckets(1, 1);  // not ascending
  damaged.set_weights_checksum(WeightsChecksum(damaged));
  EXPECT_FALSE(CheckModelFile(damaged).ok());
}

TEST(ModelFileTest, RefusesOlderFormatsAndAsksForRetraining) {
  // 1: dense rows; 2 to 5: the features' earlier hashing.
  for (uint32_t version : {1, 2, 3, 4, 5}) {
    ModelFile file = EncodedFile();
    file.set_format_version(version);
    const std::string path =
        TempPath(absl::StrCat("format", version, ".model"));
    WriteAll(path, file.SerializeAsString());
    absl::StatusOr<ModelFile> read = ReadModelFile(path);
    ASSERT_FALSE(read.ok()) << version;
    EXPECT_NE(read.status().message().find(path), std::string::npos);
    EXPECT_NE(read.status().message().find("retrain"), std::string::npos)
        << read.status();
  }
}

TEST(ModelFileTest, RejectsDamagedAndForeignFiles) {
  const ModelFile good = EncodedFile();
  const std::string path = TempPath("good.model");
  ASSERT_TRUE(WriteModelFile(good, path).ok());
  const std::string bytes = ReadAll(path);

  const std::string truncated = TempPath("truncated.model");
  for (size_t keep : {bytes.size() / 2, bytes.size() - 3, size_t{10}}) {
    WriteAll(truncated, bytes.substr(0, keep));
    EXPECT_FALSE(ReadModelFile(truncated).ok()) << "kept " << keep << " bytes";
  }

  // A directory is named as one, not as a file that does not parse.
  const std::string directory = TempPath("a_directory.model");
  std::filesystem::create_directories(directory);
  absl::StatusOr<ModelFile> from_directory = ReadModelFile(directory);
  ASSERT_FALSE(from_directory.ok());
  EXPECT_NE(
      from_directory.status().message().find("a directory, not a model file"),
      std::string::npos)
      << from_directory.status();

  // Another tagger's model is named by its first bytes; other bytes that
  // do not parse are called so.
  const std::pair<std::string, const char*> peer_heads[] = {
      {std::string("lCRF\xac\x59\x87\0FOMC", 12), "a CRFsuite model"},
      {"#mdl#2#10136\n#rdr#21/1/0\n", "a Wapiti model"},
      {std::string("d\0\0\0\0\0\0\0\0\0\0\0", 12), "a CRF++ model"},
      {"version: 100\ncost-factor: 1\n", "a CRF++ model"},
      {"B-NP I-NP\n", "does not parse (truncated or not a model)"}};
  for (const auto& [head, named] : peer_heads) {
    const std::string peer = TempPath("peer.model");
    WriteAll(peer, head);
    absl::StatusOr<ModelFile> read_peer = ReadModelFile(peer);
    ASSERT_FALSE(read_peer.ok()) << named;
    EXPECT_NE(read_peer.status().message().find(named), std::string::npos)
        << read_peer.status();
    EXPECT_NE(read_peer.status().message().find(peer), std::string::npos);
  }

  // One weight changed in a way that still parses: the checksum catches it.
  ModelFile file = good;
  file.set_transitions(0, file.transitions(0) + 1e-9);
  const std::string flipped = TempPath("flipped.model");
  WriteAll(flipped, file.SerializeAsString());
  absl::StatusOr<ModelFile> read = ReadModelFile(flipped);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("checksum"), std::string::npos);

  const std::string foreign = TempPath("foreign.model");
  WriteAll(foreign, "O B-NP I-NP\nthis is not a model\n");
  read = ReadModelFile(foreign);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(foreign), std::string::npos);

  file = good;
  file.set_format_version(99);
  WriteAll(foreign, file.SerializeAsString());
  read = ReadModelFile(foreign);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("version"), std::string::npos);

  file = good;
  file.set_start(0, std::nan(""));
  file.set_weights_checksum(0);
  WriteAll(foreign, file.SerializeAsString());
  EXPECT_FALSE(ReadModelFile(foreign).ok());

  file = good;
  file.set_magic("chaintag-bundle");
  EXPECT_EQ(CheckModelFile(file).message(), "wrong magic");

  EXPECT_EQ(ReadModelFile(TempPath("missing.model")).status().code(),
            absl::StatusCode::kNotFound);

  // The decoding mode is the last field: a file cut before it, or with it
  // flipped, fails the checksum instead of decoding differently.
  const std::string constrained = TempPath("constrained_cut.model");
  ASSERT_TRUE(WriteModelFile(EncodedFile(true), constrained).ok());
  const std::string constrained_bytes = ReadAll(constrained);
  WriteAll(truncated,
           constrained_bytes.substr(0, constrained_bytes.size() - 3));
  EXPECT_FALSE(ReadModelFile(truncated).ok());
  file = good;
  file.set_constrained_decoding(true);
  WriteAll(foreign, file.SerializeAsString());
  read = ReadModelFile(foreign);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("checksum"), std::string::npos);
}

// Every byte of a written file is covered: flipping any bit of any byte,
// the labels and the templates included, fails the read, except where it
// turns the whole-file checksum's own tag into an unknown field, and then
// the file read is the one written. A file without that checksum (written
// before it) is still read, checked by weights_checksum.
TEST(ModelFileTest, EveryByteIsCoveredByTheFileChecksum) {
  const ModelFile good = EncodedFile();
  const std::string path = TempPath("covered.model");
  ASSERT_TRUE(WriteModelFile(good, path).ok());
  const std::string bytes = ReadAll(path);
  const std::string body = good.SerializeAsString();
  ASSERT_EQ(bytes.substr(0, body.size()), body);
  EXPECT_EQ(bytes.size(), body.size() + 10);  // a 2-byte tag, 8 of value

  const std::string damaged = TempPath("damaged.model");
  int accepted = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (int mask : {0x01, 0x10, 0x80, 0xff}) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ mask);
      WriteAll(damaged, flipped);
      absl::StatusOr<ModelFile> read = ReadModelFile(damaged);
      if (!read.ok()) continue;
      ++accepted;
      EXPECT_GE(at, body.size()) << "byte " << at << " mask " << mask;
      EXPECT_EQ(read->SerializeAsString().substr(0, body.size()), body)
          << "byte " << at << " mask " << mask;
    }
  }
  EXPECT_LT(accepted, 8);

  // The labels damaged in a file without the whole-file checksum parse and
  // pass the weights checksum: what the new checksum is for.
  std::string old_file = body;
  const size_t label = old_file.find("B-NP");
  ASSERT_NE(label, std::string::npos);
  old_file[label + 2] = 'X';
  WriteAll(damaged, old_file);
  EXPECT_TRUE(ReadModelFile(damaged).ok());
  WriteAll(damaged, body);
  absl::StatusOr<ModelFile> old_read = ReadModelFile(damaged);
  ASSERT_TRUE(old_read.ok()) << old_read.status();
  EXPECT_EQ(old_read->SerializeAsString(), body);

  // A stale file_checksum left in the message is inside the checksummed
  // bytes; the appended one is what counts.
  ModelFile stale = good;
  stale.set_file_checksum(123);
  ASSERT_TRUE(WriteModelFile(stale, damaged).ok());
  absl::StatusOr<ModelFile> restale = ReadModelFile(damaged);
  ASSERT_TRUE(restale.ok()) << restale.status();
  EXPECT_EQ(restale->SerializeAsString(), body);

  // Junk after the checksum: it is no longer the last field.
  WriteAll(damaged, bytes + std::string("\x08\x01", 2));
  absl::StatusOr<ModelFile> junk = ReadModelFile(damaged);
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("file checksum"), std::string::npos)
      << junk.status();
}

TEST(ModelFileTest, ChecksTheSecondOrderFields) {
  const ModelFile good = EncodedSecondOrderFile();
  auto expect_rejected = [&](const ModelFile& file, const std::string& why) {
    const absl::Status status = CheckModelFile(file);
    ASSERT_FALSE(status.ok()) << why;
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(status.message().find(why), std::string::npos) << status;
  };
  ModelFile file = good;
  file.set_trigram_weights(3, file.trigram_weights(3) + 1);
  expect_rejected(file, "checksum");
  file = good;
  file.set_format_version(kModelFormatVersion);
  expect_rejected(file, "does not match order 2");
  file = good;
  file.set_trigram_labels(5, 9);
  expect_rejected(file, "names label 9");
  file = good;
  file.add_trigram_weights(0);
  expect_rejected(file, "sizes");
  file = good;
  file.set_order(3);
  expect_rejected(file, "order 3");
  file = good;
  file.set_format_version(kStackedFormatVersion);
  expect_rejected(file, "without a first stage");
}

}  // namespace
}  // namespace chaintag
