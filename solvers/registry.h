// The solver registry: builds a Solver from a SolverConfig by name (bcfw,
// active_set_bcfw, fw, ssg, mp_bcfw, svrg, casimir_svrg). Its own target, so
// that depending on the Solver interface does not pull in every solver.
//
// Thread-safety: a stateless function.

#ifndef CHAINTAG_SOLVERS_REGISTRY_H_
#define CHAINTAG_SOLVERS_REGISTRY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// Checks the config's generic fields (λ, passes, gap cadence, boxes) and
// builds the named solver.
absl::StatusOr<std::unique_ptr<Solver>> CreateSolver(
    const SolverConfig& config);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_REGISTRY_H_
