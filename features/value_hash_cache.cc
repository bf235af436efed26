#include "features/value_hash_cache.h"

#include <algorithm>
#include <cstring>

namespace chaintag {
namespace {

size_t WordsFor(size_t bytes) { return (bytes + 7) / 8; }

}  // namespace

ValueHashCache::ValueHashCache(int max_types, size_t max_words)
    : max_words_(max_words) {
  size_t capacity = 16;
  while (capacity < static_cast<size_t>(std::max(max_types, 1))) {
    capacity *= 2;
  }
  slots_.resize(capacity);
  mask_ = capacity - 1;
  // Reserved whole, so that growing never holds two copies; pages are
  // resident only once written.
  store_.reserve(max_words);
  store_.push_back(0);
}

void ValueHashCache::Clear() {
  std::fill(slots_.begin(), slots_.end(), Slot());
  store_.resize(1);
  size_ = 0;
  ++clears_;
}

absl::Span<const uint64_t> ValueHashCache::Find(int attribute, uint64_t key,
                                                absl::string_view value) const {
  const uint64_t head =
      uint64_t{static_cast<uint32_t>(attribute)} << 32 | value.size();
  for (uint64_t i = key & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.entry == 0) return {};
    if (slot.key != key || store_[slot.entry] != head) continue;
    const uint64_t* entry = &store_[slot.entry];
    const size_t num_hashes = entry[1];
    const uint64_t* hashes = entry + 2;
    if (value.empty() ||
        std::memcmp(hashes + num_hashes, value.data(), value.size()) == 0) {
      return absl::Span<const uint64_t>(hashes, num_hashes);
    }
  }
}

void ValueHashCache::Insert(int attribute, uint64_t key,
                            absl::string_view value,
                            absl::Span<const uint64_t> hashes) {
  const size_t words = 2 + hashes.size() + WordsFor(value.size());
  if (words > max_words_ || value.size() > UINT32_MAX) return;
  if (2 * static_cast<size_t>(size_ + 1) > slots_.size() ||
      store_.size() + words > max_words_) {
    Clear();
  }
  const size_t entry = store_.size();
  store_.resize(entry + words, 0);
  store_[entry] =
      uint64_t{static_cast<uint32_t>(attribute)} << 32 | value.size();
  store_[entry + 1] = hashes.size();
  std::copy(hashes.begin(), hashes.end(), store_.begin() + entry + 2);
  if (!value.empty()) {
    std::memcpy(&store_[entry + 2 + hashes.size()], value.data(), value.size());
  }
  uint64_t i = key & mask_;
  while (slots_[i].entry != 0) i = (i + 1) & mask_;
  slots_[i] = Slot{key, static_cast<uint32_t>(entry)};
  ++size_;
}

}  // namespace chaintag
