#include "corpora/item_name_interner.h"

#include <xxhash.h>

namespace chaintag {
namespace {

uint64_t Xxh3(absl::string_view name) {
  return XXH3_64bits(name.data(), name.size());
}

}  // namespace

ItemNameInterner::ItemNameInterner(HashFunction hash)
    : hash_(hash != nullptr ? hash : &Xxh3),
      table_(std::make_shared<ItemNameTable>()) {}

int32_t ItemNameInterner::Add(absl::string_view name) {
  table_->text.append(name.data(), name.size());
  table_->ends.push_back(static_cast<int32_t>(table_->text.size()));
  return static_cast<int32_t>(table_->ends.size()) - 1;
}

int32_t ItemNameInterner::Intern(absl::string_view name) {
  const int32_t next = static_cast<int32_t>(table_->ends.size());
  auto [found, added] = ids_.try_emplace(hash_(name), next);
  if (added) return Add(name);
  if (table_->name(found->second) == name) return found->second;
  auto [other, new_name] = collided_.try_emplace(std::string(name), next);
  return new_name ? Add(name) : other->second;
}

}  // namespace chaintag
