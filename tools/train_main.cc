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
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/communicator.h"
#include "base/interrupt.h"
#include "base/paths.h"
#ifdef CHAINTAG_WITH_MPI
#include "base/mpi_communicator.h"
#endif
#include "pipeline/pipeline.h"
#include "tools/config_flags.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(std::string, resume, "",
          "Continue the run of this checkpoint (same config and flags, "
          "threads aside): the model is the one the run would have written "
          "without the stop.");
CHAINTAG_DEFINE_SET_FLAG(
    "Sets any config field by its dotted path, after the named flags: "
    "--set=solver.lambda=1e-4,features.num_buckets=2097152 (assignments "
    "separated by commas; every --set applies, in order; enums by name). A "
    "repeated field takes a list in brackets, which replaces its values: "
    "--set=corpus.format.attribute_columns=[0,2].")
// The named flags: aliases of config fields, applied only when given.
#define TRAIN_FLAGS(X)     \
  CHAINTAG_RUN_FLAGS(X)    \
  CHAINTAG_LAMBDA_FLAGS(X) \
  CHAINTAG_SEED_FLAGS(X)   \
  CHAINTAG_SOLVER_FLAGS(X) CHAINTAG_SVRG_FLAGS(X) CHAINTAG_OUTPUT_FLAGS(X)
TRAIN_FLAGS(CHAINTAG_DEFINE_CONFIG_FLAG)
ABSL_FLAG(bool, quiet, false, "No progress lines.");
ABSL_FLAG(bool, distributed, false,
          "Train on the ranks of an MPI job (train_mpi under mpirun): each "
          "rank trains its shard of the sentences, rank 0 writes.");

namespace chaintag {
namespace {

constexpr ConfigFlag kConfigFlags[] = {TRAIN_FLAGS(CHAINTAG_CONFIG_ROW)};

int Run(Communicator* communicator) {
  absl::StatusOr<PipelineConfig> config = LoadConfig(
      kConfigFlags, absl::GetFlag(FLAGS_config), GivenSetAssignments());
  if (!config.ok()) {
    std::fprintf(stderr, "train: %s\n", config.status().ToString().c_str());
    return absl::IsInvalidArgument(config.status()) ? 2 : 1;
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
  // Said even with --quiet: the run went on without the checkpoint asked for.
  if (!result->checkpoint_error.empty()) {
    std::fprintf(stderr, "warning: %s\n", result->checkpoint_error.c_str());
  }
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
  chaintag::ParseToolCommandLine(argc, argv);
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
