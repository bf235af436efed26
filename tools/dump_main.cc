// dump: what a trained model has learnt (tagging/model_dump.h): its labels,
// transition weights and, per label, the attributes that weigh most, by
// name.
//
//   dump --model=M [--top=N] [--all] [--names_from=TRAINING_FILE]
//
// Names come from the model file when it keeps them
// (model.keep_feature_names), else from --names_from, a file in the model's
// input format (its training file), whose features are extracted to name
// the buckets; without either the buckets are shown.

#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "base/paths.h"
#include "models/chain_model.h"
#include "tagging/model_dump.h"

ABSL_FLAG(std::string, model, "", "Model file written by train.");
ABSL_FLAG(int, top, 20, "Attributes listed per label, by descending weight.");
ABSL_FLAG(bool, all, false,
          "Also list every non-zero attribute weight, one a line.");
ABSL_FLAG(std::string, names_from, "",
          "Name the attributes from this file (the model's input format, "
          "e.g. its training file) when the model keeps no names, or "
          "instead of them.");

namespace chaintag {
namespace {

int Run() {
  const std::string model_path = ResolveUserPath(absl::GetFlag(FLAGS_model));
  if (model_path.empty()) {
    std::cerr << "dump: --model is required\n";
    return 1;
  }
  absl::StatusOr<ChainModel> model = ChainModel::Load(model_path);
  if (!model.ok()) {
    std::cerr << "dump: " << model.status().message() << "\n";
    return 1;
  }
  DumpOptions options;
  options.top = absl::GetFlag(FLAGS_top);
  options.all = absl::GetFlag(FLAGS_all);
  ModelFeatureNames names;
  const std::string names_from = absl::GetFlag(FLAGS_names_from);
  if (!names_from.empty()) {
    absl::StatusOr<ModelFeatureNames> recovered =
        RecoverFeatureNames(*model, ResolveUserPath(names_from));
    if (!recovered.ok()) {
      std::cerr << "dump: " << recovered.status().message() << "\n";
      return 1;
    }
    names = *std::move(recovered);
    options.names_source = names_from;
  } else {
    names = FeatureNamesFromModel(model->header());
    options.names_source = "the model file";
  }
  absl::Status written = WriteModelDump(*model, names, options, &std::cout);
  if (!written.ok()) {
    std::cerr << "dump: " << written.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "dump --model=M [--top=N] [--all] [--names_from=FILE]: a model's "
      "labels, transitions and heaviest attributes per label");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
