#include "models/model_encoding.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "models/model_file.h"

namespace chaintag {
namespace {

void ClearWeights(ModelFile* file) {
  file->clear_emission_buckets();
  file->clear_emission_weights_f32();
  file->clear_emission_weights_f64();
  file->clear_transitions();
  file->clear_start();
  file->clear_end();
  file->clear_weights_checksum();
  file->clear_order();
  file->clear_trigram_labels();
  file->clear_trigram_weights();
  file->clear_pair_labels();
  file->clear_pair_buckets();
  file->clear_pair_weights_f32();
  file->clear_pair_weights_f64();
  file->clear_feature_keys();
  file->clear_emission_row_sizes();
  file->clear_emission_labels();
}

template <typename Field>
using Repeated = google::protobuf::RepeatedField<Field>;

// Appends `weight` in float64 or float32 (refusing one beyond float32's
// range).
absl::Status AddWeight(double weight, bool f64, Repeated<float>* weights_f32,
                       Repeated<double>* weights_f64) {
  if (f64) {
    weights_f64->Add(weight);
  } else if (std::abs(weight) > std::numeric_limits<float>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight ", weight,
                     " is beyond float32's range: save the model "
                     "with weight_precision FLOAT64"));
  } else {
    weights_f32->Add(static_cast<float>(weight));
  }
  return absl::OkStatus();
}

// A solver's rows one at a time, each in all of its `width` weights:
// row_of(r) is read before the next call.
using RowOf = absl::FunctionRef<const double*(int64_t)>;

// Appends the rows (rows.size() of `width` weights) that have a non-zero
// weight: their buckets, and their weights in float64 or float32.
absl::Status StoreRows(RowOf row_of, const BucketRows& rows, int width,
                       bool f64, Repeated<uint32_t>* buckets,
                       Repeated<float>* weights_f32,
                       Repeated<double>* weights_f64) {
  auto nonzero = [&](int64_t r) {
    const double* row = row_of(r);
    for (int y = 0; y < width; ++y) {
      if (row[y] != 0) return true;
    }
    return false;
  };
  // Sized once: grown one value at a time, the fields would be copied and
  // faulted in again at every doubling.
  int64_t kept = 0;
  for (int64_t r = 0; r < rows.size(); ++r) kept += nonzero(r);
  buckets->Reserve(buckets->size() + kept);
  if (f64) {
    weights_f64->Reserve(weights_f64->size() + kept * width);
  } else {
    weights_f32->Reserve(weights_f32->size() + kept * width);
  }
  for (int64_t r = 0; r < rows.size(); ++r) {
    if (!nonzero(r)) continue;
    const double* row = row_of(r);
    buckets->Add(rows.buckets()[r]);
    for (int y = 0; y < width; ++y) {
      absl::Status added = AddWeight(row[y], f64, weights_f32, weights_f64);
      if (!added.ok()) return added;
    }
  }
  return absl::OkStatus();
}

// The emission rows of `weights` into `file`: from kSparseRowsFromLabels
// labels up sparse (each row its non-zero labels, SparseRows::Choose) when
// that stores under half of the full rows' weights, else full rows
// (StoreRows).
absl::Status StoreEmissionRows(RowOf row_of, const BucketRows& rows,
                               int num_labels, bool f64, ModelFile* file) {
  std::vector<uint32_t> sizes, labels;
  int64_t kept_rows = 0;
  int64_t kept_weights = 0;
  if (num_labels >= kSparseRowsFromLabels) {
    SparseRows::Choose(row_of, rows.size(), num_labels, &sizes, &labels);
    for (uint32_t size : sizes) {
      kept_rows += size > 0;
      kept_weights += size;
    }
  }
  if (kept_rows == 0 || 2 * kept_weights >= kept_rows * num_labels) {
    return StoreRows(row_of, rows, num_labels, f64,
                     file->mutable_emission_buckets(),
                     file->mutable_emission_weights_f32(),
                     file->mutable_emission_weights_f64());
  }
  file->mutable_emission_buckets()->Reserve(kept_rows);
  file->mutable_emission_row_sizes()->Reserve(kept_rows);
  file->mutable_emission_labels()->Add(labels.begin(), labels.end());
  Repeated<float>* weights_f32 = file->mutable_emission_weights_f32();
  Repeated<double>* weights_f64 = file->mutable_emission_weights_f64();
  if (f64) {
    weights_f64->Reserve(kept_weights);
  } else {
    weights_f32->Reserve(kept_weights);
  }
  const uint32_t* listed = labels.data();
  for (int64_t r = 0; r < rows.size(); ++r) {
    if (sizes[r] == 0) continue;
    file->add_emission_buckets(rows.buckets()[r]);
    file->add_emission_row_sizes(sizes[r]);
    const double* row = row_of(r);
    const bool full = sizes[r] == static_cast<uint32_t>(num_labels);
    for (uint32_t k = 0; k < sizes[r]; ++k) {
      const double weight = full ? row[k] : row[*listed++];
      absl::Status added = AddWeight(weight, f64, weights_f32, weights_f64);
      if (!added.ok()) return added;
    }
  }
  return absl::OkStatus();
}

// The weights from the pair rows on (layout coordinate k at
// k − layout.pair_emission_offset()), and the pair rows' row_of.
struct WeightsAfterEmissions {
  const ChainLayout& layout;
  absl::Span<const double> rest;

  double operator[](int64_t k) const {
    return rest[k - layout.pair_emission_offset()];
  }
  const double* PairRow(int64_t r, int width) const {
    return rest.data() + r * width;
  }
};

// The second-order part of a model file: order, trigrams, pairs and the
// pair rows of `weights` (laid out as `layout`; none without `pair_rows`).
absl::Status StoreSecondOrder(const SecondOrderStructure& structure,
                              const BucketRows* pair_rows,
                              const WeightsAfterEmissions& weights, bool f64,
                              ModelFile* header) {
  const ChainLayout& layout = weights.layout;
  header->set_order(2);
  for (const LabelTrigram& trigram : structure.trigrams()) {
    for (int32_t label : trigram) header->add_trigram_labels(label);
  }
  for (int k = 0; k < layout.num_trigrams; ++k) {
    header->add_trigram_weights(weights[layout.trigram_offset() + k]);
  }
  if (pair_rows == nullptr) return absl::OkStatus();
  for (const LabelPair& pair : structure.pairs()) {
    for (int32_t label : pair) header->add_pair_labels(label);
  }
  const int width = static_cast<int>(layout.num_pairs);
  return StoreRows([&](int64_t r) { return weights.PairRow(r, width); },
                   *pair_rows, width, f64, header->mutable_pair_buckets(),
                   header->mutable_pair_weights_f32(),
                   header->mutable_pair_weights_f64());
}

// Drops the names of buckets without a stored row (all-zero rows are not
// stored); both bucket lists ascend.
void KeepStoredNames(const google::protobuf::RepeatedField<uint32_t>& stored,
                     google::protobuf::RepeatedField<uint32_t>* buckets,
                     google::protobuf::RepeatedPtrField<std::string>* names) {
  int kept = 0;
  int s = 0;
  for (int k = 0; k < buckets->size() && k < names->size(); ++k) {
    const uint32_t bucket = buckets->Get(k);
    while (s < stored.size() && stored.Get(s) < bucket) ++s;
    if (s == stored.size() || stored.Get(s) != bucket) continue;
    buckets->Set(kept, bucket);
    names->Mutable(kept)->swap(*names->Mutable(k));
    ++kept;
  }
  buckets->Truncate(kept);
  names->DeleteSubrange(kept, names->size() - kept);
}

// An exact file's stored rows keyed by their feature keys instead of their
// buckets (indices into `keys`), and its names by row: ascending buckets
// give ascending keys, since the table is sorted.
void KeyRowsByFeatureKeys(const FeatureKeys& keys, ModelFile* file) {
  const auto& buckets = file->emission_buckets();
  file->mutable_feature_keys()->Reserve(buckets.size());
  for (uint32_t bucket : buckets) file->add_feature_keys(keys.keys()[bucket]);
  // Both ascend, and every named bucket is stored (KeepStoredNames).
  auto* named = file->mutable_name_buckets();
  int row = 0;
  for (int k = 0; k < named->size(); ++k) {
    while (buckets[row] != named->Get(k)) ++row;
    named->Set(k, static_cast<uint32_t>(row));
  }
  file->clear_emission_buckets();
}

}  // namespace

absl::Status EncodeModelWeights(const ChainLayout& layout,
                                const BucketRows& rows, const FeatureKeys* keys,
                                const SecondOrderStructure* structure,
                                const BucketRows* pair_rows,
                                const FreeEmissions* free,
                                absl::Span<const double> weights,
                                ModelFile* file) {
  ClearWeights(file);
  file->set_magic(kModelMagic);
  const bool first_order_pairs = structure == nullptr && pair_rows != nullptr;
  if (first_order_pairs && file->has_first_stage()) {
    return absl::InvalidArgumentError(
        "a stacked model cannot have first-order pair templates");
  }
  file->set_format_version(file->has_first_stage() ? kStackedFormatVersion
                           : structure != nullptr  ? kSecondOrderFormatVersion
                           : first_order_pairs ? kFirstOrderPairFormatVersion
                                               : kModelFormatVersion);
  const int64_t L = file->labels_size();
  if (free != nullptr && free->rows->num_rows() != layout.num_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("free emission coordinates over ", free->rows->num_rows(),
                     " rows, the layout has ", layout.num_rows));
  }
  const int64_t emission_weights =
      free != nullptr ? free->rows->WeightBegin(layout.num_rows)
                      : layout.emission_size();
  const int64_t expected =
      emission_weights + layout.dim() - layout.pair_emission_offset();
  if (static_cast<int64_t>(weights.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model has ", weights.size(), " weights, its layout needs ", expected,
        free != nullptr ? " (free coordinates)" : ""));
  }
  const bool exact = file->features().exact();
  if (exact) {
    file->set_format_version(kExactFormatVersion);
    if (keys == nullptr || pair_rows != nullptr) {
      return absl::InvalidArgumentError(
          "exact features need their key table, and have no pair rows");
    }
    if (rows.num_buckets() != static_cast<uint64_t>(keys->size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("the weights' rows are over ", rows.num_buckets(),
                       " buckets, the key table has ", keys->size(), " keys"));
    }
  } else if (keys != nullptr) {
    return absl::InvalidArgumentError(
        "a key table for hashed features (it is for features.exact)");
  } else if (rows.num_buckets() != file->features().num_buckets()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the weights' rows are over ", rows.num_buckets(),
        " buckets, the features hash into ", file->features().num_buckets()));
  }
  for (double v : weights) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError("model weights are not finite");
    }
  }
  const bool f64 = file->weight_precision() == FLOAT64;
  file->set_weight_precision(f64 ? FLOAT64 : FLOAT32);
  // A free row in all of its labels, 0 at the others.
  std::vector<double> row_buffer(free != nullptr ? L : 0);
  auto emission_row = [&](int64_t r) -> const double* {
    if (free == nullptr) return weights.data() + r * L;
    std::fill(row_buffer.begin(), row_buffer.end(), 0.0);
    const SparseRows& sparse = *free->rows;
    const int64_t begin = sparse.WeightBegin(r);
    const int64_t end = sparse.WeightBegin(r + 1);
    if (sparse.Full(r)) {
      std::copy(weights.begin() + begin, weights.begin() + end,
                row_buffer.begin());
    } else {
      const uint32_t* listed = free->labels + sparse.LabelBegin(r);
      for (int64_t k = begin; k < end; ++k) row_buffer[*listed++] = weights[k];
    }
    return row_buffer.data();
  };
  absl::Status stored =
      StoreEmissionRows(emission_row, rows, static_cast<int>(L), f64, file);
  if (!stored.ok()) return stored;
  const WeightsAfterEmissions rest{layout, weights.subspan(emission_weights)};
  for (int64_t k = layout.transition_offset(); k < layout.start_offset(); ++k) {
    file->add_transitions(rest[k]);
  }
  for (int y = 0; y < L; ++y) {
    file->add_start(rest[layout.start_offset() + y]);
    file->add_end(rest[layout.end_offset() + y]);
  }
  if (structure != nullptr) {
    stored = StoreSecondOrder(*structure, pair_rows, rest, f64, file);
    if (!stored.ok()) return stored;
  } else if (first_order_pairs) {
    const int width = static_cast<int>(L * L);
    stored = StoreRows([&](int64_t r) { return rest.PairRow(r, width); },
                       *pair_rows, width, f64, file->mutable_pair_buckets(),
                       file->mutable_pair_weights_f32(),
                       file->mutable_pair_weights_f64());
    if (!stored.ok()) return stored;
  }
  KeepStoredNames(file->emission_buckets(), file->mutable_name_buckets(),
                  file->mutable_names());
  KeepStoredNames(file->pair_buckets(), file->mutable_pair_name_buckets(),
                  file->mutable_pair_names());
  if (exact) KeyRowsByFeatureKeys(*keys, file);
  if (HasSparseRows(*file)) {
    file->set_format_version(file->format_version() + kSparseRowsVersionOffset);
  }
  file->set_weights_checksum(WeightsChecksum(*file));
  return absl::OkStatus();
}

}  // namespace chaintag
