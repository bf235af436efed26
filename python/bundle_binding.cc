// chaintag.Bundle: a bundle of stacked models (tagging/bundle.h) tagging
// raw text as `tag --pipeline --format=json` does, through the same stream
// (tagging/text_tagging.h): each sentence comes back as the dict of its
// JSON line (tokens, byte offsets, each stage's tags and chunk spans, and
// scores, margins or n-best when asked for).
//
// Thread-safety: the Bundle and Tokenizer are immutable; text is tagged with
// the GIL released on buffers of the call's own; `tag` reuses the object's
// buffers with the GIL held.

#include <Python.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/parallel.h"
#include "corpora/tokenizer.h"
#include "pybind11/stl.h"
#include "python/bindings.h"
#include "python/status_exceptions.h"
#include "tagging/bundle.h"
#include "tagging/tag_output.h"
#include "tagging/text_tagging.h"

namespace chaintag {
namespace {

namespace py = pybind11;

BundleOptions MakeOptions(bool constrained, int nbest, bool margins) {
  if (nbest < 1) {
    throw StatusException(absl::InvalidArgumentError(
        absl::StrCat("nbest must be at least 1, got ", nbest)));
  }
  BundleOptions options;
  options.constrained = constrained;
  options.nbest = nbest;
  options.margins = margins;
  return options;
}

// JSON lines (one record each) to a list of dicts, with the json module:
// the dicts are exactly what `tag --format=json` prints.
py::list ParseJsonLines(const std::string& lines) {
  py::object loads = py::module_::import("json").attr("loads");
  py::list out;
  for (absl::string_view line :
       absl::StrSplit(lines, '\n', absl::SkipEmpty())) {
    out.append(loads(py::str(line.data(), line.size())));
  }
  return out;
}

class PyBundle {
 public:
  PyBundle(Bundle bundle, std::unique_ptr<Tokenizer> tokenizer)
      : bundle_(std::move(bundle)),
        tokenizer_(std::move(tokenizer)),
        stages_(OutputStages(bundle_)) {}

  static std::unique_ptr<PyBundle> Load(const std::string& path) {
    absl::StatusOr<Bundle> bundle;
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer;
    {
      py::gil_scoped_release release;
      bundle = Bundle::Load(path);
      if (bundle.ok()) tokenizer = Tokenizer::Create();
    }
    Bundle loaded = ValueOrThrow(std::move(bundle));
    return std::make_unique<PyBundle>(std::move(loaded),
                                      ValueOrThrow(std::move(tokenizer)));
  }

  py::list TagText(const std::string& text, bool paragraphs, bool constrained,
                   int nbest, bool margins, int threads) {
    if (threads < 1 || threads > kMaxThreads) {
      throw StatusException(absl::InvalidArgumentError(absl::StrCat(
          "threads must be between 1 and ", kMaxThreads, ", got ", threads)));
    }
    TextTaggingOptions options;
    options.format = OutputFormat::kJson;
    options.decode = MakeOptions(constrained, nbest, margins);
    options.paragraphs = paragraphs;
    options.threads = threads;
    std::string out;
    absl::Status status;
    {
      py::gil_scoped_release release;
      std::istringstream input(text);
      status = TagTextStream(bundle_, *tokenizer_, &input, "text", options,
                             [&out](const std::string& lines) {
                               out.append(lines);
                               return absl::OkStatus();
                             });
    }
    ThrowIfError(status);
    return ParseJsonLines(out);
  }

  // Pre-tokenized words: the record tag_text gives, without offsets.
  py::dict Tag(const std::vector<std::string>& words, bool constrained,
               int nbest, bool margins) {
    const BundleOptions options = MakeOptions(constrained, nbest, margins);
    sentence_.tokens = words;
    sentence_.offsets.clear();
    ThrowIfError(
        bundle_.Tag(sentence_.tokens, options, &scratch_, &sentence_.outputs));
    std::string line;
    ThrowIfError(AppendJson(stages_, sentence_, &line));
    py::list records = ParseJsonLines(line);
    return records.empty() ? py::dict() : py::dict(records[0]);
  }

  std::vector<std::string> Columns() const { return bundle_.columns(); }

  std::vector<std::string> Stages() const {
    std::vector<std::string> names;
    for (int i = 0; i < bundle_.num_stages(); ++i) {
      names.push_back(bundle_.stage_name(i));
    }
    return names;
  }

 private:
  Bundle bundle_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<OutputStage> stages_;
  // Tag's buffers (GIL held).
  BundleScratch scratch_;
  TaggedSentence sentence_;
};

}  // namespace

void RegisterBundle(py::module_& module) {
  py::class_<PyBundle>(module, "Bundle",
                       "Stacked models (word -> pos -> chunk ...) that tag "
                       "raw text; a directory with bundle.textproto.")
      .def_static("load", &PyBundle::Load, py::arg("path"),
                  "Loads a bundle directory (or its bundle.textproto).")
      .def("tag_text", &PyBundle::TagText, py::arg("text"), py::kw_only(),
           py::arg("paragraphs") = false, py::arg("constrained") = true,
           py::arg("nbest") = 1, py::arg("margins") = false,
           py::arg("threads") = 1,
           "Tokenizes and tags raw text (one sentence per line, or "
           "paragraphs split into sentences); one dict per sentence, as "
           "`tag --pipeline --format=json` prints it.")
      .def("tag", &PyBundle::Tag, py::arg("tokens"), py::kw_only(),
           py::arg("constrained") = true, py::arg("nbest") = 1,
           py::arg("margins") = false,
           "Tags already tokenized words; the dict tag_text gives, without "
           "offsets.")
      .def_property_readonly("columns", &PyBundle::Columns,
                             "\"word\", then each stage's column.")
      .def_property_readonly("stages", &PyBundle::Stages, "Stage names.");
}

}  // namespace chaintag
