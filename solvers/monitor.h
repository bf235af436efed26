// Monitor: what a solver reports after every pass. Prints one progress line
// per pass, appends a JSON-lines PassRecord to a log file, and runs an
// optional held-out evaluation every few passes.
//
// Thread-safety: not thread-safe; a solver calls it from its own thread.

#ifndef CHAINTAG_SOLVERS_MONITOR_H_
#define CHAINTAG_SOLVERS_MONITOR_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class Monitor {
 public:
  // Scores weights on held-out data; higher or lower is better as the
  // metric says, the monitor only reports it.
  using Evaluator =
      std::function<absl::StatusOr<double>(absl::Span<const double> w)>;

  Monitor() = default;
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  ~Monitor();

  // Progress lines go to `stream` (stderr by default, nullptr = silent).
  void set_progress_stream(std::FILE* stream) { progress_ = stream; }
  // Starts (truncates) a JSON-lines log.
  absl::Status OpenLog(const std::string& path);
  void SetEvaluator(std::string metric, int every_passes, Evaluator evaluator);

  // Whether the evaluator wants to run after `pass` (or the run is ending).
  bool WantsEvaluation(int pass, bool final_pass) const;

  // Fills eval_score when an evaluation is due (using `w`), prints the line
  // and logs the record.
  absl::Status Record(PassRecord record, absl::Span<const double> w,
                      bool final_pass);

  const std::vector<PassRecord>& records() const { return records_; }

 private:
  std::FILE* progress_ = stderr;
  std::FILE* log_ = nullptr;
  std::string log_path_;
  std::string metric_;
  int every_passes_ = 0;
  Evaluator evaluator_;
  std::vector<PassRecord> records_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_MONITOR_H_
