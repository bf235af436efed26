// chaintag.evaluate: conlleval's figures (corpora/conlleval.h) for gold
// and predicted tag sequences, as the `evaluate` CLI computes them from a
// tagged file: the same scorer, fed sentence by sentence.
//
// Thread-safety: one scorer per call.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "corpora/conlleval.h"
#include "pybind11/stl.h"
#include "python/bindings.h"
#include "python/status_exceptions.h"

namespace chaintag {
namespace {

namespace py = pybind11;

using TagSequences = std::vector<std::vector<std::string>>;

void CheckShapes(const TagSequences& gold, const TagSequences& predicted) {
  if (gold.size() != predicted.size()) {
    throw StatusException(absl::InvalidArgumentError(absl::StrCat(
        gold.size(), " gold sentences, ", predicted.size(), " predicted")));
  }
  for (size_t i = 0; i < gold.size(); ++i) {
    if (gold[i].size() != predicted[i].size()) {
      throw StatusException(absl::InvalidArgumentError(
          absl::StrCat("sentence ", i, ": ", gold[i].size(), " gold tags, ",
                       predicted[i].size(), " predicted")));
    }
  }
}

py::dict Counts(const ChunkCounts& counts) {
  py::dict out;
  out["precision"] = counts.precision();
  out["recall"] = counts.recall();
  out["f1"] = counts.f1();
  out["phrases"] = counts.gold;
  out["found"] = counts.found;
  out["correct"] = counts.correct;
  return out;
}

py::dict Evaluate(const TagSequences& gold, const TagSequences& predicted,
                  bool raw, const std::string& outside) {
  CheckShapes(gold, predicted);
  ConllevalOptions options;
  options.raw = raw;
  options.outside = outside;
  ConllevalScorer scorer(std::move(options));
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < gold.size(); ++i) {
      scorer.AddSentence(gold[i], predicted[i]);
    }
    scorer.Finish();
  }
  py::dict out;
  out["precision"] = scorer.precision();
  out["recall"] = scorer.recall();
  out["f1"] = scorer.f1();
  out["accuracy"] = scorer.accuracy();
  out["tokens"] = scorer.tokens();
  out["correct_tags"] = scorer.correct_tags();
  const ChunkCounts overall = scorer.overall();
  out["phrases"] = overall.gold;
  out["found"] = overall.found;
  out["correct"] = overall.correct;
  py::dict by_type;
  for (const auto& [type, counts] : scorer.by_type()) {
    by_type[py::str(type)] = Counts(counts);
  }
  out["by_type"] = by_type;
  out["report"] = scorer.Report();
  return out;
}

}  // namespace

void RegisterEvaluate(py::module_& module) {
  module.def("evaluate", &Evaluate, py::arg("gold"), py::arg("pred"),
             py::kw_only(), py::arg("raw") = false, py::arg("outside") = "O",
             "conlleval's figures for gold and predicted tag sequences (one "
             "list of tags per sentence): precision, recall, f1, accuracy "
             "(percent), tokens, phrases, found, correct, correct_tags, "
             "by_type (per chunk type) and report (the script's text).");
}

}  // namespace chaintag
