#include "models/top_k_merge.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
// Fills what MergeSortedLists must not read (rows past a cell's count) or
// write (outputs past what it returns): a value no real row has.
constexpr double kUntouched = 1e300;

// One row a merge writes: its value, and the cell and rank it came from.
struct Row {
  double value;
  int32_t cell;
  int32_t rank;
  bool operator==(const Row& other) const {
    return value == other.value && cell == other.cell && rank == other.rank;
  }
};

// The decoders' table: each cell's rows sorted best first at cell·width,
// the rest of its width kUntouched.
struct Cells {
  int width = 0;
  std::vector<double> scores;
  std::vector<int32_t> counts;
};

Cells MakeCells(int width, const std::vector<std::vector<double>>& rows) {
  Cells cells;
  cells.width = width;
  cells.scores.assign(rows.size() * width, kUntouched);
  for (size_t c = 0; c < rows.size(); ++c) {
    EXPECT_LE(rows[c].size(), static_cast<size_t>(width));
    EXPECT_TRUE(std::is_sorted(rows[c].rbegin(), rows[c].rend()));
    std::copy(rows[c].begin(), rows[c].end(), cells.scores.begin() + c * width);
    cells.counts.push_back(static_cast<int32_t>(rows[c].size()));
  }
  return cells;
}

// One merge's lists: list l is cell list_cells[l] (cell l when list_cells
// is empty) shifted by offsets[l], the offsets laid out `stride` apart.
struct Lists {
  std::vector<int32_t> list_cells;
  std::vector<double> offsets;
  int stride = 1;

  int size() const { return static_cast<int>(offsets.size()); }
  int32_t cell(int l) const { return list_cells.empty() ? l : list_cells[l]; }
  std::vector<double> StridedOffsets() const {
    std::vector<double> strided(offsets.size() * stride, kUntouched);
    for (size_t l = 0; l < offsets.size(); ++l) {
      strided[l * stride] = offsets[l];
    }
    return strided;
  }
};

// The contract, written out: every list's rows shifted by its offset, up to
// its first −∞ one; by value, best first, equal values in increasing (list,
// rank); the first `width` of them.
std::vector<Row> BruteForce(const Cells& cells, const Lists& lists) {
  std::vector<Row> all;  // in increasing (list, rank)
  for (int l = 0; l < lists.size(); ++l) {
    const int32_t cell = lists.cell(l);
    for (int32_t r = 0; r < cells.counts[cell]; ++r) {
      const double value =
          cells.scores[cell * cells.width + r] + lists.offsets[l];
      if (value == kMinusInf) break;
      all.push_back({value, cell, r});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Row& a, const Row& b) {
    return a.value > b.value;
  });
  if (all.size() > static_cast<size_t>(cells.width)) all.resize(cells.width);
  return all;
}

// Runs MergeSortedLists; the rows it wrote (checking that it wrote nothing
// past them).
std::vector<Row> Merge(const Cells& cells, const Lists& lists) {
  const int width = cells.width;
  std::vector<double> value(width + 1, kUntouched);
  std::vector<int32_t> cell(width + 1, -7), rank(width + 1, -7);
  const std::vector<double> offsets = lists.StridedOffsets();
  const int written = MergeSortedLists(
      cells.scores.data(), cells.counts.data(), width,
      lists.list_cells.empty() ? nullptr : lists.list_cells.data(),
      lists.size(), offsets.data(), lists.stride, value.data(), cell.data(),
      rank.data());
  EXPECT_GE(written, 0);
  EXPECT_LE(written, width);
  std::vector<Row> rows;
  for (int j = 0; j < written; ++j)
    rows.push_back({value[j], cell[j], rank[j]});
  for (int j = std::max(written, 0); j <= width; ++j) {
    EXPECT_EQ(value[j], kUntouched) << "wrote past row " << written;
    EXPECT_EQ(cell[j], -7);
    EXPECT_EQ(rank[j], -7);
  }
  return rows;
}

void ExpectMatchesBruteForce(const Cells& cells, const Lists& lists) {
  const std::vector<Row> expected = BruteForce(cells, lists);
  const std::vector<Row> got = Merge(cells, lists);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t j = 0; j < got.size(); ++j) {
    EXPECT_EQ(got[j].value, expected[j].value) << "row " << j;
    EXPECT_EQ(got[j].cell, expected[j].cell) << "row " << j;
    EXPECT_EQ(got[j].rank, expected[j].rank) << "row " << j;
  }
}

TEST(TopKWidthTest, IsKOrTheNumberOfLabelingsWhicheverIsSmaller) {
  EXPECT_EQ(TopKWidth(5, 3, 0), 1);  // the empty labeling
  EXPECT_EQ(TopKWidth(5, 3, 1), 3);
  EXPECT_EQ(TopKWidth(5, 3, 2), 5);
  EXPECT_EQ(TopKWidth(9, 3, 2), 9);
  EXPECT_EQ(TopKWidth(10, 3, 2), 9);
  EXPECT_EQ(TopKWidth(1, 26, 40), 1);
  EXPECT_EQ(TopKWidth(4, 0, 3), 0);  // no labels: no labeling
  // L^T far beyond 64 bits: no overflow.
  EXPECT_EQ(TopKWidth(1000, 1000, 100), 1000);
  EXPECT_EQ(TopKWidth(std::numeric_limits<int>::max(), 65536, 10),
            std::numeric_limits<int>::max());
}

TEST(MergeSortedListsTest, NoListsOrOnlyEmptyOnesWriteNothing) {
  const Cells empty = MakeCells(3, {});
  EXPECT_TRUE(Merge(empty, Lists()).empty());
  const Cells none = MakeCells(3, {{}, {}, {}});
  EXPECT_TRUE(Merge(none, Lists{{}, {0, 1, 2}}).empty());
  // Width 0 keeps nothing, whatever the lists hold.
  const Cells zero = MakeCells(0, {{}, {}});
  EXPECT_TRUE(Merge(zero, Lists{{}, {0, 0}}).empty());
}

// By hand: lists 0 and 1 are cells 2 and 0, shifted by 1 and 0.
TEST(MergeSortedListsTest, HandMergedLists) {
  const Cells cells = MakeCells(4, {{5, 3, 1}, {9}, {4, 2}});
  const Lists lists{{2, 0}, {1, 0}};
  // Candidates: list 0: 5, 3 (cell 2); list 1: 5, 3, 1 (cell 0).
  const std::vector<Row> expected = {
      {5, 2, 0}, {5, 0, 0}, {3, 2, 1}, {3, 0, 1}};
  EXPECT_EQ(Merge(cells, lists), expected);
  ExpectMatchesBruteForce(cells, lists);
}

// Equal values come out in increasing (list, rank), not by cell: the
// decoders' tie orders rest on it.
TEST(MergeSortedListsTest, TiesGoToTheLowerListThenTheLowerRank) {
  const Cells cells = MakeCells(5, {{2, 2, 2}, {2, 2}, {2}});
  const Lists lists{{2, 0, 1}, {0, 0, 0}};
  const std::vector<Row> expected = {
      {2, 2, 0}, {2, 0, 0}, {2, 0, 1}, {2, 0, 2}, {2, 1, 0}};
  EXPECT_EQ(Merge(cells, lists), expected);
  // Full: an equal value does not displace one already kept.
  const Cells narrow = MakeCells(2, {{2, 2}, {3, 2}});
  const std::vector<Row> kept = {{3, 1, 0}, {2, 0, 0}};
  EXPECT_EQ(Merge(narrow, Lists{{}, {0, 0}}), kept);
}

TEST(MergeSortedListsTest, KBeyondTheRowsGivesThemAll) {
  const Cells cells = MakeCells(8, {{1, -1}, {0}, {}, {4, 3, 2}});
  const Lists lists{{}, {0, 0, 0, -3}};
  const std::vector<Row> got = Merge(cells, lists);
  EXPECT_EQ(got.size(), 6u);
  ExpectMatchesBruteForce(cells, lists);
}

// A −∞ row is a forbidden path: it never enters, nor do the rows after it;
// a −∞ offset shuts its whole list.
TEST(MergeSortedListsTest, MinusInfinityNeverEnters) {
  const Cells cells =
      MakeCells(4, {{1, kMinusInf, kMinusInf}, {2, 1}, {kMinusInf}});
  const std::vector<Row> expected = {{2, 1, 0}, {1, 0, 0}, {1, 1, 1}};
  EXPECT_EQ(Merge(cells, Lists{{}, {0, 0, 0}}), expected);
  const std::vector<Row> shut = {{1, 0, 0}};
  EXPECT_EQ(Merge(cells, Lists{{}, {0, kMinusInf, 5}}), shut);
}

// The second-order decoders read their offsets from a row of edges: one
// list's offset every `stride` doubles.
TEST(MergeSortedListsTest, ReadsOffsetsStrideApart) {
  const Cells cells = MakeCells(3, {{1, 0}, {3}, {2, 2}});
  Lists lists{{}, {2, 0, -1}, 4};
  const std::vector<Row> expected = {{3, 0, 0}, {3, 1, 0}, {2, 0, 1}};
  EXPECT_EQ(Merge(cells, lists), expected);
  ExpectMatchesBruteForce(cells, lists);
}

// Small random tables of integer rows (many ties, some −∞), every width up
// to past the rows, lists over all the cells or a shuffled subset.
TEST(MergeSortedListsTest, MatchesBruteForceOnSmallRandomInputs) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 600; ++trial) {
    const int num_cells = static_cast<int>(rng() % 5);
    const int width = static_cast<int>(rng() % 6);
    std::vector<std::vector<double>> rows(num_cells);
    for (std::vector<double>& cell : rows) {
      cell.resize(width == 0 ? 0 : rng() % (width + 1));
      for (double& v : cell) {
        v = rng() % 7 == 0 ? kMinusInf : static_cast<double>(rng() % 4);
      }
      std::sort(cell.rbegin(), cell.rend());
    }
    const Cells cells = MakeCells(width, rows);
    Lists lists;
    lists.stride = 1 + static_cast<int>(rng() % 3);
    if (trial % 2 == 1) {
      lists.list_cells.resize(num_cells);
      std::iota(lists.list_cells.begin(), lists.list_cells.end(), 0);
      std::shuffle(lists.list_cells.begin(), lists.list_cells.end(), rng);
      lists.list_cells.resize(num_cells == 0 ? 0 : rng() % (num_cells + 1));
    }
    const int num_lists =
        trial % 2 == 1 ? static_cast<int>(lists.list_cells.size()) : num_cells;
    for (int l = 0; l < num_lists; ++l) {
      lists.offsets.push_back(
          rng() % 9 == 0 ? kMinusInf : static_cast<double>(rng() % 3) - 1);
    }
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    ExpectMatchesBruteForce(cells, lists);
  }
}

}  // namespace
}  // namespace chaintag
