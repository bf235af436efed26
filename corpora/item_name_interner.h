// Interns attribute names into an ItemNameTable (corpora/sentence.h) that
// many sentences share, so that an attribute in a sentence costs a 4-byte
// id, not its name: a corpus has far fewer distinct names than attributes
// (CoNLL-2003 with sklearn-crfsuite's tutorial features: 68k names, 2.5M
// attributes).
//
// Thread-safety: one thread at a time; the table may be read (by id) while
// no Intern call runs.

#ifndef CHAINTAG_CORPORA_ITEM_NAME_INTERNER_H_
#define CHAINTAG_CORPORA_ITEM_NAME_INTERNER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "corpora/sentence.h"

namespace chaintag {

class ItemNameInterner {
 public:
  using HashFunction = uint64_t (*)(absl::string_view name);

  // `hash` is XXH3 unless a test gives one that collides.
  explicit ItemNameInterner(HashFunction hash = nullptr);

  // The id of `name`, added to the table when it is new (ids 0, 1, ...).
  int32_t Intern(absl::string_view name);

  std::shared_ptr<const ItemNameTable> table() const { return table_; }
  int size() const { return static_cast<int>(table_->ends.size()); }

 private:
  int32_t Add(absl::string_view name);

  HashFunction hash_;
  std::shared_ptr<ItemNameTable> table_;
  // By the name's 64-bit hash: a small table whose lookups stay in cache
  // (the name is compared with the table's on a hit); a name whose hash
  // another name already has goes to `collided_`.
  absl::flat_hash_map<uint64_t, int32_t> ids_;
  absl::flat_hash_map<std::string, int32_t> collided_;
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_ITEM_NAME_INTERNER_H_
