#include "pipeline/lambda_path.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace chaintag {
namespace {

// JSON has no infinities: λ∞ of a zero-loss problem is written as null.
std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  return absl::StrFormat("%.17g", value);
}

}  // namespace

absl::StatusOr<LambdaPath> ChooseLambdaOnPath(
    const Problem& problem, const SolverConfig& config,
    const HeldOutScorer& scorer,
    const std::function<void(const std::string&)>& say) {
  if (!scorer.score) {
    return absl::InvalidArgumentError(
        "lambda: \"path\" needs a dev split to choose λ on (corpus.dev, "
        "corpus.dev_fraction, or corpus.dev_folds for OCR)");
  }
  LambdaPath path;
  path.score_name = scorer.name;
  path.lower_is_better = scorer.lower_is_better;
  absl::StatusOr<std::vector<PathPoint>> points = RunRegularizationPath(
      problem, config,
      [&](const PathPoint& point,
          const std::vector<double>& w) -> absl::Status {
        absl::StatusOr<double> score = scorer.score(w.data());
        if (!score.ok()) return score.status();
        const bool better =
            path.best < 0 ||
            (scorer.lower_is_better ? *score < path.scores[path.best]
                                    : *score > path.scores[path.best]);
        path.scores.push_back(*score);
        if (better) {
          path.best = static_cast<int>(path.scores.size()) - 1;
          path.best_weights = w;
        }
        if (say) {
          say(absl::StrFormat(
              "path %4d  lambda %-12.6g gap %-10.3g%s passes %8.1f  %6.1fs  "
              "%s %.2f",
              point.index, point.lambda, point.gap, point.gap_exact ? " " : "~",
              point.cumulative_passes, point.seconds, scorer.name, *score));
        }
        return absl::OkStatus();
      });
  if (!points.ok()) return points.status();
  path.points = *std::move(points);
  return path;
}

std::string FormatPathTable(const LambdaPath& path) {
  std::string table = absl::StrFormat(
      "%5s %13s %13s %11s %7s %10s %9s %10s\n", "J", "lambda", "segment_end",
      "gap", "passes", "cum_passes", "seconds", path.score_name);
  for (size_t j = 0; j < path.points.size(); ++j) {
    const PathPoint& p = path.points[j];
    absl::StrAppend(
        &table,
        absl::StrFormat(
            "%5d %13.6g %13.6g %10.3g%s %7d %10.1f %9.1f %10.2f%s\n", p.index,
            p.lambda, p.lambda_end, p.gap, p.gap_exact ? " " : "~",
            p.inner_passes, p.cumulative_passes, p.seconds, path.scores[j],
            static_cast<int>(j) == path.best ? "  <- chosen" : ""));
  }
  absl::StrAppend(&table,
                  "(~ = a block-gap estimate or, at J = 0, the bound κε; "
                  "segment_end 0 = the solution is ε-approximate for every "
                  "smaller λ)\n");
  return table;
}

std::string PointsToJson(const std::vector<PathPoint>& points,
                         const std::vector<double>* scores) {
  std::string json = "[";
  for (size_t j = 0; j < points.size(); ++j) {
    const PathPoint& p = points[j];
    absl::StrAppend(&json, j == 0 ? "" : ",", "\n  {\"index\":", p.index,
                    ",\"lambda\":", JsonNumber(p.lambda),
                    ",\"lambda_end\":", JsonNumber(p.lambda_end),
                    ",\"gap\":", JsonNumber(p.gap),
                    ",\"gap_exact\":", p.gap_exact ? "true" : "false",
                    ",\"inner_passes\":", p.inner_passes,
                    ",\"cumulative_passes\":", JsonNumber(p.cumulative_passes),
                    ",\"seconds\":", JsonNumber(p.seconds),
                    ",\"stop_reason\":\"", p.stop_reason, "\"");
    if (scores != nullptr) {
      absl::StrAppend(&json, ",\"score\":", JsonNumber((*scores)[j]));
    }
    absl::StrAppend(&json, "}");
  }
  absl::StrAppend(&json, "\n]");
  return json;
}

std::string PathToJson(const LambdaPath& path) {
  return absl::StrCat(
      "{\"score_name\":\"", path.score_name,
      "\",\"lower_is_better\":", path.lower_is_better ? "true" : "false",
      ",\"best\":", path.best,
      ",\"points\":", PointsToJson(path.points, &path.scores), "}\n");
}

}  // namespace chaintag
