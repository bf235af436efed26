#include "solvers/corner_store.h"

#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(CornerStoreTest, AddFindRemoveKeepOrderAndDots) {
  CornerStore store;
  std::vector<double> dots0 = {4};
  EXPECT_EQ(store.Add({0, 0}, 0, 1, &dots0), 0);
  std::vector<double> dots1 = {1, 9};
  EXPECT_EQ(store.Add({1, 0}, 1, 0, &dots1), 1);
  std::vector<double> dots2 = {2, 3, 16};
  EXPECT_EQ(store.Add({1, 1}, 2, 0, &dots2), 2);
  EXPECT_EQ(store.Find({1, 0}), 1);
  EXPECT_EQ(store.Find({0, 1}), -1);
  EXPECT_EQ(store.NumActive(), 1);
  EXPECT_DOUBLE_EQ(store.AlphaSum(), 1);
  // The Gram rows stay symmetric and aligned with the entries.
  EXPECT_EQ(store.entry(0).dots, (std::vector<double>{4, 1, 2}));
  EXPECT_EQ(store.entry(1).dots, (std::vector<double>{1, 9, 3}));
  store.Remove(1);
  ASSERT_EQ(store.size(), 2);
  EXPECT_EQ(store.entry(1).corner, (Corner{1, 1}));
  EXPECT_EQ(store.entry(0).dots, (std::vector<double>{4, 2}));
  EXPECT_EQ(store.entry(1).dots, (std::vector<double>{2, 16}));
  store.entry(1).alpha = 0.5;
  store.entry(0).alpha = 0;
  store.RemoveInactive();
  ASSERT_EQ(store.size(), 1);
  EXPECT_EQ(store.entry(0).corner, (Corner{1, 1}));
  EXPECT_EQ(store.entry(0).dots, (std::vector<double>{16}));
}

}  // namespace
}  // namespace chaintag
