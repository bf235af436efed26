// chaintag.Model: a ChainModel seen from Python. One sentence at a time
// (tag, nbest, margins) the GIL is held and the model's own buffers are
// reused, which keeps a call's overhead to converting the tokens in and
// the tags out; tag_batch converts the whole batch, releases the GIL and
// tags it on a pool of threads, each with its own buffers, the results in
// input order whatever the thread count.
//
// A stacked model (first stage + document attributes) tags a sentence given
// alone as a one-sentence document; tag_document tags sentences together.
//
// Thread-safety: the ChainModel is immutable and shared; the per-object
// buffers are used only with the GIL held, so Python threads may share a
// Model.

#ifndef CHAINTAG_PYTHON_PY_MODEL_H_
#define CHAINTAG_PYTHON_PY_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corpora/sentence.h"
#include "models/chain_model.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "python/max_marginals.h"
#include "python/python_sentences.h"

namespace chaintag {

class PyModel {
 public:
  explicit PyModel(ChainModel model);

  static std::unique_ptr<PyModel> Load(const std::string& path);
  void Save(const std::string& path) const;

  pybind11::list Tag(pybind11::handle tokens);
  pybind11::list TagBatch(pybind11::handle sentences, int threads);
  pybind11::list TagDocument(pybind11::handle sentences);
  pybind11::tuple NBest(pybind11::handle tokens, int k,
                        std::optional<bool> constrained);
  pybind11::array_t<double> Margins(pybind11::handle tokens,
                                    std::optional<bool> constrained);
  // Forward–backward label marginals, T×L.
  pybind11::array_t<double> Marginals(pybind11::handle tokens,
                                      std::optional<bool> constrained);
  // log P(labels | tokens) under p(y) ∝ exp(score(y)); labels are names of
  // the model's labels.
  double LogProbability(pybind11::handle tokens, pybind11::handle labels,
                        std::optional<bool> constrained);
  // {(attribute, label): weight} for every non-zero attribute weight, and
  // {(previous, next): weight} for the transitions.
  pybind11::dict StateFeatures() const;
  pybind11::dict TransitionFeatures() const;

  const ChainModel& model() const { return *model_; }
  int num_columns() const { return num_columns_; }
  // Whether tokens are items (attribute lists or feature dicts, the
  // CRFsuite layout) rather than columns.
  bool reads_items() const { return items_; }
  bool stacked() const { return model_->first_stage() != nullptr; }
  std::string Repr() const;

 private:
  // Reads one sentence's tokens (columns or items) into `sentence`;
  // `index` ≥ 0 names it within a batch.
  void ReadTokens(pybind11::handle tokens, int index, Sentence* sentence) const;
  std::vector<Sentence> ReadSentences(pybind11::handle sentences) const;
  // Reads `tokens` into sentence_, and for a stacked model adds the
  // document attributes of it as a one-sentence document.
  const Sentence& ReadOne(pybind11::handle tokens);
  // A length × L numpy array of `values` (row-major, labels in id order).
  pybind11::array_t<double> LabelTable(int length,
                                       const std::vector<double>& values) const;
  bool Constrained(std::optional<bool> constrained) const {
    return constrained.value_or(model_->header().constrained_decoding());
  }

  std::shared_ptr<const ChainModel> model_;
  int num_columns_;
  bool items_;
  // Buffers of the one-sentence calls (GIL held).
  Sentence sentence_;
  std::vector<Sentence> stacked_;
  TagScratch scratch_;
  MaxMarginalScratch marginals_;
  Decoded decoded_;
  std::vector<std::string> tags_;
  std::vector<std::vector<std::string>> document_tags_;
  std::vector<double> scores_;
  TagStrings strings_;
};

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_PY_MODEL_H_
