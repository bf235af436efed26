#include "pipeline/training_problem.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "models/transition_constraints.h"
#include "solvers/solver.h"

namespace chaintag {
namespace {

BucketRows UsedRows(const std::vector<ChainExample>& examples,
                    uint64_t num_buckets, bool pair_features) {
  std::vector<const FeatureSequence*> sequences;
  sequences.reserve(examples.size());
  for (const ChainExample& example : examples) {
    sequences.push_back(pair_features ? &example.pair_features
                                      : &example.features);
  }
  return BucketRows::FromFeatures(sequences, num_buckets);
}

template <typename Gram>
std::vector<Gram> SortedUnique(std::vector<Gram> grams) {
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
}

bool HasPairFeatures(const std::vector<ChainExample>& examples) {
  for (const ChainExample& example : examples) {
    if (example.pair_features.size() > 0) return true;
  }
  return false;
}

// The second-order structure of `examples` and, with pair features, their
// rows (the features remapped to them).
absl::Status MakeSecondOrder(const ModelConfig& model, const LabelSet& labels,
                             uint64_t num_buckets,
                             std::vector<ChainExample>* examples,
                             TrainingProblem* training, ChainLayout* layout) {
  const bool pairs = HasPairFeatures(*examples);
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      labels.size(),
      TransitionConstraints(labels.names(), model.train_scheme()),
      ObservedTrigrams(*examples),
      pairs ? ObservedPairs(*examples) : std::vector<LabelPair>());
  if (!structure.ok()) return structure.status();
  training->structure =
      std::make_shared<const SecondOrderStructure>(*std::move(structure));
  if (pairs) {
    training->pair_rows = std::make_unique<BucketRows>(
        UsedRows(*examples, num_buckets, /*pair_features=*/true));
    RemapToRows(*training->pair_rows, /*pair_features=*/true, examples);
  }
  *layout = training->space().Layout(labels.size());
  return absl::OkStatus();
}

}  // namespace

void RemapToRows(const BucketRows& rows, bool pair_features,
                 std::vector<ChainExample>* examples) {
  // One example at a time, remapped and compacted (reallocated) before the
  // next, on this thread: remapping on threads shortened start-up but made
  // the solver's passes slower by more, presumably from the heap layout it
  // leaves the features in
  // (docs/experiments.md#mini-batch-and-distributed-training).
  for (ChainExample& example : *examples) {
    FeatureSequence& features =
        pair_features ? example.pair_features : example.features;
    rows.Remap(&features);
    features.Compact();
  }
}

void DropRareFeatures(int min_count, std::vector<ChainExample>* examples) {
  if (min_count <= 1) return;
  for (bool pairs : {false, true}) {
    auto sequence = [pairs](ChainExample& example) -> FeatureSequence& {
      return pairs ? example.pair_features : example.features;
    };
    // Positions hold each bucket once (Extract merges), so counting entries
    // counts positions.
    absl::flat_hash_map<uint32_t, int> counts;
    for (ChainExample& example : *examples) {
      for (uint32_t bucket : sequence(example).buckets) ++counts[bucket];
    }
    for (ChainExample& example : *examples) {
      FeatureSequence& features = sequence(example);
      const bool values = !features.values.empty();
      size_t kept = 0;
      size_t k = 0;
      for (size_t t = 0; t + 1 < features.offsets.size(); ++t) {
        const size_t end = static_cast<size_t>(features.offsets[t + 1]);
        for (; k < end; ++k) {
          if (counts[features.buckets[k]] < min_count) continue;
          features.buckets[kept] = features.buckets[k];
          if (values) features.values[kept] = features.values[k];
          ++kept;
        }
        features.offsets[t + 1] = static_cast<int32_t>(kept);
      }
      features.buckets.resize(kept);
      if (values) features.values.resize(kept);
    }
  }
}

absl::StatusOr<BucketRows> UsedRowsOfAllRanks(
    const std::vector<ChainExample>& examples, uint64_t num_buckets,
    Communicator* communicator) {
  const BucketRows local =
      UsedRows(examples, num_buckets, /*pair_features=*/false);
  const std::vector<uint32_t>& buckets = local.buckets();
  std::string all;
  std::vector<int64_t> offsets;
  absl::Status status = communicator->AllGather(
      absl::string_view(reinterpret_cast<const char*>(buckets.data()),
                        buckets.size() * sizeof(uint32_t)),
      &all, &offsets);
  if (!status.ok()) return status;
  std::vector<uint32_t> merged(all.size() / sizeof(uint32_t));
  if (!merged.empty()) std::memcpy(merged.data(), all.data(), all.size());
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  return BucketRows::FromSorted(merged, num_buckets);
}

std::vector<LabelTrigram> ObservedTrigrams(
    const std::vector<ChainExample>& examples) {
  std::vector<LabelTrigram> trigrams;
  for (const ChainExample& example : examples) {
    const std::vector<int32_t>& y = example.labels;
    for (size_t t = 2; t < y.size(); ++t) {
      trigrams.push_back({y[t - 2], y[t - 1], y[t]});
    }
  }
  return SortedUnique(std::move(trigrams));
}

std::vector<LabelPair> ObservedPairs(
    const std::vector<ChainExample>& examples) {
  std::vector<LabelPair> pairs;
  for (const ChainExample& example : examples) {
    const std::vector<int32_t>& y = example.labels;
    for (size_t t = 1; t < y.size(); ++t) pairs.push_back({y[t - 1], y[t]});
  }
  return SortedUnique(std::move(pairs));
}

absl::StatusOr<TrainingProblem> MakeTrainingProblem(
    const ModelConfig& model, const SolverConfig& solver,
    const LabelSet& labels, uint64_t num_buckets,
    std::vector<ChainExample> examples, const BucketRows* fixed_rows,
    int num_threads) {
  if (model.order() != 1 && model.order() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: model.order must be 1 or 2, got ", model.order()));
  }
  TrainingProblem training;
  if (fixed_rows != nullptr) {
    training.rows = std::make_unique<BucketRows>(*fixed_rows);
  } else {
    training.rows = std::make_unique<BucketRows>(
        UsedRows(examples, num_buckets, /*pair_features=*/false));
    RemapToRows(*training.rows, /*pair_features=*/false, &examples);
  }
  if (model.order() == 1 && HasPairFeatures(examples)) {
    // Observation-conditioned transitions: an L×L block per pair row.
    training.pair_rows = std::make_unique<BucketRows>(
        UsedRows(examples, num_buckets, /*pair_features=*/true));
    RemapToRows(*training.pair_rows, /*pair_features=*/true, &examples);
  }
  ChainLayout layout = training.space().Layout(labels.size());
  if (model.order() == 2) {
    absl::Status second = MakeSecondOrder(model, labels, num_buckets, &examples,
                                          &training, &layout);
    if (!second.ok()) return second;
  }
  absl::Status valid =
      ChainProblem::Validate(layout, examples, training.structure.get());
  if (!valid.ok()) return valid;
  training.problem = std::make_unique<ChainProblem>(
      layout, std::move(examples), model.normalize_loss(), training.structure,
      num_threads);
  const bool given_rows = fixed_rows != nullptr;
  const bool observed =
      model.transitions() == ModelConfig::OBSERVED_TRANSITIONS ||
      (model.transitions() == ModelConfig::TRANSITIONS_AUTO && !given_rows &&
       model.order() == 1 && labels.size() >= kObservedTransitionsFrom);
  if (observed) {
    if (model.order() != 1 || given_rows) {
      return absl::InvalidArgumentError(
          "config: model.transitions OBSERVED_TRANSITIONS needs order 1 and "
          "no given rows (not distributed, not OCR)");
    }
    const int64_t L = labels.size();
    std::vector<uint8_t> allowed(L * L, 0);
    for (int i = 0; i < training.problem->NumExamples(); ++i) {
      const std::vector<int32_t>& y = training.problem->example(i).labels;
      for (size_t t = 1; t < y.size(); ++t) allowed[y[t - 1] * L + y[t]] = 1;
    }
    absl::Status set =
        training.problem->SetAllowedTransitions(std::move(allowed));
    if (!set.ok()) return set;
  }
  const bool observed_states =
      model.states() == ModelConfig::OBSERVED_STATES ||
      (model.states() == ModelConfig::STATES_AUTO && !given_rows &&
       labels.size() >= kObservedTransitionsFrom);
  if (observed_states) {
    absl::Status restricted =
        training.problem->RestrictEmissionsToObservedLabels();
    if (!restricted.ok()) return restricted;
    if (!KeepsFreeCoordinates(solver)) {
      if (solver.bcfw().box_size() > 0) {
        // Boxes name coordinates of all of w, which the free space renumbers.
        return absl::InvalidArgumentError(
            "config: solver.bcfw.box is not supported with model.states "
            "OBSERVED_STATES (model.nonnegative_transitions is)");
      }
      restricted = training.problem->MakeFreeCoordinatesTheSpace();
      if (!restricted.ok()) return restricted;
    }
  }
  // The CRF's log-loss is the entropy-smoothed oracle of a loss-free
  // problem (solver.objective LOG_SUM_EXP).
  if (model.loss() == LOG) training.problem->set_loss_scale(0);
  return training;
}

}  // namespace chaintag
