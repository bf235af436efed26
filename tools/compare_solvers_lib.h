// The core of compare_solvers, kept out of the CLI so it can be tested:
// run specs ("bcfw:sampling=gap,step=pairwise") applied to a SolverConfig
// with train's flag names or dotted field paths (tools/config_flags.h, so
// new SolverConfig fields work without code changes), JSON-lines PassRecord
// logs read back, per-pass aggregation over seeds (median and min–max), the
// first pass reaching a target gap, and the SVG figures and summary table built
// from them.
//
// Thread-safety: pure functions over their arguments, except ReadPassLog
// which reads a file; safe from any thread.

#ifndef CHAINTAG_TOOLS_COMPARE_SOLVERS_LIB_H_
#define CHAINTAG_TOOLS_COMPARE_SOLVERS_LIB_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

struct RunSpec {
  // Display label: `label=` when given, else the spec text itself.
  std::string label;
  std::string solver_name;
  // Train flag names or SolverConfig field paths, and their values as
  // typed, in order.
  std::vector<std::pair<std::string, std::string>> fields;
};

// One spec: `solver_name[:field=value,...]`; `label=...` names the run.
absl::StatusOr<RunSpec> ParseRunSpec(absl::string_view spec);

// Specs separated by ';' (empty pieces ignored). Every field is checked
// against SolverConfig here, so a typo fails before any training, and
// labels must be distinct.
absl::StatusOr<std::vector<RunSpec>> ParseRunSpecs(absl::string_view specs);

// Sets the solver name and the spec's fields on `config`. The seed is
// not a spec field: it comes from --seeds.
absl::Status ApplyRunSpec(const RunSpec& spec, SolverConfig* config);

// `label` reduced to characters safe in a file name ([A-Za-z0-9._-], the
// rest '_').
std::string FileStem(const std::string& label);

// One PassRecord per non-empty line, as solvers/monitor.cc writes them.
absl::StatusOr<std::vector<PassRecord>> ParsePassLog(absl::string_view text,
                                                     const std::string& name);
absl::StatusOr<std::vector<PassRecord>> ReadPassLog(const std::string& path);

enum class XValue { kEffectivePasses, kSeconds };
enum class YValue {
  kExactGap,      // records with gap_exact
  kEstimatedGap,  // records with a gap that is not exact
  kEvalScore,     // records with eval_score
  kPrimal,        // records with a primal value
};

// One pass index across seeds: medians and ranges of the seeds that have
// the value at this pass.
struct AggregatePoint {
  int pass = 0;
  int num_seeds = 0;
  double x_median = 0, x_min = 0, x_max = 0;
  double y_median = 0, y_min = 0, y_max = 0;
};

// Aligns the seeds' records by `pass` (a later record of the same pass
// replaces an earlier one) and aggregates `y` against `x`, in pass order.
std::vector<AggregatePoint> AggregateOverSeeds(
    const std::vector<std::vector<PassRecord>>& seeds, XValue x, YValue y);

double Median(std::vector<double> values);

struct GapCrossing {
  int pass = 0;
  double effective_passes = 0;
  double seconds = 0;
};

// The first record whose exact gap is ≤ `target`; estimates do not count
// (they are not certificates).
std::optional<GapCrossing> FirstReachingGap(
    const std::vector<PassRecord>& records, double target);

// Median over seeds of the crossing's effective passes and seconds, a seed
// that never reaches the target counting as +∞ (so the median is finite
// only when at least half of the seeds got there).
struct CrossingSummary {
  int seeds_reached = 0;
  int num_seeds = 0;
  std::optional<double> median_effective_passes;
  std::optional<double> median_seconds;
};
CrossingSummary SummarizeCrossings(
    const std::vector<std::vector<PassRecord>>& seeds, double target);

// One (run, seed) as it ended: the last record's counters, the last exact
// primal/dual/gap and the last eval score.
struct RunFinal {
  int passes = 0;
  double effective_passes = 0;
  double seconds = 0;
  std::optional<double> primal, dual, gap;
  bool gap_exact = false;
  std::optional<double> eval_score;
  std::string eval_metric;
};
RunFinal FinalOf(const std::vector<PassRecord>& records);

// The logs of one run spec, one entry per seed.
struct RunLogs {
  std::string label;
  std::vector<uint64_t> seeds;
  std::vector<std::vector<PassRecord>> records;
};

// The figures: gap against effective passes and against seconds (exact
// gaps solid with a min–max band, estimates dashed), and the eval score
// against effective passes (empty string when no run has eval scores),
// and the training objective (the true primal) against effective passes,
// which solvers without a dual (svrg, casimir_svrg, ssg) are compared by.
struct Figures {
  std::string gap_vs_passes;
  std::string gap_vs_seconds;
  std::string eval_vs_passes;
  std::string primal_vs_passes;
};
Figures MakeFigures(const std::vector<RunLogs>& runs, const std::string& title);

// summary.tsv: a header, then one line per (run, seed).
std::string SummaryTsv(const std::vector<RunLogs>& runs);

// The stdout table: per run the median final gap and eval score, and the
// median effective passes and seconds to first reach `target_gap` ("—"
// when never), with ratios to the first run.
std::string SummaryTable(const std::vector<RunLogs>& runs, double target_gap);

}  // namespace chaintag

#endif  // CHAINTAG_TOOLS_COMPARE_SOLVERS_LIB_H_
