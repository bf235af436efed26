// regpath's figure: two plots stacked in one SVG document, the held-out
// score along the regularization path and the cumulative effective passes
// of the path and of both grids, against λ on a log axis.
//
// Thread-safety: pure functions over their arguments, apart from the file
// WriteRegpathSvg writes.

#ifndef CHAINTAG_TOOLS_REGPATH_PLOT_H_
#define CHAINTAG_TOOLS_REGPATH_PLOT_H_

#include <string>

#include "absl/status/status.h"
#include "pipeline/regpath.h"

namespace chaintag {

// The SVG document of `run`.
std::string RegpathSvg(const RegpathRun& run);

// Writes RegpathSvg(run) to `path` (atomically).
absl::Status WriteRegpathSvg(const RegpathRun& run, const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_TOOLS_REGPATH_PLOT_H_
