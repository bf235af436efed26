#include "features/value_hash_cache.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<uint64_t> Found(const ValueHashCache& cache, int attribute,
                            uint64_t key, const std::string& value) {
  absl::Span<const uint64_t> found = cache.Find(attribute, key, value);
  EXPECT_NE(found.data(), nullptr) << value;
  return std::vector<uint64_t>(found.begin(), found.end());
}

bool Cached(const ValueHashCache& cache, int attribute, uint64_t key,
            const std::string& value) {
  return cache.Find(attribute, key, value).data() != nullptr;
}

TEST(ValueHashCacheTest, FindsWhatWasInserted) {
  ValueHashCache cache;
  EXPECT_FALSE(Cached(cache, 0, 7, "word"));
  cache.Insert(0, 7, "word", std::vector<uint64_t>{1, 2, 3});
  cache.Insert(1, 9, "NN", std::vector<uint64_t>{4});
  cache.Insert(0, 11, "", std::vector<uint64_t>{});
  EXPECT_THAT(Found(cache, 0, 7, "word"), ElementsAre(1, 2, 3));
  EXPECT_THAT(Found(cache, 1, 9, "NN"), ElementsAre(4));
  EXPECT_THAT(Found(cache, 0, 11, ""), IsEmpty());
  EXPECT_EQ(cache.size(), 3);
}

TEST(ValueHashCacheTest, AHitNeedsTheSameAttributeAndValue) {
  ValueHashCache cache;
  cache.Insert(0, 7, "word", std::vector<uint64_t>{1});
  // The same key for another value or attribute (a hash collision) misses.
  EXPECT_FALSE(Cached(cache, 0, 7, "ward"));
  EXPECT_FALSE(Cached(cache, 0, 7, "words"));
  EXPECT_FALSE(Cached(cache, 1, 7, "word"));
  // Both colliding values can be kept, and each finds its own.
  cache.Insert(0, 7, "ward", std::vector<uint64_t>{2});
  cache.Insert(1, 7, "word", std::vector<uint64_t>{3});
  EXPECT_THAT(Found(cache, 0, 7, "word"), ElementsAre(1));
  EXPECT_THAT(Found(cache, 0, 7, "ward"), ElementsAre(2));
  EXPECT_THAT(Found(cache, 1, 7, "word"), ElementsAre(3));
}

TEST(ValueHashCacheTest, StartsOverWhenHalfFull) {
  ValueHashCache cache(/*max_types=*/16);
  for (uint64_t k = 0; k < 8; ++k) {
    cache.Insert(0, k * 16, "v" + std::to_string(k), std::vector<uint64_t>{k});
  }
  EXPECT_EQ(cache.size(), 8);
  EXPECT_EQ(cache.clears(), 0);
  // Every key lands in slot 0: the probing finds each one.
  for (uint64_t k = 0; k < 8; ++k) {
    EXPECT_THAT(Found(cache, 0, k * 16, "v" + std::to_string(k)),
                ElementsAre(k));
  }
  cache.Insert(0, 5, "ninth", std::vector<uint64_t>{9});
  EXPECT_EQ(cache.size(), 1);
  EXPECT_EQ(cache.clears(), 1);
  EXPECT_FALSE(Cached(cache, 0, 0, "v0"));
  EXPECT_THAT(Found(cache, 0, 5, "ninth"), ElementsAre(9));
}

TEST(ValueHashCacheTest, StartsOverWhenItsStoreIsFull) {
  // Entries of 2 words of head, 3 hashes and 1 word of value: 6 words each,
  // so 3 fit in 20 words with the unused first word.
  ValueHashCache cache(/*max_types=*/1024, /*max_words=*/20);
  for (uint64_t k = 0; k < 3; ++k) {
    cache.Insert(0, k, "abc", std::vector<uint64_t>{k, k, k});
  }
  EXPECT_EQ(cache.size(), 3);
  cache.Insert(0, 3, "abc", std::vector<uint64_t>{3, 3, 3});
  EXPECT_EQ(cache.clears(), 1);
  EXPECT_EQ(cache.size(), 1);
  EXPECT_THAT(Found(cache, 0, 3, "abc"), ElementsAre(3, 3, 3));
  // An entry larger than the whole store is not kept.
  cache.Insert(0, 4, "abc", std::vector<uint64_t>(30, 1));
  EXPECT_FALSE(Cached(cache, 0, 4, "abc"));
  EXPECT_EQ(cache.size(), 1);
}

}  // namespace
}  // namespace chaintag
