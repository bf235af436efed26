// Python sentences to chaintag Sentences, and tags back to Python lists,
// with as few copies as the per-call overhead of model.tag allows: each
// token's UTF-8 bytes are copied once into a reused Sentence, and tags
// become Python strings through a cache (a model has a handful of tags).
//
// A sentence is a sequence of tokens. A token is a str when the model reads
// one column, or a tuple (or list) of str, one per column the model reads,
// in the order of its attribute columns (for a CoNLL-2000 chunker: word,
// POS). A str sentence is refused: it would be read as characters.
//
// Thread-safety: every function needs the GIL; a TagStrings belongs to one
// model and is used only with the GIL held.

#ifndef CHAINTAG_PYTHON_PYTHON_SENTENCES_H_
#define CHAINTAG_PYTHON_PYTHON_SENTENCES_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "corpora/sentence.h"
#include "pybind11/pybind11.h"

namespace chaintag {

// A new reference to a list or tuple of `sequence`'s items (any other
// sequence or iterable is copied into a list once). A str or bytes, or
// something not iterable, raises TypeError naming it as `name`, or
// `name[index]` when index >= 0.
pybind11::object SequenceItems(pybind11::handle sequence, const char* name,
                               int index = -1);

// Fills sentence->attributes and num_attributes (capacity reused) from
// `tokens`. Raises TypeError for anything but str tokens or tuples of str,
// and chaintag.InvalidArgumentError when a token's column count is not
// `num_columns`; `index` (≥ 0) names the sentence of a batch in messages.
void ReadSentence(pybind11::handle tokens, int num_columns, int index,
                  Sentence* sentence);

// The Python strings of tag names, made once each.
class TagStrings {
 public:
  // A new list of Python strings for `tags`.
  pybind11::list ToList(const std::vector<std::string>& tags);
  // A new reference to `tag`'s string.
  pybind11::str Get(const std::string& tag);

 private:
  absl::flat_hash_map<std::string, pybind11::str> cache_;
};

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_PYTHON_SENTENCES_H_
