#include "pipeline/lambda_path.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace chaintag {

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

PathPointRecord PointRecord(const PathPoint& point) {
  PathPointRecord record;
  record.set_index(point.index);
  record.set_lambda(point.lambda);
  record.set_lambda_end(point.lambda_end);
  record.set_gap(point.gap);
  record.set_gap_exact(point.gap_exact);
  record.set_inner_passes(point.inner_passes);
  record.set_cumulative_passes(point.cumulative_passes);
  record.set_seconds(point.seconds);
  record.set_stop_reason(point.stop_reason);
  return record;
}

LambdaPathRecord PathRecord(const LambdaPath& path) {
  LambdaPathRecord record;
  record.set_score_name(path.score_name);
  record.set_lower_is_better(path.lower_is_better);
  record.set_best(path.best);
  for (size_t j = 0; j < path.points.size(); ++j) {
    PathPointRecord* point = record.add_points();
    *point = PointRecord(path.points[j]);
    point->set_score(path.scores[j]);
  }
  return record;
}

absl::StatusOr<std::string> RecordToJson(
    const google::protobuf::Message& record) {
  google::protobuf::util::JsonPrintOptions options;
  // The names the .proto gives (as the training log's pass records have
  // them), and a field a line, so that the files read and diff by line.
  options.preserve_proto_field_names = true;
  options.add_whitespace = true;
  std::string json;
  const auto status =
      google::protobuf::util::MessageToJsonString(record, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot print ",
                                            record.GetTypeName(),
                                            " as JSON: ", status.ToString()));
  }
  return json;
}

}  // namespace chaintag
