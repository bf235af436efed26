// Sentence: one sequence of tokens as read from a corpus, with its attribute
// columns, its gold tags (when the input has them) and where it came from.
//
// Thread-safety: a plain value type; const access is safe from any thread.

#ifndef CHAINTAG_CORPORA_SENTENCE_H_
#define CHAINTAG_CORPORA_SENTENCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace chaintag {

// Attribute names interned once for many sentences (the Python item
// sequences: a corpus has far fewer distinct names than attributes).
struct ItemNameTable {
  std::string text;
  std::vector<int32_t> ends;  // name i is text[ends[i-1], ends[i])
  absl::string_view name(int32_t id) const {
    const int32_t begin = id == 0 ? 0 : ends[id - 1];
    return absl::string_view(text.data() + begin, ends[id] - begin);
  }
};

struct Sentence {
  // Attribute columns per token, row-major: attributes[t * num_attributes + a]
  // is attribute a (in the order the ConllFormat lists them) of token t.
  int num_attributes = 0;
  std::vector<std::string> attributes;

  // Attribute lists per token, for inputs that carry them instead of
  // columns (ConllFormat::CRFSUITE; num_attributes is then 0). Compact, with
  // no string per attribute: attribute k is named
  // item_names[item_name_ends[k-1], item_name_ends[k]) (from 0 for k = 0),
  // unescaped, with value item_values[k] (item_values empty when every
  // value is 1); token t has the attributes [item_begin[t],
  // item_begin[t+1]). item_begin is empty when there are no lists.
  std::string item_names;
  std::vector<int32_t> item_name_ends;
  std::vector<float> item_values;
  std::vector<int32_t> item_begin;
  // Interned instead: attribute k is named shared_item_names->name(
  // item_ids[k]), and item_names and item_name_ends are empty. The table
  // may grow while sentences are added to it, never change a name.
  std::shared_ptr<const ItemNameTable> shared_item_names;
  std::vector<int32_t> item_ids;

  // Gold tags, one per token; empty when the input has no label column.
  std::vector<std::string> tags;

  // The token lines exactly as read (line terminator and CR removed), so
  // that a tagger can echo them with its prediction appended.
  std::vector<std::string> lines;

  // Where the sentence came from, for error messages.
  std::string source;
  int64_t first_line = 0;

  // Its document's index in the input (ConllFormat says what starts one):
  // the document-level features compare a sentence with the others of its
  // document. 0 when the input marks no documents.
  int64_t document = 0;

  int size() const {
    if (num_attributes == 0) {
      return item_begin.empty() ? 0 : static_cast<int>(item_begin.size()) - 1;
    }
    return static_cast<int>(attributes.size()) / num_attributes;
  }
  bool has_items() const { return !item_begin.empty(); }
  int num_items() const {
    return static_cast<int>(
        shared_item_names != nullptr ? item_ids.size() : item_name_ends.size());
  }
  absl::string_view item_name(int k) const {
    if (shared_item_names != nullptr) {
      return shared_item_names->name(item_ids[k]);
    }
    const int32_t begin = k == 0 ? 0 : item_name_ends[k - 1];
    return absl::string_view(item_names.data() + begin,
                             item_name_ends[k] - begin);
  }
  float item_value(int k) const {
    return item_values.empty() ? 1.0f : item_values[k];
  }
  bool has_tags() const { return !tags.empty(); }
  const std::string& attribute(int t, int a) const {
    return attributes[static_cast<size_t>(t) * num_attributes + a];
  }
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_SENTENCE_H_
