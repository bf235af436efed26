// Choosing λ on dev data with the regularization path
// (solvers/regularization_path.h): every breakpoint's solution is scored on
// the held-out split as soon as it is final, and the best one's weights are
// kept (on ties the larger λ, the first met). Also the path's table, and its
// records (lambda_path.proto) for the JSON files of `train` with
// `lambda: "path"` and of `//tools:regpath`.
//
// Thread-safety: ChooseLambdaOnPath runs on the calling thread (scorers and
// the solver use their own worker threads).

#ifndef CHAINTAG_PIPELINE_LAMBDA_PATH_H_
#define CHAINTAG_PIPELINE_LAMBDA_PATH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "pipeline/lambda_path.pb.h"
#include "solvers/problem.h"
#include "solvers/regularization_path.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// Scores weights on a held-out split.
struct HeldOutScorer {
  std::string name;  // e.g. "dev_F1", "dev_letter_error"
  bool lower_is_better = false;
  // Empty when there is nothing to score on. w is as the solver returns it
  // (Solver::Solve: a restricted problem's free coordinates).
  std::function<absl::StatusOr<double>(const double* w)> score;
};

struct LambdaPath {
  std::string score_name;
  bool lower_is_better = false;
  std::vector<PathPoint> points;
  std::vector<double> scores;  // one per point
  int best = -1;               // index into points
  std::vector<double> best_weights;
};

// Runs the path with `config` (config.path) and scores every breakpoint with
// `scorer`; `say` (may be empty) gets one progress line per breakpoint.
absl::StatusOr<LambdaPath> ChooseLambdaOnPath(
    const Problem& problem, const SolverConfig& config,
    const HeldOutScorer& scorer,
    const std::function<void(const std::string&)>& say);

// One row per breakpoint: J, λ, segment end, gap (exact or estimate),
// inner passes, cumulative passes, seconds, score; the chosen row marked.
std::string FormatPathTable(const LambdaPath& path);

// A point of a path or grid run as the JSON files record it (no score).
PathPointRecord PointRecord(const PathPoint& point);

// The path's points with their scores, and the choice.
LambdaPathRecord PathRecord(const LambdaPath& path);

// `record` as indented JSON with the .proto's field names, one field a line,
// ending in a newline.
absl::StatusOr<std::string> RecordToJson(
    const google::protobuf::Message& record);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_LAMBDA_PATH_H_
