#include "tagging/bundle.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_io.h"
#include "base/paths.h"
#include "corpora/tag_scheme.h"
#include "google/protobuf/text_format.h"

namespace chaintag {
namespace {

bool IsChunkScheme(TagScheme scheme) {
  return scheme == IOB1 || scheme == IOB2 || scheme == IOBES;
}

bool IsDirectory(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::StatusOr<BundleManifest> ReadBundleManifest(const std::string& path) {
  BundleManifest manifest;
  absl::Status status = ReadTextProto(path, "", &manifest);
  if (!status.ok()) return status;
  return manifest;
}

absl::Status WriteBundleManifest(const BundleManifest& manifest,
                                 const std::string& path) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(manifest, &text)) {
    return absl::InternalError("cannot print the bundle manifest");
  }
  text = absl::StrCat(
      "# chaintag bundle: stages run in order; model paths are relative to "
      "this directory.\n",
      text);
  return WriteFileAtomically(path, text, "the bundle manifest");
}

absl::StatusOr<Bundle> Bundle::Load(const std::string& path) {
  const std::string manifest_path =
      IsDirectory(path) ? absl::StrCat(path, "/", kBundleManifestName) : path;
  absl::StatusOr<BundleManifest> manifest = ReadBundleManifest(manifest_path);
  if (!manifest.ok()) return manifest.status();
  const std::string dir = DirName(manifest_path);
  std::vector<ChainModel> models;
  for (int i = 0; i < manifest->stages_size(); ++i) {
    const BundleStage& stage = manifest->stages(i);
    if (stage.model().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(manifest_path, ": stage ", i + 1, " (",
                       stage.name().empty() ? stage.writes() : stage.name(),
                       ") names no model file"));
    }
    const std::string model_path = ResolvePath(dir, stage.model());
    absl::StatusOr<ChainModel> model = ChainModel::Load(model_path);
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat(manifest_path, ": stage ", i + 1, ": ",
                                       model.status().message()));
    }
    models.push_back(std::move(*model));
  }
  return Create(*manifest, std::move(models), manifest_path);
}

absl::StatusOr<Bundle> Bundle::Create(const BundleManifest& manifest,
                                      std::vector<ChainModel> models,
                                      const std::string& source) {
  if (manifest.stages_size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the bundle has no stages"));
  }
  if (static_cast<int>(models.size()) != manifest.stages_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", manifest.stages_size(), " stages but ",
                     models.size(), " models"));
  }
  // Column name -> writer (0 = word, s + 1 = stage s).
  std::vector<std::string> columns = {kWordColumn};
  std::vector<TagScheme> column_schemes = {NONE};
  std::vector<Stage> stages;
  for (int i = 0; i < manifest.stages_size(); ++i) {
    const BundleStage& spec = manifest.stages(i);
    ChainModel& model = models[i];
    const std::string name = spec.name().empty() ? spec.writes() : spec.name();
    const std::string where =
        absl::StrCat(source, ": stage ", i + 1, " (", name,
                     spec.model().empty() ? "" : ", ", spec.model(), ")");
    if (spec.writes().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": `writes` (the column it writes) is missing"));
    }
    for (const std::string& column : columns) {
      if (column == spec.writes()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": column '", spec.writes(), "' is already ",
            column == kWordColumn ? "the tokens"
                                  : "written by an earlier stage"));
      }
    }
    if (!model.header().has_input_format()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the model has no CoNLL input format (an OCR model?)"));
    }
    const int num_attributes =
        model.header().input_format().attribute_columns_size();
    if (spec.inputs_size() != num_attributes) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the model reads ", num_attributes,
                       " attribute column(s), the stage lists ",
                       spec.inputs_size(), " input(s)"));
    }
    Stage stage{name, spec.writes(), spec.model(), std::move(model), {}, {}};
    for (const BundleInput& input : spec.inputs()) {
      int source_column = -1;
      for (size_t c = 0; c < columns.size(); ++c) {
        if (columns[c] == input.column()) source_column = static_cast<int>(c);
      }
      if (source_column < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": reads column '", input.column(),
                         "', which no earlier stage writes (available: ",
                         absl::StrJoin(columns, ", "), ")"));
      }
      if (input.scheme() != TAG_SCHEME_UNSPECIFIED &&
          (!IsChunkScheme(input.scheme()) ||
           !IsChunkScheme(column_schemes[source_column]))) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": column '", input.column(), "' (",
            TagSchemeName(column_schemes[source_column]),
            ") cannot be re-encoded in ", TagSchemeName(input.scheme()),
            "; only chunk columns convert between iob1, iob2 and iobes"));
      }
      stage.inputs.push_back(source_column);
      stage.input_schemes.push_back(input.scheme());
    }
    columns.push_back(spec.writes());
    column_schemes.push_back(stage.model.header().output_scheme());
    stages.push_back(std::move(stage));
  }
  return Bundle(manifest, std::move(stages));
}

bool Bundle::is_chunking(int i) const {
  return IsChunkScheme(stages_[i].model.header().output_scheme());
}

std::vector<std::string> Bundle::columns() const {
  std::vector<std::string> columns = {kWordColumn};
  for (const Stage& stage : stages_) columns.push_back(stage.column);
  return columns;
}

int Bundle::FindStage(const std::string& column) const {
  for (int i = 0; i < num_stages(); ++i) {
    if (stages_[i].column == column) return i;
  }
  return -1;
}

absl::Status Bundle::Tag(const std::vector<std::string>& words,
                         const BundleOptions& options, BundleScratch* scratch,
                         std::vector<StageOutput>* outputs) const {
  if (options.nbest < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nbest must be at least 1, got ", options.nbest));
  }
  outputs->resize(stages_.size());
  const int T = static_cast<int>(words.size());
  for (size_t s = 0; s < stages_.size(); ++s) {
    const Stage& stage = stages_[s];
    StageOutput& out = (*outputs)[s];
    const bool last = s + 1 == stages_.size();
    out.tags.clear();
    out.score = 0;
    out.margin.reset();
    out.nbest_tags.clear();
    out.nbest_scores.clear();
    if (T == 0) continue;

    // The stage's input columns, row-major as Sentence keeps them.
    Sentence& sentence = scratch->sentence;
    const int A = static_cast<int>(stage.inputs.size());
    sentence.num_attributes = A;
    sentence.attributes.resize(static_cast<size_t>(T) * A);
    for (int a = 0; a < A; ++a) {
      const int column = stage.inputs[a];
      const std::vector<std::string>* values =
          column == 0 ? &words : &(*outputs)[column - 1].tags;
      if (stage.input_schemes[a] != TAG_SCHEME_UNSPECIFIED) {
        scratch->converted = ConvertTags(
            *values, stages_[column - 1].model.header().output_scheme(),
            stage.input_schemes[a]);
        values = &scratch->converted;
      }
      for (int t = 0; t < T; ++t) {
        sentence.attributes[static_cast<size_t>(t) * A + a] = (*values)[t];
      }
    }

    // A stacked stage reads raw text without documents: each sentence is
    // its own document.
    absl::Status stacked = stage.model.AddDocumentAttributes(
        absl::MakeSpan(&sentence, 1), &scratch->tag);
    if (!stacked.ok()) {
      return absl::Status(
          stacked.code(),
          absl::StrCat("stage ", stage.name, ": ", stacked.message()));
    }

    DecodeOptions decode;
    decode.constrained = options.constrained;
    decode.nbest = last ? options.nbest : 1;
    if (options.margins && decode.nbest < 2) decode.nbest = 2;
    absl::Status status = stage.model.PredictNBest(
        sentence, decode, &scratch->tag, &scratch->decoded);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("stage ", stage.name,
                                                      ": ", status.message()));
    }
    const Decoded& decoded = scratch->decoded;
    out.tags = stage.model.ToOutputTags(decoded.labelings[0]);
    out.score = decoded.scores[0];
    out.margin = decoded.margin;
    if (last && options.nbest >= 2) {
      for (size_t k = 0; k < decoded.labelings.size() &&
                         k < static_cast<size_t>(options.nbest);
           ++k) {
        out.nbest_tags.push_back(
            stage.model.ToOutputTags(decoded.labelings[k]));
        out.nbest_scores.push_back(decoded.scores[k]);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace chaintag
