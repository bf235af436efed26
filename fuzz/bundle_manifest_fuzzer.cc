// Fuzz target for the bundle manifest: ReadBundleManifest (pipeline/
// bundle.h), which parses `bundle.textproto` for `tag --pipeline`, then
// Bundle::Create's validation of the stages against their models and, when
// it passes, tagging through the stages (constrained, n-best, margins).
//
// ReadBundleManifest takes a path, so the input is written to a
// per-process temporary file. The models are small ones built in memory
// (reading 1, 2 or 3 columns; NONE, IOB2 and IOB1 output), chosen per
// stage by its number of inputs, rather than loaded from the paths the
// manifest names: a fuzzed path could name any file on the machine (a
// FIFO, /dev/stdin), which tests the fuzzing host, not the loader.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "features/bucket_rows.h"
#include "fuzz/fuzz_util.h"
#include "models/chain_layout.h"
#include "models/chain_model.h"
#include "tagging/bundle.h"

namespace chaintag {
namespace {

constexpr int kBuckets = 32;
constexpr int kMaxStages = 8;

// A model reading `columns` attribute columns, one template per column
// plus a conjunction, with deterministic weights.
ChainModel MakeModel(int columns, const std::vector<std::string>& labels,
                     TagScheme train, TagScheme output) {
  ModelFile header;
  for (const std::string& label : labels) header.add_labels(label);
  FeatureConfig* features = header.mutable_features();
  features->set_num_buckets(kBuckets);
  features->set_bias(true);
  for (int c = 0; c < columns; ++c) {
    features->add_templates()->add_parts()->set_attribute(c);
  }
  FeatureTemplate* pair = features->add_templates();
  pair->add_parts()->set_attribute(0);
  TemplatePart* previous = pair->add_parts();
  previous->set_attribute(columns - 1);
  previous->set_offset(-1);
  ConllFormat* format = header.mutable_input_format();
  for (int c = 0; c < columns; ++c) format->add_attribute_columns(c);
  format->set_label_column(columns);
  format->set_tag_scheme(output);
  format->set_allow_missing_label(true);
  header.set_input_num_columns(columns + 1);
  header.set_train_scheme(train);
  header.set_output_scheme(output);
  const ChainLayout layout{static_cast<int>(labels.size()), kBuckets};
  std::vector<double> weights(layout.dim());
  for (size_t k = 0; k < weights.size(); ++k) {
    weights[k] = static_cast<double>((k * 37 + 11) % 23) / 11.0 - 1.0;
  }
  absl::StatusOr<ChainModel> model =
      ChainModel::Create(header, BucketRows::Identity(kBuckets), weights);
  FUZZ_CHECK(model.ok());
  return *std::move(model);
}

// The model for a stage with `inputs` inputs (mismatches are the
// validation's business).
ChainModel ModelFor(int inputs) {
  switch (inputs) {
    case 2:
      return MakeModel(2, {"O", "B-NP", "I-NP", "B-VP", "I-VP"}, IOB2, IOB2);
    case 3:
      return MakeModel(3, {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"}, IOB2,
                       IOB1);
    default:
      return MakeModel(1, {"NN", "VBD", "DT", "."}, NONE, NONE);
  }
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  static fuzzing::TempFile file("bundle_manifest");
  absl::StatusOr<BundleManifest> manifest =
      ReadBundleManifest(file.Write(fuzzing::AsText(data, size)));
  if (!manifest.ok() || manifest->stages_size() > kMaxStages) return 0;

  std::vector<ChainModel> models;
  for (const BundleStage& stage : manifest->stages()) {
    models.push_back(ModelFor(stage.inputs_size()));
  }
  absl::StatusOr<Bundle> bundle =
      Bundle::Create(*manifest, std::move(models), "fuzz");
  if (!bundle.ok()) return 0;
  FUZZ_CHECK(bundle->num_stages() == manifest->stages_size());
  FUZZ_CHECK(bundle->columns().size() ==
             static_cast<size_t>(bundle->num_stages()) + 1);

  BundleScratch scratch;
  std::vector<StageOutput> outputs;
  const std::vector<std::vector<std::string>> sentences = {
      {}, {"Rockwell"}, {"Rockwell", "said", "the", "agreement", "."}};
  for (const std::vector<std::string>& words : sentences) {
    for (int variant = 0; variant < 2; ++variant) {
      BundleOptions options;
      options.constrained = variant == 0;
      options.nbest = variant == 0 ? 1 : 3;
      options.margins = variant == 1;
      if (!bundle->Tag(words, options, &scratch, &outputs).ok()) continue;
      FUZZ_CHECK(outputs.size() == static_cast<size_t>(bundle->num_stages()));
      for (const StageOutput& out : outputs) {
        FUZZ_CHECK(out.tags.size() == words.size());
      }
    }
  }
  return 0;
}
