// The parts of the `chaintag` Python module, one registration function per
// concern (models, bundles, training, evaluation), called by module.cc in
// this order: the exceptions first, then Model, which train() returns.
//
// Thread-safety: registration runs once, at import, with the GIL held.

#ifndef CHAINTAG_PYTHON_BINDINGS_H_
#define CHAINTAG_PYTHON_BINDINGS_H_

#include "pybind11/pybind11.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

// chaintag.Model (model_binding.cc).
void RegisterModel(pybind11::module_& module);
// chaintag.Bundle (bundle_binding.cc).
void RegisterBundle(pybind11::module_& module);
// chaintag.train (train_binding.cc).
void RegisterTrain(pybind11::module_& module);
// chaintag.evaluate (evaluate_binding.cc).
void RegisterEvaluate(pybind11::module_& module);

// A TrainingSummary as a dict: solver, lambda, passes, oracle_calls,
// seconds, primal, dual, gap, stop_reason, num_examples, dim (the fields
// the summary has).
pybind11::dict TrainingSummaryToDict(const TrainingSummary& summary);

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_BINDINGS_H_
