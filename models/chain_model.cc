#include "models/chain_model.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "corpora/tag_scheme.h"
#include "models/file_io.h"
#include "xxhash.h"

namespace chaintag {
namespace {

// Checksum over the weight fields, in a fixed order, and over the decoding
// mode when it is constrained: that field is serialised last, so a file cut
// just before it would otherwise load and decode differently.
uint64_t WeightsChecksum(const ModelFile& file) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  auto add = [state](const void* data, size_t bytes) {
    if (bytes > 0) XXH3_64bits_update(state, data, bytes);
  };
  add(file.emission_buckets().data(),
      file.emission_buckets_size() * sizeof(uint32_t));
  add(file.emission_weights().data(),
      file.emission_weights_size() * sizeof(double));
  add(file.transitions().data(), file.transitions_size() * sizeof(double));
  add(file.start().data(), file.start_size() * sizeof(double));
  add(file.end().data(), file.end_size() * sizeof(double));
  if (file.constrained_decoding()) {
    constexpr char kConstrained[] = "constrained_decoding";
    add(kConstrained, sizeof(kConstrained));
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

template <typename Field>
bool AllFinite(const Field& values) {
  for (double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

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

void ClearWeights(ModelFile* file) {
  file->clear_emission_buckets();
  file->clear_emission_weights();
  file->clear_transitions();
  file->clear_start();
  file->clear_end();
  file->clear_weights_checksum();
}

}  // namespace

ChainModel::ChainModel(ModelFile header, LabelSet labels,
                       FeatureExtractor extractor, ChainLayout layout,
                       std::vector<double> weights)
    : header_(std::move(header)),
      labels_(std::move(labels)),
      extractor_(std::move(extractor)),
      layout_(layout),
      weights_(std::move(weights)),
      constraints_(labels_.names(), header_.train_scheme()) {}

absl::StatusOr<ChainModel> ChainModel::Create(ModelFile header,
                                              std::vector<double> weights) {
  ClearWeights(&header);
  header.set_magic(kModelMagic);
  header.set_format_version(kModelFormatVersion);
  if (header.labels_size() == 0) {
    return absl::InvalidArgumentError("a model needs at least one label");
  }
  LabelSet labels(
      std::vector<std::string>(header.labels().begin(), header.labels().end()));
  if (labels.size() != header.labels_size()) {
    return absl::InvalidArgumentError("model labels are not distinct");
  }
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(header.features());
  if (!extractor.ok()) return extractor.status();
  ChainLayout layout{labels.size(), extractor->num_buckets()};
  if (static_cast<int64_t>(weights.size()) != layout.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model has ", weights.size(),
                     " weights, its layout needs ", layout.dim()));
  }
  return ChainModel(std::move(header), std::move(labels), std::move(*extractor),
                    layout, std::move(weights));
}

ModelFile ChainModel::ToProto() const {
  ModelFile file = header_;
  const int L = layout_.num_labels;
  for (uint64_t b = 0; b < layout_.num_buckets; ++b) {
    const double* row = weights_.data() + b * L;
    bool nonzero = false;
    for (int y = 0; y < L && !nonzero; ++y) nonzero = row[y] != 0;
    if (!nonzero) continue;
    file.add_emission_buckets(static_cast<uint32_t>(b));
    for (int y = 0; y < L; ++y) file.add_emission_weights(row[y]);
  }
  for (int64_t k = layout_.transition_offset(); k < layout_.start_offset();
       ++k) {
    file.add_transitions(weights_[k]);
  }
  for (int y = 0; y < L; ++y) {
    file.add_start(weights_[layout_.start_offset() + y]);
    file.add_end(weights_[layout_.end_offset() + y]);
  }
  file.set_weights_checksum(WeightsChecksum(file));
  return file;
}

absl::Status ChainModel::Save(const std::string& path) const {
  std::string bytes;
  if (!ToProto().SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the model"));
  }
  return WriteFileAtomically(path, bytes, "the model file");
}

absl::StatusOr<ChainModel> ChainModel::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the model file"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  ModelFile file;
  auto invalid = [&path](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a valid chaintag model: ", why));
  };
  if (!file.ParseFromString(buffer.str())) {
    return invalid("the file does not parse (truncated or not a model)");
  }
  if (file.magic() != kModelMagic) return invalid("wrong magic");
  if (file.format_version() != kModelFormatVersion) {
    return invalid(absl::StrCat("format version ", file.format_version(),
                                ", this build reads ", kModelFormatVersion));
  }
  const int64_t L = file.labels_size();
  if (L == 0) return invalid("no labels");
  const uint64_t buckets = file.features().num_buckets();
  if (file.emission_weights_size() != file.emission_buckets_size() * L ||
      file.transitions_size() != L * L || file.start_size() != L ||
      file.end_size() != L) {
    return invalid("weight sizes do not match the label count");
  }
  for (int k = 0; k < file.emission_buckets_size(); ++k) {
    if (file.emission_buckets(k) >= buckets ||
        (k > 0 && file.emission_buckets(k) <= file.emission_buckets(k - 1))) {
      return invalid("emission buckets out of range or out of order");
    }
  }
  if (!AllFinite(file.emission_weights()) || !AllFinite(file.transitions()) ||
      !AllFinite(file.start()) || !AllFinite(file.end())) {
    return invalid("non-finite weights");
  }
  if (!file.has_weights_checksum() ||
      file.weights_checksum() != WeightsChecksum(file)) {
    return invalid("weights checksum mismatch (damaged file)");
  }
  const ChainLayout layout{static_cast<int>(L), buckets};
  std::vector<double> weights(layout.dim(), 0.0);
  for (int k = 0; k < file.emission_buckets_size(); ++k) {
    for (int y = 0; y < L; ++y) {
      weights[file.emission_buckets(k) * L + y] =
          file.emission_weights(k * L + y);
    }
  }
  std::copy(file.transitions().begin(), file.transitions().end(),
            weights.begin() + layout.transition_offset());
  std::copy(file.start().begin(), file.start().end(),
            weights.begin() + layout.start_offset());
  std::copy(file.end().begin(), file.end().end(),
            weights.begin() + layout.end_offset());
  absl::StatusOr<ChainModel> model =
      Create(std::move(file), std::move(weights));
  if (!model.ok()) return invalid(model.status().message());
  return model;
}

absl::Status PredictWithWeights(const FeatureExtractor& extractor,
                                const ChainLayout& layout,
                                const double* weights, const Sentence& sentence,
                                TagScratch* scratch,
                                std::vector<int32_t>* labels,
                                const TransitionConstraints* constraints) {
  absl::Status status = extractor.Extract(sentence, &scratch->features);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  scratch->unary.resize(static_cast<size_t>(T) * layout.num_labels);
  ComputeUnaryScores(layout, weights, scratch->features, scratch->unary.data());
  ChainScores scores =
      MakeChainScores(layout, weights, T, scratch->unary.data());
  if (constraints != nullptr) {
    absl::StatusOr<ChainScores> constrained =
        constraints->Apply(scores, &scratch->constrained);
    if (!constrained.ok()) return constrained.status();
    scores = *constrained;
  }
  labels->resize(T);
  const double best = scratch->decoder.Decode(scores, labels->data());
  if (best == -std::numeric_limits<double>::infinity()) {
    labels->clear();
    return NoFiniteLabelingError(T, constraints);
  }
  return absl::OkStatus();
}

absl::Status PredictNBestWithWeights(const FeatureExtractor& extractor,
                                     const ChainLayout& layout,
                                     const double* weights,
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
  absl::Status status = extractor.Extract(sentence, &scratch->features);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  scratch->unary.resize(static_cast<size_t>(T) * layout.num_labels);
  ComputeUnaryScores(layout, weights, scratch->features, scratch->unary.data());
  ChainScores scores =
      MakeChainScores(layout, weights, T, scratch->unary.data());
  if (options.constrained) {
    absl::StatusOr<ChainScores> constrained =
        constraints.Apply(scores, &scratch->constrained);
    if (!constrained.ok()) return constrained.status();
    scores = *constrained;
  }
  if (options.nbest == 1) {
    decoded->labelings.resize(1);
    decoded->labelings[0].resize(T);
    decoded->scores.push_back(
        scratch->decoder.Decode(scores, decoded->labelings[0].data()));
  } else {
    const int m =
        scratch->top_k.Decode(scores, options.nbest, &scratch->top_k_labelings,
                              &scratch->top_k_scores);
    decoded->labelings.resize(m);
    for (int j = 0; j < m; ++j) {
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
    return NoFiniteLabelingError(T,
                                 options.constrained ? &constraints : nullptr);
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
  return PredictNBestWithWeights(extractor_, layout_, weights_.data(),
                                 constraints_, sentence, options, scratch,
                                 decoded);
}

absl::Status ChainModel::Predict(const Sentence& sentence, TagScratch* scratch,
                                 std::vector<int32_t>* labels) const {
  return PredictWithWeights(extractor_, layout_, weights_.data(), sentence,
                            scratch, labels);
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
  return LabelsToTags(labels_, header_.train_scheme(), header_.output_scheme(),
                      labels);
}

absl::Status ChainModel::Tag(const Sentence& sentence, TagScratch* scratch,
                             std::vector<std::string>* tags) const {
  absl::Status status = PredictWithWeights(
      extractor_, layout_, weights_.data(), sentence, scratch, &scratch->labels,
      header_.constrained_decoding() ? &constraints_ : nullptr);
  if (!status.ok()) return status;
  *tags = ToOutputTags(scratch->labels);
  return absl::OkStatus();
}

}  // namespace chaintag
