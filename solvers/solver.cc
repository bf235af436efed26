#include "solvers/solver.h"

#include "absl/status/status.h"

namespace chaintag {

absl::Status Solver::SetDistribution(const BlockDistribution&) {
  return absl::UnimplementedError(
      "only bcfw and active_set_bcfw train distributed");
}

double ResolveLambda(const SolverConfig& config, int num_examples) {
  if (config.lambda() > 0) return config.lambda();
  return num_examples > 0 ? 1.0 / num_examples : 1.0;
}

void SetCertificate(const DualityGap& gap, PassRecord* record) {
  record->set_primal(gap.primal);
  record->set_dual(gap.dual);
  record->set_gap(gap.gap);
  record->set_gap_exact(true);
}

void SetCertificate(const DualityGap& gap, TrainingSummary* summary) {
  summary->set_primal(gap.primal);
  summary->set_dual(gap.dual);
  summary->set_gap(gap.gap);
}

}  // namespace chaintag
