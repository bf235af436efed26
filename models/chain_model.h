// ChainModel: a trained linear-chain tagger (labels, feature extractor,
// weights) and its model file. Save writes a temporary file and renames it,
// so an interrupted save never leaves a broken model behind; Load validates
// magic, version, sizes, finite values and a checksum of the weights.
//
// Thread-safety: const methods are safe from any thread; each thread uses
// its own TagScratch.

#ifndef CHAINTAG_MODELS_CHAIN_MODEL_H_
#define CHAINTAG_MODELS_CHAIN_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "features/feature_extractor.h"
#include "features/feature_sequence.h"
#include "models/chain_layout.h"
#include "models/model_file.pb.h"
#include "models/viterbi.h"

namespace chaintag {

constexpr uint32_t kModelFormatVersion = 1;
constexpr char kModelMagic[] = "chaintag-model";

// Reusable buffers for tagging one sentence after another.
struct TagScratch {
  FeatureSequence features;
  std::vector<double> unary;
  std::vector<int32_t> labels;
  std::vector<std::string> names;
  ViterbiDecoder decoder;
};

class ChainModel {
 public:
  // `header` is a ModelFile without weight fields; `weights` has
  // layout().dim() entries.
  static absl::StatusOr<ChainModel> Create(ModelFile header,
                                           std::vector<double> weights);
  static absl::StatusOr<ChainModel> Load(const std::string& path);
  absl::Status Save(const std::string& path) const;

  // The complete model file (header and weights), as Save writes it.
  ModelFile ToProto() const;

  const ModelFile& header() const { return header_; }
  const LabelSet& labels() const { return labels_; }
  const FeatureExtractor& extractor() const { return extractor_; }
  const ChainLayout& layout() const { return layout_; }
  const std::vector<double>& weights() const { return weights_; }

  // Predicted label ids (training scheme) for a sentence.
  absl::Status Predict(const Sentence& sentence, TagScratch* scratch,
                       std::vector<int32_t>* labels) const;
  // Predicted tags in the output scheme.
  absl::Status Tag(const Sentence& sentence, TagScratch* scratch,
                   std::vector<std::string>* tags) const;
  // Label ids (training scheme) to tags in the output scheme.
  std::vector<std::string> ToOutputTags(
      const std::vector<int32_t>& labels) const;

 private:
  ChainModel(ModelFile header, LabelSet labels, FeatureExtractor extractor,
             ChainLayout layout, std::vector<double> weights);

  ModelFile header_;
  LabelSet labels_;
  FeatureExtractor extractor_;
  ChainLayout layout_;
  std::vector<double> weights_;
};

// Label ids to their names, re-encoded from scheme `from` to `to`.
std::vector<std::string> LabelsToTags(const LabelSet& labels, TagScheme from,
                                      TagScheme to,
                                      const std::vector<int32_t>& ids);

// Predicts with weights other than the model's own (e.g. a solver's
// iterate during training); `weights` follows `layout`.
absl::Status PredictWithWeights(const FeatureExtractor& extractor,
                                const ChainLayout& layout,
                                const double* weights, const Sentence& sentence,
                                TagScratch* scratch,
                                std::vector<int32_t>* labels);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_MODEL_H_
