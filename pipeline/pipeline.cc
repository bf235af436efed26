#include "pipeline/pipeline.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file_io.h"
#include "base/interrupt.h"
#include "base/paths.h"
#include "google/protobuf/text_format.h"
#include "pipeline/chain_training.h"
#include "pipeline/checkpoints.h"
#include "pipeline/ocr_task.h"
#include "pipeline/stacking.h"
#include "solvers/checkpoint.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/pass_driver.h"
#include "solvers/registry.h"
#include "solvers/regularization_path.h"
#include "solvers/shard_problem.h"
#include "solvers/solver.h"

namespace chaintag {

absl::StatusOr<PipelineConfig> ReadPipelineConfig(const std::string& path) {
  PipelineConfig config;
  absl::Status status = ReadTextProto(path, " the config", &config);
  if (!status.ok()) return status;
  return config;
}

absl::StatusOr<PipelineConfig> ReadUserPipelineConfig(const std::string& path) {
  absl::StatusOr<PipelineConfig> config =
      ReadPipelineConfig(ResolveUserPath(path));
  if (absl::IsNotFound(config.status()) && ResolveUserPath(path) != path) {
    config = ReadPipelineConfig(path);
  }
  return config;
}

std::string CorporaRootFromFlag(const std::string& flag) {
  return flag.empty() ? DefaultCorporaRoot() : ResolveUserPath(flag);
}

std::unique_ptr<Task> CreateTask(const PipelineConfig& config) {
  if (config.corpus().has_ocr()) return std::make_unique<OcrTask>();
  if (config.has_stacking()) return std::make_unique<StackedConllTask>();
  return std::make_unique<ConllTask>();
}

PipelineConfig ResolvePipelineConfig(const PipelineConfig& config) {
  PipelineConfig resolved = config;
  const std::string name = config.name().empty() ? "model" : config.name();
  if (!resolved.has_model_path()) {
    resolved.set_model_path(absl::StrCat(name, ".model"));
  }
  if (!resolved.has_log_path()) {
    resolved.set_log_path(absl::StrCat(name, ".log.jsonl"));
  }
  // The solver's objective follows the model's loss; a hinge config's
  // solver is left as given, so that its model file stays as it was.
  if (resolved.model().loss() != HINGE) {
    SolverConfig* solver = resolved.mutable_solver();
    solver->set_objective(SolverConfig::LOG_SUM_EXP);
    // The Frank-Wolfe family minimises the hinge only: a smooth loss asked
    // of a hinge preset is solved by sag, the smooth losses' default, with
    // a certificate (which also refreshes its stored gradients) every pass
    // and, unless the config sets τ, eight oracles at a time on the threads
    // (docs/experiments.md#the-crf-against-crfsuites-l-bfgs).
    if (solver->name() != "sag" && solver->name() != "lbfgs" &&
        solver->name() != "svrg" && solver->name() != "casimir_svrg") {
      solver->set_name("sag");
      if (!solver->has_minibatch()) solver->set_minibatch(8);
      solver->set_gap_check(1);
      // A hinge preset's relative tolerance (10%) is sized for BCFW's
      // sublinear gap; sag's certificate closes linearly, within 1% of the
      // primal in about 6 passes on CoNLL-2000 (docs/solvers.md#stopping-
      // on-the-certificate), so it is held to at most 1%.
      if (solver->relative_gap_tolerance() > 0) {
        solver->set_relative_gap_tolerance(
            std::min(solver->relative_gap_tolerance(), 0.01));
      }
    }
  } else {
    resolved.mutable_solver()->clear_objective();
  }
  // lbfgs trains a model of observed states from 100 labels up unless the
  // config says otherwise (STATES_AUTO, which the labels decide when the
  // problem is made: MakeTrainingProblem); every other solver when the
  // config says OBSERVED_STATES, and every label otherwise.
  if (resolved.solver().name() == "lbfgs") {
    if (!resolved.model().has_states()) {
      resolved.mutable_model()->set_states(ModelConfig::STATES_AUTO);
    }
  } else if (resolved.model().states() == ModelConfig::STATES_AUTO) {
    resolved.mutable_model()->set_states(ModelConfig::ALL_STATES);
  }
  CreateTask(resolved)->ResolveConfig(&resolved);
  return resolved;
}

absl::StatusOr<PreparedCorpus> PrepareCorpus(const PipelineConfig& config,
                                             const PipelineOptions& options) {
  if (config.corpus().has_ocr() && config.has_stacking()) {
    return absl::InvalidArgumentError(
        "config: stacking needs documents of CoNLL sentences, not OCR words");
  }
  if (config.has_stacking() && config.model().order() != 2 &&
      config.features().pair_templates_size() > 0) {
    // No model format holds both (models/model_file.h).
    return absl::InvalidArgumentError(
        "config: a stacked model cannot have pair templates at model.order 1");
  }
  PreparedCorpus prepared;
  prepared.config = ResolvePipelineConfig(config);
  prepared.task = CreateTask(prepared.config);
  absl::Status status = prepared.task->Prepare(options, &prepared);
  if (!status.ok()) return status;
  return prepared;
}

absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared) {
  return prepared->task->PrepareRetrainingProblem(prepared);
}

HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared, bool dev_only) {
  return prepared.task->MakeHeldOutScorer(prepared, dev_only);
}

namespace {

// What a distributed run supports: one λ, a first-order model trained once
// on CoNLL columns, without stacking, checkpoints or a resume (the mini-batch
// solver itself checks its config).
absl::Status CheckDistributed(const PipelineConfig& config,
                              const PipelineOptions& options) {
  const char* refused = nullptr;
  if (config.corpus().has_ocr()) {
    refused = "OCR corpora";
  } else if (config.has_stacking()) {
    refused = "stacking";
  } else if (config.lambda() == "path") {
    refused = "lambda: \"path\"";
  } else if (config.model().order() == 2) {
    refused = "second-order models";
  } else if (config.features().pair_templates_size() > 0) {
    refused = "pair templates";
  } else if (config.corpus().retrain_on_train_and_dev()) {
    refused = "corpus.retrain_on_train_and_dev";
  } else if (!options.resume_path.empty() ||
             config.checkpoint().every_passes() > 0 ||
             config.checkpoint().every_seconds() > 0) {
    refused = "checkpoints";
  }
  if (refused == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("distributed training does not support ", refused));
}

// The settings that need no data: λ's forms, the solver's own options, the
// ℓ1 term's loss, and the lambda selection.
absl::Status CheckSettingsBeforeData(const PipelineConfig& config) {
  absl::Status forms = CheckSolverSettings(config.solver());
  if (!forms.ok()) return forms;
  absl::Status options = CheckSolverOptions(config.solver());
  if (!options.ok()) return options;
  const SolverConfig& solver = config.solver();
  if (config.model().loss() == HINGE && (solver.c1() > 0 || solver.l1() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the l1 term (", solver.c1() > 0 ? "c1 " : "l1 ",
        solver.c1() > 0 ? solver.c1() : solver.l1(),
        ") is trained with the CRF's loss: add --loss=crf (model.loss LOG); "
        "the structured SVM (the default hinge loss) takes the L2 term "
        "only"));
  }
  if (config.lambda().empty() || config.lambda() == "path") {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("config: lambda must be empty or \"path\", got \"",
                   config.lambda(), "\" (a fixed λ goes in solver.lambda)"));
}

// `lambda: "path"`: the regularization path scored on dev; the best
// breakpoint's λ goes into `solver_config` and its weights into `weights`.
absl::StatusOr<TrainingSummary> TrainOnPath(const ChainProblem& problem,
                                            const PreparedCorpus& prepared,
                                            const ProgressLine& say,
                                            SolverConfig* solver_config,
                                            std::vector<double>* weights,
                                            LambdaPath* path) {
  const HeldOutScorer scorer = MakeHeldOutScorer(prepared, true);
  say(absl::StrFormat(
      "training: regularization path (%s, epsilon %g), solver %s, "
      "choosing lambda on %s",
      RegularizationPathConfig::Mode_Name(solver_config->path().mode()),
      solver_config->path().epsilon(), solver_config->name(),
      scorer.score ? scorer.name : "(no dev split)"));
  absl::StatusOr<LambdaPath> chosen =
      ChooseLambdaOnPath(problem, *solver_config, scorer, say);
  if (!chosen.ok()) return chosen.status();
  *path = *std::move(chosen);
  say(FormatPathTable(*path));
  const PathPoint& best = path->points[path->best];
  const PathPoint& last = path->points.back();
  solver_config->set_lambda(best.lambda);
  solver_config->clear_c();
  solver_config->clear_c2();
  *weights = std::move(path->best_weights);
  path->best_weights.clear();
  TrainingSummary summary;
  summary.set_solver(absl::StrCat(solver_config->name(), " (path)"));
  summary.set_lambda(best.lambda);
  summary.set_num_examples(problem.NumExamples());
  summary.set_dim(problem.Dim());
  summary.set_passes(static_cast<int>(std::ceil(last.cumulative_passes)));
  summary.set_oracle_calls(static_cast<int64_t>(
      std::llround(last.cumulative_passes * problem.NumExamples())));
  summary.set_seconds(last.seconds);
  const bool out_of_time =
      absl::EndsWith(last.stop_reason, kPathTimeBudgetSpent);
  summary.set_stop_reason(absl::StrCat(
      InterruptRequests() > 0 ? "interrupted; " : "",
      out_of_time ? "max_seconds; " : "",
      absl::StrFormat(
          "regularization path: %d breakpoints, chosen J = %d by %s %.2f",
          static_cast<int>(path->points.size()), best.index, path->score_name,
          path->scores[path->best])));
  summary.set_lambda_rule(absl::StrFormat(
      "chosen on the regularization path: breakpoint J = %d of %d by %s",
      best.index, static_cast<int>(path->points.size()), path->score_name));
  if (best.gap_exact) {
    summary.set_gap(best.gap);
    const double norm = SquaredNorm(weights->data(), problem.Dim());
    summary.set_dual(best.ell - 0.5 * best.lambda * norm);
    summary.set_primal(summary.dual() + best.gap);
  }
  return summary;
}

}  // namespace

namespace {

// The monitor of a solver run: its log and checkpoint plan, or, when
// `resume` (read from `resume_path`) is not null, the run it continues.
absl::Status StartCheckpointedMonitor(
    const PipelineConfig& config, const std::string& model_path,
    const std::string& run, const std::string& resume_path,
    SolverCheckpoint* resume, const std::string& log_path, Monitor* monitor) {
  const uint64_t fingerprint = ConfigFingerprint(RecordedConfig(config));
  if (resume != nullptr) {
    absl::Status same =
        CheckResumeCheckpoint(*resume, resume_path, fingerprint, run);
    if (!same.ok()) return same;
  }
  return StartMonitor(
      log_path,
      CheckpointPlanFor(config.checkpoint(), fingerprint, model_path, run),
      resume, monitor);
}

// Where the run's last checkpoint is, for the interrupted run's message.
void NoteCheckpoint(const Monitor& monitor, PipelineResult* result) {
  result->checkpoint_passes = monitor.checkpoint_passes();
  result->checkpoint_path =
      monitor.checkpoint_passes() > 0 ? monitor.checkpoint_plan().path : "";
  result->checkpoint_error = monitor.checkpoint_error();
}

// A run's checkpoint is not needed once its model is saved, unless the run
// was interrupted: resuming from it then gives the uninterrupted model.
void RemoveFinishedCheckpoint(PipelineResult* result) {
  if (result->checkpoint_path.empty() || InterruptRequests() > 0) return;
  std::remove(result->checkpoint_path.c_str());
  result->checkpoint_path.clear();
  result->checkpoint_passes = 0;
}

// Trains on the training problem, at the configured λ or along the path
// (`lambda: "path"`, which settles solver_config's λ); the pass records, or
// the path's JSON, go to the log. `solver` is released once it has run.
absl::Status TrainOnTrainingSplit(
    PreparedCorpus* prepared, const PipelineOptions& options,
    const ProgressLine& say, std::unique_ptr<Solver> solver,
    SolverConfig* solver_config, SolverCheckpoint* resume,
    std::vector<double>* weights, PipelineResult* result) {
  PipelineConfig& config = prepared->config;
  const ChainProblem& problem = *prepared->problem;
  Monitor monitor;
  monitor.set_progress_stream(options.progress);
  result->log_path = ResolvePath(options.output_dir, config.log_path());
  const bool on_path = config.lambda() == "path";
  if (on_path && resume != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.resume_path,
        ": a `lambda: \"path\"` run resumes only its train + dev run"));
  }
  // A path run's log is the path's JSON, written once it is known; both
  // are opened now, so that an unwritable path fails before training.
  std::ofstream path_log;
  if (on_path) {
    path_log.open(result->log_path, std::ios::trunc);
    if (!path_log) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write the path log ", result->log_path));
    }
  } else if (prepared->writes_outputs()) {
    absl::Status log = StartCheckpointedMonitor(
        config, ResolvePath(options.output_dir, config.model_path()), kTrainRun,
        options.resume_path, resume, result->log_path, &monitor);
    if (!log.ok()) return log;
  }
  const int eval_every =
      config.eval_every() > 0 ? config.eval_every() : 1 << 30;
  const HeldOutScorer scorer = MakeHeldOutScorer(*prepared, false);
  // Every rank of a distributed run forms w̄ at the same passes (together);
  // rank 0 scores it.
  const bool scores = prepared->writes_outputs();
  if (scorer.score) {
    monitor.SetEvaluator(scorer.name, eval_every,
                         [&scorer, scores](absl::Span<const double> w) {
                           return scores ? scorer.score(w.data()) : 0.0;
                         });
  }
  absl::StatusOr<TrainingSummary> summary;
  if (on_path) {
    absl::StatusOr<TrainingSummary> chosen = TrainOnPath(
        problem, *prepared, say, solver_config, weights, &result->path);
    if (!chosen.ok()) return chosen.status();
    summary = *chosen;
    *config.mutable_solver() = *solver_config;
    // The log holds the path's breakpoints instead of pass records. A
    // failed write is reported, but the model is still saved below.
    absl::StatusOr<std::string> json = RecordToJson(PathRecord(result->path));
    path_log << (json.ok() ? *json : "");
    path_log.close();
    if (!json.ok() || !path_log) {
      say(absl::StrCat("warning: cannot write the path log ",
                       result->log_path));
    }
  } else if (prepared->communicator != nullptr) {
    const ShardProblem shard(problem, prepared->num_train_examples,
                             prepared->train_shard);
    absl::Status distributed =
        solver->SetDistribution({prepared->communicator, shard.shard()});
    if (!distributed.ok()) return distributed;
    summary = solver->Solve(shard, &monitor, weights);
    solver.reset();
  } else {
    summary = solver->Solve(problem, &monitor, weights);
    // Nothing of the solver is read after its run; a retraining run should
    // not share the memory with whatever state it keeps.
    solver.reset();
    NoteCheckpoint(monitor, result);
  }
  if (!summary.ok()) return summary.status();
  result->summary = *summary;
  if (!result->summary.has_lambda_rule()) {
    result->summary.set_lambda_rule(result->lambda_rule);
  }
  return absl::OkStatus();
}

// corpus.retrain_on_train_and_dev: trains again, with the same solver
// settings, on train + dev (the task builds that problem from the
// train-only one, which is released), and returns that model for the
// caller to save.
absl::StatusOr<ChainModel> TrainFinalModel(PreparedCorpus* prepared,
                                           const SolverConfig& solver_config,
                                           const PipelineOptions& options,
                                           SolverCheckpoint* resume,
                                           const ProgressLine& say,
                                           PipelineResult* result) {
  absl::Status made = prepared->task->PrepareRetrainingProblem(prepared);
  if (!made.ok()) return made;
  const ChainProblem& with_dev = *prepared->problem_with_dev;
  say(absl::StrFormat(
      "final model: training again on train + dev (%d sentences), "
      "lambda %g, up to %d passes",
      with_dev.NumExamples(), solver_config.lambda(),
      solver_config.max_passes()));
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(solver_config);
  if (!solver.ok()) return solver.status();
  Monitor monitor;
  monitor.set_progress_stream(options.progress);
  result->final_log_path = absl::StrCat(result->log_path, ".train_and_dev");
  absl::Status log = StartCheckpointedMonitor(
      prepared->config, result->model_path, kTrainAndDevRun,
      options.resume_path, resume, result->final_log_path, &monitor);
  if (!log.ok()) return log;
  std::vector<double> weights;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(with_dev, &monitor, &weights);
  if (!summary.ok()) return summary.status();
  solver->reset();
  NoteCheckpoint(monitor, result);
  result->train_only_summary = result->summary;
  result->summary = *summary;
  result->summary.set_lambda_rule(
      absl::StrCat(result->train_only_summary.lambda_rule(),
                   "; the same lambda on train + dev"));
  return MakeModel(*prepared, with_dev, solver_config, &weights,
                   prepared->space_with_dev(), result->summary);
}

// The recorded config keeps λ (and ℓ1) in the per-sum form it was given,
// so that it reads as the preset does (a bundle reuses its models, a
// checkpoint's fingerprint matches the resumed run's); the model's solver
// field holds the values they resolved to.
void KeepGivenLambdaForm(const SolverConfig& given, SolverConfig* recorded) {
  if (given.c() > 0 || given.c2() > 0) {
    recorded->clear_lambda();
    if (given.c() > 0) recorded->set_c(given.c());
    if (given.c2() > 0) recorded->set_c2(given.c2());
  }
  if (given.c1() > 0) {
    recorded->clear_l1();
    recorded->set_c1(given.c1());
  }
}

// When the run stops, for the "training:" line: "until gap <= 5% of the
// primal, checked every 5 passes, at most 100 passes".
std::string StopRuleText(const SolverConfig& config) {
  std::string rule;
  if (config.relative_gap_tolerance() > 0) {
    rule = absl::StrFormat("gap <= %g%% of the primal",
                           100 * config.relative_gap_tolerance());
  }
  if (config.gap_tolerance() > 0) {
    absl::StrAppend(&rule, rule.empty() ? "" : " or ",
                    absl::StrFormat("gap <= %g", config.gap_tolerance()));
  }
  // svrg's lines count epochs, two passes over the data each.
  const bool epochs = PassesAreEpochs(config.name());
  std::string cap = absl::StrFormat(
      epochs ? "%d passes over the data" : "%d passes", config.max_passes());
  std::vector<std::string> notes;
  if (epochs) {
    notes.push_back(
        absl::StrFormat("%d epochs of two", (config.max_passes() + 1) / 2));
  }
  if (!HasDualityGap(config)) {
    notes.push_back(
        absl::StrCat(config.name(), " has no duality gap to stop on"));
    rule.clear();
  }
  if (!notes.empty()) {
    absl::StrAppend(&cap, " (", absl::StrJoin(notes, "; "), ")");
  }
  if (rule.empty() || config.gap_check() <= 0) {
    return absl::StrCat("up to ", cap);
  }
  return absl::StrFormat("until %s (checked every %d %s), at most %s", rule,
                         config.gap_check(), epochs ? "epochs" : "passes", cap);
}

// The last line of the progress stream: passes, the certificate, times and
// the tasks' `scores`.
std::string DoneLine(const TrainingSummary& summary, absl::Time start,
                     const std::string& scores) {
  // Solvers without a dual (ssg) certify nothing: say so rather than print
  // a zero gap.
  const std::string certificate =
      summary.has_gap()
          ? absl::StrFormat("primal %.6g, dual %.6g, gap %.3e",
                            summary.primal(), summary.dual(), summary.gap())
          : absl::StrFormat("primal %.6g, no duality gap (%s keeps no dual)",
                            summary.primal(), summary.solver());
  return absl::StrFormat(
      "done: %d %s, %s (%s), %.1fs training, %.1fs total%s", summary.passes(),
      PassesAreEpochs(summary.solver()) ? "epochs" : "passes", certificate,
      summary.stop_reason(), summary.seconds(),
      absl::ToDoubleSeconds(absl::Now() - start), scores);
}

// A run that its budget ended with its dual still near 0 has certified
// nothing: its model may be anywhere, and a user reading only the F1 would
// not know.
void WarnOfAnEmptyCertificate(const TrainingSummary& summary,
                              const ProgressLine& say) {
  const bool budget =
      summary.stop_reason() == StopReasonName(StopReason::kMaxPasses) ||
      summary.stop_reason() == StopReasonName(StopReason::kMaxSeconds);
  if (!budget || !summary.has_dual() || !(summary.primal() > 0) ||
      summary.dual() > 0.01 * summary.primal()) {
    return;
  }
  say(absl::StrFormat(
      "warning: the run ended on %s with its dual %g under 1%% of its "
      "primal %g: the certificate bounds nothing yet, and the model may be "
      "far from the optimum; give more passes, or check the scale of the "
      "attribute values",
      summary.stop_reason(), summary.dual(), summary.primal()));
}

// Trains on the training split (one λ or along the path) and saves the
// model, beside the final one (.train_only) when it is retrained.
absl::StatusOr<ChainModel> TrainAndSave(PreparedCorpus* prepared,
                                        const PipelineOptions& options,
                                        const ProgressLine& say,
                                        SolverConfig* solver_config,
                                        SolverCheckpoint* resume,
                                        PipelineResult* result) {
  PipelineConfig& config = prepared->config;
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(*solver_config);
  if (!solver.ok()) return solver.status();
  // A path run announces itself in TrainOnPath: its λ is not this one.
  if (config.lambda() != "path") {
    say(absl::StrFormat("training: solver %s, lambda %g (%s)%s, %s",
                        solver_config->name(), solver_config->lambda(),
                        result->lambda_rule,
                        solver_config->l1() > 0
                            ? absl::StrFormat(", l1 %g", solver_config->l1())
                            : "",
                        StopRuleText(*solver_config)));
  }
  std::vector<double> weights;
  absl::Status trained =
      TrainOnTrainingSplit(prepared, options, say, std::move(*solver),
                           solver_config, resume, &weights, result);
  if (!trained.ok()) return trained;
  WarnOfAnEmptyCertificate(result->summary, say);
  if (solver_config->l1() > 0) {
    // The elastic net's sparsity, to compare with CRFsuite's "Number of
    // active features".
    const int64_t nonzero = std::count_if(weights.begin(), weights.end(),
                                          [](double x) { return x != 0; });
    say(absl::StrFormat("weights: %d non-zero of %d", nonzero,
                        static_cast<int64_t>(weights.size())));
  }
  absl::StatusOr<ChainModel> model =
      MakeModel(*prepared, *prepared->problem, *solver_config, &weights,
                prepared->space(), result->summary);
  // The model holds its own copy; the solver's vector is not read again.
  weights = std::vector<double>();
  if (!model.ok()) return model.status();
  result->model_path = ResolvePath(options.output_dir, config.model_path());
  // With retraining, the model trained on train alone is kept beside the
  // final one: it is the one the dev figures describe.
  const bool retrain = config.corpus().retrain_on_train_and_dev();
  if (retrain) {
    result->train_only_model_path =
        absl::StrCat(result->model_path, ".train_only");
  }
  if (!prepared->writes_outputs()) return model;
  absl::Status saved =
      model->Save(retrain ? result->train_only_model_path : result->model_path);
  if (!saved.ok()) return saved;
  RemoveFinishedCheckpoint(result);
  return model;
}

// `train --resume` with a checkpoint of the train + dev run: the train-only
// run is over, and its model (saved beside the final one) says what it
// was; its solver settings, λ included, are the final run's.
absl::StatusOr<ChainModel> LoadTrainOnlyModel(PreparedCorpus* prepared,
                                              const PipelineOptions& options,
                                              SolverConfig* solver_config,
                                              PipelineResult* result) {
  PipelineConfig& config = prepared->config;
  result->log_path = ResolvePath(options.output_dir, config.log_path());
  result->model_path = ResolvePath(options.output_dir, config.model_path());
  result->train_only_model_path =
      absl::StrCat(result->model_path, ".train_only");
  absl::StatusOr<ChainModel> model =
      ChainModel::Load(result->train_only_model_path);
  if (!model.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.resume_path,
        " continues the train + dev run, which needs the train-only model: ",
        model.status().message()));
  }
  const int threads = solver_config->num_threads();
  const SolverConfig given = config.solver();
  *solver_config = model->header().solver();
  solver_config->set_num_threads(threads);
  *config.mutable_solver() = *solver_config;
  KeepGivenLambdaForm(given, config.mutable_solver());
  result->summary = model->header().training();
  return model;
}

}  // namespace

absl::StatusOr<PipelineResult> RunPipeline(const PipelineConfig& input_config,
                                           const PipelineOptions& options) {
  // Checked before the corpus is read: a typo should not cost a minute.
  absl::Status lambda = CheckSettingsBeforeData(input_config);
  if (!lambda.ok()) return lambda;
  if (options.communicator != nullptr) {
    absl::Status distributed = CheckDistributed(input_config, options);
    if (!distributed.ok()) return distributed;
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<PreparedCorpus> prepared =
      PrepareCorpus(input_config, options);
  if (!prepared.ok()) return prepared.status();
  return RunPreparedPipeline(&*prepared, options, start);
}

absl::StatusOr<PipelineResult> RunPreparedPipeline(
    PreparedCorpus* prepared, const PipelineOptions& options,
    absl::Time start) {
  const ProgressLine say = ProgressPrinter(options.progress);
  PipelineConfig& config = prepared->config;
  absl::Status lambda = CheckSettingsBeforeData(config);
  if (!lambda.ok()) return lambda;
  // Before training, not after: a model that cannot be saved is lost.
  if (prepared->writes_outputs()) {
    absl::Status writable = CheckWritablePath(
        ResolvePath(options.output_dir, config.model_path()), "the model file");
    if (!writable.ok()) return writable;
  }
  const Task& task = *prepared->task;

  // The training sentences are featurised: their text is not read again,
  // and it is as large as the features.
  prepared->train = std::vector<Sentence>();
  // Their many small blocks sit in malloc's heap, which the solver's large
  // (mmapped) vectors never reuse: hand the freed pages back.
  malloc_trim(0);

  PipelineResult result;
  result.feature_stats = prepared->feature_stats;
  result.num_train_sentences = prepared->TrainExamples();
  task.ReportCorpus(*prepared, say, &result);

  if (config.lambda() != "path") {
    result.lambda_rule = LambdaRule(config.solver(), prepared->TrainExamples());
  }
  const SolverConfig given = config.solver();
  SolverConfig solver_config = SolverConfigFor(*prepared);
  *config.mutable_solver() = solver_config;
  KeepGivenLambdaForm(given, config.mutable_solver());
  std::optional<SolverCheckpoint> resume;
  if (!options.resume_path.empty()) {
    absl::StatusOr<SolverCheckpoint> read = ReadCheckpoint(options.resume_path);
    if (!read.ok()) return read.status();
    resume = *std::move(read);
  }
  const bool resume_final = resume.has_value() &&
                            resume->run() == kTrainAndDevRun &&
                            config.corpus().retrain_on_train_and_dev();
  absl::StatusOr<ChainModel> model =
      resume_final
          ? LoadTrainOnlyModel(prepared, options, &solver_config, &result)
          : TrainAndSave(prepared, options, say, &solver_config,
                         resume.has_value() ? &*resume : nullptr, &result);
  if (!model.ok()) return model.status();
  // The other ranks of a distributed run are done: rank 0 scores.
  if (!prepared->writes_outputs()) return result;
  if (InterruptRequests() > 0) {
    result.interrupted = true;
    if (!result.train_only_model_path.empty()) {
      result.model_path = result.train_only_model_path;
    }
    return result;
  }

  // The scores come from the saved models' own weights (for CoNLL through
  // the tagging path `tag` runs), not from the solver's vector.
  std::string scores;
  if (config.corpus().retrain_on_train_and_dev()) {
    absl::StatusOr<std::string> train_only =
        task.ScoreTrainOnlyModel(*prepared, *model, say, &result);
    if (!train_only.ok()) return train_only.status();
    scores = *train_only;
    // The train-only model is saved and scored: its weights (as large as
    // the solver's) are released before the final run needs the memory.
    model = absl::UnavailableError("the train-only model was released");
    model = TrainFinalModel(prepared, solver_config, options,
                            resume_final ? &*resume : nullptr, say, &result);
    if (!model.ok()) return model.status();
    absl::Status saved = model->Save(result.model_path);
    if (!saved.ok()) return saved;
    RemoveFinishedCheckpoint(&result);
    if (InterruptRequests() > 0) {
      result.interrupted = true;
      return result;
    }
  }
  absl::StatusOr<std::string> final_scores =
      task.ScoreSavedModel(*prepared, *model, options, say, &result);
  if (!final_scores.ok()) return final_scores.status();
  say(DoneLine(result.summary, start, scores + *final_scores));
  return result;
}

}  // namespace chaintag
