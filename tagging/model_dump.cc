#include "tagging/model_dump.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "corpora/conll_reader.h"
#include "corpora/label_set.h"
#include "corpora/sentence.h"
#include "features/bucket_rows.h"
#include "features/feature_extractor.h"
#include "models/chain_layout.h"

namespace chaintag {

ModelFeatureNames FeatureNamesFromModel(const ModelFile& file) {
  ModelFeatureNames names;
  for (int k = 0; k < std::min(file.name_buckets_size(), file.names_size());
       ++k) {
    names.emission.Add(file.name_buckets(k), file.names(k));
  }
  for (int k = 0;
       k < std::min(file.pair_name_buckets_size(), file.pair_names_size());
       ++k) {
    names.pair.Add(file.pair_name_buckets(k), file.pair_names(k));
  }
  return names;
}

absl::StatusOr<ModelFeatureNames> RecoverFeatureNames(const ChainModel& model,
                                                      const std::string& path) {
  if (model.first_stage() != nullptr) {
    return absl::InvalidArgumentError(
        "a stacked model's attributes include its first stage's document "
        "attributes, which a file alone cannot give: train it with "
        "model.keep_feature_names for a dump by name");
  }
  ConllFormat format = model.header().input_format();
  format.set_allow_missing_label(true);
  ModelFeatureNames names;
  std::vector<std::vector<NamedFeature>> named;
  absl::Status read = ForEachConllSentence(
      path, format, [&](int64_t, Sentence* sentence) -> absl::StatusOr<bool> {
        // The extractor's errors name the file and line already.
        absl::Status status = AddSentenceNames(
            model.extractor(), *sentence, &named, &names.emission, &names.pair);
        if (!status.ok()) return status;
        return true;
      });
  if (!read.ok()) return read;
  return names;
}

namespace {

// One weight row's weights, whichever precision the model keeps, from
// full rows or (with `sparse`) sparse ones, where a label a row does not
// keep weighs 0.
class RowWeights {
 public:
  RowWeights(const float* f32, const double* f64, int width,
             const SparseRows* sparse = nullptr,
             const uint32_t* labels = nullptr)
      : f32_(f32), f64_(f64), width_(width), sparse_(sparse), labels_(labels) {}
  double operator()(int64_t row, int column) const {
    const int64_t k = sparse_ == nullptr ? row * width_ + column
                                         : sparse_->Find(labels_, row, column);
    if (k < 0) return 0;
    return f32_ != nullptr ? f32_[k] : f64_[k];
  }

 private:
  const float* f32_;
  const double* f64_;
  int width_;
  const SparseRows* sparse_;
  const uint32_t* labels_;
};

std::string RowName(const FeatureNames& names, uint32_t bucket) {
  const std::optional<absl::string_view> name = names.Find(bucket);
  if (!name.has_value()) return absl::StrCat("bucket ", bucket);
  const int others = names.Others(bucket);
  return others == 0 ? std::string(*name)
                     : absl::StrCat(*name, "  (bucket shared with ", others,
                                    others == 1 ? " other)" : " others)");
}

// The `top` rows of largest weight in column `column`, with a non-zero
// weight, largest first (ties by row).
std::vector<int64_t> TopRows(const RowWeights& weights, int64_t num_rows,
                             int column, int top) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < num_rows; ++r) {
    if (weights(r, column) != 0) rows.push_back(r);
  }
  auto heavier = [&](int64_t a, int64_t b) {
    const double wa = weights(a, column), wb = weights(b, column);
    return wa != wb ? wa > wb : a < b;
  };
  if (static_cast<int64_t>(rows.size()) > top) {
    std::partial_sort(rows.begin(), rows.begin() + top, rows.end(), heavier);
    rows.resize(top);
  } else {
    std::sort(rows.begin(), rows.end(), heavier);
  }
  return rows;
}

void WriteTopRows(const std::string& title, const RowWeights& weights,
                  const BucketRows& rows, int column, const FeatureNames& names,
                  int top, std::ostream* out) {
  const std::vector<int64_t> best = TopRows(weights, rows.size(), column, top);
  *out << "\n" << title << ":\n";
  if (best.empty()) *out << "  (no non-zero weight)\n";
  for (int64_t r : best) {
    *out << absl::StrFormat("  %+10.6f  %s\n", weights(r, column),
                            RowName(names, rows.buckets()[r]));
  }
}

// Every non-zero weight of `rows`, "name --> column: weight" a line.
void WriteAllRows(const RowWeights& weights, const BucketRows& rows,
                  int num_columns,
                  const std::function<std::string(int)>& column_name,
                  const FeatureNames& names, std::ostream* out) {
  for (int64_t r = 0; r < rows.size(); ++r) {
    const std::string name = RowName(names, rows.buckets()[r]);
    for (int c = 0; c < num_columns; ++c) {
      const double w = weights(r, c);
      if (w == 0) continue;
      *out << absl::StrFormat("  %s --> %s: %.6f\n", name, column_name(c), w);
    }
  }
}

}  // namespace

std::vector<StateWeight> NonZeroStateWeights(const ChainModel& model,
                                             const ModelFeatureNames& names) {
  const WeightsView view = model.weights();
  const int L = model.labels().size();
  const RowWeights emission(view.emission_f32, view.emission_f64, L,
                            view.sparse_rows, view.emission_labels);
  std::vector<StateWeight> out;
  for (int64_t r = 0; r < view.rows->size(); ++r) {
    const uint32_t bucket = view.rows->buckets()[r];
    const std::optional<absl::string_view> name = names.emission.Find(bucket);
    for (int y = 0; y < L; ++y) {
      const double w = emission(r, y);
      if (w == 0) continue;
      out.push_back({name.has_value() ? std::string(*name)
                                      : absl::StrCat("bucket ", bucket),
                     y, w});
    }
  }
  return out;
}

absl::Status WriteModelDump(const ChainModel& model,
                            const ModelFeatureNames& names,
                            const DumpOptions& options, std::ostream* out) {
  if (options.top < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("top must be >= 0, got ", options.top));
  }
  const LabelSet& labels = model.labels();
  const int L = labels.size();
  const WeightsView view = model.weights();
  const BucketRows& rows = *view.rows;
  const SecondOrderStructure* structure = model.structure();

  *out << "order " << model.order() << ", " << L << " labels, " << rows.size()
       << " attribute rows";
  if (view.sparse_rows != nullptr) {
    *out << " (sparse: " << view.sparse_rows->WeightBegin(rows.size())
         << " of their " << rows.size() * L << " weights kept)";
  }
  if (view.pair_rows != nullptr) {
    *out << ", " << view.pair_rows->size() << " label-pair rows";
  }
  *out << "\nattribute names: ";
  if (names.empty()) {
    *out << "not known (buckets shown; give a training file to name them)\n";
  } else {
    *out << names.emission.size() + names.pair.size() << " from "
         << options.names_source << "\n";
  }

  *out << "\nlabels:\n";
  for (int y = 0; y < L; ++y)
    *out << "  " << y << "  " << labels.Name(y) << "\n";

  *out << "\ntransitions (previous --> next: weight):\n";
  const double* transition = view.tail;
  int64_t forbidden = 0;
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      if (IsForbiddenTransition(transition[a * L + b])) {
        ++forbidden;
        continue;
      }
      *out << absl::StrFormat("  %s --> %s: %.6f\n", labels.Name(a),
                              labels.Name(b), transition[a * L + b]);
    }
  }
  if (forbidden > 0) {
    *out << absl::StrFormat(
        "  (%d label pairs never seen in training have no transition "
        "feature: a labeling through one is never chosen)\n",
        forbidden);
  }
  const double* start = view.tail + L * L;
  const double* end = start + L;
  *out << "\nstart and end biases:\n";
  for (int y = 0; y < L; ++y) {
    *out << absl::StrFormat("  %s: start %.6f, end %.6f\n", labels.Name(y),
                            start[y], end[y]);
  }
  if (structure != nullptr) {
    const double* trigram = end + L;
    *out << "\nlabel trigrams (a b --> c: weight):\n";
    for (int k = 0; k < structure->num_trigrams(); ++k) {
      const LabelTrigram& t = structure->trigrams()[k];
      *out << absl::StrFormat("  %s %s --> %s: %.6f\n", labels.Name(t[0]),
                              labels.Name(t[1]), labels.Name(t[2]), trigram[k]);
    }
  }

  const RowWeights emission(view.emission_f32, view.emission_f64, L,
                            view.sparse_rows, view.emission_labels);
  if (options.top > 0) {
    for (int y = 0; y < L; ++y) {
      WriteTopRows(absl::StrCat("top attributes of ", labels.Name(y)), emission,
                   rows, y, names.emission, options.top, out);
    }
  }
  // The label pairs of the pair rows' columns: the second-order
  // structure's weighted pairs, or every pair (a·L + b) at first order.
  std::vector<LabelPair> pairs;
  if (view.pair_rows != nullptr && structure != nullptr) {
    pairs = structure->pairs();
  } else if (view.pair_rows != nullptr) {
    for (int a = 0; a < L; ++a) {
      for (int b = 0; b < L; ++b) pairs.push_back({a, b});
    }
  }
  const RowWeights pair_weights(view.pair_f32, view.pair_f64,
                                static_cast<int>(pairs.size()));
  auto pair_name = [&](int k) {
    return absl::StrCat(labels.Name(pairs[k][0]), " ",
                        labels.Name(pairs[k][1]));
  };
  if (options.top > 0) {
    for (int k = 0; k < static_cast<int>(pairs.size()); ++k) {
      WriteTopRows(absl::StrCat("top attributes of the pair ", pair_name(k)),
                   pair_weights, *view.pair_rows, k, names.pair, options.top,
                   out);
    }
  }
  if (options.all) {
    *out << "\nattribute weights (attribute --> label: weight):\n";
    WriteAllRows(
        emission, rows, L, [&](int y) { return labels.Name(y); },
        names.emission, out);
    if (!pairs.empty()) {
      *out << "\npair attribute weights (attribute --> pair: weight):\n";
      WriteAllRows(pair_weights, *view.pair_rows,
                   static_cast<int>(pairs.size()), pair_name, names.pair, out);
    }
  }
  if (!*out) return absl::DataLossError("writing the dump failed");
  return absl::OkStatus();
}

}  // namespace chaintag
