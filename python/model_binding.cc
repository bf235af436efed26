// chaintag.Model: loading, tagging one sentence, a batch on threads or a
// document, n-best labelings and max-marginals (see py_model.h).

#include <Python.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/batch_pool.h"
#include "base/parallel.h"
#include "corpora/corpus.pb.h"
#include "models/chain_layout.h"
#include "pybind11/stl.h"
#include "python/bindings.h"
#include "python/py_model.h"
#include "python/python_items.h"
#include "python/status_exceptions.h"
#include "tagging/model_dump.h"

namespace chaintag {
namespace {

namespace py = pybind11;

// As `tag --threads`.

// The model's CoNLL columns; 0 for a model without an input format (OCR
// pixels), which cannot tag text.
int NumColumns(const ChainModel& model) {
  return model.header().has_input_format()
             ? model.header().input_format().attribute_columns_size()
             : 0;
}

bool ReadsItems(const ChainModel& model) {
  return model.header().input_format().layout() == ConllFormat::CRFSUITE;
}

void CheckCanTagText(const ChainModel& model) {
  if (NumColumns(model) == 0 && !ReadsItems(model)) {
    throw StatusException(absl::FailedPreconditionError(
        "the model has no CoNLL input format (an OCR pixel model?); it "
        "cannot tag tokens"));
  }
}

// Tags one sentence as the CLI does: a stacked model's sentence as a
// document of its own.
absl::Status TagOne(const ChainModel& model, const Sentence& sentence,
                    TagScratch* scratch, std::vector<std::string>* tags,
                    std::vector<std::vector<std::string>>* document_tags) {
  if (model.first_stage() == nullptr) {
    return model.Tag(sentence, scratch, tags);
  }
  absl::Status status = model.TagDocument(absl::MakeConstSpan(&sentence, 1),
                                          scratch, document_tags);
  if (status.ok()) *tags = std::move((*document_tags)[0]);
  return status;
}

// The first failure, in input order, naming the sentence.
void ThrowFirstError(const std::vector<absl::Status>& statuses) {
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (!statuses[i].ok()) {
      throw StatusException(absl::Status(
          statuses[i].code(),
          absl::StrCat("sentence ", i, ": ", statuses[i].message())));
    }
  }
}

std::string SchemeName(TagScheme scheme) { return TagScheme_Name(scheme); }

}  // namespace

PyModel::PyModel(ChainModel model)
    : model_(std::make_shared<const ChainModel>(std::move(model))),
      num_columns_(NumColumns(*model_)),
      items_(ReadsItems(*model_)) {}

void PyModel::ReadTokens(py::handle tokens, int index,
                         Sentence* sentence) const {
  if (items_) {
    ReadItemSequence(tokens, py::none(), index, sentence);
  } else {
    ReadSentence(tokens, num_columns_, index, sentence);
  }
}

std::vector<Sentence> PyModel::ReadSentences(py::handle sentences) const {
  py::object fast = SequenceItems(sentences, "sentences");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  std::vector<Sentence> batch(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    ReadTokens(items[i], static_cast<int>(i), &batch[i]);
  }
  return batch;
}

std::unique_ptr<PyModel> PyModel::Load(const std::string& path) {
  absl::StatusOr<ChainModel> model;
  {
    py::gil_scoped_release release;
    model = ChainModel::Load(path);
  }
  return std::make_unique<PyModel>(ValueOrThrow(std::move(model)));
}

void PyModel::Save(const std::string& path) const {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = model_->Save(path);
  }
  ThrowIfError(status);
}

const Sentence& PyModel::ReadOne(py::handle tokens) {
  CheckCanTagText(*model_);
  ReadTokens(tokens, -1, &sentence_);
  if (!stacked()) return sentence_;
  stacked_.resize(1);
  stacked_[0] = sentence_;
  ThrowIfError(
      model_->AddDocumentAttributes(absl::MakeSpan(stacked_), &scratch_));
  return stacked_[0];
}

py::list PyModel::Tag(py::handle tokens) {
  CheckCanTagText(*model_);
  ReadTokens(tokens, -1, &sentence_);
  ThrowIfError(TagOne(*model_, sentence_, &scratch_, &tags_, &document_tags_));
  return strings_.ToList(tags_);
}

py::list PyModel::TagBatch(py::handle sentences, int threads) {
  if (threads < 1 || threads > kMaxThreads) {
    throw StatusException(absl::InvalidArgumentError(absl::StrCat(
        "threads must be between 1 and ", kMaxThreads, ", got ", threads)));
  }
  CheckCanTagText(*model_);
  const std::vector<Sentence> batch = ReadSentences(sentences);
  const int n = static_cast<int>(batch.size());
  std::vector<std::vector<std::string>> tags(n);
  std::vector<absl::Status> statuses(n);
  {
    py::gil_scoped_release release;
    // No more threads than sentences: each helper costs a thread start.
    const int workers = std::max(1, std::min(threads, n));
    std::vector<TagScratch> scratch(workers);
    std::vector<std::vector<std::vector<std::string>>> document_tags(workers);
    const ChainModel& model = *model_;
    BatchPool pool(workers, [&](int worker, int i) {
      statuses[i] = TagOne(model, batch[i], &scratch[worker], &tags[i],
                           &document_tags[worker]);
    });
    pool.Start(n);
    pool.Finish();
  }
  ThrowFirstError(statuses);
  py::list out(n);
  for (int i = 0; i < n; ++i) {
    PyList_SET_ITEM(out.ptr(), i, strings_.ToList(tags[i]).release().ptr());
  }
  return out;
}

py::list PyModel::TagDocument(py::handle sentences) {
  CheckCanTagText(*model_);
  const std::vector<Sentence> document = ReadSentences(sentences);
  std::vector<std::vector<std::string>> tags;
  absl::Status status;
  {
    py::gil_scoped_release release;
    TagScratch scratch;
    status = model_->TagDocument(document, &scratch, &tags);
  }
  ThrowIfError(status);
  py::list out(tags.size());
  for (size_t i = 0; i < tags.size(); ++i) {
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i),
                    strings_.ToList(tags[i]).release().ptr());
  }
  return out;
}

py::tuple PyModel::NBest(py::handle tokens, int k,
                         std::optional<bool> constrained) {
  const Sentence& sentence = ReadOne(tokens);
  DecodeOptions options;
  options.nbest = k;
  options.constrained = Constrained(constrained);
  ThrowIfError(model_->PredictNBest(sentence, options, &scratch_, &decoded_));
  const size_t m = decoded_.labelings.size();
  py::list labelings(m);
  for (size_t j = 0; j < m; ++j) {
    PyList_SET_ITEM(labelings.ptr(), static_cast<Py_ssize_t>(j),
                    strings_.ToList(model_->ToOutputTags(decoded_.labelings[j]))
                        .release()
                        .ptr());
  }
  py::array_t<double> scores(static_cast<py::ssize_t>(m));
  std::copy(decoded_.scores.begin(), decoded_.scores.end(),
            scores.mutable_data());
  return py::make_tuple(std::move(labelings), std::move(scores));
}

py::array_t<double> PyModel::Margins(py::handle tokens,
                                     std::optional<bool> constrained) {
  const Sentence& sentence = ReadOne(tokens);
  ThrowIfError(ComputeMaxMarginals(*model_, sentence, Constrained(constrained),
                                   &marginals_, &scores_));
  return LabelTable(sentence.size(), scores_);
}

py::array_t<double> PyModel::Marginals(py::handle tokens,
                                       std::optional<bool> constrained) {
  const Sentence& sentence = ReadOne(tokens);
  ThrowIfError(ComputeLabelMarginals(*model_, sentence,
                                     Constrained(constrained), &marginals_,
                                     &scores_)
                   .status());
  return LabelTable(sentence.size(), scores_);
}

py::array_t<double> PyModel::LabelTable(
    int length, const std::vector<double>& values) const {
  const py::ssize_t L = model_->labels().size();
  py::array_t<double> out({static_cast<py::ssize_t>(length), L});
  if (!values.empty()) {
    std::memcpy(out.mutable_data(), values.data(),
                values.size() * sizeof(double));
  }
  return out;
}

double PyModel::LogProbability(py::handle tokens, py::handle labels,
                               std::optional<bool> constrained) {
  const Sentence& sentence = ReadOne(tokens);
  py::object fast = SequenceItems(labels, "labels");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  if (n != sentence.size()) {
    throw StatusException(absl::InvalidArgumentError(absl::StrCat(
        n, " labels for a sequence of ", sentence.size(), " items")));
  }
  std::vector<int32_t> ids(n);
  for (Py_ssize_t t = 0; t < n; ++t) {
    const std::string label =
        py::cast<std::string>(PySequence_Fast_GET_ITEM(fast.ptr(), t));
    ids[t] = model_->labels().Find(label);
    if (ids[t] < 0) {
      throw StatusException(absl::InvalidArgumentError(absl::StrCat(
          "labels[", t, "]: '", label, "' is not a label of the model")));
    }
  }
  return ValueOrThrow(LogProbabilityOfLabeling(
      *model_, sentence, ids, Constrained(constrained), &marginals_));
}

py::dict PyModel::StateFeatures() const {
  const ModelFeatureNames names = FeatureNamesFromModel(model_->header());
  py::dict out;
  for (const StateWeight& w : NonZeroStateWeights(*model_, names)) {
    out[py::make_tuple(w.attribute, model_->labels().Name(w.label))] = w.weight;
  }
  return out;
}

py::dict PyModel::TransitionFeatures() const {
  const LabelSet& labels = model_->labels();
  const int L = labels.size();
  const double* transition = model_->weights().tail;
  py::dict out;
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      // A pair the training labelings never showed has no feature (its
      // placeholder score is not a weight), as in CRFsuite's dumps.
      if (IsForbiddenTransition(transition[a * L + b])) continue;
      out[py::make_tuple(labels.Name(a), labels.Name(b))] =
          transition[a * L + b];
    }
  }
  return out;
}

std::string PyModel::Repr() const {
  const ModelFile& header = model_->header();
  return absl::StrCat("<chaintag.Model order=", model_->order(),
                      " labels=", model_->labels().size(),
                      " columns=", num_columns_, stacked() ? " stacked" : "",
                      " scheme=", SchemeName(header.output_scheme()), ">");
}

py::dict TrainingSummaryToDict(const TrainingSummary& summary) {
  py::dict out;
  if (summary.has_solver()) out["solver"] = summary.solver();
  if (summary.has_lambda()) out["lambda"] = summary.lambda();
  if (summary.has_passes()) out["passes"] = summary.passes();
  if (summary.has_oracle_calls()) out["oracle_calls"] = summary.oracle_calls();
  if (summary.has_seconds()) out["seconds"] = summary.seconds();
  if (summary.has_primal()) out["primal"] = summary.primal();
  if (summary.has_dual()) out["dual"] = summary.dual();
  if (summary.has_gap()) out["gap"] = summary.gap();
  if (summary.has_stop_reason()) out["stop_reason"] = summary.stop_reason();
  if (summary.has_num_examples()) out["num_examples"] = summary.num_examples();
  if (summary.has_dim()) out["dim"] = summary.dim();
  return out;
}

void RegisterModel(py::module_& module) {
  py::class_<PyModel>(module, "Model",
                      "A trained chain model (a `train` model file).")
      .def_static("load", &PyModel::Load, py::arg("path"),
                  "Loads and validates a model file.")
      .def("save", &PyModel::Save, py::arg("path"),
           "Writes the model file (atomically).")
      .def("tag", &PyModel::Tag, py::arg("tokens"),
           "Tags one sentence; returns one tag per token, in the model's "
           "output scheme, exactly as `tag --model` does.")
      .def("tag_batch", &PyModel::TagBatch, py::arg("sentences"), py::kw_only(),
           py::arg("threads") = 1,
           "Tags a list of sentences on `threads` threads with the GIL "
           "released; the result is in input order and the same for any "
           "thread count.")
      .def("tag_document", &PyModel::TagDocument, py::arg("sentences"),
           "Tags the sentences of one document together (a stacked model's "
           "document attributes come from all of them).")
      .def("nbest", &PyModel::NBest, py::arg("tokens"), py::arg("k"),
           py::kw_only(), py::arg("constrained") = py::none(),
           "The k best labelings (output scheme) and their scores (a numpy "
           "array, descending).")
      .def("margins", &PyModel::Margins, py::arg("tokens"), py::kw_only(),
           py::arg("constrained") = py::none(),
           "Max-marginal scores, a T x L numpy array: entry [t, y] is the "
           "score of the best labeling with label `labels[y]` at t.")
      .def("marginals", &PyModel::Marginals, py::arg("tokens"), py::kw_only(),
           py::arg("constrained") = py::none(),
           "Label marginals P(y_t = labels[y]) by forward-backward on the "
           "model's scores, a T x L numpy array whose rows sum to 1 "
           "(first-order models). A max-margin model's scores are not "
           "calibrated: use them to rank, not as probabilities of being "
           "right.")
      .def("log_probability", &PyModel::LogProbability, py::arg("tokens"),
           py::arg("labels"), py::kw_only(),
           py::arg("constrained") = py::none(),
           "log P(labels | tokens) under p(y) proportional to exp(score(y)) "
           "(label names as in `labels`).")
      .def("state_features", &PyModel::StateFeatures,
           "{(attribute, label): weight} for every non-zero attribute "
           "weight; attributes are named when the model keeps names "
           "(model.keep_feature_names), else 'bucket N'.")
      .def("transition_features", &PyModel::TransitionFeatures,
           "{(previous label, next label): weight}.")
      .def_property_readonly("reads_items", &PyModel::reads_items,
                             "Whether tokens are items (attribute lists or "
                             "feature dicts) rather than columns.")
      .def_property_readonly(
          "keeps_feature_names",
          [](const PyModel& self) {
            return self.model().header().names_size() > 0;
          },
          "Whether the model file keeps its attributes' names.")
      .def_property_readonly(
          "labels",
          [](const PyModel& self) { return self.model().labels().names(); },
          "Label names in id order (training scheme): the margins' columns.")
      .def_property_readonly("num_columns", &PyModel::num_columns,
                             "Columns a token has (tuple length; 1 = str).")
      .def_property_readonly(
          "attribute_columns",
          [](const PyModel& self) {
            const auto& columns =
                self.model().header().input_format().attribute_columns();
            return std::vector<int>(columns.begin(), columns.end());
          },
          "The CoNLL fields the token columns came from in training.")
      .def_property_readonly(
          "order", [](const PyModel& self) { return self.model().order(); })
      .def_property_readonly(
          "format_version",
          [](const PyModel& self) {
            return self.model().header().format_version();
          },
          "The model file format's version.")
      .def_property_readonly("stacked", &PyModel::stacked)
      .def_property_readonly(
          "constrained",
          [](const PyModel& self) {
            return self.model().header().constrained_decoding();
          },
          "Whether tag decodes only the training scheme's valid labelings.")
      .def_property_readonly(
          "train_scheme",
          [](const PyModel& self) {
            return SchemeName(self.model().header().train_scheme());
          })
      .def_property_readonly(
          "output_scheme",
          [](const PyModel& self) {
            return SchemeName(self.model().header().output_scheme());
          })
      .def_property_readonly(
          "summary",
          [](const PyModel& self) {
            return TrainingSummaryToDict(self.model().header().training());
          },
          "The training summary the model file records.")
      .def("__repr__", &PyModel::Repr);
}

}  // namespace chaintag
