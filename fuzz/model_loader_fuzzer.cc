// Fuzz target for the model file loader (ChainModel::Load, models/
// chain_model.h), which reads every model `tag` and bundles are given.
// Load takes a path, so the input is written to a per-process temporary
// file. A model that loads is then used: sentences are tagged, n-best
// decoded (constrained and not) and checked (label ids in range, scores
// descending).
//
// Nearly every mutation of a valid file fails the weights checksum, which
// would keep the fuzzer out of everything after it. So an input that
// parses as a ModelFile with the right magic is loaded a second time with
// its checksum recomputed (the same XXH3 as models/model_file.cc; if the
// two drift apart, only the coverage suffers: the replay test checks that
// the seed models still load this way).
//
// Inputs whose features claim more than 2^24 hash buckets are skipped:
// the bucket rank index is 16 bytes per 64 buckets by design (1 GiB at the
// allowed maximum of 2^32), which a model that size needs, so a tiny file
// can legitimately ask for it; fuzzing that path only measures memset.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "corpora/sentence.h"
#include "fuzz/fuzz_util.h"
#include "models/chain_model.h"
#include "models/model_file.pb.h"

namespace chaintag {
namespace {

constexpr uint64_t kMaxFuzzedBuckets = uint64_t{1} << 24;

// A sentence of `length` tokens with `attributes` columns of short words.
Sentence MakeSentence(int length, int attributes) {
  static const char* const kWords[] = {
      "Confidence", "in", "the",  "pound", "is", "widely",
      "expected",   "NN", "B-NP", ".",     "",   "1,000"};
  Sentence s;
  s.num_attributes = attributes;
  for (int t = 0; t < length; ++t) {
    for (int a = 0; a < attributes; ++a) {
      s.attributes.push_back(kWords[(3 * t + 5 * a) % 12]);
    }
    s.lines.push_back("line");
  }
  return s;
}

// Uses a model that loaded the way `tag` does.
void Exercise(const ChainModel& model) {
  const int L = model.labels().size();
  FUZZ_CHECK(L > 0);
  const int max_attribute = model.extractor().max_attribute();
  if (max_attribute >= 16) return;
  const int attributes = max_attribute + 1 > 0 ? max_attribute + 1 : 1;
  TagScratch scratch;
  Decoded decoded;
  for (int length : {0, 1, 4}) {
    const Sentence sentence = MakeSentence(length, attributes);
    std::vector<std::string> tags;
    if (model.Tag(sentence, &scratch, &tags).ok()) {
      FUZZ_CHECK(tags.size() == static_cast<size_t>(length));
    }
    for (bool constrained : {false, true}) {
      DecodeOptions options;
      options.constrained = constrained;
      options.nbest = 3;
      if (!model.PredictNBest(sentence, options, &scratch, &decoded).ok()) {
        continue;
      }
      FUZZ_CHECK(!decoded.labelings.empty() && decoded.labelings.size() <= 3);
      FUZZ_CHECK(decoded.scores.size() == decoded.labelings.size());
      for (size_t k = 0; k < decoded.labelings.size(); ++k) {
        FUZZ_CHECK(decoded.labelings[k].size() == static_cast<size_t>(length));
        for (int32_t y : decoded.labelings[k]) FUZZ_CHECK(y >= 0 && y < L);
        if (k > 0) FUZZ_CHECK(!(decoded.scores[k] > decoded.scores[k - 1]));
      }
      FUZZ_CHECK(decoded.margin.has_value() && !(*decoded.margin < 0));
      FUZZ_CHECK(model.ToOutputTags(decoded.labelings[0]).size() ==
                 static_cast<size_t>(length));
    }
  }
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  static fuzzing::TempFile file("model_loader");
  const absl::string_view bytes = fuzzing::AsText(data, size);
  ModelFile parsed;
  const bool parses = parsed.ParseFromArray(data, static_cast<int>(size));
  if (parses && parsed.features().num_buckets() > kMaxFuzzedBuckets) return 0;

  absl::StatusOr<ChainModel> model = ChainModel::Load(file.Write(bytes));
  if (model.ok()) Exercise(*model);

  if (!parses || parsed.magic() != kModelMagic) return 0;
  const uint64_t checksum = WeightsChecksum(parsed);
  if (parsed.has_weights_checksum() && parsed.weights_checksum() == checksum) {
    return 0;  // loaded above already
  }
  parsed.set_weights_checksum(checksum);
  model = ChainModel::Load(file.Write(parsed.SerializeAsString()));
  if (model.ok()) Exercise(*model);
  return 0;
}
