// Python item sequences (python-crfsuite's and sklearn-crfsuite's data: one
// item per token, a list of attribute names or a dict of features) to
// chaintag Sentences with attribute lists, as the CRFsuite reader makes
// them, so that training, tagging and the model file treat both alike.
//
// Item forms, exactly as python-crfsuite reads them:
//   ["a", "b"]            attributes a and b, value 1 (a tuple or set too);
//   {"a": 2.5}            attribute a, value 2.5 (an int or any number);
//   {"a": "x"}            attribute "a:x", value 1 (b"x" too, as UTF-8);
//   {"a": True / False}   attribute a, value 1 / 0 (an attribute of value 0
//                         is no feature, so it is not kept);
//   {"a": {"b": 1.5}}     attribute "a:b", value 1.5 (nested dicts and
//                         lists prefix their attributes with "a:").
// Names are str (UTF-8) or bytes. Anything else (a non-string name, a value
// that is not a number, str, dict, list or set, a non-finite value) raises
// TypeError or chaintag.InvalidArgumentError naming X[i][t].
//
// Thread-safety: every function needs the GIL (it reads Python objects).

#ifndef CHAINTAG_PYTHON_PYTHON_ITEMS_H_
#define CHAINTAG_PYTHON_PYTHON_ITEMS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "corpora/item_name_interner.h"
#include "corpora/sentence.h"
#include "pybind11/pybind11.h"

namespace chaintag {

// Fills `sentence`'s attribute lists (num_attributes 0; buffers reused)
// from the item sequence `xseq`, and its tags from `yseq` unless it is
// None (then tags are cleared); `index` (≥ 0) names the sequence in
// messages ("X[index]"), -1 names none. A yseq whose length is not xseq's
// raises chaintag.InvalidArgumentError. With `interner`, names are interned
// there (Sentence::item_ids), else kept in the sentence.
void ReadItemSequence(pybind11::handle xseq, pybind11::handle yseq, int index,
                      Sentence* sentence, ItemNameInterner* interner = nullptr);

// One sequence's items as dicts {attribute name: value}: the attributes
// ReadItemSequence makes, with the values as given (double) and those of 0
// kept, as python-crfsuite's ItemSequence.items() returns them.
pybind11::list ItemDicts(pybind11::handle xseq);

// A list of item sequences and their labels, converted on arrival and held
// compactly (the Python objects can go): chaintag.ItemSequences.
class ItemSequences {
 public:
  // One sequence; `yseq` may be None only for data that is not trained on.
  void Append(pybind11::handle xseq, pybind11::handle yseq);
  // Every sequence of X (and y, a sequence of label sequences, or None).
  void Extend(pybind11::handle xs, pybind11::handle ys);

  // Copies of `other`'s sequences, after these.
  void Add(const ItemSequences& other);

  int size() const { return static_cast<int>(sentences_.size()); }
  int64_t num_items() const { return num_items_; }
  int64_t num_attributes() const { return num_attributes_; }
  int num_distinct_names() const { return interner_.size(); }
  std::vector<Sentence>& sentences() { return sentences_; }
  // Hands the sentences over (training takes them); this becomes empty.
  std::vector<Sentence> Take();

 private:
  ItemNameInterner interner_;
  std::vector<Sentence> sentences_;
  int64_t num_items_ = 0;
  int64_t num_attributes_ = 0;
};

void RegisterItemSequences(pybind11::module_& module);

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_PYTHON_ITEMS_H_
