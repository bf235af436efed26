// regpath's study of a config's regularization path (Osokin et al. 2016, §4
// and Fig. 4): the path run as `train` runs it with `lambda: "path"` (λ
// chosen on dev, that breakpoint's model saved and scored on test) and the
// grid-search baseline it replaces, 2^grid_high … 2^grid_low solved to gap
// ε cold and warm-started on the same problem. Reports the path's table,
// the choice and the passes of all three as ratios, and writes them as a
// RegpathRecord (lambda_path.proto) in JSON.
//
// Thread-safety: RunRegpath may be called from one thread at a time per
// output path, as RunPipeline; the solvers use solver.num_threads threads.

#ifndef CHAINTAG_PIPELINE_REGPATH_H_
#define CHAINTAG_PIPELINE_REGPATH_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/lambda_path.pb.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/task.h"
#include "solvers/regularization_path.h"

namespace chaintag {

struct RegpathOptions {
  // Also solve the grid of powers of two from 2^grid_high down to
  // 2^grid_low, cold and warm-started.
  bool grid = true;
  int grid_high = 15;
  int grid_low = -15;
  // The JSON file; empty = <name>.regpath.json. Relative to the run's
  // output_dir.
  std::string json_path;
  // The table, the choice and the ratios (the path's and the grid's
  // progress lines go to the run's progress stream); nullptr = none.
  std::FILE* report = stdout;
};

struct RegpathRun {
  std::string name;  // the config's, or "model"
  // The path run: result.path, the chosen model's path and test scores.
  PipelineResult result;
  // The grid's points, largest λ first; empty without the grid.
  std::vector<PathPoint> grid_cold;
  std::vector<PathPoint> grid_warm;
  std::string json_path;  // resolved, written
};

// Runs the path on `config` (its lambda must be "path"; its model and log
// default to <name>.regpath.model and <name>.regpath.log.json; it is not
// retrained on train + dev), then the grid on the same problem with the
// same solver options, reports, and writes the JSON file.
absl::StatusOr<RegpathRun> RunRegpath(PipelineConfig config,
                                      const PipelineOptions& options,
                                      const RegpathOptions& regpath);

// The run as the JSON file records it.
RegpathRecord ToRegpathRecord(const RegpathRun& run);

// The passes of the path and of both grids over the grid's λ range, and
// the grids' as multiples of the path's, for `config`'s path options.
std::string FormatGridComparison(const RegpathRun& run,
                                 const PipelineConfig& config,
                                 const RegpathOptions& regpath);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_REGPATH_H_
