// chaintag.train: the `train` CLI's run (pipeline/pipeline.h RunPipeline)
// from Python: a config file or config text, overrides by dotted path
// (base/config_override.h, the mechanism of `train --set`), the corpora
// root; returns the trained model and a summary dict. The run releases the
// GIL; progress lines go to stderr, to a Python callable (called with the
// GIL, one line at a time), or nowhere.
//
// Thread-safety: each call is its own run (its own output directory).

#include <stdio.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/config_override.h"
#include "base/file_io.h"
#include "base/interrupt.h"
#include "base/paths.h"
#include "features/bucket_rows.h"
#include "models/chain_model.h"
#include "models/model_file.pb.h"
#include "pipeline/pipeline.h"
#include "pipeline/pipeline_config.pb.h"
#include "pybind11/stl.h"
#include "python/bindings.h"
#include "python/py_model.h"
#include "python/python_items.h"
#include "python/status_exceptions.h"
#include "solvers/solver.h"

namespace chaintag {
namespace {

namespace py = pybind11;

// A config given as text rather than a path: anything with a field
// separator or a line break (a path has neither, in practice).
bool LooksLikeConfigText(const std::string& config) {
  std::error_code not_a_path;  // e.g. a text longer than a file name
  return config.find_first_of("{:\n") != std::string::npos &&
         !std::filesystem::exists(config, not_a_path);
}

PipelineConfig ReadConfig(const std::string& config) {
  if (!LooksLikeConfigText(config)) {
    return ValueOrThrow(ReadUserPipelineConfig(config));
  }
  PipelineConfig parsed;
  ThrowIfError(ParseTextProto(config, "config text", &parsed));
  return parsed;
}

// An override's value as `--set` would spell it.
std::string OverrideValue(const std::string& path, py::handle value) {
  if (py::isinstance<py::bool_>(value)) {
    return value.cast<bool>() ? "true" : "false";
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    // repr is the shortest text that reads back as the same double.
    return py::repr(value).cast<std::string>();
  }
  throw py::type_error(absl::StrCat("overrides[\"", path,
                                    "\"]: expected bool, int, float or str, "
                                    "got ",
                                    Py_TYPE(value.ptr())->tp_name));
}

void ApplyOverrides(const py::dict& overrides, PipelineConfig* config) {
  for (const auto& [key, value] : overrides) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("override keys are dotted paths (str)");
    }
    const std::string path = key.cast<std::string>();
    ThrowIfError(SetFieldByPath(path, OverrideValue(path, value), config));
  }
}

// Progress lines to a Python callable through a stdio stream
// (fopencookie), since the pipeline prints to a FILE*. A callable that
// raises is not called again; its exception is re-raised after the run.
class CallbackStream {
 public:
  explicit CallbackStream(py::object callback)
      : callback_(std::move(callback)) {
    cookie_io_functions_t functions = {};
    functions.write = &CallbackStream::Write;
    file_ = fopencookie(this, "w", functions);
    if (file_ == nullptr) {
      throw StatusException(
          absl::InternalError("cannot open the progress stream"));
    }
    setvbuf(file_, nullptr, _IOLBF, 0);
  }
  CallbackStream(const CallbackStream&) = delete;
  CallbackStream& operator=(const CallbackStream&) = delete;
  ~CallbackStream() { Close(); }

  FILE* file() const { return file_; }

  // Flushes (a last line without its newline included); then, with the
  // GIL held, re-raises what the callable raised.
  void Close() {
    if (file_ == nullptr) return;
    std::fclose(file_);
    file_ = nullptr;
    if (!pending_.empty()) Say(pending_);
    pending_.clear();
  }
  void RethrowError() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static ssize_t Write(void* cookie, const char* data, size_t size) {
    auto* self = static_cast<CallbackStream*>(cookie);
    self->pending_.append(data, size);
    size_t begin = 0;
    for (size_t end = self->pending_.find('\n'); end != std::string::npos;
         end = self->pending_.find('\n', begin)) {
      self->Say(absl::string_view(self->pending_).substr(begin, end - begin));
      begin = end + 1;
    }
    self->pending_.erase(0, begin);
    return static_cast<ssize_t>(size);
  }

  void Say(absl::string_view line) {
    py::gil_scoped_acquire acquire;
    if (error_) return;
    try {
      callback_(py::str(line.data(), line.size()));
    } catch (py::error_already_set&) {
      error_ = std::current_exception();
    }
  }

  py::object callback_;
  FILE* file_ = nullptr;
  std::string pending_;
  std::exception_ptr error_;
};

// A fresh directory for a run's files, removed when done unless the caller
// named one.
class OutputDirectory {
 public:
  explicit OutputDirectory(const std::optional<std::string>& path) {
    if (path.has_value()) {
      path_ = *path;
      std::error_code error;
      std::filesystem::create_directories(path_, error);
      if (error) {
        throw StatusException(absl::PermissionDeniedError(
            absl::StrCat(path_, ": cannot create: ", error.message())));
      }
      return;
    }
    std::string pattern =
        (std::filesystem::temp_directory_path() / "chaintag_train_XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw StatusException(absl::InternalError(
          absl::StrCat(pattern, ": cannot create a temporary directory")));
    }
    path_ = pattern;
    temporary_ = true;
  }
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  ~OutputDirectory() {
    if (!temporary_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_; }

 private:
  std::string path_;
  bool temporary_ = false;
};

py::dict Summary(const PipelineResult& result, bool kept_files) {
  py::dict out = TrainingSummaryToDict(result.summary);
  out["num_train_sentences"] = result.num_train_sentences;
  if (result.num_test_sentences > 0) {
    out["num_test_sentences"] = result.num_test_sentences;
    out["f1"] = result.test_f1;
    out["accuracy"] = result.test_accuracy;
    out["test_report"] = result.test_report;
  }
  if (result.num_dev_sentences > 0) {
    out["num_dev_sentences"] = result.num_dev_sentences;
    out["dev_f1"] = result.dev_f1;
    out["dev_accuracy"] = result.dev_accuracy;
    out["dev_report"] = result.dev_report;
  }
  if (result.test_letter_error >= 0) {
    out["train_letter_error"] = result.train_letter_error;
    out["test_letter_error"] = result.test_letter_error;
  }
  if (result.train_only_test_f1 >= 0) {
    out["train_only_f1"] = result.train_only_test_f1;
  }
  out["interrupted"] = result.interrupted;
  if (kept_files) {
    out["model_path"] = result.model_path;
    out["log_path"] = result.log_path;
  }
  return out;
}

// The log's lines (JSON, one object per pass or event), or none when the
// run wrote no log.
py::list LogLines(const std::string& path) {
  py::list lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.append(py::str(line));
  }
  return lines;
}

// One `train` run on the config's corpus, or on `given` sentences when not
// null (they are taken); the model, and the summary with the log's lines.
py::tuple RunTraining(const std::string& spec,
                      std::optional<py::dict> overrides,
                      std::optional<std::string> corpora,
                      std::optional<std::string> output_dir,
                      py::object progress, GivenSentences* given) {
  PipelineConfig pipeline_config = ReadConfig(spec);
  if (overrides.has_value()) {
    const SolverConfig file_solver = pipeline_config.solver();
    ApplyOverrides(*overrides, &pipeline_config);
    KeepOverriddenLambdaForm(file_solver, pipeline_config.mutable_solver());
  }
  OutputDirectory directory(output_dir);
  PipelineOptions options;
  options.corpora_root = corpora.has_value() ? *corpora : DefaultCorporaRoot();
  options.output_dir = directory.path();
  options.given = given;
  std::unique_ptr<CallbackStream> stream;
  if (PyCallable_Check(progress.ptr())) {
    stream = std::make_unique<CallbackStream>(progress);
    options.progress = stream->file();
  } else {
    options.progress = progress.cast<bool>() ? stderr : nullptr;
  }
  absl::StatusOr<PipelineResult> result;
  absl::StatusOr<ChainModel> model;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    // Python's own SIGINT handler would only run once the call returned.
    ScopedInterruptHandler interrupt;
    result = RunPipeline(pipeline_config, options);
    interrupted = interrupt.Interrupted();
    if (result.ok() && !interrupted) {
      model = ChainModel::Load(result->model_path);
    }
    if (stream != nullptr) stream->Close();
  }
  if (stream != nullptr) stream->RethrowError();
  if (interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  ThrowIfError(result.status());
  auto trained = std::make_unique<PyModel>(ValueOrThrow(std::move(model)));
  py::dict summary = Summary(*result, !directory.temporary());
  summary["log"] = LogLines(result->log_path);
  return py::make_tuple(py::cast(std::move(trained)), std::move(summary));
}

std::string ConfigSpec(py::object config) {
  return py::str(py::module_::import("os").attr("fspath")(config))
      .cast<std::string>();
}

py::tuple Train(py::object config, std::optional<py::dict> overrides,
                std::optional<std::string> corpora,
                std::optional<std::string> output_dir, py::object progress) {
  return RunTraining(ConfigSpec(config), overrides, corpora, output_dir,
                     progress, nullptr);
}

// Training on item sequences: `keep` copies them (a python-crfsuite
// Trainer may train again), else they are taken, which saves their memory
// during the run.
py::tuple TrainSequences(ItemSequences& train, py::object config,
                         std::optional<py::dict> overrides, ItemSequences* dev,
                         bool keep, std::optional<std::string> corpora,
                         std::optional<std::string> output_dir,
                         py::object progress) {
  GivenSentences given;
  if (keep) {
    given.train = train.sentences();
    if (dev != nullptr) given.dev = dev->sentences();
  } else {
    given.train = train.Take();
    if (dev != nullptr) given.dev = dev->Take();
  }
  return RunTraining(ConfigSpec(config), overrides, corpora, output_dir,
                     progress, &given);
}

// The model of a run on no sentences: the config's features and input
// format, no labels and no weights. It tags empty sentences only
// (python-crfsuite's Trainer.train with nothing appended writes one).
py::object EmptyModel(py::object config) {
  const PipelineConfig pipeline_config = ReadConfig(ConfigSpec(config));
  ModelFile header;
  *header.mutable_features() = pipeline_config.features();
  ConllFormat format = pipeline_config.corpus().format();
  format.set_allow_missing_label(true);
  header.set_output_scheme(format.tag_scheme());
  *header.mutable_input_format() = std::move(format);
  header.set_input_num_columns(0);
  header.set_train_scheme(pipeline_config.model().train_scheme());
  header.set_normalize_loss(pipeline_config.model().normalize_loss());
  if (pipeline_config.model().loss() != HINGE) {
    header.set_loss(pipeline_config.model().loss());
  }
  const BucketRows rows = ValueOrThrow(BucketRows::FromSorted(
      {}, static_cast<uint64_t>(pipeline_config.features().num_buckets())));
  return py::cast(std::make_unique<PyModel>(ValueOrThrow(ChainModel::Create(
      std::move(header), rows, absl::Span<const double>()))));
}

}  // namespace

void RegisterTrain(py::module_& module) {
  module.def("empty_model", &EmptyModel, py::arg("config"),
             "The model a run of `config` on no sentences gives: its "
             "features and input format, no labels, no weights; it tags "
             "only empty sentences.");
  module.def(
      "train", &Train, py::arg("config"), py::arg("overrides") = py::none(),
      py::kw_only(), py::arg("corpora") = py::none(),
      py::arg("output_dir") = py::none(), py::arg("progress") = true,
      "Trains a model as `train --config` does. `config`: a PipelineConfig "
      "text-proto file or its text; `overrides`: {dotted.path: value} "
      "applied like `--set`; `corpora`: the corpora root (default "
      "$CHAINTAG_CORPORA, else ../shared/corpora); `output_dir`: where the "
      "model and log are kept (default: a temporary directory, removed); "
      "`progress`: True (stderr), False, or a callable given each line. "
      "Returns (model, summary); summary['log'] holds the log's JSON "
      "lines.");
  module.def(
      "train_sequences", &TrainSequences, py::arg("train"), py::arg("config"),
      py::arg("overrides") = py::none(), py::kw_only(),
      py::arg("dev") = nullptr, py::arg("keep") = false,
      py::arg("corpora") = py::none(), py::arg("output_dir") = py::none(),
      py::arg("progress") = false,
      "Trains on ItemSequences (and `dev` ItemSequences scored after each "
      "pass) instead of corpus.train and corpus.dev, which must be unset; "
      "the config's corpus.format.layout must be CRFSUITE. The sequences "
      "are taken (emptied) unless `keep`. Returns (model, summary) as "
      "train does.");
}

}  // namespace chaintag
