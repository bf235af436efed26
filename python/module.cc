// The `chaintag` Python extension module: train, tag and evaluate from
// Python (python/README.md; types and docs in python/chaintag.pyi).
//
// Thread-safety: see each part's file; import runs once per interpreter.

#include "pybind11/pybind11.h"
#include "python/bindings.h"
#include "python/python_items.h"
#include "python/status_exceptions.h"

PYBIND11_MODULE(_chaintag, module) {
  module.doc() =
      "Linear-chain structured SVM sequence tagging: Model, Bundle, train, "
      "evaluate.";
  chaintag::RegisterExceptions(module);
  chaintag::RegisterItemSequences(module);
  chaintag::RegisterModel(module);
  chaintag::RegisterBundle(module);
  chaintag::RegisterTrain(module);
  chaintag::RegisterEvaluate(module);
}
