#include "corpora/item_name_interner.h"

#include <string>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

uint64_t Constant(absl::string_view) { return 42; }

TEST(ItemNameInternerTest, EachNameOnceInOrderOfFirstSight) {
  ItemNameInterner interner;
  EXPECT_EQ(interner.Intern("w:the"), 0);
  EXPECT_EQ(interner.Intern("bias"), 1);
  EXPECT_EQ(interner.Intern("w:the"), 0);
  EXPECT_EQ(interner.Intern(""), 2);
  EXPECT_EQ(interner.size(), 3);
  const auto table = interner.table();
  EXPECT_EQ(table->name(0), "w:the");
  EXPECT_EQ(table->name(1), "bias");
  EXPECT_EQ(table->name(2), "");
}

TEST(ItemNameInternerTest, NamesWhoseHashesCollideStayApart) {
  ItemNameInterner interner(&Constant);  // every name collides
  EXPECT_EQ(interner.Intern("a"), 0);
  EXPECT_EQ(interner.Intern("b"), 1);
  EXPECT_EQ(interner.Intern("c"), 2);
  EXPECT_EQ(interner.Intern("b"), 1);
  EXPECT_EQ(interner.Intern("a"), 0);
  EXPECT_EQ(interner.Intern("c"), 2);
  EXPECT_EQ(interner.table()->name(1), "b");
  EXPECT_EQ(interner.size(), 3);
}

}  // namespace
}  // namespace chaintag
