// ChainModel: a trained linear-chain tagger (labels, feature extractor,
// weights) and the decoding with it: Viterbi, the n best labelings and their
// margin, decoding constrained to the training scheme, and a stacked model's
// first stage over a whole document.
//
// The weights are compact: only emission rows with a non-zero weight are
// kept, sorted by bucket, in float32 (or float64 when asked), with a rank
// index (BucketRows) from bucket to row; a bucket without a row scores
// zero. The rows are tagged from exactly the arrays the model file holds
// (models/model_file.h), so loading is a read, the file's validation and
// the rank index, never a rebuild of a dense table.
//
// Example: tag one sentence with the chunker //pipeline:conll2000_chunking
// saves (it reads two columns, word and POS):
//
//   absl::StatusOr<ChainModel> model =
//       ChainModel::Load("conll2000_chunking.model");
//   if (!model.ok()) return model.status();  // names the file and the fault
//   Sentence sentence;
//   sentence.num_attributes = 2;  // header().input_format()'s columns
//   sentence.attributes = {"He",      "PRP", "reckons", "VBZ", "the", "DT",
//                          "current", "JJ",  "account", "NN"};
//   TagScratch scratch;  // one per thread, reused sentence after sentence
//   std::vector<std::string> tags;
//   absl::Status status = model->Tag(sentence, &scratch, &tags);
//   if (!status.ok()) return status;
//   // tags: B-NP B-VP B-NP I-NP I-NP
//
// A stacked model (first_stage() not null) tags whole documents
// (TagDocument).
//
// Thread-safety: const methods are safe from any thread; each thread uses
// its own TagScratch.

#ifndef CHAINTAG_MODELS_CHAIN_MODEL_H_
#define CHAINTAG_MODELS_CHAIN_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "features/feature_sequence.h"
#include "models/chain_layout.h"
#include "models/model_file.h"
#include "models/second_order.h"
#include "models/second_order_top_k.h"
#include "models/second_order_viterbi.h"
#include "models/smoothing.h"
#include "models/sparse_rows.h"
#include "models/top_k_viterbi.h"
#include "models/transition_constraints.h"
#include "models/viterbi.h"

namespace chaintag {

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
  // Pair templates: the pair features and their scores; second order: the
  // decoders.
  FeatureSequence pair_features;
  std::vector<double> pair_unary;
  SecondOrderViterbi second_order_decoder;
  SecondOrderTopK second_order_top_k;
  // For TagWithMarginals.
  ForwardBackward forward_backward;
  std::vector<double> marginals;
};

// How PredictNBest decodes.
struct DecodeOptions {
  // Only labelings valid in the model's training scheme (starts, transitions
  // and ends; models/transition_constraints.h). No effect for NONE, nor for
  // second-order models, whose labelings are always the valid ones.
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

// The weights a decoder reads, in either of two layouts: a model's
// compact rows (float32 or float64) or a solver's iterate (double, the
// ChainLayout of its problem). Extracted buckets become rows through
// `rows` (required). Non-owning.
struct WeightsView {
  int num_labels = 0;
  const BucketRows* rows = nullptr;
  // rows->size() × num_labels, or with `sparse_rows` the rows' kept
  // weights; exactly one is set.
  const float* emission_f32 = nullptr;
  const double* emission_f64 = nullptr;
  // A model file's sparse emission rows (models/sparse_rows.h) and their
  // listed labels; null: full rows.
  const SparseRows* sparse_rows = nullptr;
  const uint32_t* emission_labels = nullptr;
  // L×L transitions [prev][next], then L start and L end biases, then (second
  // order) the weighted trigrams' weights.
  const double* tail = nullptr;
  // Second order: the structure. With pair templates (either order): the
  // pair-feature rows and their weights (pair_rows->size() × the pairs:
  // num_labels² at first order, structure->num_pairs() at second; one is
  // set).
  const SecondOrderStructure* structure = nullptr;
  const BucketRows* pair_rows = nullptr;
  const float* pair_f32 = nullptr;
  const double* pair_f64 = nullptr;
  // First order without pair rows, optionally: the transitions that score
  // above kForbiddenTransition (a model trained over allowed transitions),
  // which plain decoding then visits alone (S a position instead of L²),
  // falling back to every transition when no labeling avoids the others.
  const TransitionLists* lists = nullptr;
};

// What a solver's weight vector is over: the emission rows, with pair
// templates the pair-feature rows, and at second order the structure.
// With exact features also their key table: the rows' buckets are indices
// into it (for the model file, which keys its rows by feature key; the
// layout does not read it).
struct WeightSpace {
  const BucketRows* rows = nullptr;
  const BucketRows* pair_rows = nullptr;
  const SecondOrderStructure* structure = nullptr;
  const FeatureKeys* keys = nullptr;
  // A restricted solver's w (models/sparse_rows.h's FreeEmissions): its
  // emission part is the free coordinates; free.rows is null when w holds
  // every coordinate of the layout.
  FreeEmissions free;

  // The ChainLayout of weights over this space for `num_labels` labels.
  ChainLayout Layout(int num_labels) const;
};

// The view of a solver's weights `w` for `layout`, whose rows are `rows`
// (first order), or whose space is `space` (with space.free, sparse
// emission rows over w's free coordinates).
WeightsView SolverWeightsView(const ChainLayout& layout, const BucketRows& rows,
                              const double* w);
WeightsView SolverWeightsView(const ChainLayout& layout,
                              const WeightSpace& space, const double* w);

class ChainModel {
 public:
  // `header` is a ModelFile without weight fields; `weights` follows
  // ChainLayout{labels, rows.size()}, row r being bucket rows.buckets()[r].
  // Rows that are all zero are dropped; the rest are stored in
  // header.weight_precision() (FLOAT32 when unspecified). Fails on
  // non-finite weights, or weights beyond float32's range for FLOAT32.
  static absl::StatusOr<ChainModel> Create(ModelFile header,
                                           const BucketRows& rows,
                                           absl::Span<const double> weights);
  // The same for weights over `space` (second order when it has a
  // structure: the file then records the order, the weighted trigrams and
  // pairs and the non-zero pair rows, in format 3; first order with pair
  // rows: the non-zero pair rows, L² weights each, in format 9). Exact
  // features (header.features().exact()) need space.keys; the model then
  // holds the keys of its non-zero rows only, so its buckets are those
  // rows (rows() is the identity). With space.free, `weights` is a
  // restricted solver's, and the model is the one of the same weights in
  // every coordinate.
  static absl::StatusOr<ChainModel> Create(ModelFile header,
                                           const WeightSpace& space,
                                           absl::Span<const double> weights);
  // Reads and checks the file (ReadModelFile), then builds the model from
  // it; a fault found in building is an InvalidModelFileError too.
  static absl::StatusOr<ChainModel> Load(const std::string& path);
  // Writes ToProto() (WriteModelFile).
  absl::Status Save(const std::string& path) const;

  // The complete model file (header, weights and first stage), as Save
  // writes it.
  ModelFile ToProto() const;

  // The model file, weights included (read its header fields from here),
  // without its first stage (first_stage()).
  const ModelFile& header() const { return file_; }
  // A stacked model's first stage; null for a single-stage model.
  const ChainModel* first_stage() const { return first_stage_.get(); }
  const LabelSet& labels() const { return labels_; }
  const FeatureExtractor& extractor() const { return extractor_; }
  // The emission rows the model keeps (buckets with a non-zero weight;
  // exact features: every bucket, one per key of the model's table,
  // extractor().keys()).
  const BucketRows& rows() const { return rows_; }
  // The pair-feature rows the model keeps (pair templates).
  const BucketRows& pair_rows() const { return pair_rows_; }
  // Null for a first-order model.
  const SecondOrderStructure* structure() const { return structure_.get(); }
  int order() const { return structure_ == nullptr ? 1 : 2; }
  // The model's own space: its rows, pair rows and structure.
  WeightSpace space() const;
  // The layout of DenseWeights(space()).
  ChainLayout layout() const { return space().Layout(labels_.size()); }
  WeightsView weights() const;
  // The weights as doubles in space.Layout(labels) for any row sets over
  // the same buckets (and, at second order, the model's own structure): a
  // row the model lacks is zero (e.g. to score a ChainProblem with the
  // model's own, rounded weights).
  std::vector<double> DenseWeights(const BucketRows& rows) const;
  std::vector<double> DenseWeights(const WeightSpace& space) const;
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
  // Tag's tags and, per position, the probability P(y_t = the predicted
  // label) under p(y) ∝ exp(⟨w, φ(x, y)⟩) (forward-backward, constrained
  // as Tag is): the CRF's own marginal for a model trained with the log
  // loss (ModelFile.loss LOG); for a max-margin model, its scores
  // normalised, which rank but are not calibrated. First-order models
  // only (Unimplemented otherwise).
  absl::Status TagWithMarginals(const Sentence& sentence, TagScratch* scratch,
                                std::vector<std::string>* tags,
                                std::vector<double>* probabilities) const;
  // Tags every sentence of one document (Tag's tags, per sentence). A
  // stacked model tags the document with its first stage, appends the
  // document attributes to copies of the sentences, then tags those; a
  // single-stage model tags each sentence alone.
  absl::Status TagDocument(absl::Span<const Sentence> document,
                           TagScratch* scratch,
                           std::vector<std::vector<std::string>>* tags) const;
  // TagDocument's tags re-encoded in IOB2: the labels a first stage gives
  // the document attributes (features/document_features.h).
  absl::Status DocumentLabels(
      absl::Span<const Sentence> document, TagScratch* scratch,
      std::vector<std::vector<std::string>>* labels) const;
  // A stacked model's document attributes, from its first stage's labels
  // of `document`, appended to its sentences (nothing for a single-stage
  // model): what Predict, PredictNBest and Tag then read.
  absl::Status AddDocumentAttributes(absl::Span<Sentence> document,
                                     TagScratch* scratch) const;
  // The attributes a sentence given to Predict, PredictNBest or Tag must
  // have beyond the input columns': a stacked model's document attributes.
  int added_attributes() const;

  // The first-order scores of a sentence, as the decoders read them: its
  // unary scores (and with pair templates its per-position pair scores),
  // held in `scratch`, constrained to the training scheme's transitions
  // when `constrained`. FailedPrecondition for a second-order model.
  absl::StatusOr<ChainScores> FirstOrderScores(const Sentence& sentence,
                                               bool constrained,
                                               TagScratch* scratch) const;

  // Label ids (training scheme) to tags in the output scheme.
  std::vector<std::string> ToOutputTags(
      const std::vector<int32_t>& labels) const;

 private:
  ChainModel(ModelFile file, LabelSet labels, FeatureExtractor extractor,
             BucketRows rows, BucketRows pair_rows,
             std::shared_ptr<const SecondOrderStructure> structure);
  // Labels, extractor and rows from a file whose weight fields are filled.
  static absl::StatusOr<ChainModel> FromFile(ModelFile file);
  // A stacked file's first stage, validated as a file of its own.
  static absl::StatusOr<ChainModel> FirstStageFromFile(ModelFile file);

  ModelFile file_;
  LabelSet labels_;
  FeatureExtractor extractor_;
  BucketRows rows_;
  BucketRows pair_rows_;
  std::shared_ptr<const SecondOrderStructure> structure_;
  std::shared_ptr<const ChainModel> first_stage_;
  // The index of the file's sparse emission rows; null with full rows.
  std::shared_ptr<const SparseRows> sparse_rows_;
  // Transitions, start, end and trigrams (WeightsView::tail).
  std::vector<double> tail_;
  TransitionConstraints constraints_;
  // WeightsView::lists, when at most a quarter of the pairs are allowed.
  std::shared_ptr<const TransitionLists> lists_;
};

// Label ids to their names, re-encoded from scheme `from` to `to`.
std::vector<std::string> LabelsToTags(const LabelSet& labels, TagScheme from,
                                      TagScheme to,
                                      const std::vector<int32_t>& ids);

// Predicts with weights other than the model's own (e.g. a solver's
// iterate during training). With `constraints` (over weights.num_labels
// labels), the best valid labeling; fails when the sentence has none, as
// PredictNBest does.
absl::Status PredictWithWeights(
    const FeatureExtractor& extractor, const WeightsView& weights,
    const Sentence& sentence, TagScratch* scratch, std::vector<int32_t>* labels,
    const TransitionConstraints* constraints = nullptr);

// PredictNBest with weights other than the model's own; `constraints`
// (over weights.num_labels labels) is used only when options.constrained.
absl::Status PredictNBestWithWeights(const FeatureExtractor& extractor,
                                     const WeightsView& weights,
                                     const TransitionConstraints& constraints,
                                     const Sentence& sentence,
                                     const DecodeOptions& options,
                                     TagScratch* scratch, Decoded* decoded);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_MODEL_H_
