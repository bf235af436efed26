// Bundles on tiny models trained by the test on a synthetic `word POS chunk`
// corpus (so it runs without the corpora): a POS stage reading words, a
// chunk stage reading words and POS, loading from a directory or a manifest
// file, tagging through both stages, n-best and margins, the errors a
// broken bundle gives (each naming the manifest or the model file), and
// scoring a stage on predicted and on gold inputs (bundle_eval.h).

#include "tagging/bundle.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpora/conll_reader.h"
#include "corpora/tag_scheme.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pipeline/pipeline.h"
#include "tagging/bundle_eval.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Three sentence shapes with words drawn in turn from small sets.
std::string SyntheticCorpus(int num_sentences) {
  const std::vector<std::string> nouns = {"dog", "cat", "bird", "horse"};
  const std::vector<std::string> verbs = {"saw", "chased", "liked"};
  const std::vector<std::string> names = {"John", "Mary", "Anna"};
  std::string out;
  for (int i = 0; i < num_sentences; ++i) {
    const std::string& noun = nouns[i % nouns.size()];
    const std::string& noun2 = nouns[(i / 3) % nouns.size()];
    const std::string& verb = verbs[i % verbs.size()];
    const std::string& name = names[i % names.size()];
    switch (i % 3) {
      case 0:
        absl::StrAppend(&out, "the DT B-NP\n", noun, " NN I-NP\n", verb,
                        " VBD B-VP\n", "a DT B-NP\n", noun2, " NN I-NP\n");
        break;
      case 1:
        absl::StrAppend(&out, name, " NNP B-NP\n", verb, " VBD B-VP\n",
                        "the DT B-NP\n", "big JJ I-NP\n", noun, " NN I-NP\n");
        break;
      case 2:
        absl::StrAppend(&out, name, " NNP B-NP\n", "sat VBD B-VP\n",
                        "on IN B-PP\n", "the DT B-NP\n", noun, " NN I-NP\n");
        break;
    }
    out += ". . O\n\n";
  }
  return out;
}

PipelineConfig StageConfig(const std::string& name,
                           const std::vector<int>& columns, int label,
                           TagScheme scheme) {
  PipelineConfig config;
  config.set_name(name);
  config.mutable_corpus()->set_train("bundle_train.txt");
  ConllFormat* format = config.mutable_corpus()->mutable_format();
  for (int c : columns) format->add_attribute_columns(c);
  format->set_label_column(label);
  format->set_tag_scheme(scheme);
  FeatureConfig* features = config.mutable_features();
  features->set_num_buckets(4096);
  for (int a = 0; a < static_cast<int>(columns.size()); ++a) {
    for (int offset : {-1, 0, 1}) {
      TemplatePart* part = features->add_templates()->add_parts();
      part->set_offset(offset);
      part->set_attribute(a);
    }
  }
  config.mutable_model()->set_normalize_loss(false);
  SolverConfig* solver = config.mutable_solver();
  solver->set_name("bcfw");
  solver->set_lambda(0.01);
  solver->set_max_passes(10);
  solver->set_num_threads(1);
  config.set_eval_every(0);
  config.set_model_path(absl::StrCat("bundle/", name, ".model"));
  config.set_log_path(absl::StrCat(name, ".log.jsonl"));
  return config;
}

// The chunk stage is a second-order model (trigrams, and a pair template on
// the POS tag), so every test here runs both orders through a bundle.
PipelineConfig SecondOrder(PipelineConfig config) {
  config.mutable_model()->set_order(2);
  TemplatePart* part =
      config.mutable_features()->add_pair_templates()->add_parts();
  part->set_attribute(1);
  return config;
}

std::string PosChunkManifest() {
  return R"pb(
    name: "tiny"
    stages {
      name: "pos"
      model: "pos.model"
      inputs { column: "word" }
      writes: "pos"
    }
    stages {
      name: "chunk"
      model: "chunk.model"
      inputs { column: "word" }
      inputs { column: "pos" }
      writes: "chunk"
    }
  )pb";
}

class BundleTest : public ::testing::Test {
 protected:
  // Trains the two models once for the whole suite.
  static void SetUpTestSuite() {
    std::filesystem::create_directories(TmpDir() + "/bundle");
    WriteFile(TmpDir() + "/bundle_train.txt", SyntheticCorpus(120));
    PipelineOptions options;
    options.corpora_root = TmpDir();
    options.output_dir = TmpDir();
    options.progress = nullptr;
    for (const PipelineConfig& config :
         {StageConfig("pos", {0}, 1, NONE),
          SecondOrder(StageConfig("chunk", {0, 1}, 2, IOB2))}) {
      absl::StatusOr<PipelineResult> result = RunPipeline(config, options);
      ASSERT_TRUE(result.ok()) << result.status();
    }
    WriteFile(Dir() + "/bundle.textproto", PosChunkManifest());
  }

  static std::string Dir() { return TmpDir() + "/bundle"; }
};

TEST_F(BundleTest, TagsThroughEveryStage) {
  absl::StatusOr<Bundle> bundle = Bundle::Load(Dir());
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  ASSERT_EQ(bundle->num_stages(), 2);
  EXPECT_THAT(bundle->columns(), ElementsAre("word", "pos", "chunk"));
  EXPECT_FALSE(bundle->is_chunking(0));
  EXPECT_TRUE(bundle->is_chunking(1));
  EXPECT_EQ(bundle->FindStage("chunk"), 1);
  EXPECT_EQ(bundle->FindStage("ner"), -1);
  absl::StatusOr<ChainModel> chunk_model =
      ChainModel::Load(Dir() + "/chunk.model");
  ASSERT_TRUE(chunk_model.ok());
  EXPECT_EQ(chunk_model->order(), 2);

  BundleScratch scratch;
  std::vector<StageOutput> outputs;
  ASSERT_TRUE(bundle
                  ->Tag({"Mary", "sat", "on", "the", "cat", "."}, {}, &scratch,
                        &outputs)
                  .ok());
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_THAT(outputs[0].tags,
              ElementsAre("NNP", "VBD", "IN", "DT", "NN", "."));
  EXPECT_THAT(outputs[1].tags,
              ElementsAre("B-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O"));
  EXPECT_FALSE(outputs[1].margin.has_value());
  EXPECT_TRUE(outputs[1].nbest_tags.empty());

  // The chunk stage reads the POS stage's tags, not gold ones: the same
  // result as the chunk model on those columns.
  absl::StatusOr<ChainModel> chunker = ChainModel::Load(Dir() + "/chunk.model");
  ASSERT_TRUE(chunker.ok());
  Sentence sentence;
  sentence.num_attributes = 2;
  const std::vector<std::string> words = {"the", "dog",  "liked",
                                          "a",   "bird", "."};
  ASSERT_TRUE(bundle->Tag(words, {}, &scratch, &outputs).ok());
  for (size_t t = 0; t < words.size(); ++t) {
    sentence.attributes.push_back(words[t]);
    sentence.attributes.push_back(outputs[0].tags[t]);
  }
  TagScratch tag_scratch;
  std::vector<std::string> tags;
  ASSERT_TRUE(chunker->Tag(sentence, &tag_scratch, &tags).ok());
  EXPECT_EQ(tags, outputs[1].tags);
  EXPECT_THAT(tags, ElementsAre("B-NP", "I-NP", "B-VP", "B-NP", "I-NP", "O"));

  // Also from the manifest file itself; an empty sentence tags to nothing.
  absl::StatusOr<Bundle> again = Bundle::Load(Dir() + "/bundle.textproto");
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(again->Tag({}, {}, &scratch, &outputs).ok());
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[0].tags.empty());
  EXPECT_TRUE(outputs[1].tags.empty());
}

TEST_F(BundleTest, NBestAndMargins) {
  absl::StatusOr<Bundle> bundle = Bundle::Load(Dir());
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  BundleScratch scratch;
  std::vector<StageOutput> best;
  const std::vector<std::string> words = {"John", "chased", "the", "horse"};
  ASSERT_TRUE(bundle->Tag(words, {}, &scratch, &best).ok());

  BundleOptions options;
  options.nbest = 4;
  options.margins = true;
  std::vector<StageOutput> outputs;
  ASSERT_TRUE(bundle->Tag(words, options, &scratch, &outputs).ok());
  // n-best is the last stage's; margins are every stage's.
  EXPECT_TRUE(outputs[0].nbest_tags.empty());
  ASSERT_TRUE(outputs[0].margin.has_value());
  EXPECT_GE(*outputs[0].margin, 0);
  const StageOutput& chunk = outputs[1];
  ASSERT_EQ(chunk.nbest_tags.size(), 4u);
  ASSERT_EQ(chunk.nbest_scores.size(), 4u);
  EXPECT_EQ(chunk.nbest_tags[0], best[1].tags);
  EXPECT_EQ(chunk.tags, best[1].tags);
  EXPECT_DOUBLE_EQ(chunk.nbest_scores[0], chunk.score);
  for (int k = 1; k < 4; ++k) {
    EXPECT_LE(chunk.nbest_scores[k], chunk.nbest_scores[k - 1]);
    EXPECT_NE(chunk.nbest_tags[k], chunk.nbest_tags[0]);
  }
  ASSERT_TRUE(chunk.margin.has_value());
  EXPECT_DOUBLE_EQ(*chunk.margin,
                   chunk.nbest_scores[0] - chunk.nbest_scores[1]);
  // Constrained (the default), every labeling is valid IOB2.
  for (const std::vector<std::string>& tags : chunk.nbest_tags) {
    EXPECT_EQ(ConvertTags(tags, IOB2, IOB2), tags);
  }

  options.nbest = 0;
  EXPECT_FALSE(bundle->Tag(words, options, &scratch, &outputs).ok());
}

void ExpectLoadError(const std::string& manifest, const std::string& fragment,
                     const std::string& name) {
  const std::string path = absl::StrCat(TmpDir(), "/bundle/", name);
  WriteFile(path, manifest);
  absl::StatusOr<Bundle> bundle = Bundle::Load(path);
  ASSERT_FALSE(bundle.ok()) << manifest;
  EXPECT_THAT(bundle.status().message(), HasSubstr(path));
  EXPECT_THAT(bundle.status().message(), HasSubstr(fragment));
}

TEST_F(BundleTest, RejectsBrokenBundlesNamingTheFile) {
  ExpectLoadError("stages { name: \"pos\" model: \"pos.model\" writes: \"pos\"",
                  "", "unparsable.textproto");
  ExpectLoadError("name: \"empty\"", "no stages", "empty.textproto");
  ExpectLoadError(R"pb(stages {
                         model: "missing.model"
                         inputs { column: "word" }
                         writes: "pos"
                       })pb",
                  "missing.model", "missing.textproto");
  // The chunk stage before the POS stage: "pos" is not available yet.
  ExpectLoadError(
      R"pb(stages {
             model: "chunk.model"
             inputs { column: "word" }
             inputs { column: "pos" }
             writes: "chunk"
           })pb",
      "reads column 'pos', which no earlier stage writes (available: word)",
      "order.textproto");
  ExpectLoadError(
      R"pb(stages {
             model: "chunk.model"
             inputs { column: "word" }
             writes: "chunk"
           })pb",
      "the model reads 2 attribute column(s), the stage lists 1 input(s)",
      "arity.textproto");
  ExpectLoadError(R"pb(stages {
                         model: "pos.model"
                         inputs { column: "word" }
                         writes: "word"
                       })pb",
                  "column 'word' is already the tokens", "word.textproto");
  ExpectLoadError(
      R"pb(stages {
             model: "pos.model"
             inputs { column: "word" }
             writes: "pos"
           }
           stages {
             model: "pos.model"
             inputs { column: "word" }
             writes: "pos"
           })pb",
      "already written by an earlier stage", "twice.textproto");
  ExpectLoadError(R"pb(stages {
                         model: "pos.model"
                         inputs { column: "word" }
                       })pb",
                  "`writes`", "nowrites.textproto");
  // Only chunk columns can be re-encoded.
  ExpectLoadError(
      R"pb(stages {
             model: "pos.model"
             inputs { column: "word" }
             writes: "pos"
           }
           stages {
             model: "chunk.model"
             inputs { column: "word" }
             inputs { column: "pos" scheme: IOB1 }
             writes: "chunk"
           })pb",
      "cannot be re-encoded in iob1", "scheme.textproto");
  // A damaged model file is named.
  WriteFile(Dir() + "/broken.model", "not a model");
  ExpectLoadError(R"pb(stages {
                         model: "broken.model"
                         inputs { column: "word" }
                         writes: "pos"
                       })pb",
                  "broken.model", "damaged.textproto");
}

TEST_F(BundleTest, ReencodesChunkColumnsForLaterStages) {
  // A third stage that reads the chunk column, re-encoded in IOB1 or as
  // written, and whose model is the chunker again (so it takes the chunk
  // tags for its POS column): each must give what that model gives on the
  // column it should have read.
  auto manifest_with = [](const std::string& scheme) {
    return absl::StrCat(PosChunkManifest(), R"pb(
                          stages { name: "third" model: "chunk.model"
                                   inputs { column: "word" }
                                   inputs { column: "chunk")pb",
                        scheme.empty() ? "" : " scheme: ", scheme, R"pb(}
                                                                        writes: "third"
      })pb");
  };
  WriteFile(Dir() + "/iob1.textproto", manifest_with("IOB1"));
  WriteFile(Dir() + "/asis.textproto", manifest_with(""));
  absl::StatusOr<Bundle> iob1 = Bundle::Load(Dir() + "/iob1.textproto");
  absl::StatusOr<Bundle> asis = Bundle::Load(Dir() + "/asis.textproto");
  ASSERT_TRUE(iob1.ok()) << iob1.status();
  ASSERT_TRUE(asis.ok()) << asis.status();
  BundleScratch scratch;
  std::vector<StageOutput> a, b;
  const std::vector<std::string> words = {"the", "cat", "saw", "a", "dog"};
  ASSERT_TRUE(iob1->Tag(words, {}, &scratch, &a).ok());
  ASSERT_TRUE(asis->Tag(words, {}, &scratch, &b).ok());
  EXPECT_EQ(a[1].tags, b[1].tags);
  // The model's input is B-NP I-NP B-VP B-NP I-NP as is, and
  // I-NP I-NP I-VP I-NP I-NP in IOB1: different feature values.
  Sentence sentence;
  sentence.num_attributes = 2;
  for (size_t t = 0; t < words.size(); ++t) {
    sentence.attributes.push_back(words[t]);
    sentence.attributes.push_back(ConvertTags(a[1].tags, IOB2, IOB1)[t]);
  }
  TagScratch tag_scratch;
  std::vector<std::string> tags;
  ASSERT_TRUE(iob1->stage_model(2).Tag(sentence, &tag_scratch, &tags).ok());
  EXPECT_EQ(tags, a[2].tags);
  for (size_t t = 0; t < words.size(); ++t) {
    sentence.attributes[2 * t + 1] = b[1].tags[t];
  }
  ASSERT_TRUE(asis->stage_model(2).Tag(sentence, &tag_scratch, &tags).ok());
  EXPECT_EQ(tags, b[2].tags);
}

TEST_F(BundleTest, ScoresStagesOnPredictedAndGoldInputs) {
  absl::StatusOr<Bundle> bundle = Bundle::Load(Dir());
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  const std::string path = TmpDir() + "/bundle_train.txt";
  ConllFormat words_and_chunks;
  words_and_chunks.add_attribute_columns(0);
  words_and_chunks.set_label_column(2);
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(path, words_and_chunks);
  ASSERT_TRUE(sentences.ok()) << sentences.status();
  absl::StatusOr<StageScore> predicted =
      ScoreBundleStage(*bundle, 1, *sentences, {});
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  EXPECT_EQ(predicted->tokens, 120 * 6);
  EXPECT_DOUBLE_EQ(predicted->f1, 100);  // the training sentences
  EXPECT_THAT(predicted->report, HasSubstr("processed 720 tokens"));

  absl::StatusOr<std::vector<Sentence>> gold =
      ReadConllFile(path, bundle->stage_model(1).header().input_format());
  ASSERT_TRUE(gold.ok()) << gold.status();
  for (bool constrained : {true, false}) {
    absl::StatusOr<StageScore> score =
        ScoreModel(bundle->stage_model(1), *gold, constrained);
    ASSERT_TRUE(score.ok()) << score.status();
    EXPECT_DOUBLE_EQ(score->f1, 100);
    EXPECT_DOUBLE_EQ(score->accuracy, 100);
  }
  // Sentences without gold tags cannot be scored, nor missing stages.
  (*sentences)[0].tags.clear();
  EXPECT_FALSE(ScoreBundleStage(*bundle, 1, *sentences, {}).ok());
  EXPECT_FALSE(ScoreBundleStage(*bundle, 2, *sentences, {}).ok());
}

}  // namespace
}  // namespace chaintag
