#include "solvers/monitor.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "solvers/checkpoint.h"

namespace chaintag {

Monitor::~Monitor() {
  if (log_ != nullptr) std::fclose(log_);
}

absl::Status Monitor::OpenLog(const std::string& path) {
  if (log_ != nullptr) std::fclose(log_);
  log_ = std::fopen(path.c_str(), "w");
  if (log_ == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot open the training log for writing"));
  }
  log_path_ = path;
  records_written_ = 0;
  return absl::OkStatus();
}

bool Monitor::CheckpointDue(int pass, double seconds) {
  if (plan_.path.empty()) return false;
  const bool by_passes =
      plan_.every_passes > 0 && pass % plan_.every_passes == 0;
  const bool by_seconds =
      plan_.every_seconds > 0 &&
      seconds - last_checkpoint_seconds_ >= plan_.every_seconds;
  if (!by_passes && !by_seconds) return false;
  last_checkpoint_seconds_ = seconds;
  return true;
}

void Monitor::WriteCheckpoint(SolverCheckpoint checkpoint) {
  checkpoint.set_fingerprint(plan_.fingerprint);
  checkpoint.set_run(plan_.run);
  checkpoint.set_records(records_written_);
  const int passes = checkpoint.passes();
  absl::Status written =
      chaintag::WriteCheckpoint(plan_.path, std::move(checkpoint));
  if (written.ok()) {
    checkpoint_passes_ = passes;
    checkpoint_error_.clear();
    return;
  }
  checkpoint_error_ = absl::StrCat("the checkpoint of pass ", passes,
                                   " was not written: ", written.message());
  if (progress_ != nullptr) {
    std::fprintf(progress_, "%s; training goes on\n",
                 checkpoint_error_.c_str());
    std::fflush(progress_);
  }
}

void Monitor::SetResume(SolverCheckpoint checkpoint) {
  resume_ = std::move(checkpoint);
}

absl::Status Monitor::ResumeLog(const std::string& path, int64_t records) {
  std::vector<std::string> kept;
  {
    std::ifstream in(path);
    std::string line;
    while (static_cast<int64_t>(kept.size()) < records &&
           std::getline(in, line)) {
      kept.push_back(line);
    }
  }
  if (static_cast<int64_t>(kept.size()) < records) {
    return absl::DataLossError(
        absl::StrCat(path, ": the training log has ", kept.size(),
                     " records, the checkpoint was written after ", records));
  }
  absl::Status opened = OpenLog(path);
  if (!opened.ok()) return opened;
  for (const std::string& line : kept) {
    if (std::fprintf(log_, "%s\n", line.c_str()) < 0) {
      return absl::DataLossError(
          absl::StrCat(path, ": write to the training log failed"));
    }
  }
  std::fflush(log_);
  records_written_ = records;
  return absl::OkStatus();
}

void Monitor::SetEvaluator(std::string metric, int every_passes,
                           Evaluator evaluator) {
  metric_ = std::move(metric);
  every_passes_ = every_passes;
  evaluator_ = std::move(evaluator);
}

bool Monitor::WantsEvaluation(int pass, bool final_pass) const {
  if (!evaluator_ || every_passes_ <= 0) return false;
  return final_pass || pass % every_passes_ == 0;
}

absl::Status Monitor::Record(PassRecord record, absl::Span<const double> w,
                             bool final_pass) {
  if (WantsEvaluation(record.pass(), final_pass)) {
    absl::StatusOr<double> score = evaluator_(w);
    if (!score.ok()) return score.status();
    record.set_eval_score(*score);
    record.set_eval_metric(metric_);
  }
  if (progress_ != nullptr) {
    std::string line =
        absl::StrFormat("pass %4d  %8.2fs  oracle %10d", record.pass(),
                        record.seconds(), record.oracle_calls());
    if (record.has_primal()) {
      absl::StrAppendFormat(&line, "  primal %.8g", record.primal());
    }
    if (record.has_dual()) {
      absl::StrAppendFormat(&line, "  dual %.8g", record.dual());
    }
    if (record.has_gap()) {
      absl::StrAppendFormat(&line, "  gap %.3e%s", record.gap(),
                            record.gap_exact() ? "" : " (est.)");
    }
    if (record.has_learning_rate()) {
      absl::StrAppendFormat(&line, "  (primal rose: step size halved to %g)",
                            record.learning_rate());
    }
    if (record.has_eval_score()) {
      absl::StrAppendFormat(&line, "  %s %.2f (evaluations so far %.2fs)",
                            record.eval_metric(), record.eval_score(),
                            record.evaluation_seconds());
    }
    std::fprintf(progress_, "%s\n", line.c_str());
    std::fflush(progress_);
  }
  if (log_ != nullptr) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    auto status =
        google::protobuf::util::MessageToJsonString(record, &json, options);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat(
          "cannot print a pass record as JSON: ", status.ToString()));
    }
    if (std::fprintf(log_, "%s\n", json.c_str()) < 0 || std::fflush(log_)) {
      return absl::DataLossError(
          absl::StrCat(log_path_, ": write to the training log failed"));
    }
    ++records_written_;
  }
  records_.push_back(std::move(record));
  return absl::OkStatus();
}

}  // namespace chaintag
