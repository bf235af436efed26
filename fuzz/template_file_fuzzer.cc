// Fuzz target for CRF++ template / Wapiti pattern files
// (features/template_file.h). Beyond crashes it checks that errors name the
// file and line, that a parsed file gives literals for every part, and that
// its features' names (ExtractNames) are the features Extract hashes, in
// number and bucket, each spelled from the template's literals.
//
// Input: an option byte (the boundary markers), then the file's text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "corpora/sentence.h"
#include "features/feature_config.pb.h"
#include "features/feature_extractor.h"
#include "features/template_file.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  fuzzing::FuzzBytes bytes(data, size);
  const uint8_t option = bytes.Byte();
  absl::StatusOr<TemplateFile> file =
      ParseTemplateFile(bytes.remaining(), "fuzz.template");
  if (!file.ok()) {
    FUZZ_CHECK(absl::StartsWith(file.status().message(), "fuzz.template:"));
    return 0;
  }
  FeatureConfig config;
  config.set_num_buckets(1 << 10);
  config.set_bias((option & 4) != 0);
  config.set_boundary_markers(
      static_cast<FeatureConfig::BoundaryMarkers>(option % 3));
  for (const FeatureTemplate& t : file->templates) {
    FUZZ_CHECK(t.literals_size() == t.parts_size() + 1);
    *config.add_templates() = t;
  }
  for (const FeatureTemplate& t : file->pair_templates) {
    FUZZ_CHECK(t.parts_size() > 0);
    FUZZ_CHECK(t.literals_size() == t.parts_size() + 1);
    *config.add_pair_templates() = t;
  }
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  if (!fx.ok()) return 0;  // offsets beyond the markers' reach
  Sentence sentence;
  sentence.num_attributes = 3;
  sentence.attributes = {"He", "PRP", "x",  "reckons", "VBZ",
                         "y",  "the", "DT", "z"};
  const FeatureExtractor* const extractors[] = {&*fx, fx->pair_extractor()};
  for (const FeatureExtractor* extractor : extractors) {
    if (extractor == nullptr) continue;
    std::vector<std::vector<NamedFeature>> names;
    std::vector<int32_t> offsets;
    std::vector<uint64_t> hashes;
    std::vector<float> values;
    const absl::Status named = extractor->ExtractNames(sentence, &names);
    const absl::Status hashed =
        extractor->ExtractHashes(sentence, &offsets, &hashes, &values);
    FUZZ_CHECK(named.ok() == hashed.ok());
    if (!named.ok()) continue;  // a column the sentence does not have
    FUZZ_CHECK(names.size() == 3);
    for (size_t t = 0; t < names.size(); ++t) {
      FUZZ_CHECK(static_cast<int32_t>(names[t].size()) ==
                 offsets[t + 1] - offsets[t]);
      for (size_t k = 0; k < names[t].size(); ++k) {
        FUZZ_CHECK(names[t][k].bucket ==
                   extractor->Bucket(hashes[offsets[t] + k]));
      }
    }
  }
  return 0;
}
