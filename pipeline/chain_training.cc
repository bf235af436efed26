#include "pipeline/chain_training.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/text_format.h"
#include "solvers/monitor.h"
#include "solvers/registry.h"
#include "solvers/solver.h"

namespace chaintag {

PipelineConfig RecordedConfig(const PipelineConfig& config) {
  PipelineConfig recorded = config;
  recorded.mutable_solver()->clear_num_threads();
  if (recorded.has_stacking()) {
    recorded.mutable_stacking()->clear_parallel_stages();
  }
  recorded.clear_model_path();
  recorded.clear_log_path();
  recorded.clear_predictions_path();
  recorded.clear_checkpoint();
  // Built from cluster_source, and kept in the model's features.
  recorded.mutable_features()->clear_clusters();
  return recorded;
}

namespace {

// The names `names` has for the buckets of `rows`, in their ascending
// order; EncodeModelWeights keeps those of the rows it stores.
void AddRowNames(const CompactFeatureNames& names, const BucketRows* rows,
                 google::protobuf::RepeatedField<uint32_t>* buckets,
                 google::protobuf::RepeatedPtrField<std::string>* out) {
  if (rows == nullptr || names.empty()) return;
  for (uint32_t bucket : rows->buckets()) {
    size_t length = 0;
    const char* name = names.Find(bucket, &length);
    if (name == nullptr) continue;
    buckets->Add(bucket);
    out->Add()->assign(name, length);
  }
}

// weights' transitions of the pairs `problem` forbids = kForbiddenTransition
// (nothing without allowed transitions).
void ForbidTransitions(const ChainProblem& problem,
                       std::vector<double>* weights) {
  const std::vector<uint8_t>& allowed = problem.allowed_transitions();
  // The coordinates from the transitions on end w whether it holds all of
  // the layout's coordinates or a restricted solver's free ones.
  const ChainLayout& layout = problem.layout();
  const size_t tail = layout.dim() - layout.transition_offset();
  // A w of a wrong size is refused when the model is encoded.
  if (allowed.empty() || weights->size() < tail) return;
  double* transitions = weights->data() + (weights->size() - tail);
  for (size_t k = 0; k < allowed.size(); ++k) {
    if (!allowed[k]) transitions[k] = kForbiddenTransition;
  }
}

}  // namespace

absl::StatusOr<ChainModel> MakeModel(const PreparedCorpus& prepared,
                                     const ChainProblem& problem,
                                     const SolverConfig& solver_config,
                                     std::vector<double>* weights,
                                     const WeightSpace& space,
                                     const TrainingSummary& training) {
  ForbidTransitions(problem, weights);
  const PipelineConfig& config = prepared.config;
  ModelFile header;
  for (const std::string& name : prepared.labels.names()) {
    header.add_labels(name);
  }
  *header.mutable_features() = config.features();
  prepared.task->DescribeModelInput(prepared, &header);
  header.set_train_scheme(config.model().train_scheme());
  header.set_normalize_loss(config.model().normalize_loss());
  header.set_weight_precision(config.model().weight_precision());
  // Set only when true: a plain model's file stays as it was.
  if (config.model().constrained_decoding()) {
    header.set_constrained_decoding(true);
  }
  if (config.model().loss() != HINGE) header.set_loss(config.model().loss());
  // The file is a function of the data, the config and the seed: how the
  // run was executed (threads, wall time, where it wrote) is left out, so
  // that runs on any number of threads or ranks give the same bytes.
  *header.mutable_solver() = solver_config;
  header.mutable_solver()->clear_num_threads();
  *header.mutable_training() = training;
  header.mutable_training()->clear_seconds();
  google::protobuf::TextFormat::PrintToString(RecordedConfig(config),
                                              header.mutable_resolved_config());
  if (config.model().keep_feature_names()) {
    AddRowNames(prepared.emission_names, space.rows,
                header.mutable_name_buckets(), header.mutable_names());
    AddRowNames(prepared.pair_names, space.pair_rows,
                header.mutable_pair_name_buckets(),
                header.mutable_pair_names());
  }
  // Exact features: the rows' buckets are indices into the extractor's
  // key table, which the file records instead.
  WeightSpace keyed = space;
  if (prepared.extractor != nullptr) keyed.keys = prepared.extractor->keys();
  return ChainModel::Create(std::move(header), keyed, *weights);
}

SolverConfig SolverConfigFor(const PreparedCorpus& prepared) {
  const ChainProblem& problem = *prepared.problem;
  SolverConfig solver_config = prepared.config.solver();
  solver_config.set_lambda(
      ResolveLambda(solver_config, prepared.TrainExamples()));
  // λ is now stated; the summary's lambda_rule says how it was derived.
  solver_config.set_l1(ResolveL1(solver_config, prepared.TrainExamples()));
  solver_config.clear_c();
  solver_config.clear_c2();
  solver_config.clear_c1();
  if (prepared.config.model().nonnegative_transitions()) {
    // The transitions, where the problem's w holds them.
    SolverConfig::Box* box = solver_config.mutable_bcfw()->add_box();
    box->set_begin(problem.TailBegin());
    box->set_end(problem.TailBegin() + (problem.layout().start_offset() -
                                        problem.layout().transition_offset()));
    box->set_lower(0);
  }
  return solver_config;
}

absl::StatusOr<ChainModel> TrainChainModel(const PreparedCorpus& prepared) {
  const SolverConfig solver_config = SolverConfigFor(prepared);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(solver_config);
  if (!solver.ok()) return solver.status();
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  std::vector<double> weights;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(*prepared.problem, &monitor, &weights);
  if (!summary.ok()) return summary.status();
  summary->set_lambda_rule(
      LambdaRule(prepared.config.solver(), prepared.TrainExamples()));
  return MakeModel(prepared, *prepared.problem, solver_config, &weights,
                   prepared.space(), *summary);
}

}  // namespace chaintag
