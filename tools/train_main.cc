// train: runs a PipelineConfig (text proto) with optional flag overrides.
//
//   bazel run //tools:train --
//   --config=pipeline/configs/conll2000_chunking.textproto \
//       --lambda=1e-4 --max_passes=50 --model=/tmp/chunker.model
//
// The //pipeline:* presets are this binary with their config preset.
// Progress goes to stderr; the final conlleval table to stdout.
//
// //tools:train_mpi is the same program linked with Open MPI, for
// distributed training (needs solver.minibatch > 1):
//
//   mpirun -np 2 bazel-bin/tools/train_mpi --distributed
//       --config=pipeline/configs/conll2000_chunking.textproto
//       --set=solver.minibatch=16
//
// Every rank trains its shard of the sentences; rank 0 prints the progress
// and writes the model and the log, the same bytes as `train` with the same
// config (threads aside).

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/communicator.h"
#include "base/config_override.h"
#include "base/interrupt.h"
#include "base/paths.h"
#ifdef CHAINTAG_WITH_MPI
#include "base/mpi_communicator.h"
#endif
#include "pipeline/flag_aliases.h"
#include "pipeline/pipeline.h"
#include "tools/given_flag.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(std::string, model, "", "Override: model output path.");
ABSL_FLAG(std::string, log, "", "Override: JSON-lines training log path.");
ABSL_FLAG(std::string, predictions, "",
          "Also write the tagged test file (CoNLL columns + prediction).");
ABSL_FLAG(std::string, solver, "", "Override: solver name.");
ABSL_FLAG(double, lambda, -1, "Override: regularisation λ (0 = 1/n).");
ABSL_FLAG(int, max_passes, 0, "Override: maximum passes.");
ABSL_FLAG(double, max_seconds, -1, "Override: time budget (0 = none).");
ABSL_FLAG(double, gap_tolerance, -1, "Override: duality gap tolerance.");
ABSL_FLAG(int, gap_check, 0, "Override: passes between exact gaps.");
ABSL_FLAG(int64_t, seed, -1, "Override: random seed.");
ABSL_FLAG(std::string, sampling, "",
          "Override: uniform | permutation | gap (bcfw block sampling).");
ABSL_FLAG(std::string, step, "",
          "Override: fw | pairwise | away | best (bcfw block step).");
ABSL_FLAG(std::string, cache, "",
          "Override: true | false (bcfw gap-based corner cache).");
ABSL_FLAG(double, cache_factor, -1,
          "Override: cache factor F (a cached corner is used when its gap is "
          ">= max(F * g_i, nu * G / n)).");
ABSL_FLAG(double, cache_nu, -1, "Override: cache threshold nu.");
ABSL_FLAG(int, max_cache_size, 0, "Override: corners cached per block.");
ABSL_FLAG(int, mp_max_planes, 0, "Override: mp_bcfw planes per block.");
ABSL_FLAG(int, mp_inactive_iterations, 0,
          "Override: mp_bcfw drops planes unused for this many iterations.");
ABSL_FLAG(int, mp_max_approx_passes, 0,
          "Override: mp_bcfw approximate passes per outer iteration.");
ABSL_FLAG(std::string, mp_rule, "",
          "Override: deterministic | wall_clock (mp_bcfw's rule for when to "
          "stop approximate passes).");
ABSL_FLAG(std::string, weighted_averaging, "",
          "Override: true | false (return the weighted average w-bar).");
ABSL_FLAG(std::string, line_search, "",
          "Override: true | false (exact line search on block steps).");
ABSL_FLAG(std::string, smoothing, "",
          "Override (svrg, casimir_svrg): none | l2_top_k | entropy.");
ABSL_FLAG(double, smoothing_mu, -1, "Override: smoothing μ (first epoch).");
ABSL_FLAG(int, top_k, 0, "Override: labelings of the ℓ2 smoothing.");
ABSL_FLAG(std::string, smoothing_schedule, "",
          "Override: constant | linear | exponential.");
ABSL_FLAG(double, lr, -1,
          "Override: SVRG learning rate η (0 = 1/(L + λ + κ) from "
          "--smoothness).");
ABSL_FLAG(double, smoothness, -1, "Override: smoothness constant L.");
ABSL_FLAG(double, kappa, -1,
          "Override: casimir_svrg κ (0 = the variant's rule).");
ABSL_FLAG(std::string, casimir_variant, "", "Override: const | adapt.");
ABSL_FLAG(std::string, warm_start, "",
          "Override: prox_center | prev_iterate | extrapolation.");
ABSL_FLAG(std::string, decay_q, "",
          "Override: reference_code (q = κ/(κ+λ)) | paper (q = λ/(λ+κ)).");
ABSL_FLAG(std::string, lazy_updates, "",
          "Override: true | false (O(dim) textbook SVRG steps).");
ABSL_FLAG(int, threads, 0, "Override: threads for batch passes.");
ABSL_FLAG(int64_t, num_buckets, 0, "Override: feature hash buckets.");
ABSL_FLAG(std::string, train_scheme, "",
          "Override: scheme to train in (iob1, iob2, iobes).");
ABSL_FLAG(int, max_train_sentences, -1,
          "Override: use only the first N training sentences (0 = all).");
ABSL_FLAG(int, eval_every, -1,
          "Override: passes between test evaluations (0 = only at the end).");
ABSL_FLAG(std::string, nonnegative_transitions, "",
          "Override: true = constrain transition weights to be >= 0 (bcfw, "
          "active_set_bcfw).");
ABSL_FLAG(std::string, normalize_loss, "",
          "Override: true = Hamming loss divided by sentence length.");
ABSL_FLAG(std::string, retrain_on_train_and_dev, "",
          "Override: true = after the run on train (scored on dev), train "
          "the saved model again on train + dev.");
ABSL_FLAG(std::string, weight_precision, "",
          "Override: float32 (default; half the model) | float64 (the "
          "solver's weights exactly) for the saved emission weights.");
ABSL_FLAG(int, checkpoint_every, 0,
          "Override: write the solver's whole state to <model>.ckpt every N "
          "passes (atomically; removed once the model is saved).");
ABSL_FLAG(double, checkpoint_every_seconds, 0,
          "Override: ...and/or when this many seconds have passed since the "
          "last checkpoint.");
ABSL_FLAG(std::string, resume, "",
          "Continue the run of this checkpoint (same config and flags, "
          "threads aside): the model is the one the run would have written "
          "without the stop.");
ABSL_FLAG(std::vector<std::string>, set, {},
          "Sets any singular config field by its dotted path, after the named "
          "flags: "
          "--set=solver.lambda=1e-4,features.num_buckets=2097152 "
          "(assignments separated by commas, one --set: a repeated flag "
          "keeps its last value; enums by name).");
ABSL_FLAG(bool, quiet, false, "No progress lines.");
ABSL_FLAG(bool, distributed, false,
          "Train on the ranks of an MPI job (train_mpi under mpirun): each "
          "rank trains its shard of the sentences, rank 0 writes.");

namespace chaintag {
namespace {

absl::Status ApplyOverrides(PipelineConfig* config) {
  absl::Status status =
      ApplyFlagAliases(PipelineFlagAliases(), GivenFlagValue, config);
  if (!status.ok()) return status;
  // Last, so that a dotted path wins over the named flag for its field.
  return ApplyAssignments(absl::GetFlag(FLAGS_set), config);
}

int Run(Communicator* communicator) {
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    std::fprintf(stderr, "train: --config=<file.textproto> is required\n");
    return 2;
  }
  absl::StatusOr<PipelineConfig> config = ReadUserPipelineConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "train: %s\n", config.status().ToString().c_str());
    return 1;
  }
  absl::Status status = ApplyOverrides(&*config);
  if (!status.ok()) {
    std::fprintf(stderr, "train: %s\n", status.ToString().c_str());
    return 2;
  }
  PipelineOptions options;
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
  options.output_dir = CallerDirectory();
  if (!absl::GetFlag(FLAGS_resume).empty()) {
    options.resume_path = ResolveUserPath(absl::GetFlag(FLAGS_resume));
  }
  if (absl::GetFlag(FLAGS_quiet)) options.progress = nullptr;
  options.communicator = communicator;
  const bool root = communicator == nullptr || communicator->rank() == 0;
  if (!root) options.progress = nullptr;
  // Ranks must agree on every round: mpirun's signals end a distributed
  // job instead of a graceful stop that one rank might see alone.
  if (communicator == nullptr) InstallInterruptHandlers();
  absl::StatusOr<PipelineResult> result = RunPipeline(*config, options);
  if (!result.ok()) {
    std::fprintf(
        stderr, "train: %s%s\n",
        communicator == nullptr
            ? ""
            : absl::StrCat("rank ", communicator->rank(), ": ").c_str(),
        result.status().ToString().c_str());
    return InterruptRequests() > 0 ? InterruptExitCode() : 1;
  }
  if (!root) return 0;
  if (result->interrupted) {
    std::fprintf(stderr,
                 "interrupted at pass %d; model written to %s\ntraining log: "
                 "%s\n",
                 result->summary.passes(), result->model_path.c_str(),
                 result->log_path.c_str());
    if (!result->checkpoint_path.empty()) {
      std::fprintf(stderr,
                   "checkpoint of pass %d: %s (train --resume=%s with the "
                   "same config and flags continues the run)\n",
                   result->checkpoint_passes, result->checkpoint_path.c_str(),
                   result->checkpoint_path.c_str());
    }
    return InterruptExitCode();
  }
  std::fputs(result->test_report.c_str(), stdout);
  std::fprintf(stderr, "model written to %s\ntraining log: %s\n",
               result->model_path.c_str(), result->log_path.c_str());
  if (communicator != nullptr) {
    std::fprintf(stderr,
                 "communication (rank 0 of %d): %.1f MB sent, %.1f MB "
                 "received\n",
                 communicator->size(), communicator->bytes_sent() / 1e6,
                 communicator->bytes_received() / 1e6);
  }
  if (!result->train_only_model_path.empty()) {
    std::fprintf(stderr,
                 "model trained on train only (the one the dev figures "
                 "score): %s\nlog of the train + dev run: %s\n",
                 result->train_only_model_path.c_str(),
                 result->final_log_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Trains a chain model from a pipeline config: train "
      "--config=<file.textproto> [overrides]");
  absl::ParseCommandLine(argc, argv);
  if (!absl::GetFlag(FLAGS_distributed)) return chaintag::Run(nullptr);
#ifdef CHAINTAG_WITH_MPI
  absl::StatusOr<std::unique_ptr<chaintag::MpiCommunicator>> communicator =
      chaintag::MpiCommunicator::Create(&argc, &argv);
  if (!communicator.ok()) {
    std::fprintf(stderr, "train: %s\n",
                 communicator.status().ToString().c_str());
    return 1;
  }
  const int code = chaintag::Run(communicator->get());
  // A failed rank ends the job: mpirun then stops the others, which would
  // otherwise wait for it in the next exchange.
  if (code != 0) chaintag::MpiCommunicator::Abort(code);
  return code;
#else
  std::fprintf(stderr,
               "train: --distributed needs the MPI build: bazel build "
               "//tools:train_mpi, then mpirun -np K bazel-bin/tools/train_mpi "
               "--distributed ...\n");
  return 2;
#endif
}
