#include "models/chain_model.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "corpora/tag_scheme.h"
#include "features/document_features.h"
#include "models/model_encoding.h"

namespace chaintag {
namespace {

// The error for a sentence whose labelings all score −∞.
absl::Status NoFiniteLabelingError(int length,
                                   const TransitionConstraints* constraints) {
  return absl::FailedPreconditionError(absl::StrCat(
      "no labeling of this ", length, "-token sentence has a finite score",
      constraints != nullptr
          ? absl::StrCat(" under the ", TagSchemeName(constraints->scheme()),
                         " constraints over the model's labels")
          : ""));
}

// Rows of `rows` for the sentence's features and their scores, width per
// row, into `unary`.
absl::Status ScoreRows(const FeatureExtractor& extractor,
                       const BucketRows& rows, int width, const float* f32,
                       const double* f64, const Sentence& sentence,
                       FeatureSequence* features, std::vector<double>* unary) {
  absl::Status status = extractor.ExtractRows(sentence, rows, features);
  if (!status.ok()) return status;
  unary->resize(static_cast<size_t>(features->size()) * width);
  if (f32 != nullptr) {
    ComputeUnaryScores(width, f32, *features, unary->data());
  } else {
    ComputeUnaryScores(width, f64, *features, unary->data());
  }
  return absl::OkStatus();
}

// ScoreRows over a model file's sparse emission rows.
absl::Status ScoreSparseRows(const FeatureExtractor& extractor,
                             const WeightsView& weights,
                             const Sentence& sentence, TagScratch* scratch) {
  absl::Status status =
      extractor.ExtractRows(sentence, *weights.rows, &scratch->features);
  if (!status.ok()) return status;
  scratch->unary.resize(static_cast<size_t>(scratch->features.size()) *
                        weights.num_labels);
  if (weights.emission_f32 != nullptr) {
    weights.sparse_rows->ComputeUnaryScores(
        weights.emission_labels, weights.emission_f32, scratch->features,
        scratch->unary.data());
  } else {
    weights.sparse_rows->ComputeUnaryScores(
        weights.emission_labels, weights.emission_f64, scratch->features,
        scratch->unary.data());
  }
  return absl::OkStatus();
}

// The weights per pair row: one per label pair at first order, one per
// weighted pair at second.
int PairWidth(const WeightsView& weights) {
  return weights.structure != nullptr ? weights.structure->num_pairs()
                                      : weights.num_labels * weights.num_labels;
}

// Extracts the sentence's features into scratch->features (as rows of
// `weights`) and its unary scores into scratch->unary; with pair templates
// also the pair scores into scratch->pair_unary.
absl::Status ComputeSentenceUnary(const FeatureExtractor& extractor,
                                  const WeightsView& weights,
                                  const Sentence& sentence,
                                  TagScratch* scratch) {
  if (weights.num_labels == 0 && sentence.size() > 0) {
    // A model trained on no sentences (python-crfsuite's empty Trainer).
    return absl::FailedPreconditionError(
        "the model has no labels (it was trained on no sentences): it "
        "cannot tag a non-empty sentence");
  }
  absl::Status status =
      weights.sparse_rows != nullptr
          ? ScoreSparseRows(extractor, weights, sentence, scratch)
          : ScoreRows(extractor, *weights.rows, weights.num_labels,
                      weights.emission_f32, weights.emission_f64, sentence,
                      &scratch->features, &scratch->unary);
  if (!status.ok() || weights.pair_rows == nullptr) return status;
  if (extractor.pair_extractor() == nullptr) {
    return absl::FailedPreconditionError(
        "the weights have pair rows but the features no pair templates");
  }
  return ScoreRows(*extractor.pair_extractor(), *weights.pair_rows,
                   PairWidth(weights), weights.pair_f32, weights.pair_f64,
                   sentence, &scratch->pair_features, &scratch->pair_unary);
}

// The second-order view of the scores ComputeSentenceUnary left in
// `scratch`.
SecondOrderScores SecondOrderView(const WeightsView& weights, int length,
                                  const TagScratch& scratch) {
  const int64_t L = weights.num_labels;
  SecondOrderScores scores;
  scores.length = length;
  scores.unary = scratch.unary.data();
  scores.transition = weights.tail;
  scores.start = weights.tail + L * L;
  scores.end = weights.tail + L * L + L;
  scores.trigram = weights.tail + L * L + 2 * L;
  scores.pair_unary =
      weights.pair_rows != nullptr ? scratch.pair_unary.data() : nullptr;
  return scores;
}

}  // namespace

ChainLayout WeightSpace::Layout(int num_labels) const {
  ChainLayout layout{num_labels, rows->size()};
  if (structure == nullptr) {
    if (pair_rows != nullptr) {
      layout.num_pair_rows = pair_rows->size();
      layout.num_pairs = num_labels * num_labels;
    }
    return layout;
  }
  layout.order = 2;
  layout.num_trigrams = structure->num_trigrams();
  if (pair_rows != nullptr) {
    layout.num_pair_rows = pair_rows->size();
    layout.num_pairs = structure->num_pairs();
  }
  return layout;
}

WeightsView SolverWeightsView(const ChainLayout& layout, const BucketRows& rows,
                              const double* w) {
  return SolverWeightsView(layout, WeightSpace{&rows}, w);
}

WeightsView SolverWeightsView(const ChainLayout& layout,
                              const WeightSpace& space, const double* w) {
  WeightsView view;
  view.num_labels = layout.num_labels;
  view.rows = space.rows;
  view.emission_f64 = w;
  // Where the coordinates after the emission rows begin in w.
  const double* rest = w + layout.pair_emission_offset();
  if (space.free.rows != nullptr) {
    view.sparse_rows = space.free.rows;
    view.emission_labels = space.free.labels;
    rest = w + space.free.rows->WeightBegin(layout.num_rows);
  }
  view.tail =
      rest + (layout.transition_offset() - layout.pair_emission_offset());
  view.structure = space.structure;
  if (space.pair_rows != nullptr) {
    view.pair_rows = space.pair_rows;
    view.pair_f64 = rest;
  }
  return view;
}

ChainModel::ChainModel(ModelFile file, LabelSet labels,
                       FeatureExtractor extractor, BucketRows rows,
                       BucketRows pair_rows,
                       std::shared_ptr<const SecondOrderStructure> structure)
    : file_(std::move(file)),
      labels_(std::move(labels)),
      extractor_(std::move(extractor)),
      rows_(std::move(rows)),
      pair_rows_(std::move(pair_rows)),
      structure_(std::move(structure)),
      constraints_(labels_.names(), file_.train_scheme()) {
  tail_.assign(file_.transitions().begin(), file_.transitions().end());
  tail_.insert(tail_.end(), file_.start().begin(), file_.start().end());
  tail_.insert(tail_.end(), file_.end().begin(), file_.end().end());
  tail_.insert(tail_.end(), file_.trigram_weights().begin(),
               file_.trigram_weights().end());
  const int L = labels_.size();
  if (structure_ == nullptr && pair_rows_.size() == 0 &&
      file_.transitions_size() == L * L) {
    std::vector<uint8_t> allowed(static_cast<size_t>(L) * L);
    int64_t count = 0;
    for (size_t k = 0; k < allowed.size(); ++k) {
      allowed[k] = !IsForbiddenTransition(tail_[k]);
      count += allowed[k];
    }
    if (count * 4 <= int64_t{L} * L) {
      lists_ = std::make_shared<const TransitionLists>(
          TransitionLists::FromMask(allowed.data(), L));
    }
  }
}

absl::StatusOr<ChainModel> ChainModel::FromFile(ModelFile file) {
  // The first stage is a model of its own: kept as one, not twice.
  std::shared_ptr<const ChainModel> first_stage;
  if (file.has_first_stage()) {
    absl::StatusOr<ChainModel> stage =
        FirstStageFromFile(std::move(*file.mutable_first_stage()));
    if (!stage.ok()) return stage.status();
    file.clear_first_stage();
    first_stage = std::make_shared<const ChainModel>(*std::move(stage));
  }
  // A model without labels (trained on nothing) holds no weights and
  // tags only empty sentences (ComputeSentenceUnary refuses the others).
  if (file.labels_size() == 0 &&
      (file.emission_buckets_size() > 0 || file.feature_keys_size() > 0 ||
       file.order() == 2 || first_stage != nullptr)) {
    return absl::InvalidArgumentError(
        "a model without labels must have no weights, order 1 and no first "
        "stage");
  }
  LabelSet labels(
      std::vector<std::string>(file.labels().begin(), file.labels().end()));
  if (labels.size() != file.labels_size()) {
    return absl::InvalidArgumentError("model labels are not distinct");
  }
  // Exact features: the file's keys are its rows', in order, so a
  // feature's bucket (its key's index) is its row.
  std::shared_ptr<const FeatureKeys> keys;
  if (file.features().exact()) {
    absl::StatusOr<FeatureKeys> table =
        FeatureKeys::FromSorted(file.feature_keys());
    if (!table.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature keys: ", table.status().message()));
    }
    keys = std::make_shared<const FeatureKeys>(*std::move(table));
  }
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(file.features(), keys);
  if (!extractor.ok()) return extractor.status();
  absl::StatusOr<BucketRows> rows =
      keys != nullptr ? BucketRows::Identity(keys->size())
                      : BucketRows::FromSorted(file.emission_buckets(),
                                               extractor->num_buckets());
  if (!rows.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("emission rows: ", rows.status().message()));
  }
  absl::StatusOr<BucketRows> pair_rows =
      BucketRows::FromSorted(file.pair_buckets(), extractor->num_buckets());
  if (!pair_rows.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pair rows: ", pair_rows.status().message()));
  }
  if ((file.pair_labels_size() > 0 || HasFirstOrderPairRows(file)) &&
      extractor->pair_extractor() == nullptr) {
    return absl::InvalidArgumentError(
        "pair weights without pair templates in the features");
  }
  absl::StatusOr<std::shared_ptr<const SecondOrderStructure>> structure =
      ReadSecondOrderStructure(file, labels.names());
  if (!structure.ok()) return structure.status();
  std::shared_ptr<const SparseRows> sparse_rows;
  if (HasSparseRows(file)) {
    absl::StatusOr<SparseRows> index = SparseRows::Create(
        labels.size(), file.emission_row_sizes(), file.emission_labels(),
        file.weight_precision() == FLOAT64 ? file.emission_weights_f64_size()
                                           : file.emission_weights_f32_size());
    if (!index.ok()) return index.status();
    sparse_rows = std::make_shared<const SparseRows>(*std::move(index));
  }
  ChainModel model(std::move(file), std::move(labels), std::move(*extractor),
                   std::move(*rows), std::move(*pair_rows),
                   *std::move(structure));
  model.first_stage_ = std::move(first_stage);
  model.sparse_rows_ = std::move(sparse_rows);
  return model;
}

absl::StatusOr<ChainModel> ChainModel::FirstStageFromFile(ModelFile file) {
  auto invalid = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("first stage: ", why));
  };
  absl::Status valid = CheckModelFile(file);
  if (!valid.ok()) return invalid(valid.message());
  absl::StatusOr<ChainModel> stage = FromFile(std::move(file));
  if (!stage.ok()) return invalid(stage.status().message());
  return stage;
}

ModelFile ChainModel::ToProto() const {
  ModelFile file = file_;
  if (first_stage_ != nullptr) {
    *file.mutable_first_stage() = first_stage_->ToProto();
  }
  return file;
}

absl::Status ChainModel::AddDocumentAttributes(absl::Span<Sentence> document,
                                               TagScratch* scratch) const {
  if (first_stage_ == nullptr) return absl::OkStatus();
  std::vector<std::vector<std::string>> labels;
  absl::Status status =
      first_stage_->DocumentLabels(document, scratch, &labels);
  if (!status.ok()) return status;
  return AppendDocumentAttributes(file_.document_word_attribute(), labels,
                                  document);
}

absl::Status ChainModel::DocumentLabels(
    absl::Span<const Sentence> document, TagScratch* scratch,
    std::vector<std::vector<std::string>>* labels) const {
  absl::Status status = TagDocument(document, scratch, labels);
  if (!status.ok()) return status;
  // The document attributes read IOB2 chunks.
  for (std::vector<std::string>& sentence_labels : *labels) {
    sentence_labels = ConvertTags(sentence_labels, file_.output_scheme(), IOB2);
  }
  return absl::OkStatus();
}

int ChainModel::added_attributes() const {
  return first_stage_ == nullptr
             ? 0
             : first_stage_->added_attributes() + kNumDocumentAttributes;
}

absl::Status ChainModel::TagDocument(
    absl::Span<const Sentence> document, TagScratch* scratch,
    std::vector<std::vector<std::string>>* tags) const {
  tags->resize(document.size());
  if (first_stage_ == nullptr) {
    for (size_t s = 0; s < document.size(); ++s) {
      absl::Status status = Tag(document[s], scratch, &(*tags)[s]);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  std::vector<Sentence> stacked(document.begin(), document.end());
  absl::Status status = AddDocumentAttributes(absl::MakeSpan(stacked), scratch);
  if (!status.ok()) return status;
  for (size_t s = 0; s < stacked.size(); ++s) {
    status = Tag(stacked[s], scratch, &(*tags)[s]);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<ChainModel> ChainModel::Create(
    ModelFile header, const BucketRows& rows,
    absl::Span<const double> weights) {
  return Create(std::move(header), WeightSpace{&rows}, weights);
}

absl::StatusOr<ChainModel> ChainModel::Create(
    ModelFile header, const WeightSpace& space,
    absl::Span<const double> weights) {
  absl::Status encoded = EncodeModelWeights(
      space.Layout(header.labels_size()), *space.rows, space.keys,
      space.structure, space.pair_rows,
      space.free.rows != nullptr ? &space.free : nullptr, weights, &header);
  if (!encoded.ok()) return encoded;
  return FromFile(std::move(header));
}

WeightSpace ChainModel::space() const {
  WeightSpace space{&rows_};
  space.structure = structure_.get();
  space.keys = extractor_.keys();
  if (structure_ != nullptr ? file_.pair_labels_size() > 0
                            : HasFirstOrderPairRows(file_)) {
    space.pair_rows = &pair_rows_;
  }
  return space;
}

WeightsView ChainModel::weights() const {
  WeightsView view;
  view.num_labels = labels_.size();
  view.rows = &rows_;
  const bool f64 = file_.weight_precision() == FLOAT64;
  if (f64) {
    view.emission_f64 = file_.emission_weights_f64().data();
  } else {
    view.emission_f32 = file_.emission_weights_f32().data();
  }
  if (sparse_rows_ != nullptr) {
    view.sparse_rows = sparse_rows_.get();
    view.emission_labels = file_.emission_labels().data();
  }
  view.tail = tail_.data();
  view.lists = lists_.get();
  view.structure = structure_.get();
  view.pair_rows = space().pair_rows;
  if (view.pair_rows != nullptr) {
    if (f64) {
      view.pair_f64 = file_.pair_weights_f64().data();
    } else {
      view.pair_f32 = file_.pair_weights_f32().data();
    }
  }
  return view;
}

namespace {

// Copies the rows a model keeps (`own`, `width` weights each, in float32 or
// float64; with `sparse`, its kept weights over `labels`) into the rows of
// `target` at `dense`; others stay zero.
void CopyRows(const BucketRows& own, const float* f32, const double* f64,
              const SparseRows* sparse, const uint32_t* labels, int width,
              const BucketRows& target, double* dense) {
  auto weight = [&](int64_t k) {
    return f32 != nullptr ? static_cast<double>(f32[k]) : f64[k];
  };
  for (int64_t r = 0; r < target.size(); ++r) {
    const int64_t row = own.Find(target.buckets()[r]);
    if (row < 0) continue;
    double* out = dense + r * width;
    if (sparse == nullptr || sparse->Full(row)) {
      const int64_t begin =
          sparse == nullptr ? row * width : sparse->WeightBegin(row);
      for (int y = 0; y < width; ++y) out[y] = weight(begin + y);
      continue;
    }
    const uint32_t* listed = labels + sparse->LabelBegin(row);
    for (int64_t k = sparse->WeightBegin(row); k < sparse->WeightBegin(row + 1);
         ++k) {
      out[*listed++] = weight(k);
    }
  }
}

}  // namespace

std::vector<double> ChainModel::DenseWeights(const BucketRows& rows) const {
  WeightSpace target = space();
  target.rows = &rows;
  return DenseWeights(target);
}

std::vector<double> ChainModel::DenseWeights(const WeightSpace& target) const {
  const ChainLayout layout = target.Layout(labels_.size());
  std::vector<double> dense(layout.dim(), 0.0);
  const WeightsView view = weights();
  CopyRows(rows_, view.emission_f32, view.emission_f64, view.sparse_rows,
           view.emission_labels, layout.num_labels, *target.rows, dense.data());
  if (target.pair_rows != nullptr && view.pair_rows != nullptr) {
    CopyRows(pair_rows_, view.pair_f32, view.pair_f64, nullptr, nullptr,
             layout.num_pairs, *target.pair_rows,
             dense.data() + layout.pair_emission_offset());
  }
  std::copy(tail_.begin(), tail_.end(),
            dense.begin() + layout.transition_offset());
  return dense;
}

absl::Status ChainModel::Save(const std::string& path) const {
  // A stacked model nests its first stage again; a plain one is not copied.
  if (first_stage_ == nullptr) return WriteModelFile(file_, path);
  return WriteModelFile(ToProto(), path);
}

absl::StatusOr<ChainModel> ChainModel::Load(const std::string& path) {
  absl::StatusOr<ModelFile> file = ReadModelFile(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<ChainModel> model = FromFile(*std::move(file));
  if (!model.ok()) return InvalidModelFileError(path, model.status().message());
  return model;
}

namespace {

// The first-order scores of the sentence ComputeSentenceUnary scored,
// constrained when `constraints` is given.
absl::StatusOr<ChainScores> FirstOrderView(
    const WeightsView& weights, int length,
    const TransitionConstraints* constraints, TagScratch* scratch) {
  ChainScores scores = ChainScoresFromTail(weights.num_labels, weights.tail,
                                           length, scratch->unary.data());
  if (weights.pair_rows != nullptr) scores.pair = scratch->pair_unary.data();
  if (constraints == nullptr) return scores;
  return constraints->Apply(scores, &scratch->constrained);
}

// The best labeling (into `labels`, length entries) and its score.
absl::StatusOr<double> DecodeBest(const WeightsView& weights, int length,
                                  const TransitionConstraints* constraints,
                                  TagScratch* scratch, int32_t* labels) {
  if (weights.structure != nullptr) {
    return scratch->second_order_decoder.Decode(
        *weights.structure, SecondOrderView(weights, length, *scratch), labels);
  }
  absl::StatusOr<ChainScores> scores =
      FirstOrderView(weights, length, constraints, scratch);
  if (!scores.ok()) return scores.status();
  if (constraints == nullptr && scores->pair == nullptr &&
      weights.lists != nullptr) {
    // Over the listed transitions: the labeling the full decoder finds
    // whenever one avoids every unlisted transition (kForbiddenTransition).
    ChainScores listed = *scores;
    listed.lists = weights.lists;
    const double best = scratch->decoder.Decode(listed, labels);
    if (best != -std::numeric_limits<double>::infinity()) return best;
  }
  return scratch->decoder.Decode(*scores, labels);
}

// The k best labelings into scratch->top_k_labelings and top_k_scores.
absl::StatusOr<int> DecodeTopK(const WeightsView& weights, int length, int k,
                               const TransitionConstraints* constraints,
                               TagScratch* scratch) {
  if (weights.structure != nullptr) {
    return scratch->second_order_top_k.Decode(
        *weights.structure, SecondOrderView(weights, length, *scratch), k,
        &scratch->top_k_labelings, &scratch->top_k_scores);
  }
  absl::StatusOr<ChainScores> scores =
      FirstOrderView(weights, length, constraints, scratch);
  if (!scores.ok()) return scores.status();
  return scratch->top_k.Decode(*scores, k, &scratch->top_k_labelings,
                               &scratch->top_k_scores);
}

// Second-order labelings are always the allowed ones: errors name the
// structure's constraints.
const TransitionConstraints* EffectiveConstraints(
    const WeightsView& weights, const TransitionConstraints* constraints) {
  return weights.structure != nullptr ? nullptr : constraints;
}

}  // namespace

absl::StatusOr<ChainScores> ChainModel::FirstOrderScores(
    const Sentence& sentence, bool constrained, TagScratch* scratch) const {
  const WeightsView view = weights();
  if (view.structure != nullptr) {
    return absl::FailedPreconditionError(
        "first-order scores of a second-order model");
  }
  absl::Status status =
      ComputeSentenceUnary(extractor(), view, sentence, scratch);
  if (!status.ok()) return status;
  return FirstOrderView(view, scratch->features.size(),
                        constrained ? &constraints() : nullptr, scratch);
}

absl::Status PredictWithWeights(const FeatureExtractor& extractor,
                                const WeightsView& weights,
                                const Sentence& sentence, TagScratch* scratch,
                                std::vector<int32_t>* labels,
                                const TransitionConstraints* constraints) {
  absl::Status status =
      ComputeSentenceUnary(extractor, weights, sentence, scratch);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  constraints = EffectiveConstraints(weights, constraints);
  labels->resize(T);
  absl::StatusOr<double> best =
      DecodeBest(weights, T, constraints, scratch, labels->data());
  if (!best.ok()) return best.status();
  if (*best == -std::numeric_limits<double>::infinity()) {
    labels->clear();
    return NoFiniteLabelingError(T, constraints);
  }
  return absl::OkStatus();
}

absl::Status PredictNBestWithWeights(const FeatureExtractor& extractor,
                                     const WeightsView& weights,
                                     const TransitionConstraints& constraints,
                                     const Sentence& sentence,
                                     const DecodeOptions& options,
                                     TagScratch* scratch, Decoded* decoded) {
  decoded->labelings.clear();
  decoded->scores.clear();
  decoded->margin.reset();
  if (options.nbest < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nbest must be at least 1, got ", options.nbest));
  }
  absl::Status status =
      ComputeSentenceUnary(extractor, weights, sentence, scratch);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  const TransitionConstraints* used = EffectiveConstraints(
      weights, options.constrained ? &constraints : nullptr);
  if (options.nbest == 1) {
    decoded->labelings.resize(1);
    decoded->labelings[0].resize(T);
    absl::StatusOr<double> best =
        DecodeBest(weights, T, used, scratch, decoded->labelings[0].data());
    if (!best.ok()) return best.status();
    decoded->scores.push_back(*best);
  } else {
    absl::StatusOr<int> m =
        DecodeTopK(weights, T, options.nbest, used, scratch);
    if (!m.ok()) return m.status();
    decoded->labelings.resize(*m);
    for (int j = 0; j < *m; ++j) {
      const auto row =
          scratch->top_k_labelings.begin() + static_cast<ptrdiff_t>(j) * T;
      decoded->labelings[j].assign(row, row + T);
    }
    decoded->scores.assign(scratch->top_k_scores.begin(),
                           scratch->top_k_scores.end());
  }
  // Only −∞ scores (forbidden everywhere) leave nothing to return.
  if (decoded->scores.empty() ||
      decoded->scores[0] == -std::numeric_limits<double>::infinity()) {
    decoded->labelings.clear();
    decoded->scores.clear();
    return NoFiniteLabelingError(T, used);
  }
  if (options.nbest >= 2) {
    decoded->margin = decoded->scores.size() >= 2
                          ? decoded->scores[0] - decoded->scores[1]
                          : std::numeric_limits<double>::infinity();
  }
  return absl::OkStatus();
}

absl::Status ChainModel::PredictNBest(const Sentence& sentence,
                                      const DecodeOptions& options,
                                      TagScratch* scratch,
                                      Decoded* decoded) const {
  return PredictNBestWithWeights(extractor_, weights(), constraints_, sentence,
                                 options, scratch, decoded);
}

absl::Status ChainModel::Predict(const Sentence& sentence, TagScratch* scratch,
                                 std::vector<int32_t>* labels) const {
  return PredictWithWeights(extractor_, weights(), sentence, scratch, labels);
}

std::vector<std::string> LabelsToTags(const LabelSet& labels, TagScheme from,
                                      TagScheme to,
                                      const std::vector<int32_t>& ids) {
  std::vector<std::string> tags;
  tags.reserve(ids.size());
  for (int32_t y : ids) tags.push_back(labels.Name(y));
  // Predictions already in the output scheme are written as decoded, so
  // conlleval reads exactly the chunks the model chose.
  if (from == to) return tags;
  return ConvertTags(tags, from, to);
}

std::vector<std::string> ChainModel::ToOutputTags(
    const std::vector<int32_t>& labels) const {
  return LabelsToTags(labels_, file_.train_scheme(), file_.output_scheme(),
                      labels);
}

absl::Status ChainModel::TagWithMarginals(
    const Sentence& sentence, TagScratch* scratch,
    std::vector<std::string>* tags, std::vector<double>* probabilities) const {
  if (order() != 1) {
    return absl::UnimplementedError(
        "marginals are computed for first-order models only");
  }
  absl::Status status = Tag(sentence, scratch, tags);
  if (!status.ok()) return status;
  const std::vector<int32_t> predicted = scratch->labels;
  absl::StatusOr<ChainScores> scores =
      FirstOrderScores(sentence, file_.constrained_decoding(), scratch);
  if (!scores.ok()) return scores.status();
  const size_t T = scores->length;
  const size_t L = scores->num_labels;
  probabilities->assign(T, 1.0);
  if (T == 0) return absl::OkStatus();
  // Forward-backward writes the transition and boundary marginals after
  // the T×L label marginals (and per-position pair marginals with pair
  // scores).
  scratch->marginals.resize(T * L + L * L + 2 * L +
                            (scores->pair != nullptr ? T * L * L : 0));
  scratch->forward_backward.Compute(*scores, 1.0, scratch->marginals.data());
  for (size_t t = 0; t < T; ++t) {
    (*probabilities)[t] = scratch->marginals[t * L + predicted[t]];
  }
  return absl::OkStatus();
}

absl::Status ChainModel::Tag(const Sentence& sentence, TagScratch* scratch,
                             std::vector<std::string>* tags) const {
  absl::Status status = PredictWithWeights(
      extractor_, weights(), sentence, scratch, &scratch->labels,
      file_.constrained_decoding() ? &constraints_ : nullptr);
  if (!status.ok()) return status;
  *tags = ToOutputTags(scratch->labels);
  return absl::OkStatus();
}

}  // namespace chaintag
