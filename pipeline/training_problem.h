// The training problem of a run, of first or second order, built from
// examples whose features hold bucket ids: the weight rows are the buckets
// the features use (w is zero on every other one, whatever the solver), or
// rows given (OCR's pixels). With pair templates also the pair-feature rows
// (at first order an L×L block of transitions each). At model.order 2 also
// the structure: the trigrams of the gold labelings, and with pair
// templates their label pairs, over the labelings the training scheme
// allows.
//
// Thread-safety: a function of its arguments.

#ifndef CHAINTAG_PIPELINE_TRAINING_PROBLEM_H_
#define CHAINTAG_PIPELINE_TRAINING_PROBLEM_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/communicator.h"
#include "corpora/label_set.h"
#include "features/bucket_rows.h"
#include "models/chain_model.h"
#include "models/chain_problem.h"
#include "models/second_order.h"
#include "pipeline/pipeline_config.pb.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

struct TrainingProblem {
  std::unique_ptr<BucketRows> rows;
  std::unique_ptr<BucketRows> pair_rows;                  // pair templates
  std::shared_ptr<const SecondOrderStructure> structure;  // second order
  std::unique_ptr<ChainProblem> problem;

  WeightSpace space() const {
    WeightSpace space{rows.get(), pair_rows.get(), structure.get()};
    if (problem != nullptr) space.free = problem->free_emissions();
    return space;
  }
};

// model.transitions AUTO restricts the transitions to the training
// labelings' pairs from this many labels up (at L = 319, CoNLL-2000's joint
// POS|chunk tags, they are 4,617 of 101,761 pairs), and model.states AUTO
// the emission rows to their observed labels.
constexpr int kObservedTransitionsFrom = 100;

// `labels` are the training scheme's (config.model().train_scheme()).
// A problem restricted to its observed labels (model.states) has its free
// coordinates made its space unless `solver` keeps its vectors over them
// itself (KeepsFreeCoordinates).
// `fixed_rows` (may be null) replaces the used rows, and the features then
// hold row ids already. Fails on a gold labeling the scheme forbids at
// order 2, naming the example. The problem's set-up runs on `num_threads`
// threads.
absl::StatusOr<TrainingProblem> MakeTrainingProblem(
    const ModelConfig& model, const SolverConfig& solver,
    const LabelSet& labels, uint64_t num_buckets,
    std::vector<ChainExample> examples, const BucketRows* fixed_rows,
    int num_threads);

// Each example's features (with pair_features, its pair features) from
// bucket ids to the rows of `rows`, dropping buckets without a row, then
// compacted.
void RemapToRows(const BucketRows& rows, bool pair_features,
                 std::vector<ChainExample>* examples);

// Drops from every example's features, and pair features, the buckets that
// fewer than `min_count` positions of all the examples hold (a position
// counts once however many of its features share the bucket), so that they
// get no weight row and score 0 (CRF++'s -f). min_count <= 1 keeps all.
void DropRareFeatures(int min_count, std::vector<ChainExample>* examples);

// Distributed training: the rows of the buckets the features of every
// rank's `examples` use (bucket ids), the same on every rank and the same
// as a run in one process makes from all the examples.
absl::StatusOr<BucketRows> UsedRowsOfAllRanks(
    const std::vector<ChainExample>& examples, uint64_t num_buckets,
    Communicator* communicator);

// The trigrams of the labelings, sorted, each once; and their label pairs.
std::vector<LabelTrigram> ObservedTrigrams(
    const std::vector<ChainExample>& examples);
std::vector<LabelPair> ObservedPairs(const std::vector<ChainExample>& examples);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_TRAINING_PROBLEM_H_
