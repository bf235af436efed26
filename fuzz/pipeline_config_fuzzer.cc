// Fuzz target for the config text parser: ReadPipelineConfig (pipeline/
// pipeline.h, through base/file_io.h's ReadTextProto), which reads every
// `train --config` file, and what a run does with a config before it reads
// a corpus: the `--set=path=value` overrides (base/config_override.h), the
// task's resolution, the feature extractor (templates, RE2 patterns,
// hashing) on a few sentences, and the solver's creation.
//
// ReadPipelineConfig takes a path, so the input is written to a
// per-process temporary file. Lines starting with "#set " (comments to the
// text parser) are applied as overrides after the parse.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/config_override.h"
#include "corpora/sentence.h"
#include "features/feature_extractor.h"
#include "features/feature_sequence.h"
#include "fuzz/fuzz_util.h"
#include "pipeline/pipeline.h"
#include "solvers/registry.h"

namespace chaintag {
namespace {

Sentence MakeSentence(int length, int attributes) {
  static const char* const kWords[] = {"Rockwell",
                                       "International",
                                       "Corp.",
                                       "'s",
                                       "Tulsa",
                                       "unit",
                                       "NNP",
                                       "B-NP",
                                       "I-NP",
                                       "",
                                       "\xC3\xA9t\xC3\xA9",
                                       "1990"};
  Sentence s;
  s.num_attributes = attributes;
  for (int t = 0; t < length; ++t) {
    for (int a = 0; a < attributes; ++a) {
      s.attributes.push_back(kWords[(5 * t + 7 * a) % 12]);
    }
  }
  return s;
}

void ExerciseFeatures(const FeatureConfig& config) {
  absl::StatusOr<FeatureExtractor> extractor = FeatureExtractor::Create(config);
  if (!extractor.ok()) return;
  const int max_attribute = extractor->max_attribute();
  if (max_attribute >= 16) return;
  const int attributes = max_attribute + 1 > 0 ? max_attribute + 1 : 1;
  FeatureSequence features;
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  for (int length : {0, 1, 5}) {
    const Sentence sentence = MakeSentence(length, attributes);
    if (extractor->Extract(sentence, &features).ok()) {
      FUZZ_CHECK(features.size() == length);
      for (uint32_t bucket : features.buckets) {
        FUZZ_CHECK(bucket < extractor->num_buckets());
      }
    }
    if (extractor->ExtractHashes(sentence, &offsets, &hashes, &values).ok()) {
      FUZZ_CHECK(offsets.size() == static_cast<size_t>(length) + 1);
    }
  }
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  static fuzzing::TempFile file("pipeline_config");
  const absl::string_view text = fuzzing::AsText(data, size);
  absl::StatusOr<PipelineConfig> config = ReadPipelineConfig(file.Write(text));
  if (!config.ok()) return 0;

  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "#set ")) {
      (void)ApplyAssignment(line.substr(5), &*config);
    }
  }
  const PipelineConfig resolved = ResolvePipelineConfig(*config);
  ExerciseFeatures(resolved.features());
  (void)CreateSolver(resolved.solver());
  return 0;
}
