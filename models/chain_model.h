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
#include <optional>
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
#include "models/top_k_viterbi.h"
#include "models/transition_constraints.h"
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
  // For PredictNBest: the n-best table and its flat output, and the
  // constrained copies of the start/transition/end scores.
  TopKViterbi top_k;
  std::vector<int32_t> top_k_labelings;
  std::vector<double> top_k_scores;
  ConstrainedScoresBuffer constrained;
};

// How PredictNBest decodes.
struct DecodeOptions {
  // Only labelings valid in the model's training scheme (starts, transitions
  // and ends; models/transition_constraints.h). No effect for NONE.
  bool constrained = false;
  // How many of the best labelings to return (≥ 1). Costs O(T·L·(L + n))
  // time and O(T·L·n) memory for n ≥ 2; n = 1 is plain Viterbi.
  int nbest = 1;
};

// The result of PredictNBest, best first. Reuse one across sentences to
// keep its buffers.
struct Decoded {
  // Label ids (training scheme), one row per labeling, all distinct. Fewer
  // than nbest when fewer labelings exist (L^T of them, or the valid ones).
  std::vector<std::vector<int32_t>> labelings;
  // Their scores ⟨w, φ(x, y)⟩, descending (ties as in TopKViterbi); a
  // valid labeling scores the same constrained or not.
  std::vector<double> scores;
  // scores[0] − scores[1] (≥ 0) when nbest ≥ 2 and two labelings exist;
  // +∞ when nbest ≥ 2 but only one labeling exists (an empty sentence, or
  // constraints that leave one); absent when nbest = 1 (not computed).
  std::optional<double> margin;
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
  // The training scheme's constraints over labels() (outside tag "O").
  const TransitionConstraints& constraints() const { return constraints_; }

  // Predicted label ids (training scheme) for a sentence.
  absl::Status Predict(const Sentence& sentence, TagScratch* scratch,
                       std::vector<int32_t>* labels) const;
  // The nbest best labelings (training scheme) of a sentence, their scores
  // and the margin, optionally constrained to the training scheme's valid
  // transitions. Unconstrained with nbest = 1 it gives exactly Predict's
  // labeling; its first labeling is always the one Viterbi decoding of the
  // same (constrained or not) scores gives. Fails (and clears `decoded`)
  // when nbest < 1, when feature extraction fails, or when no labeling of
  // the sentence is valid (possible only for label sets missing the labels
  // a scheme needs, e.g. IOBES without O and S-*: an odd-length sentence
  // over {B-X, E-X} has none); there is no silent unconstrained fallback.
  absl::Status PredictNBest(const Sentence& sentence,
                            const DecodeOptions& options, TagScratch* scratch,
                            Decoded* decoded) const;
  // Predicted tags in the output scheme; constrained when the model file
  // says so (ModelFile.constrained_decoding).
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
  TransitionConstraints constraints_;
};

// Label ids to their names, re-encoded from scheme `from` to `to`.
std::vector<std::string> LabelsToTags(const LabelSet& labels, TagScheme from,
                                      TagScheme to,
                                      const std::vector<int32_t>& ids);

// Predicts with weights other than the model's own (e.g. a solver's
// iterate during training); `weights` follows `layout`. With `constraints`
// (over layout.num_labels labels), the best valid labeling; fails when the
// sentence has none, as PredictNBest does.
absl::Status PredictWithWeights(
    const FeatureExtractor& extractor, const ChainLayout& layout,
    const double* weights, const Sentence& sentence, TagScratch* scratch,
    std::vector<int32_t>* labels,
    const TransitionConstraints* constraints = nullptr);

// PredictNBest with weights other than the model's own; `constraints`
// (over layout.num_labels labels) is used only when options.constrained.
absl::Status PredictNBestWithWeights(const FeatureExtractor& extractor,
                                     const ChainLayout& layout,
                                     const double* weights,
                                     const TransitionConstraints& constraints,
                                     const Sentence& sentence,
                                     const DecodeOptions& options,
                                     TagScratch* scratch, Decoded* decoded);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_MODEL_H_
