// Bundle: stacked chain models that tag tokens column by column, e.g.
// word -> POS -> chunk (-> NER). Each stage is a ChainModel that reads some
// of the columns available so far ("word", then every earlier stage's
// column) and writes one more: its best labeling in the model's output
// scheme. The manifest (tagging/bundle.proto) names the stages, their model
// files and the columns they read and write; a bundle on disk is a directory
// holding `bundle.textproto` and the model files it names.
//
// Stages are greedy: each later stage reads the earlier stages' best
// labelings. Decoding options (constrained Viterbi, n-best, margins) are
// those of ChainModel::PredictNBest; n-best applies to the last stage only,
// margins to every stage when asked for.
//
// Thread-safety: a Bundle is immutable after Load/Create; const methods are
// safe from any thread, each thread with its own BundleScratch.

#ifndef CHAINTAG_TAGGING_BUNDLE_H_
#define CHAINTAG_TAGGING_BUNDLE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/corpus.pb.h"
#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "tagging/bundle.pb.h"

namespace chaintag {

// The manifest's file name inside a bundle directory.
inline constexpr char kBundleManifestName[] = "bundle.textproto";
// The column that holds the tokens themselves.
inline constexpr char kWordColumn[] = "word";

struct BundleOptions {
  // Only labelings valid in each model's training scheme (no I-X after O in
  // IOB2, the IOBES rules); no effect on NONE models such as POS taggers.
  bool constrained = true;
  // Labelings of the last stage to return (≥ 1), best first.
  int nbest = 1;
  // Every stage's margin between its best and second-best labeling (costs
  // a 2-best decode per stage).
  bool margins = false;
};

// What one stage produced for a sentence.
struct StageOutput {
  // The best labeling, in the model's output scheme: the stage's column.
  std::vector<std::string> tags;
  // Its score ⟨w, φ(x, y)⟩ (under the model's training scheme).
  double score = 0;
  // Best minus second-best score, when margins were asked for or this is
  // the last stage with nbest ≥ 2 (+∞ when only one labeling exists).
  std::optional<double> margin;
  // Last stage with nbest ≥ 2: up to nbest labelings (output scheme) and
  // their scores, best first (the first equals `tags`). Empty otherwise.
  std::vector<std::vector<std::string>> nbest_tags;
  std::vector<double> nbest_scores;
};

// Reusable buffers for tagging one sentence after another.
struct BundleScratch {
  TagScratch tag;
  Decoded decoded;
  Sentence sentence;
  std::vector<std::string> converted;
};

class Bundle {
 public:
  // `path` is a bundle directory or its manifest file; model paths in the
  // manifest are relative to the manifest's directory. Errors name the
  // manifest or the model file at fault.
  static absl::StatusOr<Bundle> Load(const std::string& path);

  // From a manifest and the stages' models (models[i] for stages[i]; the
  // stages' `model` fields are used only in messages). Validates as Load
  // does; `source` names the manifest in errors.
  static absl::StatusOr<Bundle> Create(const BundleManifest& manifest,
                                       std::vector<ChainModel> models,
                                       const std::string& source);

  Bundle(Bundle&&) = default;
  Bundle& operator=(Bundle&&) = default;

  const BundleManifest& manifest() const { return manifest_; }
  int num_stages() const { return static_cast<int>(stages_.size()); }
  const std::string& stage_name(int i) const { return stages_[i].name; }
  // The column stage i writes.
  const std::string& stage_column(int i) const { return stages_[i].column; }
  const ChainModel& stage_model(int i) const { return stages_[i].model; }
  // Whether stage i writes chunk tags (output scheme IOB1, IOB2 or IOBES).
  bool is_chunking(int i) const;
  // "word", then each stage's column, in order.
  std::vector<std::string> columns() const;
  // The stage that writes `column`, or -1.
  int FindStage(const std::string& column) const;

  // Runs every stage on `words` (one sentence); `outputs` gets one entry
  // per stage. An empty sentence gives empty outputs.
  absl::Status Tag(const std::vector<std::string>& words,
                   const BundleOptions& options, BundleScratch* scratch,
                   std::vector<StageOutput>* outputs) const;

 private:
  struct Stage {
    std::string name;
    std::string column;
    std::string model_path;  // for messages
    ChainModel model;
    // Per model attribute: 0 = "word", s + 1 = stage s's column.
    std::vector<int> inputs;
    // Per model attribute: re-encode into this scheme (UNSPECIFIED = no).
    std::vector<TagScheme> input_schemes;
  };

  Bundle(BundleManifest manifest, std::vector<Stage> stages)
      : manifest_(std::move(manifest)), stages_(std::move(stages)) {}

  BundleManifest manifest_;
  std::vector<Stage> stages_;
};

// Parses a manifest in text format; errors name `path`.
absl::StatusOr<BundleManifest> ReadBundleManifest(const std::string& path);

// Writes `manifest` in text format to `path` (temporary file + rename).
absl::Status WriteBundleManifest(const BundleManifest& manifest,
                                 const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_BUNDLE_H_
