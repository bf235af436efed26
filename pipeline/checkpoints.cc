#include "pipeline/checkpoints.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "xxhash.h"

namespace chaintag {

uint64_t ConfigFingerprint(const PipelineConfig& recorded_config) {
  // Deterministic bytes: the same config gives the same fingerprint in
  // every process.
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    recorded_config.SerializeToCodedStream(&coded);
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::string CheckpointPath(const std::string& model_path) {
  return absl::StrCat(model_path, ".ckpt");
}

Monitor::CheckpointPlan CheckpointPlanFor(const CheckpointConfig& checkpoint,
                                          uint64_t fingerprint,
                                          const std::string& model_path,
                                          const std::string& run) {
  Monitor::CheckpointPlan plan;
  if (checkpoint.every_passes() <= 0 && checkpoint.every_seconds() <= 0) {
    return plan;
  }
  plan.path = CheckpointPath(model_path);
  plan.every_passes = checkpoint.every_passes();
  plan.every_seconds = checkpoint.every_seconds();
  plan.fingerprint = fingerprint;
  plan.run = run;
  return plan;
}

absl::Status CheckResumeCheckpoint(const SolverCheckpoint& checkpoint,
                                   const std::string& path,
                                   uint64_t fingerprint,
                                   const std::string& run) {
  if (checkpoint.fingerprint() != fingerprint) {
    return absl::FailedPreconditionError(absl::StrCat(
        path,
        ": a checkpoint of another config (its fingerprint differs from "
        "this run's: the corpus, features, model or solver settings "
        "changed); resume with the config that wrote it"));
  }
  if (checkpoint.run() != run) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": a checkpoint of the \"", checkpoint.run(),
                     "\" run, not of \"", run, "\""));
  }
  return absl::OkStatus();
}

absl::Status StartMonitor(const std::string& log_path,
                          Monitor::CheckpointPlan plan,
                          SolverCheckpoint* resume, Monitor* monitor) {
  monitor->SetCheckpointPlan(std::move(plan));
  if (resume == nullptr) return monitor->OpenLog(log_path);
  absl::Status log = monitor->ResumeLog(log_path, resume->records());
  if (!log.ok()) return log;
  monitor->SetResume(std::move(*resume));
  return absl::OkStatus();
}

}  // namespace chaintag
