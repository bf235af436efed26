#include "solvers/monitor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

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
    if (record.has_eval_score()) {
      absl::StrAppendFormat(&line, "  %s %.2f", record.eval_metric(),
                            record.eval_score());
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
  }
  records_.push_back(std::move(record));
  return absl::OkStatus();
}

}  // namespace chaintag
