// The solver runs whose checkpoints seed the checkpoint fuzzer: a small
// multiclass problem and one config per solver family (bcfw variants with
// corners, caches and boxes among them). make_seeds writes a checkpoint of
// each, its fingerprint the config's index, and the fuzzer resumes the
// config that index names, so that a mutated checkpoint reaches the
// solver's LoadState and the passes after it.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_FUZZ_SOLVER_SETUPS_H_
#define CHAINTAG_FUZZ_SOLVER_SETUPS_H_

#include <vector>

#include "solvers/multiclass_problem_testing.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {
namespace fuzzing {

// 12 examples, 3 features, 3 classes; the same on every machine.
MulticlassProblem SolverSetupProblem();

// Each config runs 6 passes (epochs), a gap check every 2.
std::vector<SolverConfig> SolverSetupConfigs();

}  // namespace fuzzing
}  // namespace chaintag

#endif  // CHAINTAG_FUZZ_SOLVER_SETUPS_H_
